"""What every pod the stacks (stacks/ and fixtures) run promises: fixed resources for the
master, requests and a memory limit everywhere, read-only configuration and root file
systems, a restricted security context as a numeric non-root user, and namespaces labelled
with the Pod Security level their pods need (the Determined namespace's own pods would pass
`restricted`)."""

from __future__ import annotations

from typing import Any

import pytest
import stack_plans
from stack_plans import containers, master_workload, workloads

from components import versions
from components.cluster.gke import fabric as gke_fabric

# Volume sources that carry configuration (or credentials): never written by a container.
CONFIG_SOURCES = ("secret", "configMap", "projected", "downwardAPI")
# Pods that must be privileged, as their vendors ship them: (namespace, name) -> why.
PRIVILEGED_BY_NATURE = {
    ("kube-system", "nvidia-driver-installer"): "Google's GPU driver installer loads kernel modules",
    **{("kube-system", name): why for name, why in gke_fabric.NODE_AGENTS.items()},
}
# Pods whose root file system stays writable: (namespace, name) -> why. Every other container
# writes only to volumes.
WRITABLE_ROOT = {
    ("kube-system", "nvidia-driver-installer"): "Google's installer writes the driver where upstream puts it",
    **{("kube-system", name): why for name, why in gke_fabric.NODE_AGENTS.items()},
}
PSA = "pod-security.kubernetes.io/"


@pytest.fixture(scope="module", params=stack_plans.NAMES)
def stack(request):
    return stack_plans.plan(request.param)


def test_master_requests_equal_limits(stack):
    # Guaranteed QoS by default: the master is neither throttled below nor evicted above what
    # it asked for. With master.resources, requests are still set and memory is limited.
    _, _, container = master_workload(stack)
    resources = container.get("resources", {})
    custom = "resources" in stack.raw.get("master", {})
    for resource in ("cpu", "memory"):
        request = resources.get("requests", {}).get(resource)
        limit = resources.get("limits", {}).get(resource)
        assert request is not None, f"{stack.name}: master {resource} has no request"
        if not custom:
            assert request == limit, f"{stack.name}: master {resource} request {request!r} != limit {limit!r}"
    assert resources.get("limits", {}).get("memory"), f"{stack.name}: master memory is not limited"


def test_configuration_volumes_are_mounted_read_only(stack):
    checked = 0
    for obj, template in workloads(stack):
        config_volumes = {
            v["name"] for v in template["spec"].get("volumes", []) if any(s in v for s in CONFIG_SOURCES)
        }
        for container in containers(template):
            for mount in container.get("volumeMounts", []):
                if mount["name"] in config_volumes:
                    checked += 1
                    assert mount.get("readOnly") is True, (
                        f"{stack.name}: {obj['metadata']['name']}/{container['name']} mounts "
                        f"{mount['name']} at {mount['mountPath']} writable"
                    )
    assert checked, "the master's config Secret at least is mounted"


def test_every_pod_runs_with_a_restricted_security_context(stack):
    for obj, template in workloads(stack):
        if (obj["metadata"].get("namespace"), obj["metadata"]["name"]) in PRIVILEGED_BY_NATURE:
            continue
        name = f"{stack.name}: {obj['kind']} {obj['metadata']['name']}"
        pod_context = template["spec"].get("securityContext") or {}
        assert (pod_context.get("seccompProfile") or {}).get("type") == "RuntimeDefault", (
            f"{name}: no pod-level seccompProfile RuntimeDefault"
        )
        for container in containers(template):
            context = container.get("securityContext") or {}
            assert context.get("allowPrivilegeEscalation") is False, (
                f"{name}/{container['name']}: privilege escalation"
            )
            assert "ALL" in ((context.get("capabilities") or {}).get("drop") or []), (
                f"{name}/{container['name']}: capabilities not dropped"
            )
            assert not context.get("privileged"), f"{name}/{container['name']}: privileged"


def own_workloads(stack):
    """(name, pod template) of every workload but those privileged by nature (kept as their
    vendors ship them)."""
    for obj, template in workloads(stack):
        meta = obj["metadata"]
        if (meta.get("namespace"), meta["name"]) not in PRIVILEGED_BY_NATURE:
            yield f"{stack.name}: {obj['kind']} {meta['name']}", obj, template


def test_every_container_requests_cpu_and_memory_and_limits_memory(stack):
    # CPU limits are deliberately optional (policy containers-have-requests-and-limits).
    for name, _, template in own_workloads(stack):
        for container in containers(template):
            resources = container.get("resources") or {}
            requests, limits = resources.get("requests") or {}, resources.get("limits") or {}
            for resource in ("cpu", "memory"):
                # As Kubernetes does, a limit alone is also the request.
                assert resource in requests or resource in limits, (
                    f"{name}/{container['name']}: no {resource} request"
                )
            assert "memory" in limits, f"{name}/{container['name']}: no memory limit"


def test_every_root_file_system_is_read_only_or_says_why_not(stack):
    for obj, template in workloads(stack):
        meta = obj["metadata"]
        if (meta.get("namespace"), meta["name"]) in WRITABLE_ROOT:
            continue
        for container in containers(template):
            context = container.get("securityContext") or {}
            assert context.get("readOnlyRootFilesystem") is True, (
                f"{stack.name}: {obj['kind']} {meta['name']}/{container['name']}: writable root file system "
                "(mount an emptyDir where it writes, or record why in WRITABLE_ROOT)"
            )


def effective(template: dict[str, Any], container: dict[str, Any], key: str) -> Any:
    """A securityContext field as the kubelet applies it: the container's, else the pod's."""
    own = (container.get("securityContext") or {}).get(key)
    return own if own is not None else (template["spec"].get("securityContext") or {}).get(key)


def test_every_container_runs_as_a_numeric_non_root_user(stack):
    # runAsNonRoot alone lets the kubelet refuse an image whose USER is a name; a numeric id
    # (never 0) is what it checks against.
    for name, _, template in own_workloads(stack):
        for container in containers(template):
            where = f"{name}/{container['name']}"
            assert effective(template, container, "runAsNonRoot") is True, f"{where}: runAsNonRoot not set"
            user = effective(template, container, "runAsUser")
            assert isinstance(user, int) and not isinstance(user, bool) and user > 0, (
                f"{where}: runAsUser {user!r}"
            )


# --- Pod Security levels ------------------------------------------------------------------------

# Baseline controls (kubernetes.io/docs/concepts/security/pod-security-standards, v1.33).
BASELINE_CAPABILITIES = {
    "AUDIT_WRITE", "CHOWN", "DAC_OVERRIDE", "FOWNER", "FSETID", "KILL", "MKNOD", "NET_BIND_SERVICE",
    "SETFCAP", "SETGID", "SETPCAP", "SETUID", "SYS_CHROOT",
}  # fmt: skip
RESTRICTED_VOLUMES = {
    "configMap", "csi", "downwardAPI", "emptyDir", "ephemeral", "persistentVolumeClaim", "projected", "secret",
}  # fmt: skip


def all_containers(spec: dict[str, Any]) -> list[dict[str, Any]]:
    return [c for key in ("initContainers", "containers", "ephemeralContainers") for c in spec.get(key) or []]


def baseline_violations(spec: dict[str, Any]) -> list[str]:
    """The baseline controls a pod spec breaks (host namespaces and paths, privileges,
    capabilities, host ports, unconfined seccomp, /proc mount, SELinux, sysctls)."""
    found = [key for key in ("hostNetwork", "hostPID", "hostIPC") if spec.get(key)]
    found += [f"hostPath {v['name']}" for v in spec.get("volumes") or [] if "hostPath" in v]
    contexts = [spec.get("securityContext") or {}] + [
        c.get("securityContext") or {} for c in all_containers(spec)
    ]
    for context in contexts:
        if context.get("privileged"):
            found.append("privileged")
        if set((context.get("capabilities") or {}).get("add") or []) - BASELINE_CAPABILITIES:
            found.append("capabilities beyond baseline")
        if (context.get("seccompProfile") or {}).get("type") == "Unconfined":
            found.append("seccomp Unconfined")
        if context.get("procMount", "Default") != "Default":
            found.append("procMount")
        if (context.get("windowsOptions") or {}).get("hostProcess"):
            found.append("hostProcess")
        selinux = context.get("seLinuxOptions") or {}
        if selinux.get("user") or selinux.get("role"):
            found.append("seLinuxOptions user/role")
    found += ["hostPort" for c in all_containers(spec) for p in c.get("ports") or [] if p.get("hostPort")]
    if (spec.get("securityContext") or {}).get("sysctls"):
        found.append("sysctls")  # stricter than baseline's safe list: enough to call for a look
    return found


def restricted_violations(spec: dict[str, Any]) -> list[str]:
    """The restricted controls a pod spec breaks, baseline's included."""
    found = baseline_violations(spec)
    found += [
        f"volume {v['name']}"
        for v in spec.get("volumes") or []
        if not set(v) - {"name"} <= RESTRICTED_VOLUMES
    ]
    pod = spec.get("securityContext") or {}
    for container in all_containers(spec):
        context = container.get("securityContext") or {}
        where = f"container {container['name']}"
        if context.get("allowPrivilegeEscalation") is not False:
            found.append(f"{where}: allowPrivilegeEscalation not false")
        non_root = context.get("runAsNonRoot", pod.get("runAsNonRoot"))
        if non_root is not True:
            found.append(f"{where}: runAsNonRoot not true")
        if context.get("runAsUser", pod.get("runAsUser")) == 0:
            found.append(f"{where}: runAsUser 0")
        seccomp = (context.get("seccompProfile") or pod.get("seccompProfile") or {}).get("type")
        if seccomp not in ("RuntimeDefault", "Localhost"):
            found.append(f"{where}: seccompProfile {seccomp}")
        capabilities = context.get("capabilities") or {}
        if "ALL" not in (capabilities.get("drop") or []):
            found.append(f"{where}: capabilities not dropped")
        if set(capabilities.get("add") or []) - {"NET_BIND_SERVICE"}:
            found.append(f"{where}: adds capabilities")
    if pod.get("runAsUser") == 0:
        found.append("pod: runAsUser 0")
    return found


def namespace_of(stack) -> str:
    return stack.raw.get("namespace", "determined")


def test_the_determined_namespaces_own_pods_would_pass_restricted(stack):
    checked = 0
    for obj, template in workloads(stack):
        if obj["metadata"].get("namespace") != namespace_of(stack):
            continue
        checked += 1
        problems = restricted_violations(template["spec"])
        assert not problems, f"{stack.name}: {obj['kind']} {obj['metadata']['name']}: {problems}"
    assert checked, "the master at least runs there"


def task_sections(master: dict[str, Any]) -> list[dict[str, Any]]:
    """Every task_container_defaults of master.yaml: the top one and each pool's."""
    sections = [master.get("task_container_defaults") or {}]
    sections += [pool.get("task_container_defaults") or {} for pool in master.get("resource_pools") or []]
    return sections


def task_level(stack) -> str:
    """The level task pods need, read from the master.yaml the master gets: baseline (root
    task images) unless a task runs on the host network, mounts host paths (sharedFs
    checkpoints, bind_mounts) or a task pod spec breaks baseline."""
    if (stack.master.get("checkpoint_storage") or {}).get("type") == "shared_fs":
        return "privileged"
    for section in task_sections(stack.master):
        if section.get("network_mode") == "host" or section.get("bind_mounts"):
            return "privileged"
        for key in ("cpu_pod_spec", "gpu_pod_spec", "checkpoint_gc_pod_spec"):
            if baseline_violations((section.get(key) or {}).get("spec") or {}):
                return "privileged"
    return "baseline"


def psa_labels(obj: dict[str, Any]) -> dict[str, str]:
    labels = obj["metadata"].get("labels") or {}
    return {k.removeprefix(PSA): v for k, v in labels.items() if k.startswith(PSA)}


def test_namespaces_enforce_the_pod_security_level_their_pods_need(stack):
    level = task_level(stack)
    namespaces = {m["metadata"]["name"]: m for m in stack.manifests("Namespace")}
    pool_namespaces = {
        rp.get("namespace") or f"det-{rp['name']}" for rp in stack.raw.get("resourcePools") or []
    } & set(namespaces)
    # Where tasks of unbound workspaces and checkpoint GC run: master.yaml's default namespace.
    rm = stack.master["resource_manager"]
    default = rm.get("default_namespace", rm.get("namespace"))
    # The master's namespace enforces restricted where no task runs there (0.35+: tasks default
    # to their own namespace), else what tasks need; it audits and warns short of restricted.
    own = "restricted" if default != namespace_of(stack) else level
    expected = {namespace_of(stack): {"enforce": own, "audit": "restricted", "warn": "restricted"}}
    expected |= {
        ns: {"enforce": level, "audit": "restricted", "warn": level}
        for ns in pool_namespaces | ({default} - {namespace_of(stack)})
    }
    if versions.parse_version(stack.version) >= versions.RELEASE_NAMESPACE_SINCE:
        assert default != namespace_of(stack), f"{stack.name}: 0.35+ tasks default to the master's namespace"
    for name, modes in expected.items():
        labels = psa_labels(namespaces[name])
        for mode, want in modes.items():
            assert labels.get(mode) == want, (
                f"{stack.name}: namespace {name} {mode} {labels.get(mode)!r} != {want!r}"
            )
            assert labels.get(f"{mode}-version", "").startswith("v1."), f"{stack.name}: {name} {mode}-version"


def test_both_levels_occur_among_the_stacks():
    # The level follows the config: the stacks exercise both answers.
    levels = {task_level(stack_plans.plan(name)) for name in stack_plans.NAMES}
    assert levels == {"baseline", "privileged"}
