"""Directory checkpoints (`checkpointStorage.type: directory`): the claims that carry the
shared file system, and how task pods and the master mount it.

A claim is mounted only by pods of its own namespace, so every namespace tasks run in
needs one bound to the same share:

- `nfs`: per task namespace, a PersistentVolume of the export (Retain) pre-bound to the
  claim `determined-checkpoints` (claimRef on the volume, volumeName on the claim);
- `storageClass`: one provisioned claim `determined-checkpoints` in the master's namespace
  (validation allows it only when every task runs there);
- `claimName`: the user's claims; nothing is created;
- `sharedFilesystem`: the claim of that shared filesystem (shared_filesystems: bound in
  every namespace pods of the stack run in, since it holds checkpoints); nothing more here.

Claims and volumes outlive `pulumi destroy` unless `allowDataDeletion` (`data_options`);
the files on an NFS export are never deleted by the project.
"""

from __future__ import annotations

import hashlib
from typing import Any

import pulumi

from components import constants, kube
from components.config import DirectoryStorage
from components.config.checkpoint_directory import VOLUME, directory
from components.config.checkpoint_storage import CREATED_CLAIM
from components.determined import shared_filesystems
from components.determined.args import DeterminedArgs

COMPONENT = "checkpoint-storage"
_RWX = ["ReadWriteMany"]


def volume_name(namespace: str) -> str:
    """The PersistentVolume behind a namespace's claim. PV names are cluster-wide, so the
    namespace is part of it; kept a DNS label (a short hash of the namespace stands in for
    a tail that does not fit)."""
    name = f"{CREATED_CLAIM}-{namespace}"
    if len(name) <= 63:
        return name
    digest = hashlib.sha256(namespace.encode()).hexdigest()[:8]
    return f"{name[: 63 - len(digest) - 1].rstrip('-')}-{digest}"


def persistent_volume(cs: DirectoryStorage, namespace: str) -> dict[str, Any]:
    """The NFS export as a volume reserved for `namespace`'s claim."""
    assert cs.nfs is not None
    return shared_filesystems.reserved_volume(
        volume_name(namespace),
        COMPONENT,
        (namespace, CREATED_CLAIM),
        cs.capacity,
        {"nfs": {"server": cs.nfs.server, "path": cs.nfs.path}},
        list(cs.nfs.mount_options),
    )


def _claim(cs: DirectoryStorage, namespace: str, **binding: str) -> dict[str, Any]:
    spec = {"accessModes": _RWX, "resources": {"requests": {"storage": cs.capacity}}, **binding}
    meta = kube.metadata(CREATED_CLAIM, COMPONENT, namespace)
    return kube.manifest("v1", "PersistentVolumeClaim", meta, spec=spec)


def nfs_claim(cs: DirectoryStorage, namespace: str) -> dict[str, Any]:
    # An explicit empty class: the cluster's default class would otherwise be filled in and
    # the claim could never bind the class-less volume.
    return _claim(cs, namespace, storageClassName="", volumeName=volume_name(namespace))


def provisioned_claim(cs: DirectoryStorage, namespace: str) -> dict[str, Any]:
    assert cs.storage_class is not None
    return _claim(cs, namespace, storageClassName=cs.storage_class)


def objects(cfg: DeterminedArgs) -> list[dict[str, Any]]:
    """What the stack creates for directory checkpoints (each volume before its claim);
    nothing for `claimName` or other storage types."""
    cs = directory(cfg)
    if cs is None or cs.claim_name is not None or cs.shared_filesystem is not None:
        return []
    if cs.nfs is not None:
        # The master's namespace too: the master mounts the share (master_volume).
        return [obj for ns in cfg.pod_namespaces for obj in (persistent_volume(cs, ns), nfs_claim(cs, ns))]
    return [provisioned_claim(cs, cfg.namespace)]


def claim(cfg: DeterminedArgs, cs: DirectoryStorage) -> str:
    """The claim task pods and the master mount: the user's, the one the stack creates, or
    the shared filesystem's (checkpointStorage.sharedFilesystem)."""
    fs = cfg.checkpoint_filesystem
    if cs.shared_filesystem is not None and fs is not None:
        return shared_filesystems.claim(fs)
    return cs.claim


def _volume(claim_name: str, read_only: bool = False) -> dict[str, Any]:
    claim: dict[str, Any] = {"claimName": claim_name}
    if read_only:
        claim["readOnly"] = True
    return {"name": VOLUME, "persistentVolumeClaim": claim}


def _mount(cs: DirectoryStorage, read_only: bool = False) -> dict[str, Any]:
    mount: dict[str, Any] = {"name": VOLUME, "mountPath": cs.container_path}
    if read_only:
        mount["readOnly"] = True
    return mount


def task_layer(cfg: DeterminedArgs) -> dict[str, Any]:
    """The pod layer that mounts the share at containerPath in Determined's task container
    (trials write checkpoints there, checkpoint GC deletes them): for every task pod spec,
    checkpoint GC's included. {} unless checkpoints are a directory."""
    cs = directory(cfg)
    if cs is None:
        return {}
    return {
        "spec": {
            "volumes": [_volume(claim(cfg, cs))],
            "containers": [{"name": constants.TASK_CONTAINER, "volumeMounts": [_mount(cs)]}],
        }
    }


def master_volume(cfg: DeterminedArgs) -> tuple[dict[str, Any], dict[str, Any]] | None:
    """(volume, volumeMount) for the master's pod, or None unless checkpoints are a
    directory. Read-only: trials write and checkpoint GC deletes, both in task pods; the
    master needs no more than to read (its checkpoint download serves S3 only)."""
    cs = directory(cfg)
    if cs is None:
        return None
    return _volume(claim(cfg, cs), read_only=True), _mount(cs, read_only=True)


def data_options(cfg: DeterminedArgs) -> pulumi.ResourceOptions:
    """Options for every object of `objects`: kept on destroy, never re-classed (a new
    class would replace the claim with an empty volume), unless data deletion is allowed."""
    keep = not cfg.data_deletion_allowed
    ignored = ["spec.storageClassName"] if keep else []
    cs = directory(cfg)
    if cs is not None and cs.nfs is not None:
        # A new nfs size is never applied to the export's volume and claims: the API server refuses
        # to grow a claim of no class ("only dynamically provisioned pvc can be resized":
        # kubernetes plugin/pkg/admission/storage/persistentvolume/resize/admission.go), and
        # validation any shrink, so the change would fail `pulumi up` at every claim. NFS
        # ignores the capacity of a volume (kubernetes.io/docs/concepts/storage/persistent-volumes/
        # #capacity, read 2026-11: only the size of a provisioned volume is enforced).
        ignored += list(shared_filesystems.NOMINAL_CAPACITY)
    return pulumi.ResourceOptions(retain_on_delete=keep, ignore_changes=ignored or None)


def keeps_master_namespace(cfg: DeterminedArgs) -> bool:
    """Whether the master's namespace must be kept on destroy for the checkpoints' sake:
    deleting it would delete the provisioned claim, and the storage class's reclaim policy
    (Delete, for GKE's Filestore classes) the volume with every checkpoint."""
    cs = directory(cfg)
    return cs is not None and cs.provisioned and not cfg.data_deletion_allowed
