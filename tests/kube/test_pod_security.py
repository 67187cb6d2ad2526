"""Pod Security levels: what keeps a pod from baseline, and the level task namespaces get."""

from __future__ import annotations

import copy

import pytest
from conftest import make_config

from components import versions
from components.determined import determined, resource_pools
from components.kube import pod_security

S3 = {"type": "s3", "bucket": "my-checkpoints"}


def pod(**spec):
    return {"spec": {"containers": [{"name": "c", "image": "x:1"}], **spec}}


def container(**context):
    return {"containers": [{"name": "c", "image": "x:1", "securityContext": context}]}


@pytest.mark.parametrize(
    "spec",
    [
        {"hostNetwork": True},
        {"hostPID": True},
        {"hostIPC": True},
        {"volumes": [{"name": "h", "hostPath": {"path": "/"}}]},
        container(privileged=True),
        container(capabilities={"add": ["SYS_ADMIN"]}),
        container(seccompProfile={"type": "Unconfined"}),
        container(appArmorProfile={"type": "Unconfined"}),
        container(procMount="Unmasked"),
        container(seLinuxOptions={"type": "spc_t"}),
        container(seLinuxOptions={"user": "system_u"}),
        container(windowsOptions={"hostProcess": True}),
        {"containers": [{"name": "c", "ports": [{"containerPort": 80, "hostPort": 80}]}]},
        {"securityContext": {"sysctls": [{"name": "kernel.msgmax", "value": "1"}]}},
        {"initContainers": [{"name": "i", "securityContext": {"privileged": True}}]},
    ],
)
def test_what_baseline_forbids(spec):
    assert pod_security.baseline_problems(pod(**spec))


@pytest.mark.parametrize(
    "spec",
    [
        {},
        container(runAsUser=0, capabilities={"add": ["NET_BIND_SERVICE", "CHOWN"]}),
        container(seccompProfile={"type": "RuntimeDefault"}, seLinuxOptions={"type": "container_t"}),
        {"securityContext": {"sysctls": [{"name": "net.ipv4.ip_local_port_range", "value": "1 2"}]}},
        {"volumes": [{"name": "shm", "emptyDir": {"medium": "Memory"}}]},
    ],
)
def test_what_baseline_admits(spec):
    assert pod_security.baseline_problems(pod(**spec)) == []


def test_apparmor_annotations():
    unconfined = {
        "metadata": {"annotations": {pod_security.APPARMOR_ANNOTATION + "c": "unconfined"}},
        **pod(),
    }
    assert pod_security.baseline_problems(unconfined)
    confined = {
        "metadata": {"annotations": {pod_security.APPARMOR_ANNOTATION + "c": "runtime/default"}},
        **pod(),
    }
    assert pod_security.baseline_problems(confined) == []


def test_labels_and_the_laxest_level():
    labels = pod_security.namespace_labels("baseline", audit="restricted")
    assert labels == {
        "pod-security.kubernetes.io/enforce": "baseline",
        "pod-security.kubernetes.io/enforce-version": pod_security.VERSION,
        "pod-security.kubernetes.io/audit": "restricted",
        "pod-security.kubernetes.io/audit-version": pod_security.VERSION,
        "pod-security.kubernetes.io/warn": "baseline",
        "pod-security.kubernetes.io/warn-version": pod_security.VERSION,
    }
    assert pod_security.laxest("restricted", "baseline") == "baseline"
    assert pod_security.laxest("privileged", "restricted") == "privileged"


# --- the level task namespaces get --------------------------------------------------------------


def levels(cfg):
    ns = determined.namespace(cfg)["metadata"]["labels"]
    pools = {o["metadata"]["name"]: o["metadata"]["labels"] for o in resource_pools.namespaces(cfg)}
    enforce = "pod-security.kubernetes.io/enforce"
    return ns[enforce], {name: labels[enforce] for name, labels in pools.items()}


def test_tasks_get_baseline_by_default_and_the_master_namespace_restricted():
    cfg = make_config(checkpointStorage=S3)
    assert resource_pools.task_privileges(cfg) == []
    # 0.35+: no task runs in the master's namespace (they default to determined-tasks).
    assert levels(cfg) == (
        "restricted",
        {"determined-tasks": "baseline", "det-a100": "baseline", "det-aux": "baseline"},
    )
    labels = determined.namespace(cfg)["metadata"]["labels"]
    assert (
        labels["pod-security.kubernetes.io/audit"]
        == labels["pod-security.kubernetes.io/warn"]
        == "restricted"
    )


def test_before_0_35_the_master_namespace_runs_tasks_and_enforces_their_level():
    cfg = make_config(checkpointStorage=S3, master={"version": "0.34.0"})
    assert cfg.default_task_namespace == cfg.namespace
    assert levels(cfg) == ("baseline", {"det-a100": "baseline", "det-aux": "baseline"})
    privileged = make_config(master={"version": "0.34.0"})  # sharedFs: host paths
    assert levels(privileged)[0] == "privileged"
    # From 0.35 the master's namespace stays restricted whatever tasks need.
    assert levels(make_config())[0] == "restricted"


HOST_PATH_POD = {
    "spec": {
        "volumes": [{"name": "d", "hostPath": {"path": "/data"}}],
        "containers": [
            {"name": "determined-container", "volumeMounts": [{"name": "d", "mountPath": "/data"}]}
        ],
    }
}


@pytest.mark.parametrize(
    "overrides,why",
    [
        ({"taskContainerDefaults": {"networkMode": "host"}}, "networkMode host"),
        ({"checkpointStorage": {"type": "sharedFs", "hostPath": "/srv/ckpt"}}, "sharedFs"),
        (
            {
                "master": {
                    "configOverrides": {
                        "task_container_defaults": {
                            "bind_mounts": [{"host_path": "/x", "container_path": "/x"}]
                        }
                    }
                }
            },
            "bind_mounts",
        ),
        ({"taskContainerDefaults": {"gpuPodSpec": HOST_PATH_POD}}, "gpuPodSpec: hostPath"),
        ({"taskContainerDefaults": {"checkpointGcPodSpec": HOST_PATH_POD}}, "checkpointGcPodSpec: hostPath"),
        (
            {
                "resourcePools": [
                    {"name": "a100", "nodePool": "a100", "namespace": "det-a100", "podSpec": HOST_PATH_POD},
                    {"name": "aux", "nodePool": "system", "namespace": "det-aux"},
                ]
            },
            "resourcePools[0].podSpec",
        ),
    ],
)
def test_what_makes_every_task_namespace_privileged(overrides, why):
    cfg = make_config(**{"checkpointStorage": S3, **overrides})
    reasons = resource_pools.task_privileges(cfg)
    assert any(why in reason for reason in reasons), reasons
    # One level for all of them: from 0.35 any pool's pods may land in any task namespace.
    assert levels(cfg) == (
        "restricted",
        {"determined-tasks": "privileged", "det-a100": "privileged", "det-aux": "privileged"},
    )


# --- restricted -------------------------------------------------------------------------------

RESTRICTED_POD = {
    "spec": {
        "securityContext": {
            "runAsNonRoot": True,
            "runAsUser": 65534,
            "seccompProfile": {"type": "RuntimeDefault"},
        },
        "containers": [
            {
                "name": "c",
                "image": "x:1",
                "securityContext": {"allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]}},
            }
        ],
        "volumes": [{"name": "v", "secret": {"secretName": "s"}}, {"name": "e", "emptyDir": {}}],
    }
}


def changed(path, value):
    pod = copy.deepcopy(RESTRICTED_POD)
    *parents, last = path
    target = pod["spec"]
    for key in parents:
        target = target[key]
    if value is None:
        del target[last]
    else:
        target[last] = value
    return pod


def test_what_restricted_admits():
    assert pod_security.restricted_problems(RESTRICTED_POD) == []
    added = changed(
        ("containers", 0, "securityContext", "capabilities"), {"drop": ["ALL"], "add": ["NET_BIND_SERVICE"]}
    )
    assert pod_security.restricted_problems(added) == []
    assert (
        pod_security.restricted_problems(
            changed(("volumes",), [{"name": "c", "persistentVolumeClaim": {"claimName": "x"}}])
        )
        == []
    )


@pytest.mark.parametrize(
    "path,value",
    [
        (("containers", 0, "securityContext", "allowPrivilegeEscalation"), None),
        (("securityContext", "runAsNonRoot"), None),
        (("securityContext", "runAsUser"), 0),
        (("securityContext", "seccompProfile"), None),
        (("containers", 0, "securityContext", "capabilities"), {"drop": ["NET_RAW"]}),
        (("containers", 0, "securityContext", "capabilities"), {"drop": ["ALL"], "add": ["CHOWN"]}),
        (("volumes",), [{"name": "h", "hostPath": {"path": "/"}}]),
        (("volumes",), [{"name": "n", "nfs": {"server": "s", "path": "/"}}]),
        (("hostNetwork",), True),
    ],
)
def test_what_restricted_forbids(path, value):
    assert pod_security.restricted_problems(changed(path, value))


# cert-manager's HTTP-01 solver pod (tls with a certManager certificate and no dns01): it
# runs in the Determined namespace, which enforces restricted from 0.35. Its security
# settings as cert-manager v1.21.1 (the version the stack installs) builds them:
# pkg/issuer/acme/http/pod.go:220-268, runAsNonRoot from the controller's
# --acme-http01-solver-run-as-non-root, default true
# (internal/apis/config/controller/v1alpha1/defaults.go:99); read 2026-11.
CERT_MANAGER_SOLVER_POD = {
    "spec": {
        "automountServiceAccountToken": False,
        "enableServiceLinks": False,
        "restartPolicy": "OnFailure",
        "securityContext": {"runAsNonRoot": True, "seccompProfile": {"type": "RuntimeDefault"}},
        "containers": [
            {
                "name": "acmesolver",
                "image": "quay.io/jetstack/cert-manager-acmesolver:v1.21.1",
                "ports": [{"name": "http", "containerPort": 8089}],
                "securityContext": {
                    "readOnlyRootFilesystem": True,
                    "allowPrivilegeEscalation": False,
                    "capabilities": {"drop": ["ALL"]},
                },
            }
        ],
    }
}


def test_cert_managers_solver_pod_meets_restricted():
    assert versions.CERT_MANAGER_VERSION == "v1.21.1"  # the version the spec above was read at
    assert pod_security.restricted_problems(CERT_MANAGER_SOLVER_POD) == []
