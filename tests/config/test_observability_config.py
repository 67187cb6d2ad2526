"""`observability`: on by default in prod only, the master's endpoints follow it, and bad
values are refused one line per problem naming the key path."""

from __future__ import annotations

import pytest
from conftest import make_config, raw_config

from components.config import ConfigError, load_config


def problems(**overrides) -> list[str]:
    with pytest.raises(ConfigError) as exc:
        load_config(raw_config(**overrides))
    return [line.removeprefix("determined:") for line in str(exc.value).splitlines()]


@pytest.mark.parametrize(
    ("environment", "enabled", "observed"),
    [("prod", None, True), ("dev", None, False), ("dev", True, True), ("prod", False, False)],
)
def test_observability_is_on_in_prod_unless_said_otherwise(environment, enabled, observed):
    section = {} if enabled is None else {"enabled": enabled}
    overrides = {"environment": environment, "observability": section}
    if environment == "prod":
        overrides["database"] = {"backup": {"schedule": "0 3 * * *"}}
    assert make_config(**overrides).observed is observed


def test_the_master_serves_its_metrics_when_observed_or_asked():
    assert make_config(observability={"enabled": True}).master_prometheus
    assert make_config(master={"observability": {"enablePrometheus": True}}).master_prometheus
    assert not make_config(observability={"enabled": False}).master_prometheus


def test_defaults():
    cfg = make_config().observability
    assert (cfg.retention, cfg.storage_size, cfg.storage_class) == ("15d", "50Gi", None)
    assert (cfg.alerts.task_pending_minutes, cfg.alerts.gpu_idle_minutes) == (30, 60)


@pytest.mark.parametrize("retention", ["15d", "2w", "1y2w", "36h", "90m", "1w3d12h"])
def test_retention_accepts_prometheus_durations(retention):
    assert make_config(observability={"retention": retention}).observability.retention == retention


@pytest.mark.parametrize("retention", ["0", "0d", "15 days", "3d1w", "10s", "1.5d", "", "15D"])
def test_retention_refuses_what_prometheus_would_not_take_or_keeps_forever(retention):
    found = problems(observability={"retention": retention})
    assert len(found) == 1 and found[0].startswith("observability.retention:"), found


def test_each_bad_value_is_one_line_naming_its_key():
    found = problems(
        observability={
            "enabled": "yes",
            "storageSize": "-1Gi",
            "storageClass": "Not_A_Class",
            "alerts": {"taskPendingMinutes": 1, "gpuIdleMinutes": True},
            "grafana": {},
        }
    )
    keys = sorted(line.split(":")[0] for line in found)
    assert keys == [
        "observability.alerts.gpuIdleMinutes",
        "observability.alerts.taskPendingMinutes",
        "observability.enabled",
        "observability.grafana",
        "observability.storageClass",
        "observability.storageSize",
    ], found


def test_the_monitoring_namespace_is_one_of_the_stacks_own():
    # A pool namespace named like it would be fenced and labelled by two owners.
    found = problems(
        resourcePools=[{"name": "gpu", "nodePool": "a100", "namespace": "determined-monitoring"}],
    )
    assert any("determined-monitoring" in line for line in found), found
