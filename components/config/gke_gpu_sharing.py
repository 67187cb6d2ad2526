"""GPU sharing on GKE nodes, as data: the MIG partition sizes each GPU takes and how many
partitions of a size fit on one GPU, and what time-sharing and MPS make of a GPU.

GKE-managed drivers advertise every MIG partition as one `nvidia.com/gpu` (a node's GPUs are
all partitioned alike, GKE's "single" strategy), and with time-sharing or MPS every GPU (or
partition) as `maxSharedClientsPerGpu` of them. A task asks for `nvidia.com/gpu` in those
units, so Kueue's quotas and Determined's slots count them: `exposed_gpus_per_node`.
"""

from __future__ import annotations

from components.config.node_pools import GkeGpuConfig, NodePool

# Accelerator type -> MIG partition size -> partitions of that size on one GPU (GKE makes
# as many as fit, all of one size).
# Sources: GKE "Running multi-instance GPUs"
# https://cloud.google.com/kubernetes-engine/docs/how-to/gpus-multi (read 2026-11): the GPUs
# that take MIG and the [compute]g.[memory]gb syntax; GKE's node partitioner, which creates
# the partitions and fails the node on a size it does not know ("is not a valid partition
# size"): GoogleCloudPlatform/container-engine-accelerators partition_gpu/partition_gpu.go,
# partitionSizeMaxCount with its per-GPU comments, commit 992db812 (read 2026-11); the counts
# as NVIDIA gives them: MIG user guide "Supported MIG Profiles"
# https://docs.nvidia.com/datacenter/tesla/mig-user-guide/supported-mig-profiles.html and
# NVIDIA/mig-parted deployments/systemd/config-default.yaml (the all-<size> configs), commit
# bd7160f4 (read 2026-11).
_H100: dict[str, int] = {"1g.10gb": 7, "1g.20gb": 4, "2g.20gb": 3, "3g.40gb": 2, "4g.40gb": 1, "7g.80gb": 1}
MIG_PARTITIONS: dict[str, dict[str, int]] = {
    "nvidia-tesla-a100": {"1g.5gb": 7, "2g.10gb": 3, "3g.20gb": 2, "4g.20gb": 1, "7g.40gb": 1},
    "nvidia-a100-80gb": {"1g.10gb": 7, "2g.20gb": 3, "3g.40gb": 2, "4g.40gb": 1, "7g.80gb": 1},
    "nvidia-h100-80gb": _H100,
    # A3 Mega carries the same H100 80GB HBM3 part, which the partitioner knows by that name.
    "nvidia-h100-mega-80gb": _H100,
    "nvidia-h200-141gb": {
        "1g.18gb": 7,
        "1g.35gb": 4,
        "2g.35gb": 3,
        "3g.71gb": 2,
        "4g.71gb": 1,
        "7g.141gb": 1,
    },
    "nvidia-b200": {"1g.23gb": 7, "1g.45gb": 4, "2g.45gb": 3, "3g.90gb": 2, "4g.90gb": 1, "7g.180gb": 1},
    "nvidia-gb200": {"1g.23gb": 7, "1g.47gb": 4, "2g.47gb": 3, "3g.93gb": 2, "4g.93gb": 1, "7g.186gb": 1},
    # RTX PRO 6000: four compute slices; +me/+gfx variants carry the media or graphics engines.
    "nvidia-rtx-pro-6000": {
        "1g.24gb": 4,
        "1g.24gb+me": 1,
        "1g.24gb+gfx": 4,
        "1g.24gb+me.all": 1,
        "1g.24gb-me": 4,
        "2g.48gb": 2,
        "2g.48gb+gfx": 2,
        "2g.48gb+me.all": 1,
        "2g.48gb-me": 2,
        "4g.96gb": 1,
        "4g.96gb+gfx": 1,
    },
}
# GPUs GKE can partition with MIG.
MIG_ACCELERATORS = frozenset(MIG_PARTITIONS)

# Time-sharing and MPS: at most this many containers share one GPU (or one MIG partition).
# Source: GKE ComputeClass reference, gpuSharing.maxSharedClientsPerGPU "Valid range: 2-48"
# https://cloud.google.com/kubernetes-engine/docs/reference/crds/computeclass, and GKE
# "Share GPUs with multiple workloads using time-sharing"
# https://cloud.google.com/kubernetes-engine/docs/how-to/timesharing-gpus (read 2026-11).
MIN_SHARED_CLIENTS_PER_GPU = 2
MAX_SHARED_CLIENTS_PER_GPU = 48

# Sharing multiplies what MIG made: GKE's device plugin lists each physical device (a GPU, or
# each partition when the node is partitioned) and, with a sharing strategy, advertises
# maxSharedClientsPerGpu virtual devices for each of them; time-sharing and MPS both combine
# with MIG this way. Source: container-engine-accelerators pkg/gpu/nvidia/manager.go
# (ListPhysicalDevices, ListDevices), commit 992db812 (read 2026-11); GKE "About GPU sharing
# strategies" https://cloud.google.com/kubernetes-engine/docs/concepts/timesharing-gpus.
#
# Per container, the device plugin refuses more than one shared device under time-sharing,
# and under MPS when the node has more than one physical device ("invalid request for sharing
# GPU (time-sharing), at most 1 nvidia.com/gpu can be requested on GPU nodes"); the pod fails
# with UnexpectedAdmissionError. Source: pkg/gpu/nvidia/gpusharing/gpusharing.go
# (ValidateRequest), same commit; the message as GKE's time-sharing page shows it.


def partitions_per_gpu(accelerator: str, partition_size: str) -> int | None:
    """How many partitions of `partition_size` GKE makes on one `accelerator` GPU; None when
    GKE cannot make that partition on that GPU."""
    return MIG_PARTITIONS.get(accelerator, {}).get(partition_size)


def _gke_gpu(pool: NodePool) -> GkeGpuConfig | None:
    # EKS node groups and existing clusters have no partition or sharing settings here.
    return pool.gpu if isinstance(pool.gpu, GkeGpuConfig) else None


def sharing_strategy(pool: NodePool) -> str | None:
    """TIME_SHARING or MPS where the pool's GPUs are shared between containers."""
    gpu = _gke_gpu(pool)
    return gpu.sharing.strategy if gpu is not None and gpu.sharing else None


def partitioned(pool: NodePool) -> bool:
    """Whether the pool's GPUs are split into MIG partitions."""
    gpu = _gke_gpu(pool)
    return gpu is not None and gpu.partition_size is not None


def devices_per_node(pool: NodePool) -> int:
    """The physical devices of a node of `pool`: its GPUs, or their partitions with MIG."""
    gpu = _gke_gpu(pool)
    if gpu is None or gpu.partition_size is None:
        return pool.gpu_count
    # A size the GPU does not take is refused by validation; counted as whole GPUs meanwhile.
    return gpu.count * (partitions_per_gpu(gpu.type, gpu.partition_size) or 1)


def exposed_gpus_per_node(pool: NodePool) -> int:
    """The `nvidia.com/gpu` a node of `pool` advertises: GPUs x partitions per GPU (MIG) x
    containers per GPU or partition (time-sharing, MPS). 0 for CPU pools."""
    gpu = _gke_gpu(pool)
    clients = gpu.sharing.max_shared_clients_per_gpu if gpu is not None and gpu.sharing else 1
    return devices_per_node(pool) * clients


def gpus_per_container(pool: NodePool) -> int:
    """The most `nvidia.com/gpu` one container can use on a node of `pool`: all it
    advertises, except where the device plugin allows one shared device per container, and on
    MIG partitions, of which a CUDA process enumerates only one (NVIDIA MIG user guide, "CUDA
    Device Enumeration": with CUDA 11/R450 and CUDA 12/R525 only one MIG device is
    enumerated per process, however many the container is given;
    https://docs.nvidia.com/datacenter/tesla/mig-user-guide/mig-device-names.html, read
    2026-11): a trial of two slots there would run both workers on one partition."""
    strategy = sharing_strategy(pool)
    if strategy == "TIME_SHARING" or (strategy == "MPS" and devices_per_node(pool) > 1):
        return 1
    if partitioned(pool):
        return 1
    return exposed_gpus_per_node(pool)
