"""Rules for `sharedFilesystems` that read other sections: the cloud, the resource pools
that mount each filesystem, the paths already taken in their task containers (the
checkpoint share, the node pool's local NVMe scratch space, other filesystems) and the
pod specs users write.

Each reads only sections the Determined component's Args hold too (cloud, node pools,
resource pools, task container defaults, checkpoint storage), so a program that builds
DeterminedArgs itself meets them as well (components.config.rules.DETERMINED_RULES).

Left to the user (documented on the key): a claim named by `kind: existing, claimName`
exists, ReadWriteMany and bound to one share, in every namespace that mounts it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from components.config.checkpoint_directory import _overlap, _pod_specs, directory
from components.config.errors import Add, format_path
from components.config.fabric_rules import reserved_clash
from components.config.resource_pools import mount_clashes, volume_clashes
from components.config.shared_filesystems import GcsFuseFs, SharedFilesystemBase

if TYPE_CHECKING:
    from components.config.stack import StackConfig

# The kinds each target has (every kind's `clouds`), for the messages.
KINDS_BY_CLOUD = {
    "gke": ("filestore", "gcsFuse", "managedLustre", "existing"),
    "eks": ("efs", "fsxLustre", "existing"),
    "existing": ("existing",),
}


def _kind(fs: SharedFilesystemBase) -> str:
    return getattr(fs, "kind", type(fs).__name__)


def _pool_names(cfg: StackConfig) -> list[str]:
    return list(dict.fromkeys(rp.name for rp in cfg.resource_pools))


def shared_filesystem_problems(cfg: StackConfig, add: Add) -> None:
    """Shared filesystems: unique names, a kind the cloud has, pools that exist and mount
    it, one path per mount in each pool's task container, no clash with the user's pod
    specs, and gcsFuse only where its sidecar gets the pod's identity."""
    filesystems = list(cfg.shared_filesystems)
    if not filesystems:
        return
    pools = _pool_names(cfg)
    checkpoint = getattr(cfg.checkpoint_storage, "shared_filesystem", None)
    seen: dict[str, int] = {}
    for i, fs in enumerate(filesystems):
        key = f"sharedFilesystems[{i}]"
        if fs.name in seen:
            add(
                f"{key}.name",
                f"duplicate shared filesystem name {fs.name!r} (also sharedFilesystems[{seen[fs.name]}])",
            )
        seen.setdefault(fs.name, i)
        if cfg.cloud not in fs.clouds:
            fits = ", ".join(KINDS_BY_CLOUD.get(cfg.cloud, ("existing",)))
            add(
                f"{key}.kind",
                f"{_kind(fs)} exists on cloud {' or '.join(c for c in fs.clouds)} only; on {cfg.cloud} use "
                f"one of {fits}",
            )
        for j, name in enumerate(fs.resource_pools or []):
            if name not in pools:
                add(
                    f"{key}.resourcePools[{j}]",
                    f"no resource pool named {name!r} (resourcePools: {', '.join(pools)})",
                )
        if fs.resource_pools == [] and fs.name != checkpoint:
            add(
                f"{key}.resourcePools",
                "no pool mounts it, and it is not checkpointStorage.sharedFilesystem: name the pools whose "
                "tasks mount it (or leave resourcePools out: every pool), or remove the filesystem",
            )
        if isinstance(fs, GcsFuseFs):
            if cfg.task_container_defaults.network_mode == "host":
                # Pods on the host network get no Workload Identity of their own: the driver
                # then needs the hostNetworkPodKSA and identityProvider volume attributes
                # (GoogleCloudPlatform/gcs-fuse-csi-driver@v1.24.4:docs/authentication.md),
                # which the stack does not set; Determined puts task pods on the host network
                # with network_mode host (determined@v0.38.1:master/internal/rm/kubernetesrm/
                # spec.go:652).
                add(
                    f"{key}.kind",
                    "gcsFuse cannot mount in task pods on the host network (taskContainerDefaults."
                    "networkMode host): its sidecar gets no identity there; use networkMode bridge, or a "
                    "filestore or managedLustre filesystem",
                )
            if fs.only_dir and "," in fs.only_dir:
                # The driver takes the mount options as one comma-separated list.
                add(f"{key}.onlyDir", "must not contain ',' (gcsfuse mount options are separated by ',')")
    _path_problems(cfg, add, filesystems)
    _pod_spec_problems(cfg, add, filesystems)


def _path_problems(cfg: StackConfig, add: Add, filesystems: list[SharedFilesystemBase]) -> None:
    """In each pool's task container: one filesystem per path, none over the checkpoint
    share, the node pool's local NVMe scratch space, or the driver's and fabric's mounts of
    GPU tasks (fabric_rules.reserved_paths). (Determined's own directories,
    /run/determined and /dev/shm, are refused by mountPath itself: under /run and /dev.)"""
    cs = directory(cfg)
    checkpoint = getattr(cs, "shared_filesystem", None) if cs else None
    reported: set[tuple[int, str]] = set()

    def once(i: int, message: str) -> None:
        if (i, message) not in reported:
            reported.add((i, message))
            add(f"sharedFilesystems[{i}].mountPath", message)

    for rp in cfg.resource_pools:
        index = {id(fs): i for i, fs in enumerate(filesystems)}
        mounted = [fs for fs in cfg.pool_filesystems(rp)]
        taken: dict[str, int] = {}
        for fs in mounted:
            i = index[id(fs)]
            if fs.path in taken:
                j = taken[fs.path]
                once(
                    i,
                    f"{fs.path} is also the path of sharedFilesystems[{j}] ({filesystems[j].name}), both "
                    f"mounted by pool {rp.name!r}; give each its own mountPath",
                )
            taken.setdefault(fs.path, i)
            if cs is not None and _overlap(fs.path, cs.container_path):
                what = "the same filesystem's" if fs.name == checkpoint else "the checkpoint share's"
                once(
                    i,
                    f"{fs.path} overlaps checkpointStorage.containerPath {cs.container_path} ({what} mount "
                    "in every task pod); choose a directory of its own",
                )
            clash = reserved_clash(cfg, rp, fs.path)
            if clash:
                once(
                    i,
                    f"{fs.path} overlaps {clash} in the GPU tasks of pool {rp.name!r}, which mounts it; "
                    "choose a directory of its own",
                )
            node_pool = next((p for p in cfg.node_pools if p.name == rp.node_pool), None)
            nvme = getattr(node_pool, "local_nvme", None)
            if nvme is not None and _overlap(fs.path, nvme.mount_path):
                once(
                    i,
                    f"{fs.path} overlaps node pool {node_pool.name!r}'s localNvme.mountPath "
                    f"{nvme.mount_path} (the scratch space of pool {rp.name!r}'s tasks); choose a directory "
                    "of its own",
                )


def _mounted(fs: SharedFilesystemBase) -> str:
    return f"where shared filesystem {fs.name!r} is mounted (sharedFilesystems)"


def _pod_spec_problems(cfg: StackConfig, add: Add, filesystems: list[SharedFilesystemBase]) -> None:
    """Users' pod specs: no volume named as a filesystem's, no task container mount at the
    path of a filesystem the pods of that spec mount."""
    volumes = {fs.volume: f"shared filesystem {fs.name!r}'s (sharedFilesystems)" for fs in filesystems}
    everywhere = {fs.path: _mounted(fs) for rp in cfg.resource_pools for fs in cfg.pool_filesystems(rp)}
    pool_keys = {f"resourcePools[{i}].podSpec": rp for i, rp in enumerate(cfg.resource_pools)}
    for path, spec in _pod_specs(cfg):
        if not (isinstance(spec, dict) and spec):
            continue
        for where, message in volume_clashes(spec, volumes):
            add(format_path([path, *where]), message)
        rp = pool_keys.get(path)
        if rp is not None:
            paths = {fs.path: _mounted(fs) for fs in cfg.pool_filesystems(rp)}
        elif path.endswith("checkpointGcPodSpec"):
            paths = {}  # checkpoint GC mounts no pool's filesystems
        else:
            paths = everywhere  # task container defaults: every pool's pods
        for where, message in mount_clashes(spec, paths):
            add(format_path([path, *where]), message)
