"""The FSx for Lustre CSI driver (EKS, sharedFilesystems of kind fsxLustre), from its official
chart: the node plugin that mounts the file systems the stack creates into task pods.

The stack binds each file system with static PersistentVolumes (the app makes one per
namespace), so the driver never calls the FSx API: the controller does so only to provision
and resize volumes dynamically (kubernetes-sigs/aws-fsx-csi-driver@helm-chart-aws-fsx-csi-driver-1.17.0
pkg/driver/controller.go:311,344,499: CreateVolume, DeleteVolume, ControllerExpandVolume), and the node plugin
mounts `<dnsname>@tcp:/<mountname>` from the volume's attributes (pkg/driver/node.go:109). No
AWS identity is given to either service account. No managed EKS add-on was found for it in
the EKS user guide (awsdocs/amazon-eks-user-guide@4d52b4d0 latest/ug/storage/fsx-csi.adoc
documents the Helm/kustomize install only), hence the chart.
"""

from __future__ import annotations

from typing import Any

from components.addons import release

NAMESPACE = "kube-system"
# Chart aws-fsx-csi-driver 1.17.0 = driver v1.9.0 (Chart.yaml appVersion at tag
# helm-chart-aws-fsx-csi-driver-1.17.0 of kubernetes-sigs/aws-fsx-csi-driver, commit
# 5b227125); its repository per docs/install.md:97 at the tag; key set in tests/data/chart-keys.
CHART = "aws-fsx-csi-driver"
REPOSITORY = "https://kubernetes-sigs.github.io/aws-fsx-csi-driver"
VERSION = "1.17.0"
# The CSI driver's name, as the chart's CSIDriver object and the PersistentVolumes say it
# (charts/aws-fsx-csi-driver/templates/csidriver.yaml at the tag).
DRIVER = "fsx.csi.aws.com"


def values(region: str) -> dict[str, Any]:
    """The chart's defaults but for the region, given so that neither component has to ask
    the instance metadata service for it (pods off the host network may not reach it: "To
    eliminate the need for the FSX controller to use IMDS, you need to configure the region",
    docs/install.md:122 at the tag; else the driver falls back to the Kubernetes API,
    pkg/cloud/metadata.go:72-95; `node.region` sets AWS_REGION, templates/node-daemonset.yaml:78-81).

    Kept defaults, on purpose: `node.tolerateAllTaints: true` (values.yaml), so the node plugin
    runs on the GPU pools' tainted nodes, where the mounts happen; the controller Deployment
    (rendered whatever `nodeComponentOnly` says: in 1.17.0 that key gates only the
    PodDisruptionBudget, templates/pdb.yaml:1) stays, idle without dynamic provisioning."""
    return {"controller": {"region": region}, "node": {"region": region}}


def release_args(region: str) -> dict[str, Any]:
    return release.release_args(CHART, CHART, VERSION, NAMESPACE, values(region), repository=REPOSITORY)
