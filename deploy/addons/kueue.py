"""Kueue, from its official chart: all-or-nothing (gang) admission of Determined's tasks.

Determined launches each task as one batch/v1 Job whose labels are copied from the metadata
labels of the task pod spec. A pool's pod specs carry `kueue.x-k8s.io/queue-name` (see
`queue_label_layer`), so Kueue suspends each of its Jobs until the pool's ClusterQueue has
quota for every pod of the Job at once; it never admits part of a Job (no
`kueue.x-k8s.io/job-min-parallelism`). With `waitForPodsReady.blockAdmission`, a queue admits
nothing else until the admitted Job's pods are all ready, and a Job whose pods are not all
ready within the timeout is suspended and requeued with exponential backoff, so two large
tasks never deadlock half-scheduled.

Per node pool one ResourceFlavor (its nodes, with tolerations for their taints, which Kueue
adds to the pods it admits); per resource pool one ClusterQueue (quota on that flavor, only
the pool's namespace may use it) and one LocalQueue in the pool's namespace.

Pure functions only: the objects are registered elsewhere.
"""

from __future__ import annotations

from typing import Any

import yaml

from deploy import kube, versions
from deploy.addons import release
from deploy.config.node_pools import NodePool
from deploy.config.resource_pools import ResourcePoolConfig

CHART = "oci://registry.k8s.io/kueue/charts/kueue"
VERSION = versions.KUEUE_VERSION
NAMESPACE = "kueue-system"
COMPONENT = "kueue"
API = "kueue.x-k8s.io/v1beta2"
CONFIG_API = "config.kueue.x-k8s.io/v1beta2"
# The label that puts a Job in a LocalQueue (of the Job's namespace).
QUEUE_LABEL = "kueue.x-k8s.io/queue-name"
# Only Jobs: Determined creates one per task. The "pod" integration would also manage the
# Jobs' pods (each pod its own workload) and is left off.
FRAMEWORKS = ["batch/job"]
NAMESPACE_NAME_LABEL = "kubernetes.io/metadata.name"

# Requeuing after a pods-ready timeout (Kueue's defaults, written out): 60s, 120s, 240s, ...
# up to an hour, without limit.
BACKOFF_BASE_SECONDS = 60
BACKOFF_MAX_SECONDS = 3600

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
            # A running Job that loses a pod gets as long to recover before it is requeued.
            "recoveryTimeout": timeout,
            "requeuingStrategy": {
                "timestamp": "Eviction",
                "backoffBaseSeconds": BACKOFF_BASE_SECONDS,
                "backoffMaxSeconds": BACKOFF_MAX_SECONDS,
            },
        },
        "integrations": {"frameworks": list(FRAMEWORKS)},
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
    tolerations to the pods of the Jobs it admits on this flavor."""
    spec: dict[str, Any] = {}
    if node_pool.selector:
        spec["nodeLabels"] = dict(node_pool.selector)
    tolerations = [taint.toleration for taint in node_pool.all_taints]
    if tolerations:
        # GPU taint first (NodePool.all_taints).
        spec["tolerations"] = tolerations
    return kube.manifest(API, "ResourceFlavor", kube.metadata(flavor_name(node_pool), COMPONENT), spec=spec)


def queue_name(rp: ResourcePoolConfig) -> str:
    """The name of a resource pool's ClusterQueue and LocalQueue (and the queue label value)."""
    return kube.dns_label(f"determined-{rp.name}")


def cluster_queue(
    rp: ResourcePoolConfig, flavor: str, nominal: dict[str, str], cohort: str | None
) -> dict[str, Any]:
    """The quota of a resource pool: `nominal` ({resource: quantity}) of `flavor`, for the
    pool's namespace only; borrowing from the other queues of `cohort` when given. GPUs are
    `nvidia.com/gpu` as the nodes advertise them: MIG partitions and shared GPUs each count
    (StackConfig.queue_quota)."""
    if not nominal:
        raise ValueError(f"resource pool {rp.name}: a ClusterQueue needs a quota for at least one resource")
    resources = sorted(nominal)
    spec: dict[str, Any] = {
        "namespaceSelector": {"matchLabels": {NAMESPACE_NAME_LABEL: rp.namespace_name}},
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
    spec["queueingStrategy"] = "BestEffortFIFO"
    return kube.manifest(API, "ClusterQueue", kube.metadata(queue_name(rp), COMPONENT), spec=spec)


def local_queue(rp: ResourcePoolConfig) -> dict[str, Any]:
    """The queue the pool's Jobs name, in the pool's namespace."""
    meta = kube.metadata(queue_name(rp), COMPONENT, rp.namespace_name)
    return kube.manifest(API, "LocalQueue", meta, spec={"clusterQueue": queue_name(rp)})


def queue_label_layer(rp: ResourcePoolConfig) -> dict[str, Any]:
    """A task pod spec (Pod form) carrying only the queue label, to merge into the pool's
    pod specs: Determined copies it onto each task's Job."""
    return {"metadata": {"labels": {QUEUE_LABEL: queue_name(rp)}}}
