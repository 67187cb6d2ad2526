"""The task pods the Determined component renders, as two of the config's rules read them.

Which volumes a checkpoint GC pod gets from the project, and which containers of which task
pods land in a namespace whose quota limits CPU or memory, depend on what the component
builds (components.determined.resource_pools). The config cannot import the component (the
component imports the config), so whoever loads the config hands these over:
`load_config(raw, task_pods=...)`; the composition root passes the component's
(stack_args.DeterminedTaskPods). Without them those two rules do not run.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from components.config.resource_pools import ResourcePoolConfig
    from components.config.stack import StackConfig


class TaskPods(Protocol):
    """The component's task pods for a stack configuration."""

    def project_layer(self, cfg: StackConfig) -> dict[str, Any]:
        """What every task pod gets from the project (pull Secrets, CAs, checkpoint volume, proxy)."""
        ...

    def pool_pod_specs(self, cfg: StackConfig, rp: ResourcePoolConfig) -> dict[str, dict[str, Any]]:
        """A pool's cpu_pod_spec and gpu_pod_spec as master.yaml gets them."""
        ...

    def pool_namespaces(self, cfg: StackConfig, rp: ResourcePoolConfig) -> list[str]:
        """Every namespace the master may put the pool's tasks in."""
        ...

    def checkpoint_gc_pod_spec(self, cfg: StackConfig) -> dict[str, Any] | None:
        """The checkpoint GC pod spec as master.yaml gets it, or None without one."""
        ...
