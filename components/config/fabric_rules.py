"""Rules for what a node pool's GPU fabric (nodePools[].fabric) and local NVMe scratch space
(nodePools[].localNvme) put into the task pods of the resource pools on it
(components/determined/fabric.py, components/determined/local_nvme.py), against the rest of
the configuration: the task network mode, the pod specs users write, slots per pod and the
master version. Which machines have a fabric is the cloud rules' (gke.py, eks.py)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from components import versions
from components.config import gke_gpu_sharing
from components.config.checkpoint_directory import _overlap
from components.config.errors import Add, format_path
from components.config.resource_pools import Clash, mount_clashes, volume_clashes

if TYPE_CHECKING:
    from components.config.stack import StackConfig

# The scratch volume's name in task pods (components/determined/local_nvme.py mounts it).
SCRATCH_VOLUME = "scratch"

# Determined 0.34.0 is the first whose master decodes pod specs with a k8s.io/api that knows
# Container.restartPolicy (v0.28.3 in go.mod at 0.34.0 and v0.38.1; v0.20.14 at 0.33.0):
# older masters drop it and the TCPXO daemon, a native sidecar, would block the pod forever.
# The RDMA fabric sources gIB's NCCL settings from the pool's startup_hook (0.31.0+).
FABRIC_MASTER_SINCE = {"tcpxo": (0, 34, 0), "rdma": versions.STARTUP_HOOK_SINCE}


def _fabric(pool: Any) -> str | None:
    return getattr(pool, "fabric", None)


# Directories GKE and the fabric layers mount into a GPU task container
# (components/determined/fabric.py GKE_FABRICS): another mount at one of them, above or below,
# would be a duplicate mountPath, which the API server refuses (the Job's pods are never
# created), or would shadow the driver's libraries.
# - GKE mounts the node's NVIDIA driver at /usr/local/nvidia in every GPU container ("CUDA
#   libraries ... in /usr/local/nvidia/lib64": https://cloud.google.com/kubernetes-engine/docs/
#   how-to/gpus, read 2026-11), and the RDMA layer mounts the host's copy there itself.
# - TCPXO: /usr/local/nvidia/lib64 and /dev/aperture_devices; RDMA: /usr/local/gib (gIB).
GKE_GPU_PATHS = {"/usr/local/nvidia": "GKE's NVIDIA driver mount in GPU containers"}
FABRIC_PATHS = {
    "tcpxo": {
        "/usr/local/nvidia/lib64": "the TCPXO fabric's NVIDIA and NCCL plugin libraries",
        "/dev/aperture_devices": "the TCPXO fabric's aperture devices",
    },
    "rdma": {
        "/usr/local/nvidia": "the RDMA fabric's NVIDIA libraries",
        "/usr/local/gib": "the RDMA fabric's gIB NCCL plugin",
    },
    "efa": {},
}


def reserved_paths(cfg: StackConfig, rp: Any) -> dict[str, str]:
    """{path: what is mounted there} in the GPU task containers of resource pool `rp`: GKE's
    driver directory on GKE GPU node pools, and the fabric's mounts where the pool takes it."""
    pool = next((p for p in cfg.node_pools if p.name == rp.node_pool), None)
    if pool is None:
        return {}
    found: dict[str, str] = {}
    if cfg.cloud == "gke" and getattr(pool, "gpu", None):
        found |= GKE_GPU_PATHS
    fabric = _fabric(pool)
    if fabric and getattr(rp, "fabric", True):
        found |= FABRIC_PATHS.get(fabric, {})
    return found


def reserved_clash(cfg: StackConfig, rp: Any, path: str) -> str | None:
    """What `path` would collide with in pool `rp`'s GPU task containers (the closest), or None."""
    for taken, what in sorted(reserved_paths(cfg, rp).items(), key=lambda item: -len(item[0])):
        if _overlap(path, taken):
            return f"{taken} ({what})"
    return None


def _scratch_clashes(spec: dict[str, Any], mount_path: str) -> Iterator[Clash]:
    """Where a pod spec as written collides with the scratch volume (a user's `scratch` volume
    would replace the emptyDir, a mount at its path would take the scratch space's place)."""
    yield from volume_clashes(
        spec, {SCRATCH_VOLUME: "the local NVMe scratch space's (nodePools[].localNvme)"}
    )
    yield from mount_clashes(
        spec,
        {mount_path: "where the local NVMe scratch space is mounted (nodePools[].localNvme.mountPath)"},
    )


def fabric_task_problems(cfg: StackConfig, add: Add) -> None:
    """Task pods on fabric and local-NVMe node pools: pods on their own network, pod specs
    that leave the scratch volume alone, one task pod per fabric node, a master that keeps
    what the fabric adds."""
    index = {pool.name: i for i, pool in enumerate(cfg.node_pools)}
    pools = [(rp, cfg.node_pools[index[rp.node_pool]]) for rp in cfg.resource_pools if rp.node_pool in index]
    # Pools that take the fabric (resourcePools[].fabric false opts out).
    fabric_pools = [(rp, pool) for rp, pool in pools if _fabric(pool) and rp.fabric]
    tcd = cfg.task_container_defaults
    rp_index = {id(rp): i for i, rp in enumerate(cfg.resource_pools)}
    for rp, pool in pools:
        if not rp.fabric and not _fabric(pool):
            add(
                f"resourcePools[{rp_index[id(rp)]}].fabric",
                f"false opts out of a GPU fabric, but node pool {pool.name!r} has none (nodePools[].fabric); "
                "remove it",
            )

    if tcd.network_mode == "host" and fabric_pools:
        names = ", ".join(sorted({f"nodePools[{index[pool.name]}].fabric" for _, pool in fabric_pools}))
        add(
            "taskContainerDefaults.networkMode",
            f"host puts task pods on the node's network, but GPU fabric pools ({names}) give their "
            "tasks interfaces of their own (eth0 for NCCL's sockets and dtrain_network_interface; on GKE "
            "the fabric NICs the networking.gke.io/interfaces annotation attaches); use bridge",
        )

    slots = cfg.slots.max_slots_per_pod
    for rp, pool in fabric_pools:
        where = f"nodePools[{index[pool.name]}].fabric"
        per_node = gke_gpu_sharing.gpus_per_container(pool) if pool.gpu else 0
        if slots and per_node and slots != per_node:
            add(
                "slots.maxSlotsPerPod",
                f"{slots}: resource pool {rp.name!r} runs on node pool {pool.name!r} "
                f"(fabric {_fabric(pool)}), whose fabric devices and networks one task pod per node takes, "
                f"so its pods take the node's {per_node} GPUs (multi-node trials: multiples of {per_node} "
                f"slots); set {per_node} or leave it unset",
            )
    for pool in {pool.name: pool for _, pool in fabric_pools}.values():
        since = FABRIC_MASTER_SINCE.get(str(_fabric(pool)))
        if since and cfg.master.version_tuple < since:
            add(
                f"nodePools[{index[pool.name]}].fabric",
                f"{_fabric(pool)} needs master.version {'.'.join(map(str, since))} or newer"
                + (
                    " (older masters drop the restartPolicy of the tcpxo-daemon sidecar, which then "
                    "never lets the task start)"
                    if _fabric(pool) == "tcpxo"
                    else " (the pool's startup_hook sources gIB's NCCL settings)"
                ),
            )

    # The scratch space's path: not over the driver's or the fabric's mounts of GPU tasks.
    for rp, pool in pools:
        nvme = getattr(pool, "local_nvme", None)
        clash = reserved_clash(cfg, rp, nvme.mount_path) if nvme is not None else None
        if clash:
            add(
                f"nodePools[{index[pool.name]}].localNvme.mountPath",
                f"{nvme.mount_path} overlaps {clash} in the GPU tasks of resource pool {rp.name!r}; "
                "choose a directory of its own",
            )

    # The scratch volume: the pool's own podSpec, and the defaults every pool's pods start from.
    scratch = {rp.name: pool.local_nvme.mount_path for rp, pool in pools if getattr(pool, "local_nvme", None)}
    if not scratch:
        return
    seen: set[str] = set()
    for i, rp in enumerate(cfg.resource_pools):
        if rp.name not in scratch:
            continue
        specs = [
            ("taskContainerDefaults.cpuPodSpec", tcd.cpu_pod_spec),
            ("taskContainerDefaults.gpuPodSpec", tcd.gpu_pod_spec),
            (f"resourcePools[{i}].podSpec", rp.pod_spec),
        ]
        for path, spec in specs:
            if not (isinstance(spec, dict) and spec):
                continue
            for where, message in _scratch_clashes(spec, scratch[rp.name]):
                line = format_path([path, *where])
                if line not in seen:
                    seen.add(line)
                    add(line, message)
