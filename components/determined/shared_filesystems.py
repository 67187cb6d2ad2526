"""Shared filesystems (sharedFilesystems) in task pods: the volumes and claims that carry
them into every namespace that mounts them, and the pod layer of each resource pool.

A claim is mounted only by pods of its own namespace, so each filesystem with a
PersistentVolume source (every kind but gcsFuse, and existing with claimName) gets, in
each namespace of `cfg.filesystem_namespaces(fs)`, a PersistentVolume of that source
(Retain, no class) pre-bound to the claim `shared-<name>` (claimRef on the volume,
volumeName on the claim): the pattern of checkpoint_volumes for an NFS export. The
source comes from the cluster component (ClusterHandle.shared_filesystems, its values
may be Outputs) or, for kind existing with nfs, from the configuration alone.

- gcsFuse: no volume or claim; each pod carries the bucket as an inline CSI volume
  (components.config.gcs_fuse), and the annotation that brings the gcsfuse sidecar.
- existing with claimName: the user's claim, which must exist in each of those namespaces
  (the stack creates nothing).

The pod layer needs the configuration only (master.yaml is rendered from it): a claim's
name is known before the volume behind it, and a gcsFuse bucket's name comes from
DeterminedArgs.filesystem_buckets.

The checkpoint filesystem (checkpointStorage.sharedFilesystem) is the checkpoint volume
(checkpoint_volumes): a pool that mounts it too gets a second mount of that one volume at
the filesystem's path, never a second volume of the same claim.
"""

from __future__ import annotations

from typing import Any

from components import constants, kube
from components.cluster import SharedVolume
from components.config import ResourcePoolConfig, gcs_fuse
from components.config.checkpoint_directory import VOLUME as CHECKPOINT_VOLUME
from components.config.shared_filesystems import ExistingFs, GcsFuseFs, SharedFilesystemBase
from components.determined.args import DeterminedArgs

COMPONENT = "shared-filesystem"
_RWX = ["ReadWriteMany"]

# The capacity of a volume the stack binds and of its claim: nominal. The filesystem's own size
# (capacityGib...) is the cloud's; NFS and these CSI drivers ignore a static volume's capacity,
# and the API server refuses to grow a claim of no class ("only dynamically provisioned pvc can
# be resized": kubernetes plugin/pkg/admission/storage/persistentvolume/resize/admission.go) or
# to shrink any claim (ValidatePersistentVolumeClaimUpdate). So a changed size is never applied
# to the objects (Pulumi ignore_changes), and `pulumi up` never fails on it.
NOMINAL_CAPACITY = ("spec.capacity", "spec.resources.requests.storage")
# What makes a volume another volume: its source, immutable once created ("spec.persistentvolumesource
# is immutable after creation": kubernetes pkg/apis/core/validation ValidatePersistentVolumeUpdate).
# A new source (a Filestore's new IP, an FSx or EFS access point recreated) replaces the volume,
# and with it its claim (spec.volumeName is immutable too, and a claim bound to a deleted volume
# is Lost). Both have fixed names, so the old one goes first (delete_before_replace).
VOLUME_SOURCES = ("spec.nfs", "spec.csi")


def claim(fs: SharedFilesystemBase) -> str:
    """The claim pods mount in each namespace: the user's (existing with claimName), else
    the one the stack binds, `shared-<name>`."""
    own = fs.claim_name if isinstance(fs, ExistingFs) else None
    return own or fs.volume


def bound(fs: SharedFilesystemBase) -> bool:
    """Whether the stack binds the filesystem with a volume and claim per namespace."""
    if isinstance(fs, GcsFuseFs):
        return False
    return not (isinstance(fs, ExistingFs) and fs.claim_name is not None)


def volume_name(fs: SharedFilesystemBase, namespace: str) -> str:
    """The PersistentVolume behind a namespace's claim: `shared-<name>.<namespace>`. PV names
    are cluster-wide: the namespace tells apart the stack's own claims, and two stacks on one
    cluster never share a namespace. A dot joins them because neither a filesystem name nor a
    namespace has one, so no two (name, namespace) pairs give one volume name (a '-' would:
    data + x-y and data-x + y); a PV name is a DNS subdomain (at most 7 + 20 + 1 + 63
    characters here)."""
    return f"{fs.volume}.{namespace}"


def existing_volume(fs: ExistingFs) -> SharedVolume | None:
    """The volume of an existing filesystem, from its configuration: an NFS export, or None
    (the user's claim, nothing to bind)."""
    if fs.nfs is None:
        return None
    return SharedVolume(
        persistent_volume={"nfs": {"server": fs.nfs.server, "path": fs.nfs.path}},
        mount_options=list(fs.nfs.mount_options),
    )


def shared_volume(fs: SharedFilesystemBase, created: dict[str, SharedVolume]) -> SharedVolume | None:
    """How the stack binds `fs` in each namespace: the cluster component's volume (`created`:
    ClusterHandle.shared_filesystems), or the one the configuration says (kind existing).
    None: nothing to bind (gcsFuse, an existing claim)."""
    if not bound(fs):
        return None
    if isinstance(fs, ExistingFs):
        return existing_volume(fs)
    volume = created.get(fs.name)
    if volume is None or volume.persistent_volume is None:
        # A kind the cluster component did not make: the claims would never bind.
        raise ValueError(
            f"sharedFilesystems {fs.name!r} (kind {getattr(fs, 'kind', '?')}): the cluster handle has no "
            "PersistentVolume source for it (ClusterHandle.shared_filesystems)"
        )
    return volume


def reserved_volume(
    name: str,
    component: str,
    claim_ref: tuple[str, str],
    capacity: str,
    source: dict[str, Any],
    mount_options: list[str],
) -> dict[str, Any]:
    """A PersistentVolume of `source` reserved for one claim (`claim_ref`: its namespace and
    name): Retain, no class. Also the checkpoint share's (checkpoint_volumes)."""
    namespace, claim_name = claim_ref
    spec: dict[str, Any] = {
        "capacity": {"storage": capacity},
        "accessModes": _RWX,
        "volumeMode": "Filesystem",
        # Released volumes keep the files (deleting the volume never touches the share).
        "persistentVolumeReclaimPolicy": "Retain",
        # No class: only the claim below may bind it, never a provisioner.
        "storageClassName": "",
        "claimRef": {
            "apiVersion": "v1",
            "kind": "PersistentVolumeClaim",
            "namespace": namespace,
            "name": claim_name,
        },
        **source,
    }
    if mount_options:
        spec["mountOptions"] = list(mount_options)
    return kube.manifest("v1", "PersistentVolume", kube.metadata(name, component), spec=spec)


def persistent_volume(fs: SharedFilesystemBase, volume: SharedVolume, namespace: str) -> dict[str, Any]:
    """The filesystem as a volume reserved for `namespace`'s claim."""
    assert volume.persistent_volume is not None
    return reserved_volume(
        volume_name(fs, namespace),
        COMPONENT,
        (namespace, claim(fs)),
        volume.capacity,
        volume.persistent_volume,
        volume.mount_options,
    )


def persistent_volume_claim(fs: SharedFilesystemBase, volume: SharedVolume, namespace: str) -> dict[str, Any]:
    # An explicit empty class: the cluster's default class would otherwise be filled in and
    # the claim could never bind the class-less volume.
    spec = {
        "accessModes": _RWX,
        "resources": {"requests": {"storage": volume.capacity}},
        "storageClassName": "",
        "volumeName": volume_name(fs, namespace),
    }
    meta = kube.metadata(claim(fs), COMPONENT, namespace)
    return kube.manifest("v1", "PersistentVolumeClaim", meta, spec=spec)


def volume_options() -> dict[str, Any]:
    """Resource options of a volume the stack binds (see NOMINAL_CAPACITY, VOLUME_SOURCES)."""
    return {
        "ignore_changes": list(NOMINAL_CAPACITY),
        "replace_on_changes": list(VOLUME_SOURCES),
        "delete_before_replace": True,
    }


def claim_options(volume: Any) -> dict[str, Any]:
    """Resource options of the claim bound to `volume` (its registered PersistentVolume):
    replaced with it (Pulumi replace_with: a claim keeps the uid the volume's claimRef lost),
    the old one first (fixed name)."""
    return {
        "ignore_changes": list(NOMINAL_CAPACITY),
        "replace_with": [volume],
        "delete_before_replace": True,
    }


def objects(
    cfg: DeterminedArgs, created: dict[str, SharedVolume]
) -> list[tuple[SharedFilesystemBase, SharedVolume, dict[str, Any], dict[str, Any]]]:
    """(filesystem, its volume, PersistentVolume, claim) for each namespace that mounts a
    filesystem the stack binds, in the order configured."""
    found = []
    for fs in cfg.shared_filesystems:
        volume = shared_volume(fs, created)
        if volume is None:
            continue
        for namespace in cfg.filesystem_namespaces(fs):
            found.append(
                (
                    fs,
                    volume,
                    persistent_volume(fs, volume, namespace),
                    persistent_volume_claim(fs, volume, namespace),
                )
            )
    return found


# --- pod specs ------------------------------------------------------------------------------


def bucket(cfg: DeterminedArgs, fs: GcsFuseFs) -> str:
    """The bucket a gcsFuse filesystem mounts."""
    name = cfg.filesystem_buckets.get(fs.name) or fs.bucket
    if not name:
        raise ValueError(
            f"sharedFilesystems {fs.name!r}: no bucket (give its bucket, or filesystemBuckets "
            "{name: bucket} in the Determined Args)"
        )
    return name


def is_checkpoint_filesystem(cfg: DeterminedArgs, fs: SharedFilesystemBase) -> bool:
    found = cfg.checkpoint_filesystem
    return found is not None and found.name == fs.name


def pod_volume(cfg: DeterminedArgs, fs: SharedFilesystemBase) -> dict[str, Any]:
    """The filesystem's volume in a task pod: its claim (read-only for readOnly), or the
    bucket inline (gcsFuse). The checkpoint filesystem is the checkpoint volume, writable."""
    if isinstance(fs, GcsFuseFs):
        return {"name": fs.volume, **gcs_fuse.gcs_fuse_volume(fs, bucket(cfg, fs))}
    if is_checkpoint_filesystem(cfg, fs):
        return {"name": CHECKPOINT_VOLUME, "persistentVolumeClaim": {"claimName": claim(fs)}}
    source: dict[str, Any] = {"claimName": claim(fs)}
    if fs.read_only:
        source["readOnly"] = True
    return {"name": fs.volume, "persistentVolumeClaim": source}


def volume_mount(cfg: DeterminedArgs, fs: SharedFilesystemBase) -> dict[str, Any]:
    """The task container's mount of the filesystem at its path."""
    name = CHECKPOINT_VOLUME if is_checkpoint_filesystem(cfg, fs) else fs.volume
    mount: dict[str, Any] = {"name": name, "mountPath": fs.path}
    if fs.read_only:
        mount["readOnly"] = True
    return mount


def pod_annotations(fs: SharedFilesystemBase) -> dict[str, str]:
    """What a pod that mounts the filesystem is annotated with (gcsFuse: the sidecar)."""
    return dict(gcs_fuse.POD_ANNOTATIONS) if isinstance(fs, GcsFuseFs) else {}


# The gcsfuse sidecar's size where a namespace's quota caps limits. The webhook injects it with
# requests of 250m CPU, 256Mi memory, 5Gi ephemeral storage and no limits (the driver's deployment
# passes --sidecar-{cpu,memory,ephemeral-storage}-limit=0; a zero limit is left out:
# GoogleCloudPlatform/gcs-fuse-csi-driver@5fcdc04a deploy/base/webhook/deployment.yaml:50-55,
# pkg/webhook/config.go:76-93). A ResourceQuota on limits.cpu/limits.memory refuses such a pod,
# and LimitRanger (an in-tree plugin, run before the webhook) never gives the sidecar its defaults
# (a later default of 100m/128Mi would sit below its requests). The pod annotations
# gke-gcsfuse/{cpu,memory}-{request,limit} set the sidecar's own (pkg/webhook/mutatingwebhook.go:
# 49-63 @v1.24.4; populateResource, config.go:96-121: a limit "0" is unlimited). Requests stay
# the driver's defaults, so scheduling is unchanged; the limits leave room for data loading (no
# official sizing: a choice); a pool's podSpec annotations override them (merged over ours).
# Ephemeral storage is not capped by the quotas the stack writes, so it keeps its defaults.
GCS_FUSE_QUOTA_RESOURCES = {
    "gke-gcsfuse/cpu-request": "250m",
    "gke-gcsfuse/cpu-limit": "1",
    "gke-gcsfuse/memory-request": "256Mi",
    "gke-gcsfuse/memory-limit": "1Gi",
}


def limits_capped(cfg: DeterminedArgs) -> bool:
    """Whether a namespace of the stack has a quota on limits (resourcePools[].quota.limits).
    Any pool's pods may land in any task namespace on 0.35+ (resource_pools.pool_namespaces),
    so one such pool sizes the gcsfuse sidecar of every pool."""
    return any(
        rp.quota is not None
        and rp.quota.limits is not None
        and (rp.quota.limits.cpu is not None or rp.quota.limits.memory is not None)
        for rp in cfg.resource_pools
    )


def pool_layer(cfg: DeterminedArgs, rp: ResourcePoolConfig) -> dict[str, Any]:
    """The pod layer that mounts the pool's shared filesystems in its task container. {}
    when it mounts none."""
    mounted = cfg.pool_filesystems(rp)
    if not mounted:
        return {}
    annotations: dict[str, str] = {}
    for fs in mounted:
        annotations |= pod_annotations(fs)
    if annotations.get(gcs_fuse.VOLUMES_ANNOTATION) and limits_capped(cfg):
        annotations |= GCS_FUSE_QUOTA_RESOURCES
    layer: dict[str, Any] = {
        "spec": {
            "volumes": [pod_volume(cfg, fs) for fs in mounted],
            "containers": [
                {"name": constants.TASK_CONTAINER, "volumeMounts": [volume_mount(cfg, fs) for fs in mounted]}
            ],
        }
    }
    if annotations:
        layer["metadata"] = {"annotations": annotations}
    return layer
