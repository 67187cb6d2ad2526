"""scheduler kueue: the Determined release it needs and a quota for what queued tasks ask."""

from __future__ import annotations

from typing import TYPE_CHECKING

from components import versions
from components.config.errors import Add
from components.config.views import UNLIMITED_CPU

if TYPE_CHECKING:
    from components.config.stack import StackConfig


def queue_problems(cfg: StackConfig, add: Add) -> None:
    """scheduler kueue: every queued pool's ClusterQueue needs a quota for what its tasks ask."""
    if cfg.scheduler != "kueue":
        if "kueue" in cfg.model_fields_set:
            add("kueue", "only with scheduler kueue (set scheduler: kueue, or remove this section)")
        return
    if cfg.master.version_tuple < versions.JOB_TASKS_SINCE:
        # master/internal/rm/kubernetesrm/pods.go (0.33.0 and older): one Pod per task
        # process, no Job; Kueue's batch/job integration would never see a task.
        add(
            "scheduler",
            f"kueue needs Determined {'.'.join(map(str, versions.JOB_TASKS_SINCE))} or newer: master "
            f"{cfg.master.version} runs tasks as bare pods, not Jobs, so Kueue would never queue them "
            "(set master.version to 0.34.0 or newer, or scheduler: default)",
        )
        return
    names = {p.name for p in cfg.node_pools}
    for i, rp in enumerate(cfg.resource_pools):
        if rp.node_pool not in names or not cfg.queued(rp):
            continue
        nominal = cfg.queue_quota(rp)
        # What tasks are admitted by: GPUs, or CPUs on a CPU-slot cluster.
        if cfg.node_pool_of(rp).gpu:
            wanted, key = "nvidia.com/gpu", "gpu"
        elif cfg.slot_type == "cpu":
            wanted, key = "cpu", "cpu"
        else:
            continue
        if nominal.get(wanted) in (None, UNLIMITED_CPU):
            add(
                f"resourcePools[{i}].quota.{key}",
                f"required with scheduler kueue: the {key.upper()}s of node pool {rp.node_pool!r} are not "
                "known offline (an existing cluster, or a machine type that does not say), and Kueue admits "
                "tasks against this quota",
            )
