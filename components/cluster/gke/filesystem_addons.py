"""The GKE add-ons (CSI drivers) the stack's shared filesystems need, for the cluster's
`addons_config` (components/cluster/gke/cluster.py); a leaf, so that the cluster module needs
nothing of the filesystems' own module (components/cluster/gke/shared_filesystems.py)."""

from __future__ import annotations

from typing import Any

from components.cluster.gke.args import GkeClusterArgs
from components.config.shared_filesystems import GcsFuseFs, ManagedLustreFs


def addons_config(args: GkeClusterArgs) -> dict[str, Any]:
    """The CSI driver add-ons the stack's filesystems use (none for Filestore, mounted over
    in-tree NFS); every other add-on is left as GKE sets it. Names: pulumi-gcp 10.2.0
    pulumi_gcp/container/_inputs.py ClusterAddonsConfigArgsDict (gcs_fuse_csi_driver_config
    :4640, lustre_csi_driver_config :4681); GKE turns either on in place on an existing
    cluster ("update-addons", /work/research26/shared-fs.md §0)."""
    kinds = {type(fs) for fs in args.shared_filesystems}
    config: dict[str, Any] = {}
    if GcsFuseFs in kinds:
        # Needs workload identity, which every cluster of the stack has (cluster.py).
        config["gcs_fuse_csi_driver_config"] = {"enabled": True}
    if ManagedLustreFs in kinds:
        # The default LNet port (988), not the legacy 6988: GKE 1.33.2-gke.4780000 and later
        # (components/config/shared_filesystem_cloud.py LUSTRE_MIN_MINOR).
        config["lustre_csi_driver_config"] = {"enabled": True}
    return config
