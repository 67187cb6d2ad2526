"""Google's NVIDIA driver installer DaemonSet, pinned from container-engine-accelerators."""

from __future__ import annotations

import re

import pytest

from components.addons import gke_driver_installer
from components.addons.gke_driver_installer import daemonset
from components.kube import validation

IMAGE_TYPES = ["COS_CONTAINERD", "UBUNTU_CONTAINERD"]


def pod_spec(obj):
    return obj["spec"]["template"]["spec"]


def all_containers(obj):
    spec = pod_spec(obj)
    return spec.get("initContainers", []) + spec["containers"]


def images(obj):
    return {c["image"] for c in all_containers(obj)}


def is_pinned(image: str) -> bool:
    """A sha256 digest, or else a tag other than latest (the tag follows the last '/')."""
    name, _, digest = image.partition("@")
    if digest:
        return re.fullmatch(r"sha256:[0-9a-f]{64}", digest) is not None
    last = name.rsplit("/", 1)[-1]
    tag = last.partition(":")[2]
    return tag not in ("", "latest")


def match_expressions(obj):
    terms = pod_spec(obj)["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][
        "nodeSelectorTerms"
    ]
    assert len(terms) == 1  # terms are ORed: a second one could widen the target
    return {(e["key"], e["operator"], tuple(e.get("values", ()))) for e in terms[0]["matchExpressions"]}


def test_source_is_pinned_to_a_full_commit():
    assert re.fullmatch(r"[0-9a-f]{40}", gke_driver_installer.SOURCE_COMMIT)


@pytest.mark.parametrize("image_type", IMAGE_TYPES)
def test_valid_against_the_kubernetes_schema(image_type):
    assert list(validation.problems(daemonset(image_type))) == []


@pytest.mark.parametrize("image_type", IMAGE_TYPES)
def test_name_namespace_and_labels(image_type):
    obj = daemonset(image_type)
    assert (obj["apiVersion"], obj["kind"]) == ("apps/v1", "DaemonSet")
    assert obj["metadata"]["name"] == gke_driver_installer.NAME == "nvidia-driver-installer"
    assert obj["metadata"]["namespace"] == gke_driver_installer.NAMESPACE == "kube-system"
    assert obj["metadata"]["labels"] == {
        "k8s-app": "nvidia-driver-installer",
        "app.kubernetes.io/managed-by": "pulumi",
        "app.kubernetes.io/part-of": "determined",
    }
    # Upstream's selector and pod labels, untouched: the selector must keep matching the pods.
    assert obj["spec"]["selector"] == {"matchLabels": {"k8s-app": "nvidia-driver-installer"}}
    assert obj["spec"]["template"]["metadata"]["labels"] == {
        "name": "nvidia-driver-installer",
        "k8s-app": "nvidia-driver-installer",
    }


@pytest.mark.parametrize("image_type", IMAGE_TYPES)
def test_every_image_is_pinned(image_type):
    unpinned = sorted(image for image in images(daemonset(image_type)) if not is_pinned(image))
    assert unpinned == []


@pytest.mark.parametrize(
    ("image", "pinned"),
    [
        ("gke.gcr.io/pause:3.8@sha256:" + "a" * 64, True),
        ("gcr.io/gke-release/nvidia-partition-gpu@sha256:" + "0" * 64, True),
        ("cos-nvidia-installer:fixed", True),
        ("localhost:5000/installer:1.2", True),
        ("cos-nvidia-installer:latest", False),
        ("cos-nvidia-installer", False),
        ("localhost:5000/installer", False),
        ("gcr.io/x/y@sha256:short", False),
    ],
)
def test_is_pinned_itself(image, pinned):
    assert is_pinned(image) is pinned


@pytest.mark.parametrize("image_type", IMAGE_TYPES)
def test_tolerates_every_taint(image_type):
    # So it lands on GPU nodes tainted nvidia.com/gpu=present:NoSchedule, and any other.
    tolerations = pod_spec(daemonset(image_type))["tolerations"]
    assert {"operator": "Exists"} in tolerations


@pytest.mark.parametrize("image_type", IMAGE_TYPES)
def test_targets_gpu_nodes_whose_driver_gke_does_not_install(image_type):
    expressions = match_expressions(daemonset(image_type))
    assert ("cloud.google.com/gke-accelerator", "Exists", ()) in expressions
    # Nodes with a GKE-installed driver carry this label; INSTALLATION_DISABLED ones do not.
    assert ("cloud.google.com/gke-gpu-driver-version", "DoesNotExist", ()) in expressions
    assert "nodeSelector" not in pod_spec(daemonset(image_type))


def test_node_affinity_per_image_type():
    # Upstream selects no OS/image label: each file is meant for clusters of its image type.
    # COS alone leaves confidential GPU nodes to their own upstream DaemonSet.
    common = {
        ("cloud.google.com/gke-accelerator", "Exists", ()),
        ("cloud.google.com/gke-gpu-driver-version", "DoesNotExist", ()),
    }
    confidential = ("cloud.google.com/gke-confidential-nodes-instance-type", "DoesNotExist", ())
    assert match_expressions(daemonset("COS_CONTAINERD")) == common | {confidential}
    assert match_expressions(daemonset("UBUNTU_CONTAINERD")) == common


def test_installer_matches_the_node_image():
    def installer(image_type):
        (container,) = [
            c
            for c in pod_spec(daemonset(image_type))["initContainers"]
            if c["name"] == "nvidia-driver-installer"
        ]
        return container

    cos, ubuntu = installer("COS_CONTAINERD"), installer("UBUNTU_CONTAINERD")
    assert cos["image"] == "cos-nvidia-installer:fixed"
    assert cos["imagePullPolicy"] == "Never"  # preloaded on COS nodes by GKE
    assert ubuntu["image"] == "gke-nvidia-installer:fixed"
    assert cos["securityContext"] == ubuntu["securityContext"] == {"privileged": True}


def test_image_types_differ():
    cos, ubuntu = daemonset("COS_CONTAINERD"), daemonset("UBUNTU_CONTAINERD")
    assert images(cos) != images(ubuntu)
    assert pod_spec(cos)["volumes"] != pod_spec(ubuntu)["volumes"]


@pytest.mark.parametrize("image_type", ["UBUNTU", "cos_containerd", "COS", "WINDOWS_LTSC_CONTAINERD", ""])
def test_unknown_image_type_is_refused(image_type):
    with pytest.raises(ValueError, match="COS_CONTAINERD, UBUNTU_CONTAINERD"):
        daemonset(image_type)


def test_returns_a_fresh_object_each_time():
    first = daemonset("COS_CONTAINERD")
    pod_spec(first)["tolerations"].clear()
    first["metadata"]["labels"]["extra"] = "x"
    second = daemonset("COS_CONTAINERD")
    assert pod_spec(second)["tolerations"] == [{"operator": "Exists"}]
    assert "extra" not in second["metadata"]["labels"]
