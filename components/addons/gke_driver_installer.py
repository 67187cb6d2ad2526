"""Google's NVIDIA driver installer DaemonSet for GKE, pinned.

With the GPU operator, GKE GPU node pools are created with `gpu_driver_version:
INSTALLATION_DISABLED`; this DaemonSet then installs the drivers on those nodes, as NVIDIA's
GKE page for the operator says. Its content is GoogleCloudPlatform/container-engine-accelerators'
`nvidia-driver-installer/{cos,ubuntu}/daemonset-preloaded.yaml` at `SOURCE_COMMIT`, as data
instead of a branch URL, so that a deploy applies what was reviewed.
"""

from __future__ import annotations

import copy
from typing import Any

from components import constants
from components.kube.manifests import PART_OF

SOURCE_REPOSITORY = "https://github.com/GoogleCloudPlatform/container-engine-accelerators"
# The newest commit touching either file (2025-07-02, "cgpu-manifest"); the ubuntu file last
# changed in 22f1e653 (2024-06-12) and is the same at this commit.
SOURCE_COMMIT = "f2cf4197a5c3f0f20133be15d5fad8b7453beed5"
SOURCE_PATHS = {
    "COS_CONTAINERD": "nvidia-driver-installer/cos/daemonset-preloaded.yaml",
    "UBUNTU_CONTAINERD": "nvidia-driver-installer/ubuntu/daemonset-preloaded.yaml",
}

NAMESPACE = constants.GKE_DRIVER_INSTALLER_NAMESPACE
NAME = constants.GKE_DRIVER_INSTALLER_NAME

# Selects the pods; the same in both files and never changed here (a selector is immutable).
_POD_LABELS = {"name": NAME, "k8s-app": NAME}

# Both files use this pause container to keep the pod running once the init containers are done.
_PAUSE = {
    "image": "gke.gcr.io/pause:3.8@sha256:880e63f94b145e46f1b1082bb71b85e21f16b99b180b9996407d61240ceb9830",
    "name": "pause",
}

# GPU nodes whose driver GKE does not install itself (those carry gke-gpu-driver-version).
_GPU_NODES_WITHOUT_GKE_DRIVER = [
    {"key": "cloud.google.com/gke-accelerator", "operator": "Exists"},
    {"key": "cloud.google.com/gke-gpu-driver-version", "operator": "DoesNotExist"},
]

# The parts of the pod spec that differ between the two files, in upstream's order.
_COS_POD_SPEC: dict[str, Any] = {
    "affinity": {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [
                    {
                        "matchExpressions": [
                            *_GPU_NODES_WITHOUT_GKE_DRIVER,
                            # Confidential GPU nodes have their own DaemonSet upstream.
                            {
                                "key": "cloud.google.com/gke-confidential-nodes-instance-type",
                                "operator": "DoesNotExist",
                            },
                        ]
                    }
                ]
            }
        }
    },
    "tolerations": [{"operator": "Exists"}],
    "hostNetwork": True,
    "hostPID": True,
    "volumes": [
        {"name": "dev", "hostPath": {"path": "/dev"}},
        {"name": "vulkan-icd-mount", "hostPath": {"path": "/home/kubernetes/bin/nvidia/vulkan/icd.d"}},
        {"name": "nvidia-install-dir-host", "hostPath": {"path": "/home/kubernetes/bin/nvidia"}},
        {"name": "root-mount", "hostPath": {"path": "/"}},
        {"name": "cos-tools", "hostPath": {"path": "/var/lib/cos-tools"}},
        {"name": "nvidia-config", "hostPath": {"path": "/etc/nvidia"}},
    ],
    "initContainers": [
        {
            # Preloaded on the node by GKE to match its COS version, hence never pulled.
            "image": "cos-nvidia-installer:fixed",
            "imagePullPolicy": "Never",
            "name": "nvidia-driver-installer",
            "resources": {"requests": {"cpu": "150m"}},
            "securityContext": {"privileged": True},
            "env": [
                {"name": "NVIDIA_INSTALL_DIR_HOST", "value": "/home/kubernetes/bin/nvidia"},
                {"name": "NVIDIA_INSTALL_DIR_CONTAINER", "value": "/usr/local/nvidia"},
                {"name": "VULKAN_ICD_DIR_HOST", "value": "/home/kubernetes/bin/nvidia/vulkan/icd.d"},
                {"name": "VULKAN_ICD_DIR_CONTAINER", "value": "/etc/vulkan/icd.d"},
                {"name": "ROOT_MOUNT_DIR", "value": "/root"},
                {"name": "COS_TOOLS_DIR_HOST", "value": "/var/lib/cos-tools"},
                {"name": "COS_TOOLS_DIR_CONTAINER", "value": "/build/cos-tools"},
            ],
            "volumeMounts": [
                {"name": "nvidia-install-dir-host", "mountPath": "/usr/local/nvidia"},
                {"name": "vulkan-icd-mount", "mountPath": "/etc/vulkan/icd.d"},
                {"name": "dev", "mountPath": "/dev"},
                {"name": "root-mount", "mountPath": "/root"},
                {"name": "cos-tools", "mountPath": "/build/cos-tools"},
            ],
            "command": [
                "bash",
                "-c",
                'echo "Checking for existing GPU driver modules"\n'
                "if lsmod | grep nvidia; then\n"
                '  echo "GPU driver is already installed, the installed version may or may not be the'
                ' driver version being tried to install, skipping installation"\n'
                "  exit 0\n"
                "else\n"
                '  echo "No GPU driver module detected, installing now"\n'
                "  /cos-gpu-installer install || exit 1\n"
                "fi\n",
            ],
        },
        {
            # Applies the GPU partitioning (MIG) configured for the node pool, if any.
            "image": "gcr.io/gke-release/nvidia-partition-gpu"
            "@sha256:de12f85ebfb4fb6c1893cd30c23aab662a72fa0448f97ef74fccb82d7522ef17",
            "name": "partition-gpus",
            "env": [{"name": "LD_LIBRARY_PATH", "value": "/usr/local/nvidia/lib64"}],
            "resources": {"requests": {"cpu": "150m"}},
            "securityContext": {"privileged": True},
            "volumeMounts": [
                {"name": "nvidia-install-dir-host", "mountPath": "/usr/local/nvidia"},
                {"name": "dev", "mountPath": "/dev"},
                {"name": "nvidia-config", "mountPath": "/etc/nvidia"},
            ],
        },
    ],
}

_UBUNTU_POD_SPEC: dict[str, Any] = {
    "affinity": {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [{"matchExpressions": _GPU_NODES_WITHOUT_GKE_DRIVER}]
            }
        }
    },
    "tolerations": [{"operator": "Exists"}],
    "volumes": [
        {"name": "dev", "hostPath": {"path": "/dev"}},
        {"name": "boot", "hostPath": {"path": "/boot"}},
        {"name": "root-mount", "hostPath": {"path": "/"}},
    ],
    "initContainers": [
        {
            # Preloaded on the node by GKE to match its Ubuntu kernel (upstream sets no pull
            # policy: IfNotPresent, the default for a tag other than latest, finds it there).
            "image": "gke-nvidia-installer:fixed",
            "name": "nvidia-driver-installer",
            "resources": {"requests": {"cpu": "150m"}},
            "securityContext": {"privileged": True},
            "volumeMounts": [
                {"name": "boot", "mountPath": "/boot"},
                {"name": "dev", "mountPath": "/dev"},
                {"name": "root-mount", "mountPath": "/root"},
            ],
        }
    ],
}

_POD_SPECS = {"COS_CONTAINERD": _COS_POD_SPEC, "UBUNTU_CONTAINERD": _UBUNTU_POD_SPEC}
IMAGE_TYPES = tuple(_POD_SPECS)


def daemonset(image_type: str) -> dict[str, Any]:
    """The driver installer DaemonSet for GPU node pools of `image_type` (GKE's node image)."""
    if image_type not in _POD_SPECS:
        allowed = ", ".join(IMAGE_TYPES)
        raise ValueError(f"no NVIDIA driver installer for image type {image_type!r}; use one of {allowed}")
    pod_spec = {
        "priorityClassName": "system-node-critical",
        **_POD_SPECS[image_type],
        "containers": [_PAUSE],
    }
    obj = {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {
            "name": NAME,
            "namespace": NAMESPACE,
            "labels": {
                "k8s-app": NAME,
                "app.kubernetes.io/managed-by": "pulumi",
                "app.kubernetes.io/part-of": PART_OF,
            },
        },
        "spec": {
            "selector": {"matchLabels": {"k8s-app": NAME}},
            "updateStrategy": {"type": "RollingUpdate"},
            "template": {"metadata": {"labels": _POD_LABELS}, "spec": pod_spec},
        },
    }
    # Callers may edit what they get; the module's data must stay as upstream has it.
    return copy.deepcopy(obj)
