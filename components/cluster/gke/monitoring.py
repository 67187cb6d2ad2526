"""The GKE cluster's monitoring configuration: GKE's managed DCGM metrics on or off.

GKE's managed DCGM package installs a dcgm-exporter on nodes of GPU pools whose drivers GKE
manages and sends its metrics to Managed Service for Prometheus (GKE docs, "Collect and view
DCGM metrics", https://docs.cloud.google.com/kubernetes-engine/docs/how-to/dcgm-metrics, read
2026-11-26 from its es-419, fr and pt-br copies). New clusters of GKE 1.32.1-gke.1357000 or later
get it by default (same page): every version this stack creates (components/versions.py
GKE_VERSIONS, 1.32 and later). So leaving the setting alone is a choice too, the cluster's own
(GkeClusterArgs.gke_managed_dcgm None).

Sending `enable_components` replaces the cluster's whole list, it does not add to it: the
provider sends the configured set as `ComponentConfig.EnableComponents` on create and as
`DesiredMonitoringConfig` on update (hashicorp/terraform-provider-google
google/services/container/resource_container_cluster.go at e03b762, `expandMonitoringConfig`
:7064-7077, update :5064-5072, read 2026-11-26). The list sent is therefore GKE's defaults for a
new cluster (GKE_DEFAULT_COMPONENTS) with or without DCGM, so that turning DCGM on or off
drops nothing else.
"""

from __future__ import annotations

from typing import Any

from components.cluster.gke.args import GkeClusterArgs

# The monitoring components GKE enables on a new Standard cluster of the versions this stack
# creates (1.32 and later), as Google's Cluster Toolkit lists them for its own clusters
# (GoogleCloudPlatform/cluster-toolkit modules/scheduler/gke-cluster/main.tf at d64aec8,
# `default_monitoring_component`, read 2026-11-26) plus JOBSET:
# - SYSTEM_COMPONENTS: system metrics, on unless monitoring is off (https://cloud.google.com/
#   stackdriver/docs/solutions/gke/managing-metrics, "System metrics", read 2026-11-26);
# - STORAGE, HPA, POD, DAEMONSET, DEPLOYMENT, STATEFULSET (the kube state metrics packages): on
#   by default for Standard clusters from 1.29.2-gke.2000 (https://documentation.s3ns.fr/
#   kubernetes-engine/docs/how-to/kube-state-metrics?hl=es, "Requisitos", read 2026-11-26);
#   JOBSET from 1.32.1-gke.1357001 ("enabled by default on newly created GKE Standard and
#   Autopilot clusters", https://docs.cloud.google.com/kubernetes-engine/docs/how-to/
#   kube-state-metrics, read 2026-11-26);
# - CADVISOR, KUBELET: on by default for clusters created at 1.29.3-gke.1093000 or later
#   (https://cloud.google.com/kubernetes-engine/docs/how-to/cadvisor-kubelet-metrics?hl=es, read
#   2026-11-26).
# Not on by default, so not here: APISERVER, SCHEDULER, CONTROLLER_MANAGER (control plane
# metrics are enabled on request: https://cloud.google.com/kubernetes-engine/docs/how-to/
# control-plane-metrics, read 2026-11-26). Accepted values: the provider's docstring,
# .venv/lib/python3.11/site-packages/pulumi_gcp/container/_inputs.py:9678 (pulumi-gcp 10.2.0).
GKE_DEFAULT_COMPONENTS = (
    "SYSTEM_COMPONENTS",
    "STORAGE",
    "HPA",
    "POD",
    "DAEMONSET",
    "DEPLOYMENT",
    "STATEFULSET",
    "JOBSET",
    "CADVISOR",
    "KUBELET",
)
# The managed DCGM metrics package (MonitoringComponentConfig.Component DCGM = 15:
# https://docs.cloud.google.com/java/docs/reference/google-cloud-container/2.65.0/
# com.google.container.v1.MonitoringComponentConfig.Component, read 2026-11-26).
DCGM = "DCGM"


def monitoring_config(args: GkeClusterArgs) -> dict[str, Any] | None:
    """The cluster's `monitoring_config` (pulumi-gcp `ClusterMonitoringConfigArgs`:
    `enable_components`, `managed_prometheus`; .venv/lib/python3.11/site-packages/pulumi_gcp/
    container/_inputs.py:9672-9739, 9788-9860), or None to leave the cluster's as GKE set it.

    `gke_managed_dcgm` True: GKE's default components plus DCGM, and managed collection on (the
    package delivers its metrics through a ClusterPodMonitoring of Managed Service for
    Prometheus: GKE docs above; Google's Cluster Toolkit sets both together, main.tf above).
    False: the default components without DCGM (managed collection left as it is). None: not
    sent; a cluster created by this stack keeps GKE's defaults, DCGM included."""
    managed = args.gke_managed_dcgm
    if managed is None:
        return None
    components = [*GKE_DEFAULT_COMPONENTS, DCGM] if managed else list(GKE_DEFAULT_COMPONENTS)
    config: dict[str, Any] = {"enable_components": components}
    if managed:
        config["managed_prometheus"] = {"enabled": True}
    return config
