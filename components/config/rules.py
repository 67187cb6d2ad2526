"""The rules across sections of the stack configuration, in the order their problems are
reported; each section checks its own values. A rule takes the config and `add(key path,
message)`; the modules named after what they check hold them (namespaces, pools, quotas, storage,
pod_specs, slots, kueue, master_rules, tls, database, gke, eks, ...)."""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable
from typing import TYPE_CHECKING

from components.config import kueue, master_rules, namespaces, pod_specs, pools, quotas, slots, storage
from components.config.checkpoint_directory import directory_problems
from components.config.cloud_names import name_problems
from components.config.database import ManagedDatabase, backup_problems, managed_tier_problems
from components.config.eks import eks_problems
from components.config.errors import Add, Problem
from components.config.fabric_rules import fabric_task_problems
from components.config.gke import gke_problems
from components.config.master_config_size import master_config_size_problems
from components.config.partial import Unreliable
from components.config.shared_filesystem_rules import shared_filesystem_problems
from components.config.stack import EksStack, ExistingStack, GkeStack
from components.config.tls import acme_problems, dns01_problems, gateway_problems

if TYPE_CHECKING:
    from components.config.stack import StackConfig
    from components.config.task_pods import TaskPods

Rule = Callable[["StackConfig", Add], None]


def _not_supported_yet(cfg: StackConfig, add: Add) -> None:
    """Sections that are parsed and checked now but deployed by later work."""
    if isinstance(cfg.database, ManagedDatabase) and isinstance(cfg, ExistingStack):
        add(
            "database.mode",
            "managed databases are created only for cloud gke (Cloud SQL) or eks (RDS); "
            "use inCluster or external",
        )
    if cfg.gpu_operator.enabled and isinstance(cfg, ExistingStack):
        add(
            "gpuOperator.enabled",
            "the GPU operator is installed on clusters the stack creates (cloud gke or eks); set false",
        )


def _cloud_rules(cfg: StackConfig, add: Add) -> None:
    if isinstance(cfg, GkeStack):
        gke_problems(cfg, add)
    elif isinstance(cfg, EksStack):
        eks_problems(cfg, add)


def rules(task_pods: TaskPods | None = None) -> list[Rule]:
    """Every cross-section rule, in the order its problems are reported. `task_pods`: the
    Determined component's (components.config.task_pods); without them the two rules that
    read them skip what they would check."""
    return [
        pools.node_pool_problems,
        namespaces.namespace_problems,
        namespaces.addon_namespace_problems,
        quotas.shared_quota_problems,
        namespaces.chart_namespace_problems,
        namespaces.task_namespace_problems,
        pools.resource_pool_problems,
        storage.storage_problems,
        functools.partial(pod_specs.configured_pod_spec_problems, task_pods=task_pods),
        pod_specs.merged_pod_spec_problems,
        master_rules.version_problems,
        pools.workspace_problems,
        slots.slots_problems,
        _not_supported_yet,
        _cloud_rules,
        name_problems,
        kueue.queue_problems,
        functools.partial(quotas.quota_limit_problems, task_pods=task_pods),
        gateway_problems,
        dns01_problems,
        acme_problems,
        backup_problems,
        managed_tier_problems,
        master_rules.master_problems,
        master_rules.pull_secret_problems,
        directory_problems,
        shared_filesystem_problems,
        fabric_task_problems,
        master_config_size_problems,
    ]


# Rules that read more than the Determined component's Args hold: the cluster sections
# (storage, cloud rules, cloud names, DNS-01), whether a key was written (kueue), and the task
# pods Determined renders (the two partials in `rules()`).
_STACK_ONLY = {
    storage.storage_problems,
    _not_supported_yet,
    _cloud_rules,
    name_problems,
    kueue.queue_problems,
    dns01_problems,
}
# The others judge only sections DeterminedArgs hold: the Args run them on themselves, so a
# program building them directly is refused what a stack file would be
# (tests/determined/test_component.py: each gives the same on every stack's config and Args).
DETERMINED_RULES: list[Rule] = [
    rule for rule in rules() if not isinstance(rule, functools.partial) and rule not in _STACK_ONLY
]


def problems(cfg: StackConfig, *, partial: bool = False, task_pods: TaskPods | None = None) -> list[Problem]:
    """Problems across sections, every rule's. `partial`: the config holds values that
    failed validation (components.config.partial); a rule that reads one is left out, so
    that no rule judges the other keys against a value the user did not write."""
    found: list[Problem] = []
    for rule in rules(task_pods):
        mine: list[Problem] = []
        try:
            with warnings.catch_warnings():
                # Serializing a partial config warns of its BROKEN values.
                warnings.simplefilter("ignore" if partial else "default")
                rule(cfg, lambda path, message, mine=mine: mine.append(Problem(path, message)))
        except Unreliable:
            continue
        except Exception:
            if partial:  # a rule tripping over what is missing: its inputs failed validation
                continue
            raise
        found += mine
    return found
