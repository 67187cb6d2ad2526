"""Add-ons installed from their official charts, each switched on by config."""

from __future__ import annotations

from deploy import versions
from deploy.config.base import ConfigModel
from deploy.config.syntax import ChartVersion, DnsLabel, Flag, whole_number


class GpuOperatorConfig(ConfigModel):
    enabled: Flag = False
    version: ChartVersion = versions.DEFAULT_GPU_OPERATOR_VERSION


class KueueConfig(ConfigModel):
    """Gang admission (`scheduler: kueue`): how long an admitted task's pods may take to all
    run before Kueue evicts and requeues it, and an optional cohort the pools' queues share
    (so one may borrow what another does not use)."""

    pods_ready_timeout_seconds: whole_number(30, 86400) = 600
    cohort: DnsLabel | None = None
