"""Pod Security levels: what keeps a pod from baseline, and the level task namespaces get."""

from __future__ import annotations

import pytest
from conftest import make_config

from deploy.app import determined, resource_pools
from deploy.kube import pod_security

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


def test_tasks_get_baseline_by_default_and_the_master_namespace_too():
    cfg = make_config(checkpointStorage=S3)
    assert resource_pools.task_privileges(cfg) == []
    assert levels(cfg) == ("baseline", {"det-a100": "baseline", "det-aux": "baseline"})
    labels = determined.namespace(cfg)["metadata"]["labels"]
    assert (
        labels["pod-security.kubernetes.io/audit"]
        == labels["pod-security.kubernetes.io/warn"]
        == "restricted"
    )


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
    assert levels(cfg) == ("privileged", {"det-a100": "privileged", "det-aux": "privileged"})
