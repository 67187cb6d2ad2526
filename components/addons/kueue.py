"""Kueue, from its official chart: all-or-nothing (gang) admission of Determined's tasks.

Determined (0.34+) launches each task as one batch/v1 Job whose labels are copied from the
metadata labels of the task pod spec. A pool's pod specs carry `kueue.x-k8s.io/queue-name`
(see `queue_label_layer`), so Kueue suspends each of its Jobs until the pool's ClusterQueue
has quota for every pod of the Job at once; it never admits part of a Job (no
`kueue.x-k8s.io/job-min-parallelism`). With `waitForPodsReady.blockAdmission`, a queue admits
nothing else until the admitted Job's pods are all ready.

A Job whose pods are not all ready within the timeout is evicted: Kueue suspends it, the Job
controller deletes its pods, and the master takes a pending pod with a deletion timestamp for
a terminated one, without an exit code, so a failure, and deletes the Job
(master/internal/rm/kubernetesrm/job.go at v0.38.1: :694, :414, :437-438; at 0.34.0: :699,
:411, :434-435). So an eviction is a failed allocation, never a requeue: the master restarts
a trial as a new Job while `max_restarts` allows (default 5:
schemas/expconf/v0/experiment.json:136-142 and master/internal/trial.go:653-667 at v0.38.1);
a notebook, command, shell or TensorBoard ends. Kueue's own requeuing never applies (the Job
is gone). Hence a timeout long enough for a GPU node scale-up and a large image pull
(`DEFAULT_PODS_READY_TIMEOUT_SECONDS`).

The master reacts only to a Job's Complete and Failed conditions (job.go:256-279 at v0.38.1):
a Job that Kueue never admits (no LocalQueue of its label in its namespace, or a ClusterQueue that does
not select that namespace) stays suspended and the task waits forever. So each queued pool
gets a LocalQueue in every namespace the master may put its Jobs in (`pool_namespaces` in
components/determined/resource_pools.py), and its ClusterQueue selects exactly those namespaces.

Per node pool one ResourceFlavor (its nodes, with tolerations for their taints, which Kueue
adds to the pods it admits); per resource pool one ClusterQueue (quota on that flavor) and a
LocalQueue of the same name in each of its namespaces. A pool whose nodes come through GKE's
queued provisioning has its ClusterQueue name the ProvisioningRequest admission check
(components/addons/provisioning.py).

Pure functions only: the objects are registered elsewhere.
"""

from __future__ import annotations

from typing import Any

import yaml

from components import constants, kube, versions
from components.addons import provisioning, release
from components.config.addons import KUEUE_PODS_READY_TIMEOUT_SECONDS
from components.config.node_pools import NodePool
from components.config.resource_pools import ResourcePoolConfig

CHART = "oci://registry.k8s.io/kueue/charts/kueue"
VERSION = versions.KUEUE_VERSION
NAMESPACE = constants.KUEUE_NAMESPACE
COMPONENT = "kueue"
API = "kueue.x-k8s.io/v1beta2"
CONFIG_API = "config.kueue.x-k8s.io/v1beta2"
# The label that puts a Job in a LocalQueue (of the Job's namespace).
QUEUE_LABEL = "kueue.x-k8s.io/queue-name"
# Only Jobs: Determined creates one per task. The "pod" integration would also manage the
# Jobs' pods (each pod its own workload) and is left off.
FRAMEWORKS = ["batch/job"]
# Set by Kubernetes on every namespace to its name (immutable): ClusterQueues select their
# namespaces by it. Source: https://kubernetes.io/docs/reference/labels-annotations-taints/#kubernetes-io-metadata-name
# (read 2026-11).
NAMESPACE_NAME_LABEL = "kubernetes.io/metadata.name"

# Determined creates a Job per task from 0.34.0 (master/internal/rm/kubernetesrm/jobs.go,
# request_workers.go:91 at 0.34.0); 0.33 and older create bare pods (pods.go,
# request_workers.go:73 at 0.33.0), which the batch/job integration never sees: Kueue would
# admit nothing and hold nothing.
MIN_DETERMINED = versions.JOB_TASKS_SINCE

# The pods-ready timeout when `kueue.podsReadyTimeoutSeconds` is not set (sources there).
DEFAULT_PODS_READY_TIMEOUT_SECONDS = KUEUE_PODS_READY_TIMEOUT_SECONDS

# Kueue's requeuing after a pods-ready timeout (its defaults, written out): 60s, 120s, 240s, ...
# up to an hour, without limit. Determined's Jobs never get there (the master deletes an
# evicted Job); kept for the Configuration to say what Kueue would do.
BACKOFF_BASE_SECONDS = 60
BACKOFF_MAX_SECONDS = 3600

# How long a Job whose Workload Kueue deactivated stays before Kueue deletes it
# (objectRetentionPolicies.workloads.afterDeactivatedByKueue, apis/config/v1beta2/
# configuration_types.go:783-804 at v0.19.2, GA without a gate since 0.17: pkg/features/
# kube_features.go:703-706; the deletion: pkg/controller/jobframework/reconciler.go:794-820).
# Kueue deactivates a Workload whose admission check it rejected (a ProvisioningRequest failed
# past its retries: pkg/controller/core/workload_controller.go:974-990); suspended, its Job would
# leave the task waiting forever (the master never sees a condition), deleted, the master fails
# the allocation ("job was deleted": master/internal/rm/kubernetesrm/job.go:285-299 at
# determined-ai/determined v0.38.1). Ten minutes keep the Workload's events (why) readable.
# Nothing else deactivates Determined's Workloads: the pods-ready requeuing has no limit.
DEACTIVATED_JOB_RETENTION = "10m"

# The chart's default controllerManagerConfigYaml at 0.19.2 (charts/kueue/values.yaml), whose
# settings are kept: replacing the string replaces all of it.
_CHART_DEFAULTS: dict[str, Any] = {
    "health": {"healthProbeBindAddress": ":8081"},
    "metrics": {"bindAddress": ":8443"},
    "webhook": {"port": 9443},
    "leaderElection": {"leaderElect": True, "resourceName": "c1f6bfd2.kueue.x-k8s.io"},
    "controller": {
        "groupKindConcurrency": {
            "Job.batch": 5,
            "Pod": 5,
            "Workload.kueue.x-k8s.io": 10,
            "LocalQueue.kueue.x-k8s.io": 5,
            "ClusterQueue.kueue.x-k8s.io": 5,
            "ResourceFlavor.kueue.x-k8s.io": 1,
        }
    },
    "clientConnection": {"qps": 300, "burst": 500},
}


def manager_config(pods_ready_timeout_seconds: int) -> dict[str, Any]:
    """Kueue's Configuration (apis/config/v1beta2): the chart's defaults, Jobs only, only
    Jobs that name a queue, and admission that waits for all of a Job's pods to be ready."""
    if (
        isinstance(pods_ready_timeout_seconds, bool)
        or not isinstance(pods_ready_timeout_seconds, int)
        or pods_ready_timeout_seconds <= 0
    ):
        # Kueue refuses to start without a positive waitForPodsReady.timeout.
        raise ValueError(
            f"pods_ready_timeout_seconds must be a positive whole number, not {pods_ready_timeout_seconds!r}"
        )
    timeout = f"{pods_ready_timeout_seconds}s"
    return {
        "apiVersion": CONFIG_API,
        "kind": "Configuration",
        **_CHART_DEFAULTS,
        # Jobs without the queue label (other users' Jobs, Determined's own without a
        # queue) run as if Kueue were not there.
        "manageJobsWithoutQueueName": False,
        "waitForPodsReady": {
            "timeout": timeout,
            "blockAdmission": True,
            # A running Job whose pod stops being ready gets as long before it is evicted
            # (for Determined a failed pod has failed the task already).
            "recoveryTimeout": timeout,
            "requeuingStrategy": {
                "timestamp": "Eviction",
                "backoffBaseSeconds": BACKOFF_BASE_SECONDS,
                "backoffMaxSeconds": BACKOFF_MAX_SECONDS,
            },
        },
        "integrations": {"frameworks": list(FRAMEWORKS)},
        "objectRetentionPolicies": {"workloads": {"afterDeactivatedByKueue": DEACTIVATED_JOB_RETENTION}},
        # The chart's metrics address, and each ClusterQueue's quota and usage as metrics
        # (kueue_cluster_queue_resource_usage, _nominal_quota: only with this switch,
        # kubernetes-sigs/kueue v0.19.2 apis/config/v1beta2/configuration_types.go:182-185,
        # pkg/cache/scheduler/cache.go:528-530): the Queues dashboard reads them.
        "metrics": {**_CHART_DEFAULTS["metrics"], "enableClusterQueueResources": True},
    }


def values(pods_ready_timeout_seconds: int) -> dict[str, Any]:
    """The chart values: the manager configuration, as the YAML string the chart expects."""
    config = yaml.safe_dump(manager_config(pods_ready_timeout_seconds), sort_keys=False)
    return {"managerConfig": {"controllerManagerConfigYaml": config}}


def release_args(version: str, pods_ready_timeout_seconds: int) -> dict[str, Any]:
    """Arguments of the `kubernetes:helm.sh/v3:Release` (an OCI chart: no repository)."""
    return release.release_args(
        "kueue", CHART, version, NAMESPACE, values(pods_ready_timeout_seconds), create_namespace=True
    )


def flavor_name(node_pool: NodePool) -> str:
    return kube.dns_label(f"determined-{node_pool.name}")


def resource_flavor(node_pool: NodePool) -> dict[str, Any]:
    """The nodes of `node_pool`. Kueue adds the node labels (as a node selector) and the
    tolerations to the pods of the Jobs it admits on this flavor (and to the pod templates of
    their ProvisioningRequests): on a queued-provisioning pool also the toleration of the taint
    GKE puts on its nodes."""
    spec: dict[str, Any] = {}
    if node_pool.selector:
        spec["nodeLabels"] = dict(node_pool.selector)
    tolerations = [taint.toleration for taint in node_pool.all_taints]
    tolerations += provisioning.flavor_tolerations(node_pool)
    if tolerations:
        # GPU taint first (NodePool.all_taints).
        spec["tolerations"] = tolerations
    return kube.manifest(API, "ResourceFlavor", kube.metadata(flavor_name(node_pool), COMPONENT), spec=spec)


def queue_name(rp: ResourcePoolConfig) -> str:
    """The name of a resource pool's ClusterQueue and LocalQueue (and the queue label value)."""
    return kube.dns_label(f"determined-{rp.name}")


def cluster_queue(
    rp: ResourcePoolConfig,
    flavor: str,
    nominal: dict[str, str],
    cohort: str | None,
    namespaces: list[str],
    admission_checks: list[str] | None = None,
) -> dict[str, Any]:
    """The quota of a resource pool: `nominal` ({resource: quantity}) of `flavor`, for the
    Jobs of `namespaces` (those holding the pool's LocalQueues) only; borrowing from the other
    queues of `cohort` when given. GPUs are `nvidia.com/gpu` as the nodes advertise them: MIG
    partitions and shared GPUs each count (StackConfig.queue_quota). `admission_checks`: the
    checks a Job passes after its quota is reserved and before it is admitted, on every flavor
    (v1beta2 has only `admissionChecksStrategy`: config/components/crd/bases/
    kueue.x-k8s.io_clusterqueues.yaml at v0.19.2)."""
    if not nominal:
        raise ValueError(f"resource pool {rp.name}: a ClusterQueue needs a quota for at least one resource")
    if not namespaces:
        raise ValueError(f"resource pool {rp.name}: a ClusterQueue needs at least one namespace")
    resources = sorted(nominal)
    spec: dict[str, Any] = {
        "namespaceSelector": namespace_selector(namespaces),
        "resourceGroups": [
            {
                "coveredResources": resources,
                # Kueue requires the flavor's resources in the order of coveredResources.
                "flavors": [
                    {
                        "name": flavor,
                        "resources": [{"name": name, "nominalQuota": nominal[name]} for name in resources],
                    }
                ],
            }
        ],
    }
    if cohort:
        spec["cohortName"] = cohort
    if admission_checks:
        # No onFlavors: one flavor per queue, and an empty list means every flavor.
        spec["admissionChecksStrategy"] = {"admissionChecks": [{"name": name} for name in admission_checks]}
    spec["queueingStrategy"] = "BestEffortFIFO"
    return kube.manifest(API, "ClusterQueue", kube.metadata(queue_name(rp), COMPONENT), spec=spec)


def namespace_selector(namespaces: list[str]) -> dict[str, Any]:
    """Exactly `namespaces`, by the name label Kubernetes gives every namespace (nothing the
    project has to label, the master's namespace included): one namespace as matchLabels, as
    before several were needed, several as an `In` expression."""
    names = list(dict.fromkeys(namespaces))
    if len(names) == 1:
        return {"matchLabels": {NAMESPACE_NAME_LABEL: names[0]}}
    return {"matchExpressions": [{"key": NAMESPACE_NAME_LABEL, "operator": "In", "values": sorted(names)}]}


def local_queue(rp: ResourcePoolConfig, namespace: str) -> dict[str, Any]:
    """The queue the pool's Jobs name, in `namespace` (one of the namespaces its Jobs land in)."""
    meta = kube.metadata(queue_name(rp), COMPONENT, namespace)
    return kube.manifest(API, "LocalQueue", meta, spec={"clusterQueue": queue_name(rp)})


def queue_label_layer(rp: ResourcePoolConfig) -> dict[str, Any]:
    """A task pod spec (Pod form) carrying only the queue label, to merge into the pool's
    pod specs: Determined copies it onto each task's Job."""
    return {"metadata": {"labels": {QUEUE_LABEL: queue_name(rp)}}}
