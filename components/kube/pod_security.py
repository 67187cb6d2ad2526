"""Pod Security Standards (kubernetes.io/docs/concepts/security/pod-security-standards): the
namespace labels Pod Security Admission enforces, what keeps a pod from the `baseline`
level (which task pods, running as root as Determined's images do, need at least), and
from `restricted` (which the master's namespace enforces from 0.35, where no task runs).

Levels are pinned to the rules of VERSION: a cluster upgrade that tightens a level does not
start rejecting pods that were admitted before.
"""

from __future__ import annotations

from typing import Any

VERSION = "v1.33"
LEVELS = ("restricted", "baseline", "privileged")  # strictest first
LABEL_PREFIX = "pod-security.kubernetes.io/"

# Capabilities a baseline container may add.
BASELINE_CAPABILITIES = frozenset(
    {
        "AUDIT_WRITE",
        "CHOWN",
        "DAC_OVERRIDE",
        "FOWNER",
        "FSETID",
        "KILL",
        "MKNOD",
        "NET_BIND_SERVICE",
        "SETFCAP",
        "SETGID",
        "SETPCAP",
        "SETUID",
        "SYS_CHROOT",
    }
)
# The "safe" sysctls baseline allows (as of VERSION).
SAFE_SYSCTLS = frozenset(
    {
        "kernel.shm_rmid_forced",
        "net.ipv4.ip_local_port_range",
        "net.ipv4.ip_unprivileged_port_start",
        "net.ipv4.tcp_syncookies",
        "net.ipv4.ping_group_range",
        "net.ipv4.ip_local_reserved_ports",
        "net.ipv4.tcp_keepalive_time",
        "net.ipv4.tcp_fin_timeout",
        "net.ipv4.tcp_keepalive_intvl",
        "net.ipv4.tcp_keepalive_probes",
    }
)
SELINUX_TYPES = frozenset({"", "container_t", "container_init_t", "container_kvm_t", "container_engine_t"})
APPARMOR_ANNOTATION = "container.apparmor.security.beta.kubernetes.io/"


def laxest(*levels: str) -> str:
    """The least strict of `levels` (a namespace running several kinds of pods needs it)."""
    return max(levels, key=LEVELS.index)


def namespace_labels(enforce: str, audit: str | None = None, warn: str | None = None) -> dict[str, str]:
    """Labels that make Pod Security Admission enforce `enforce` on a namespace and report
    (audit log, client warnings) pods that would not meet `audit` / `warn` (default: enforce)."""
    labels = {}
    for mode, level in (("enforce", enforce), ("audit", audit or enforce), ("warn", warn or enforce)):
        assert level in LEVELS, level
        labels[f"{LABEL_PREFIX}{mode}"] = level
        labels[f"{LABEL_PREFIX}{mode}-version"] = VERSION
    return labels


def _spec(pod: dict[str, Any]) -> dict[str, Any]:
    """A pod's spec, from a Pod (or pod template: `spec` holds it) or a bare spec."""
    return pod["spec"] if isinstance(pod.get("spec"), dict) else pod


def _containers(spec: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        c
        for key in ("initContainers", "containers", "ephemeralContainers")
        for c in (spec.get(key) or [])
        if isinstance(c, dict)
    ]


def _contexts(spec: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """(where, securityContext) of the pod and of every container."""
    found = [("pod", spec.get("securityContext") or {})]
    found += [(f"container {c.get('name')!r}", c.get("securityContext") or {}) for c in _containers(spec)]
    return found


def baseline_problems(pod: dict[str, Any]) -> list[str]:
    """What in `pod` the baseline level forbids (empty: baseline admits it)."""
    spec = _spec(pod)
    problems = [f"spec.{key}" for key in ("hostNetwork", "hostPID", "hostIPC") if spec.get(key)]
    problems += [f"hostPath volume {v.get('name')!r}" for v in spec.get("volumes") or [] if v.get("hostPath")]
    for where, context in _contexts(spec):
        if (context.get("windowsOptions") or {}).get("hostProcess"):
            problems.append(f"{where}: windowsOptions.hostProcess")
        if context.get("privileged"):
            problems.append(f"{where}: privileged")
        added = set((context.get("capabilities") or {}).get("add") or []) - BASELINE_CAPABILITIES
        if added:
            problems.append(f"{where}: adds capabilities {sorted(added)}")
        if (context.get("seccompProfile") or {}).get("type") == "Unconfined":
            problems.append(f"{where}: seccompProfile Unconfined")
        if (context.get("appArmorProfile") or {}).get("type") == "Unconfined":
            problems.append(f"{where}: appArmorProfile Unconfined")
        selinux = context.get("seLinuxOptions") or {}
        if selinux.get("type", "") not in SELINUX_TYPES or selinux.get("user") or selinux.get("role"):
            problems.append(f"{where}: seLinuxOptions {selinux}")
        if context.get("procMount", "Default") != "Default":
            problems.append(f"{where}: procMount {context['procMount']}")
    for container in _containers(spec):
        for port in container.get("ports") or []:
            if port.get("hostPort"):
                problems.append(f"container {container.get('name')!r}: hostPort {port['hostPort']}")
    sysctls = {s.get("name") for s in (spec.get("securityContext") or {}).get("sysctls") or []}
    problems += [f"sysctl {name}" for name in sorted(sysctls - SAFE_SYSCTLS, key=str)]
    annotations = (pod.get("metadata") or {}).get("annotations") or {}
    for key, value in annotations.items():
        if key.startswith(APPARMOR_ANNOTATION) and not (
            value == "runtime/default" or str(value).startswith("localhost/")
        ):
            problems.append(f"annotation {key}: {value}")
    return problems


# The restricted level, on top of baseline (as of VERSION): volumes of these types only,
# no privilege escalation, a non-root user, the RuntimeDefault or a Localhost seccomp
# profile, every capability dropped and none added but NET_BIND_SERVICE.
RESTRICTED_VOLUMES = frozenset(
    {
        "configMap",
        "csi",
        "downwardAPI",
        "emptyDir",
        "ephemeral",
        "persistentVolumeClaim",
        "projected",
        "secret",
    }
)
RESTRICTED_SECCOMP = frozenset({"RuntimeDefault", "Localhost"})


def restricted_problems(pod: dict[str, Any]) -> list[str]:
    """What in `pod` the restricted level forbids, baseline's included (empty: admitted).
    A container's securityContext overrides the pod's for the fields both have."""
    spec = _spec(pod)
    problems = baseline_problems(pod)
    for volume in spec.get("volumes") or []:
        kinds = set(volume) - {"name"}
        if not kinds <= RESTRICTED_VOLUMES:
            problems.append(f"volume {volume.get('name')!r}: {', '.join(sorted(kinds - RESTRICTED_VOLUMES))}")
    pod_context = spec.get("securityContext") or {}
    if pod_context.get("runAsUser") == 0:
        problems.append("pod: runAsUser 0")
    for container in _containers(spec):
        context = container.get("securityContext") or {}
        where = f"container {container.get('name')!r}"

        def effective(key: str, context: dict[str, Any] = context) -> Any:
            return context[key] if context.get(key) is not None else pod_context.get(key)

        if context.get("allowPrivilegeEscalation") is not False:
            problems.append(f"{where}: allowPrivilegeEscalation not false")
        if effective("runAsNonRoot") is not True:
            problems.append(f"{where}: runAsNonRoot not true")
        if context.get("runAsUser") == 0:
            problems.append(f"{where}: runAsUser 0")
        if (effective("seccompProfile") or {}).get("type") not in RESTRICTED_SECCOMP:
            problems.append(f"{where}: seccompProfile neither RuntimeDefault nor Localhost")
        capabilities = context.get("capabilities") or {}
        if "ALL" not in (capabilities.get("drop") or []):
            problems.append(f"{where}: capabilities not dropped (ALL)")
        if set(capabilities.get("add") or []) - {"NET_BIND_SERVICE"}:
            problems.append(f"{where}: adds capabilities beyond NET_BIND_SERVICE")
    return problems
