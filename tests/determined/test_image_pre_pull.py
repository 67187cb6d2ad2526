"""nodePools[].prePullImages: a DaemonSet per such node pool pulls the task images of the
resource pools on it as soon as a node starts, on those nodes only, meeting Pod Security
`restricted`, with the deployment's pull Secrets; the stack exports the images tasks run
(`taskImages`), Determined's defaults per master version unless taskContainerDefaults.images
names a mirror. The defaults are read back from the master's source where a copy is at hand."""

from __future__ import annotations

import copy
import subprocess
from functools import cache

import pytest
from conftest import EKS, GKE, config_problems, with_pool
from planning import by_kind, plan_for
from test_master_images import SOURCE, needs_source

from components import constants, versions
from components.kube import pod_security, validation
from plan import kube_check, policy_check
from policies import catalog
from policies.rule import Context

DIGEST = "@sha256:" + "cd" * 32
MIRROR = {
    "cpu": f"registry.example.com/determinedai/pytorch-ngc-cpu:0.38.1{DIGEST}",
    "gpu": f"registry.example.com/determinedai/pytorch-ngc:0.38.1{DIGEST}",
}


def _gpu_pool_pre_pulled(base: dict, **more) -> dict:
    raw = with_pool(base, 1, prePullImages=True)
    return {**raw, **more}


@cache
def _eks_plan():
    return plan_for(_gpu_pool_pre_pulled(EKS, imagePullSecrets=["corp-registry"]))


def _daemonsets(result) -> dict[str, dict]:
    return {d["metadata"]["name"]: d for d in by_kind(result, "DaemonSet") if _ours(d)}


def _ours(obj: dict) -> bool:
    return obj["metadata"]["labels"].get("app.kubernetes.io/name") == constants.IMAGE_PRE_PULL_COMPONENT


def _pod(daemonset: dict) -> dict:
    return daemonset["spec"]["template"]["spec"]


def _pulled(daemonset: dict) -> list[str]:
    return [c["image"] for c in _pod(daemonset)["initContainers"]]


# --- where it runs ---------------------------------------------------------------------------


def test_one_daemonset_on_exactly_the_nodes_of_the_pool_that_asks():
    (daemonset,) = _daemonsets(_eks_plan()).values()
    assert daemonset["metadata"]["name"] == "determined-pre-pull-a100"
    assert daemonset["metadata"]["namespace"] == "determined"
    pod = _pod(daemonset)
    assert pod["nodeSelector"] == {constants.NODE_POOL_LABEL: "a100"}
    # Exactly the GPU pool's taint: it must not land on (or keep off) other pools' nodes.
    assert pod["tolerations"] == [
        {"key": "nvidia.com/gpu", "operator": "Equal", "value": "present", "effect": "NoSchedule"}
    ]
    # Never takes a GPU away from a task.
    for container in [*pod["initContainers"], *pod["containers"]]:
        assert "nvidia.com/gpu" not in str(container["resources"])


def test_the_pool_taints_a_compute_class_and_its_selector_come_along():
    raw = with_pool(
        GKE,
        1,
        prePullImages=True,
        taints=[{"key": "team", "value": "vision", "effect": "NoSchedule"}],
        capacity={"types": ["spot", "onDemand"]},
    )
    raw["resourcePools"][0]["quota"] = {"gpu": 4}
    (daemonset,) = _daemonsets(plan_for(raw)).values()
    pod = _pod(daemonset)
    assert pod["nodeSelector"] == {
        constants.NODE_POOL_LABEL: "a100",
        "cloud.google.com/compute-class": "determined-a100",
    }
    assert [(t["key"], t["value"]) for t in pod["tolerations"]] == [
        ("nvidia.com/gpu", "present"),
        ("team", "vision"),
        ("cloud.google.com/compute-class", "determined-a100"),
    ]


def test_no_daemonset_without_the_flag_and_the_flag_refused_without_resource_pools_on_the_pool():
    assert _daemonsets(plan_for(EKS)) == {}
    # The flag on a pool no resource pool uses: nothing of Determined's runs there to pull for,
    # which validation says rather than ignore it.
    raw = copy.deepcopy(EKS)
    raw["nodePools"].append({"name": "spare", "machineType": "m6i.2xlarge", "prePullImages": True})
    (problem,) = config_problems(raw)
    assert problem.startswith("nodePools[2].prePullImages: no resource pool runs on node pool")


def test_each_pool_gets_its_own_daemonset_with_a_selector_of_its_own():
    raw = with_pool(_gpu_pool_pre_pulled(EKS), 0, prePullImages=True)
    found = _daemonsets(plan_for(raw))
    assert set(found) == {"determined-pre-pull-system", "determined-pre-pull-a100"}
    selectors = [tuple(sorted(d["spec"]["selector"]["matchLabels"].items())) for d in found.values()]
    assert len(set(selectors)) == 2
    for daemonset in found.values():
        labels = daemonset["spec"]["template"]["metadata"]["labels"]
        assert daemonset["spec"]["selector"]["matchLabels"].items() <= labels.items()
    # The CPU pool is untainted: its pods tolerate nothing.
    assert "tolerations" not in _pod(found["determined-pre-pull-system"])


# --- what it pulls ---------------------------------------------------------------------------


def test_it_pulls_the_versions_default_image_once_when_cpu_and_gpu_share_it():
    (daemonset,) = _daemonsets(_eks_plan()).values()
    assert _pulled(daemonset) == ["determinedai/pytorch-ngc:0.38.1"]
    assert _eks_plan().outputs["taskImages"] == {
        "cpu": "determinedai/pytorch-ngc:0.38.1",
        "gpu": "determinedai/pytorch-ngc:0.38.1",
    }


def test_a_gpu_pool_pulls_the_gpu_image_first_then_the_cpu_one_a_cpu_pool_the_cpu_one():
    raw = with_pool(_gpu_pool_pre_pulled(EKS, master={"version": "0.33.0"}), 0, prePullImages=True)
    found = _daemonsets(plan_for(raw))
    assert _pulled(found["determined-pre-pull-a100"]) == [
        "determinedai/pytorch-tensorflow-cuda:0.33.0",
        "determinedai/pytorch-tensorflow-cpu:0.33.0",
    ]
    assert _pulled(found["determined-pre-pull-system"]) == ["determinedai/pytorch-tensorflow-cpu:0.33.0"]


def test_cpu_slots_pull_only_the_cpu_image_even_on_gpu_nodes():
    raw = _gpu_pool_pre_pulled(EKS, master={"version": "0.33.0"}, slots={"type": "cpu", "maxSlotsPerPod": 4})
    (daemonset,) = _daemonsets(plan_for(raw)).values()
    assert _pulled(daemonset) == ["determinedai/pytorch-tensorflow-cpu:0.33.0"]


def test_a_mirror_is_what_is_pulled_and_exported():
    result = plan_for(_gpu_pool_pre_pulled(EKS, taskContainerDefaults={"images": MIRROR}))
    (daemonset,) = _daemonsets(result).values()
    assert _pulled(daemonset) == [MIRROR["gpu"], MIRROR["cpu"]]
    assert result.outputs["taskImages"] == MIRROR
    # One mirrored kind, the other Determined's.
    result = plan_for({**EKS, "taskContainerDefaults": {"images": {"gpu": MIRROR["gpu"]}}})
    assert result.outputs["taskImages"] == {"cpu": "determinedai/pytorch-ngc:0.38.1", "gpu": MIRROR["gpu"]}


def test_each_init_container_only_pulls_and_the_pause_container_keeps_the_pod():
    pod = _pod(next(iter(_daemonsets(_eks_plan()).values())))
    for init in pod["initContainers"]:
        assert init["command"] == ["/bin/true"] and init["imagePullPolicy"] == "IfNotPresent"
    (pause,) = pod["containers"]
    assert pause["image"] == versions.PAUSE_IMAGE and "command" not in pause


# --- how it runs -----------------------------------------------------------------------------


@pytest.mark.parametrize("version", ["0.34.0", "0.38.1"])
def test_it_meets_restricted_in_the_masters_namespace_which_enforces_it(version):
    result = plan_for(_gpu_pool_pre_pulled(EKS, master={"version": version}))
    (daemonset,) = _daemonsets(result).values()
    assert pod_security.restricted_problems(daemonset["spec"]["template"]) == []
    pod = _pod(daemonset)
    assert pod["automountServiceAccountToken"] is False
    for container in [*pod["initContainers"], *pod["containers"]]:
        assert container["securityContext"]["readOnlyRootFilesystem"] is True
        assert set(container["resources"]) == {"requests", "limits"}
        assert "memory" in container["resources"]["limits"]
    (namespace,) = [n for n in by_kind(result, "Namespace") if n["metadata"]["name"] == "determined"]
    if version == "0.38.1":  # 0.34 runs tasks in the master's namespace: it enforces their level
        assert namespace["metadata"]["labels"]["pod-security.kubernetes.io/enforce"] == "restricted"


def test_it_pulls_with_every_pull_secret_of_the_deployment():
    credentials = {"server": "registry.example.com", "username": "u", "password": "Registry-Pass-1"}
    raw = _gpu_pool_pre_pulled(EKS, imagePullSecrets=["corp-registry"], registryCredentials=credentials)
    result = plan_for(raw, secret_keys=["determined:registryCredentials"])
    (daemonset,) = _daemonsets(result).values()
    assert _pod(daemonset)["imagePullSecrets"] == [
        {"name": "corp-registry"},
        {"name": constants.REGISTRY_SECRET},
    ]
    # The project's registry Secret is in the namespace the pods pull in.
    secrets = by_kind(result, "Secret")
    assert any(
        s["metadata"]["name"] == constants.REGISTRY_SECRET and s["metadata"]["namespace"] == "determined"
        for s in secrets
    )


def test_up_does_not_wait_for_the_pulls_and_every_node_gets_new_images_at_once():
    (daemonset,) = _daemonsets(_eks_plan()).values()
    assert daemonset["metadata"]["annotations"]["pulumi.com/skipAwait"] == "true"
    assert daemonset["spec"]["updateStrategy"]["rollingUpdate"]["maxUnavailable"] == "100%"


def test_the_api_server_and_the_policy_pack_accept_it():
    result = _eks_plan()
    (daemonset,) = _daemonsets(result).values()
    assert list(validation.problems(copy.deepcopy(daemonset))) == []
    assert kube_check.violations(result.resources, result.master_yaml) == []
    ordered = sorted(result.recorder.resources, key=lambda r: r.urn)
    found = policy_check.evaluate(catalog.policies(Context("prod", "eks")), ordered, result.secrets)
    about_it = [v for v in found if "pre-pull" in v["message"]]
    assert about_it == []


# --- Determined's default task images ------------------------------------------------------


def test_default_images_follow_the_table_and_the_ngc_rule():
    assert versions.default_task_image("0.26.3")["cpu"].endswith("-cpu-2b7e2a1")
    assert versions.default_task_image("0.26.4")["gpu"].endswith("-gpu-622d512")
    assert versions.default_task_image("0.33.0") == {
        "cpu": "determinedai/pytorch-tensorflow-cpu:0.33.0",
        "gpu": "determinedai/pytorch-tensorflow-cuda:0.33.0",
    }
    assert versions.default_task_image("0.35.1") == {
        "cpu": "determinedai/pytorch-ngc:0.35.1",
        "gpu": "determinedai/pytorch-ngc:0.35.1",
    }
    with pytest.raises(ValueError):
        versions.default_task_image("0.25.0")


def _release_tags() -> list[str]:
    tags = subprocess.run(
        ["git", "-C", str(SOURCE), "tag", "--list"], capture_output=True, text=True, check=True
    ).stdout.split()
    found = []
    for tag in tags:
        parts = tag.lstrip("v").split(".")
        numeric = len(parts) == 3 and all(p.isdigit() for p in parts)
        if numeric and tuple(map(int, parts)) >= versions.MIN_DETERMINED_VERSION:
            found.append(tag)
    return found


@needs_source
def test_the_table_is_what_every_release_since_the_oldest_supported_compiles_in():
    tags = _release_tags()
    assert "v0.38.1" in tags and "0.26.0" in tags
    for tag in tags:
        const = subprocess.run(
            ["git", "-C", str(SOURCE), "show", f"{tag}:master/pkg/schemas/expconf/const.go"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.splitlines()
        cpu, gpu = (line.split('"')[1] for line in const[10:12])
        assert "CPUImage" in const[10] and "CUDAImage" in const[11], tag
        assert versions.default_task_image(tag.lstrip("v")) == {"cpu": cpu, "gpu": gpu}, tag
