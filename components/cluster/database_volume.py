"""The StorageClass of the in-cluster database's volume on clusters the stack creates.

`reclaimPolicy: Retain`: the disk outlives its PersistentVolume, so nothing Kubernetes does
(a deleted claim, a deleted namespace) deletes the data. Deleting the whole cluster is
another matter on GKE, which tries to delete the cluster's disks: data that must outlive the
cluster belongs in the managed database (docs/operations/deletion.md).
"""

from __future__ import annotations

from typing import Any

from components import kube

NAME = "determined-db"


def storage_class(provisioner: str, parameters: dict[str, str], retain: bool = True) -> dict[str, Any]:
    """`retain` false (allowDataDeletion): the disk goes with its claim."""
    return kube.manifest(
        "storage.k8s.io/v1",
        "StorageClass",
        kube.metadata(NAME, "database"),
        provisioner=provisioner,
        parameters=parameters,
        reclaimPolicy="Retain" if retain else "Delete",
        # Created in the zone of the node the database lands on.
        volumeBindingMode="WaitForFirstConsumer",
        allowVolumeExpansion=True,
    )
