"""Rules for `checkpointStorage.type: directory` that read other sections: the master
version, the namespaces tasks run in, the cloud, the master's own mounts and the pod specs
users write."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from components import constants, versions
from components.config.checkpoint_storage import DirectoryStorage
from components.config.errors import Add, format_path
from components.config.resource_pools import Clash, mount_clashes, volume_clashes

if TYPE_CHECKING:
    from components.config.stack import StackConfig


# 0.26.3 and newer: checkpoint_storage type `directory` with `container_path`
# (components/config/data/master-yaml-keys.json); older masters refuse the type and do not start.
DIRECTORY_STORAGE_SINCE = (0, 26, 3)

# The volume task pods and the master mount the share as.
VOLUME = "checkpoints"

# Directories the master's container mounts itself (master.yaml, the TLS certificate).
MASTER_MOUNTS = (constants.MASTER_CONFIG_DIR, constants.MASTER_TLS_DIR)

_EFS_HINT = (
    "use nfs with an EFS file system's DNS name and path / (nfs: {server: "
    "fs-0123456789abcdef0.efs.<region>.amazonaws.com, path: /}), or claimName"
)


def directory(cfg: StackConfig) -> DirectoryStorage | None:
    cs = cfg.checkpoint_storage
    return cs if isinstance(cs, DirectoryStorage) else None


def _overlap(a: str, b: str) -> bool:
    """Whether one directory is the other or lies below it."""
    return a == b or a.startswith(b.rstrip("/") + "/") or b.startswith(a.rstrip("/") + "/")


def _pod_specs(cfg: StackConfig) -> Iterator[tuple[str, dict[str, Any]]]:
    tcd = cfg.task_container_defaults
    yield "taskContainerDefaults.cpuPodSpec", tcd.cpu_pod_spec
    yield "taskContainerDefaults.gpuPodSpec", tcd.gpu_pod_spec
    yield "taskContainerDefaults.checkpointGcPodSpec", tcd.checkpoint_gc_pod_spec
    for i, rp in enumerate(cfg.resource_pools):
        yield f"resourcePools[{i}].podSpec", rp.pod_spec


def checkpoint_clashes(spec: dict[str, Any], container_path: str) -> Iterator[Clash]:
    """Where a user's pod spec (Pod or PodSpec form, as written) would collide with the
    checkpoint volume the project adds."""
    yield from volume_clashes(spec, {VOLUME: "the checkpoint share's (checkpointStorage type directory)"})
    yield from mount_clashes(
        spec, {container_path: "checkpointStorage.containerPath, where the checkpoint share is mounted"}
    )


def directory_problems(cfg: StackConfig, add: Add) -> None:
    """Directory checkpoints: a master that knows them, a claim every task namespace can
    mount, a provisioner the cluster has, and no collision with the master's or the
    user's own mounts."""
    cs = directory(cfg)
    if cs is None:
        return
    if versions.parse_version(cfg.master.version) < DIRECTORY_STORAGE_SINCE:
        since = ".".join(map(str, DIRECTORY_STORAGE_SINCE))
        add(
            "checkpointStorage.type",
            f"directory needs master.version {since} or newer (older masters refuse the type and do "
            "not start); use sharedFs, s3, gcs or azure, or a newer master",
        )
    for mount in MASTER_MOUNTS:
        if _overlap(cs.container_path, mount):
            add(
                "checkpointStorage.containerPath",
                f"{cs.container_path} collides with {mount}, which the master mounts itself; "
                "choose a directory of its own",
            )
    if cs.provisioned:
        if cfg.cloud == "eks":
            add(
                "checkpointStorage.storageClass",
                "the EKS cluster the stack creates has no ReadWriteMany provisioner (no EFS CSI driver); "
                + _EFS_HINT,
            )
        else:
            others = [ns for ns in cfg.task_namespaces if ns != cfg.namespace]
            if others:
                add(
                    "checkpointStorage.storageClass",
                    f"a provisioned claim is one volume in one namespace ({cfg.namespace!r}), but tasks "
                    f"also run in {', '.join(map(repr, others))}; use nfs (the stack binds the share in "
                    "every namespace) or claimName (a claim of that name in each, bound to one share)",
                )
    for path, spec in _pod_specs(cfg):
        if isinstance(spec, dict) and spec:
            for where, message in checkpoint_clashes(spec, cs.container_path):
                add(format_path([path, *where]), message)
    if cs.shared_filesystem is not None:
        _shared_filesystem_problems(cfg, cs.shared_filesystem, add)


def _shared_filesystem_problems(cfg: StackConfig, name: str, add: Add) -> None:
    """checkpointStorage.sharedFilesystem: an entry of sharedFilesystems that can hold
    checkpoints (writable, a claim in every namespace)."""
    key = "checkpointStorage.sharedFilesystem"
    fs = next((fs for fs in cfg.shared_filesystems if fs.name == name), None)
    if fs is None:
        known = ", ".join(fs.name for fs in cfg.shared_filesystems) or "none configured"
        add(key, f"no shared filesystem named {name!r} (sharedFilesystems: {known})")
        return
    if fs.read_only:
        add(
            key,
            f"shared filesystem {name!r} is readOnly: Determined writes checkpoints there, so every trial "
            "would fail at its first checkpoint; set its readOnly false or choose another",
        )
    if getattr(fs, "kind", None) == "gcsFuse":
        # A directory store is mounted through a claim in every namespace (the master's too);
        # a bucket is better used by Determined's own client.
        add(
            key,
            f"shared filesystem {name!r} is a gcsFuse bucket: use checkpointStorage type gcs with its "
            "bucket instead (Determined writes to Cloud Storage itself)",
        )
