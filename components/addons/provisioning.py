"""GKE queued provisioning (flex-start with queued provisioning, Dynamic Workload Scheduler)
through Kueue's ProvisioningRequest admission check.

A node pool with `capacity.queued` gets its nodes only through ProvisioningRequests ("all new
nodes can be obtained only through queuing via ProvisioningRequest API": gcloud's
`--enable-queued-provisioning` help, googlecloudsdk command_lib/container/flags.py,
AddQueuedProvisioningFlag). Kueue makes the requests: its ClusterQueue names an AdmissionCheck
of controller `kueue.x-k8s.io/provisioning-request`, so a Job that got quota waits, suspended,
while Kueue's ProvisioningRequest (the Job's pod template with the flavor's node labels and
tolerations merged in: pkg/controller/admissionchecks/provisioning/controller.go:395-433 at
kubernetes-sigs/kueue v0.19.2) waits in GKE's queue; once GKE has every node of it
(`Provisioned=true`) Kueue admits the Job and its pods land on those nodes together. The wait in
GKE's queue does not count against the pods-ready timeout, which runs from admission
(pkg/controller/core/workload_controller.go:1657-1675 at v0.19.2).

The ProvisioningRequest API: GKE serves it; Kueue's controller starts only when the API is
there (cmd/kueue/main.go:512-516, provisioning/indexer.go:63-72 at v0.19.2). Kueue's chart
grants it the provisioningrequests verbs (charts/kueue/templates/rbac/role.yaml:136-152 at
v0.19.2), and the controller is GA without a feature gate since v0.14 (site/content/en/docs/
concepts/admission_check/provisioning_request.md at v0.19.2; no `ProvisioningACC` gate left in
pkg/features/kube_features.go): the chart needs nothing more.

When GKE fails a request Kueue retries it (`RETRY_STRATEGY`); past the last retry it rejects
the check and deactivates the Workload: the Job would stay suspended and the task wait
forever, as the master reacts to Job conditions and to a deleted Job only (kueue.py). So Kueue
deletes a Job it deactivated (components/addons/kueue.py DEACTIVATED_JOB_RETENTION) and the
master fails the allocation ("job was deleted": master/internal/rm/kubernetesrm/job.go:285-299
at determined-ai/determined v0.38.1, :282-296 at 0.34.0); a trial restarts while `max_restarts`
allows.

Pure functions only: the objects are registered by components/determined/resource_pools.py.
"""

from __future__ import annotations

from typing import Any

from components import kube
from components.config.node_pools import NodePool, Taint

API = "kueue.x-k8s.io/v1beta2"
COMPONENT = "kueue"
# The AdmissionCheck controller of Kueue's ProvisioningRequest integration
# (site/content/en/docs/concepts/admission_check/provisioning_request.md, "Usage", at v0.19.2).
CONTROLLER = "kueue.x-k8s.io/provisioning-request"
# GKE's provisioning class for flex-start with queued provisioning: the ProvisioningRequestConfig
# of GoogleCloudPlatform/cluster-toolkit examples/gke-consumption-options/dws-flex-start-queued-
# provisioning/dws-queues.yaml.tftpl at 1047080375 (2026-06-25) and of
# https://cloud.google.com/kubernetes-engine/docs/how-to/provisioningrequest (read 2026-11-26).
PROVISIONING_CLASS = "queued-provisioning.gke.io"
# Only Jobs asking for GPUs get a request (an empty list would make every Job need one, and GKE
# provisions queued nodes for accelerators: the same sources). A Job asking for none is admitted
# without one (the field's description in the CRD).
MANAGED_RESOURCES = ["nvidia.com/gpu"]
# One check and one config serve every queued pool: the request is built from each Job's own
# pod template, which selects its node pool.
NAME = "determined-queued-provisioning"

# A failed request (GKE out of the capacity it queued for, a booking that expired before the
# pods came) goes back in line after a backoff instead of failing the task: the wait for
# capacity itself happens inside one request, the retries only cover failures. 10 retries,
# backoff 60 s doubling to at most 30 min between them (about 3 h of backoff in all), then the
# task fails (see above). Kueue's defaults are 3, 60 s and 1800 s (the retryStrategy default in
# config/components/crd/bases/kueue.x-k8s.io_provisioningrequestconfigs.yaml at v0.19.2), too
# few for a queue that may take days.
RETRY_STRATEGY = {"backoffLimitCount": 10, "backoffBaseSeconds": 60, "backoffMaxSeconds": 1800}

# GKE taints the nodes of a queued pool itself (GoogleCloudPlatform/cluster-toolkit modules/
# compute/gke-node-pool/main.tf:68-76 and variables.tf:458-462 at 1047080375: "GKE automatically
# applies the taint"); the project does not send it. The pods of a queued pool tolerate it
# through their ResourceFlavor (Kueue adds the flavor's tolerations to the request's pod template
# and to the pods it admits).
QUEUED_TAINT = Taint(key="cloud.google.com/gke-queued", value="true", effect="NoSchedule")


def queued_provisioning(node_pool: NodePool) -> bool:
    """Whether a node pool's nodes come only through ProvisioningRequests (`capacity.queued`:
    GKE pools only, the stack's rules refuse it elsewhere)."""
    capacity = getattr(node_pool, "capacity", None)
    return bool(capacity is not None and capacity.queued)


def provisioning_request_config() -> dict[str, Any]:
    """How Kueue makes the ProvisioningRequests of queued Jobs: GKE's queued-provisioning class,
    for Jobs asking for GPUs, retried on failure (RETRY_STRATEGY)."""
    spec = {
        "provisioningClassName": PROVISIONING_CLASS,
        "managedResources": list(MANAGED_RESOURCES),
        "retryStrategy": dict(RETRY_STRATEGY),
    }
    return kube.manifest(API, "ProvisioningRequestConfig", kube.metadata(NAME, COMPONENT), spec=spec)


def admission_check() -> dict[str, Any]:
    """The check a queued pool's ClusterQueue names: Kueue's ProvisioningRequest controller with
    the config above."""
    spec = {
        "controllerName": CONTROLLER,
        "parameters": {"apiGroup": "kueue.x-k8s.io", "kind": "ProvisioningRequestConfig", "name": NAME},
    }
    return kube.manifest(API, "AdmissionCheck", kube.metadata(NAME, COMPONENT), spec=spec)


def objects() -> list[dict[str, Any]]:
    """The cluster-scoped objects every queued pool shares."""
    return [provisioning_request_config(), admission_check()]


def flavor_tolerations(node_pool: NodePool) -> list[dict[str, str]]:
    """What a queued pool's ResourceFlavor adds to its pods besides the pool's own taints: the
    toleration of the taint GKE puts on queued nodes (none for other pools, or when the pool's
    taints already hold it)."""
    if not queued_provisioning(node_pool) or QUEUED_TAINT in node_pool.all_taints:
        return []
    return [QUEUED_TAINT.toleration]
