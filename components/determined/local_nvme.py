"""Local NVMe scratch space (nodePools[].localNvme) in task pods: an emptyDir on the nodes'
NVMe-backed ephemeral storage, asked for as ephemeral-storage.

The node pool puts its local disks under the kubelet's ephemeral storage (GKE
ephemeral_storage_local_ssd_config; EKS AL2023 localStorage RAID0), where emptyDir volumes
live, so a plain emptyDir is on NVMe on both clouds. Determined keeps a pool pod spec's
volumes and the task container's volumeMounts and resources it does not set itself
(determined-ai/determined@v0.38.1 master/internal/rm/kubernetesrm/spec.go:619-651; it sets
only cpu or nvidia.com/gpu, :57-100). The ephemeral-storage request makes the scheduler and
the autoscalers place the pod where the space is; the sizeLimit makes the kubelet evict a pod
that outgrows it instead of filling the node (https://kubernetes.io/docs/concepts/
configuration/manage-resources-containers/#local-ephemeral-storage, read 2026-11).

Every task of the pool gets it, CPU tasks too (a notebook caching a dataset); the checkpoint
GC pod does not (it has its own pod spec, resource_pools.checkpoint_gc_pod_spec). On a GPU
node pool only GPU tasks ask for it (review26 m2): a TensorBoard or zero-slot notebook asking
for the whole size would hold the node's scratch space from the trial the node is for. CPU
tasks there keep the volume and its sizeLimit; under disk pressure the kubelet evicts first the
pods whose usage exceeds their requests (https://kubernetes.io/docs/concepts/scheduling-eviction/
node-pressure-eviction/, read 2026-11), so theirs before the trial's. On a CPU node pool the CPU
tasks are the workload and ask for it."""

from __future__ import annotations

from typing import Any

from components import constants
from components.config import ResourcePoolConfig
from components.config.fabric_rules import SCRATCH_VOLUME as VOLUME
from components.config.node_pools import LocalNvme
from components.determined.args import DeterminedArgs


def local_nvme(cfg: DeterminedArgs, rp: ResourcePoolConfig) -> LocalNvme | None:
    """The localNvme of the pool's node pool (created pools only), or None."""
    return getattr(cfg.node_pool_of(rp), "local_nvme", None)


def asks_for_scratch(cfg: DeterminedArgs, rp: ResourcePoolConfig, gpu: bool) -> bool:
    """Whether the pool's GPU (`gpu`) or CPU tasks ask for the scratch size: GPU tasks always,
    CPU tasks off GPU node pools only (module docstring)."""
    return gpu or not getattr(cfg.node_pool_of(rp), "gpu", None)


def pool_layer(cfg: DeterminedArgs, rp: ResourcePoolConfig, gpu: bool = True) -> dict[str, Any]:
    """The scratch volume of a pool on a node pool with localNvme, for its GPU tasks (`gpu`)
    or its CPU tasks. {} on other pools."""
    nvme = local_nvme(cfg, rp)
    if nvme is None:
        return {}
    task: dict[str, Any] = {
        "name": constants.TASK_CONTAINER,
        "volumeMounts": [{"name": VOLUME, "mountPath": nvme.mount_path}],
    }
    if asks_for_scratch(cfg, rp, gpu):
        task["resources"] = {"requests": {"ephemeral-storage": nvme.size}}
    return {
        "spec": {
            "volumes": [{"name": VOLUME, "emptyDir": {"sizeLimit": nvme.size}}],
            "containers": [task],
        }
    }
