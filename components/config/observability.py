"""Observability: metrics, dashboards and alerts of the GPUs, the cluster and Determined.

`observability.enabled` (default: on in prod, off in dev) installs a metrics store and
Grafana in a namespace of their own (`<namespace>-monitoring`), the GPU, database and master
exporters and scrapes, the project's dashboards and alerts (components/observability).
"""

from __future__ import annotations

import re
from typing import Annotated

from pydantic import AfterValidator, Field

from components.config.base import ConfigModel
from components.config.syntax import DnsSubdomain, Flag, Quantity, pattern_check, whole_number

# Prometheus' own duration form, as the Prometheus CRD's `spec.retention` takes it
# (monitoring.coreos.com/v1 Prometheus, Prometheus Operator v0.93.1:
# tests/data/crd-schemas/monitoring.coreos.com_v1_Prometheus... `retention.pattern`), without
# the bare `0` (unlimited: the volume fills and Prometheus stops writing).
_RETENTION = re.compile(r"(([0-9]+)y)?(([0-9]+)w)?(([0-9]+)d)?(([0-9]+)h)?(([0-9]+)m)?")


def _some_time(value: str) -> str:
    if not any(ch.isdigit() and ch != "0" for ch in value):
        raise ValueError("must be a time above zero (examples: 15d, 2w, 36h)")
    return value


Retention = Annotated[
    str,
    AfterValidator(
        pattern_check(_RETENTION, "a duration in y, w, d, h, m units, largest first (example: 15d)")
    ),
    AfterValidator(_some_time),
]


class AlertThresholds(ConfigModel):
    """When the alerts that depend on how a platform runs fire."""

    task_pending_minutes: whole_number(5, 10080) = Field(
        30,
        description="Minutes (5 to 10080) a task's pod may wait to be scheduled or admitted before "
        "DeterminedTaskPending fires; default 30.",
    )
    gpu_idle_minutes: whole_number(15, 10080) = Field(
        60,
        description="Minutes (15 to 10080) a GPU may be allocated to a task and idle before GpuAllocatedIdle "
        "fires; default 60.",
    )


class ObservabilityConfig(ConfigModel):
    """Metrics (Prometheus), dashboards (Grafana) and alerts (Alertmanager) in the namespace
    `<namespace>-monitoring`."""

    enabled: Flag | None = Field(
        None,
        description="`true` installs kube-prometheus-stack (Prometheus, Alertmanager, Grafana, "
        "kube-state-metrics, node exporter), the GPU (DCGM), database and master scrapes, the "
        "project's dashboards and alerts; default: on in prod, off in dev.",
    )
    retention: Retention = Field(
        "15d",
        description="How long Prometheus keeps samples (a duration such as 15d or 2w); default 15d. Samples "
        "are also dropped oldest first when the volume is 90% full.",
    )
    storage_size: Quantity = Field(
        "50Gi", description="The size of Prometheus' persistent volume (a Kubernetes quantity); default 50Gi."
    )
    storage_class: DnsSubdomain | None = Field(
        None,
        description="The StorageClass of Prometheus' and Alertmanager's volumes; default the cluster's "
        "default class.",
    )
    alerts: AlertThresholds = Field(
        default_factory=AlertThresholds,
        description="`{taskPendingMinutes, gpuIdleMinutes}`: when the alerts on waiting tasks and idle GPUs "
        "fire.",
    )
