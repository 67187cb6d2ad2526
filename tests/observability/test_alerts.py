"""The project's alerts and recording rules (components/observability/alerts.py) and the
cert-manager and Kueue scrapes: every expression parses and names metrics that exist and are
on, the PrometheusRule and ServiceMonitors meet their CRD schemas, thresholds follow the
configuration, every alert of issue 24 exists, and a few alerts fire (and do not) on
promtool's unit tests."""

from __future__ import annotations

import copy
import functools
import re

import pytest
from component_args import make_args
from conftest import EKS, GKE
from crds import crd_problems
from promql import check_rule_spec, run_rule_tests

from components import constants
from components.addons import cert_manager, kueue
from components.observability import alerts, cert_manager_metrics, cron, kueue_metrics, layout

ON = {"enabled": True}
INGRESS = {
    "mode": "ingress",
    "host": "det.example.com",
    "certificate": {"source": "certManager", "email": "ops@mail.example.com"},
}
MANAGED_EKS_DB = {"mode": "managed", "tier": "db.m7g.large", "storageSizeGb": 100}
EXTERNAL_DB = {"mode": "external", "host": "pg.internal", "user": "det", "password": "x" * 16}


@functools.cache
def configs():
    existing = make_args(observability=ON)
    gke = make_args(**GKE, observability=ON, tls=INGRESS, scheduler="kueue")
    return {
        "existing": existing,
        "existing, GKE's managed DCGM": existing.model_copy(update={"gpu_metrics": "gke"}),
        "gke, kueue, cert-manager": gke,
        "eks, managed database": make_args(**EKS, observability=ON, database=MANAGED_EKS_DB),
        "existing, external database": make_args(observability=ON, database=EXTERNAL_DB),
        "existing, no backups": make_args(
            observability=ON, database={"mode": "inCluster", "backup": {"schedule": None}}
        ),
    }


def rules_by_alert(args):
    return {
        rule["alert"]: rule
        for group in alerts.rule_groups(args)
        for rule in group["rules"]
        if "alert" in rule
    }


@pytest.mark.parametrize("name", list(configs()))
def test_every_rule_passes_the_promql_checks(name):
    assert check_rule_spec(alerts.prometheus_rule(configs()[name])["spec"]) == []


@pytest.mark.parametrize("name", list(configs()))
def test_the_rule_meets_its_crd_schema(name):
    rule = alerts.prometheus_rule(configs()[name])
    assert crd_problems(rule) == []
    assert rule["metadata"]["namespace"] == layout.namespace(configs()[name].namespace)
    assert layout.SELECTOR_LABELS.items() <= rule["metadata"]["labels"].items()


@pytest.mark.parametrize("name", list(configs()))
def test_every_alert_has_severity_summary_description_and_runbook(name):
    for alert, rule in rules_by_alert(configs()[name]).items():
        assert rule["labels"]["severity"] in ("critical", "warning", "info"), alert
        for key in ("summary", "description", "runbook"):
            assert len(rule["annotations"][key]) > 20, (alert, key)
        # A runbook says what to check and what to do: more than one sentence.
        assert rule["annotations"]["runbook"].count(". ") >= 2, alert


# Issue 24 item 5, one alert (or more) per item.
ISSUE_ITEMS = {
    "master down": ["DeterminedMasterDown"],
    "database down": ["DeterminedDatabaseDown"],
    "database near full": ["DeterminedDatabaseDiskFilling", "DeterminedDatabaseDiskFull"],
    "backup older than its schedule allows": ["DeterminedBackupTooOld"],
    "certificate expiring": ["CertificateExpiringSoon", "CertificateExpiring"],
    "GPU XID errors": ["GpuXidError"],
    "GPU falling off the bus": ["GpuFellOffTheBus", "GpuVanished"],
    "GPU allocated but idle": ["GpuAllocatedIdle"],
    "tasks pending past a threshold": ["DeterminedTaskPending", "DeterminedTaskNotAdmitted"],
    "node pool at max size with pending GPU pods": ["NodePoolAtMaxSize"],
}


def test_every_issue_item_has_its_alerts():
    names = {name for args in configs().values() for name in alerts.alert_names(args)}
    missing = {item: [a for a in wanted if a not in names] for item, wanted in ISSUE_ITEMS.items()}
    assert {item: m for item, m in missing.items() if m} == {}


def test_alerts_exist_only_where_their_metrics_do():
    names = {name: set(alerts.alert_names(args)) for name, args in configs().items()}
    # cert-manager issues no certificate, Kueue does not run: no alert on their metrics.
    assert not {"CertificateExpiring", "DeterminedTaskNotAdmitted"} & names["existing"]
    assert {"CertificateExpiring", "DeterminedTaskNotAdmitted", "KueueWorkloadsInadmissible"} <= names[
        "gke, kueue, cert-manager"
    ]
    # GKE's managed DCGM collects no XIDs; the vanished-GPU alert is all it gets.
    assert not {"GpuXidError", "GpuFellOffTheBus"} & names["existing, GKE's managed DCGM"]
    assert "GpuVanished" in names["existing, GKE's managed DCGM"]
    # Nothing tells how full an external database (or Cloud SQL, which grows) may get.
    assert not {"DeterminedDatabaseDiskFull"} & names["existing, external database"]
    assert "DeterminedDatabaseDiskFull" in names["eks, managed database"]
    assert "DeterminedBackupTooOld" not in names["existing, no backups"]
    # Existing clusters' pools have no maximum size.
    assert "NodePoolAtMaxSize" not in names["existing"]
    assert "NodePoolAtMaxSize" in names["gke, kueue, cert-manager"]


def test_thresholds_follow_the_configuration():
    args = make_args(observability={**ON, "alerts": {"taskPendingMinutes": 45, "gpuIdleMinutes": 90}})
    rules = rules_by_alert(args)
    assert rules["GpuAllocatedIdle"]["for"] == "90m"
    assert "> 2700" in rules["DeterminedTaskPending"]["expr"]  # 45 minutes
    namespaces = re.search(r'namespace=~"([^"]+)"', rules["DeterminedTaskPending"]["expr"]).group(1)
    assert set(namespaces.split("|")) == set(args.task_namespaces)


def test_database_size_follows_the_configuration():
    args = make_args(observability=ON, database={"mode": "inCluster", "storageSize": "64Gi"})
    rule = rules_by_alert(args)["DeterminedDatabaseDiskFull"]
    assert f'persistentvolumeclaim="{constants.DB_VOLUME_CLAIM}"' in rule["expr"]
    assert str(64 * 2**30) in rule["expr"]  # the fallback: database sizes against the claim's
    assert "64Gi" in rule["annotations"]["description"]
    managed = rules_by_alert(configs()["eks, managed database"])["DeterminedDatabaseDiskFull"]
    assert str(400 * 2**30) in managed["expr"]  # RDS storage autoscaling: 4 times 100 GiB


@pytest.mark.parametrize(
    ("schedule", "hours"),
    [("0 3 * * *", 49), ("@hourly", 3), ("0 */6 * * *", 13), ("0 3 * * 1-5", 145), ("0 3 * * sun", 337)],
)
def test_backup_age_follows_the_schedule(schedule, hours):
    args = make_args(observability=ON, database={"mode": "inCluster", "backup": {"schedule": schedule}})
    assert alerts.backup_max_age_minutes(args) == hours * 60
    rule = rules_by_alert(args)["DeterminedBackupTooOld"]
    assert f"> {hours * 3600}" in rule["expr"]
    assert f'cronjob="{constants.BACKUP_CRONJOB}"' in rule["expr"]


@pytest.mark.parametrize(
    ("schedule", "minutes"),
    [
        ("*/15 * * * *", 15),
        ("@daily", 1440),
        ("0 1-5/2 * * *", 1200),  # 01:00, 03:00, 05:00, then 01:00 the next day
        ("0 3 1 * *", 31 * 1440),
        ("0 0 1,15 * mon", 7 * 1440),  # both day fields restricted: either matches
        ("30 2 */2 * *", 2 * 1440),  # a stepped star is no star: day-of-month AND day-of-week
        ("0 0 29 2 *", 1461 * 1440),
        ("0 0 30 2 *", None),
    ],
)
def test_cron_intervals(schedule, minutes):
    assert cron.max_interval_minutes(schedule) == minutes


def test_node_pool_alert_per_gpu_pool_with_its_size():
    args = configs()["gke, kueue, cert-manager"]
    (rule,) = [
        r for g in alerts.rule_groups(args) for r in g["rules"] if r.get("alert") == "NodePoolAtMaxSize"
    ]
    pool = next(p for p in args.node_pools if p.gpu)
    assert rule["labels"]["node_pool"] == pool.name
    assert (
        f'{layout.ksm_label(constants.NODE_POOL_LABEL)}="{pool.name}"}}) >= {pool.max_nodes}' in rule["expr"]
    )


def test_kueue_alerts_name_the_pools_queues():
    args = configs()["gke, kueue, cert-manager"]
    expr = rules_by_alert(args)["KueueWorkloadsInadmissible"]["expr"]
    for rp in args.resource_pools:
        assert kueue.queue_name(rp) in expr


def test_recording_rules_describe_the_pools():
    args = configs()["gke, kueue, cert-manager"]
    records = alerts.records(args)
    assert {r["record"] for r in records} == set(layout.RECORDING_RULES)
    pools = [r["labels"] for r in records if r["record"] == layout.RESOURCE_POOL_INFO]
    assert pools == [
        {"resource_pool": rp.name, "namespace": rp.namespace_name, "node_pool": rp.node_pool}
        for rp in args.resource_pools
    ]


def test_gpu_joins_use_kube_state_metrics_node_label():
    # The GPU alerts join DCGM series to kube-state-metrics' by `node`, KSM's own label name.
    assert layout.NODE_LABEL == "node"


# --- the scrapes --------------------------------------------------------------------------------


def test_cert_manager_scrape_only_with_its_certificate():
    assert cert_manager_metrics.service_monitor(configs()["existing"]) is None
    monitor = cert_manager_metrics.service_monitor(configs()["gke, kueue, cert-manager"])
    assert crd_problems(monitor) == []
    assert monitor["spec"]["namespaceSelector"] == {"matchNames": [constants.CERT_MANAGER_NAMESPACE]}
    assert monitor["spec"]["selector"]["matchLabels"]["app.kubernetes.io/instance"] == cert_manager.RELEASE
    assert monitor["spec"]["endpoints"][0]["port"] == "http-metrics"
    assert layout.SELECTOR_LABELS.items() <= monitor["metadata"]["labels"].items()


def test_kueue_scrape_only_with_kueue():
    assert kueue_metrics.service_monitor(configs()["existing"]) is None
    monitor = kueue_metrics.service_monitor(configs()["gke, kueue, cert-manager"])
    assert crd_problems(monitor) == []
    assert monitor["spec"]["namespaceSelector"] == {"matchNames": [constants.KUEUE_NAMESPACE]}
    assert monitor["spec"]["endpoints"][0]["scheme"] == "https"
    assert layout.SELECTOR_LABELS.items() <= monitor["metadata"]["labels"].items()


def test_nothing_scraped_with_observability_off():
    args = make_args(**GKE, observability={"enabled": False}, tls=INGRESS, scheduler="kueue")
    assert cert_manager_metrics.service_monitor(args) is None
    assert kueue_metrics.service_monitor(args) is None


# --- promtool unit tests: input series, the alerts expected ---------------------------------------


def _unit(args, tests):
    """promtool's unit tests of the rules, annotations left out (promtool compares them too;
    these tests are about when alerts fire)."""
    spec = copy.deepcopy(alerts.prometheus_rule(args)["spec"])
    for group in spec["groups"]:
        for rule in group["rules"]:
            rule.pop("annotations", None)
    return run_rule_tests(spec, tests)


def test_master_down_fires_after_five_minutes():
    args = configs()["existing"]
    job = layout.MASTER_JOB
    down = {"exp_labels": {"severity": "critical", "job": job, "instance": "m:8080"}}
    result = _unit(
        args,
        [
            {
                "interval": "1m",
                "input_series": [
                    {"series": f'up{{job="{job}", instance="m:8080"}}', "values": "1 1 0 0 0 0 0 0 0"}
                ],
                "alert_rule_test": [
                    {"eval_time": "3m", "alertname": "DeterminedMasterDown", "exp_alerts": []},
                    {"eval_time": "8m", "alertname": "DeterminedMasterDown", "exp_alerts": [down]},
                ],
            },
            {
                # No master series at all (the scrape is gone): absent() fires.
                "interval": "1m",
                "input_series": [{"series": 'up{job="other"}', "values": "1x10"}],
                "alert_rule_test": [
                    {
                        "eval_time": "6m",
                        "alertname": "DeterminedMasterDown",
                        "exp_alerts": [{"exp_labels": {"severity": "critical", "job": job}}],
                    }
                ],
            },
        ],
    )
    assert result == "", result


def test_gpu_idle_fires_only_for_a_task_gpu_idle_all_along():
    args = configs()["existing"]
    minutes = args.observability.alerts.gpu_idle_minutes
    pod = f'namespace="det-a100", pod="trial-1", node="n1", gpu="0", job="{layout.DCGM_JOB}"'
    busy = f'namespace="det-a100", pod="trial-2", node="n1", gpu="1", job="{layout.DCGM_JOB}"'
    other = f'namespace="elsewhere", pod="x", node="n1", gpu="2", job="{layout.DCGM_JOB}"'
    samples = minutes + 10
    result = _unit(
        args,
        [
            {
                "interval": "1m",
                "input_series": [
                    {"series": f"DCGM_FI_DEV_GPU_UTIL{{{pod}}}", "values": f"0x{samples}"},
                    {"series": f"DCGM_FI_DEV_GPU_UTIL{{{busy}}}", "values": f"0x{minutes // 2} 40x{samples}"},
                    {"series": f"DCGM_FI_DEV_GPU_UTIL{{{other}}}", "values": f"0x{samples}"},
                ],
                "alert_rule_test": [
                    {"eval_time": f"{minutes - 5}m", "alertname": "GpuAllocatedIdle", "exp_alerts": []},
                    {
                        "eval_time": f"{minutes + 5}m",
                        "alertname": "GpuAllocatedIdle",
                        "exp_alerts": [
                            {
                                "exp_labels": {
                                    "severity": "info",
                                    "namespace": "det-a100",
                                    "pod": "trial-1",
                                    "node": "n1",
                                    "gpu": "0",
                                    "job": layout.DCGM_JOB,
                                }
                            }
                        ],
                    },
                ],
            }
        ],
    )
    assert result == "", result


def test_backup_too_old_fires_when_two_runs_failed():
    args = configs()["existing"]
    max_age = alerts.backup_max_age_minutes(args)
    cronjob = f'namespace="{args.namespace}", cronjob="{constants.BACKUP_CRONJOB}"'
    # The last success at t=0, when the CronJob was created; scraped every minute (samples
    # further apart than Prometheus' 5-minute lookback would leave gaps that reset `for`).
    samples = f"0x{max_age + 60}"
    result = _unit(
        args,
        [
            {
                "interval": "1m",
                "input_series": [
                    {"series": f"kube_cronjob_status_last_successful_time{{{cronjob}}}", "values": samples},
                    {"series": f"kube_cronjob_created{{{cronjob}}}", "values": samples},
                    {"series": f"kube_cronjob_spec_suspend{{{cronjob}}}", "values": samples},
                ],
                "alert_rule_test": [
                    {
                        "eval_time": f"{max_age - 10}m",
                        "alertname": "DeterminedBackupTooOld",
                        "exp_alerts": [],
                    },
                    {
                        "eval_time": f"{max_age + 30}m",
                        "alertname": "DeterminedBackupTooOld",
                        "exp_alerts": [
                            {
                                "exp_labels": {
                                    "severity": "warning",
                                    "namespace": args.namespace,
                                    "cronjob": constants.BACKUP_CRONJOB,
                                }
                            }
                        ],
                    },
                ],
            }
        ],
    )
    assert result == "", result


def test_xid_79_is_critical_other_xids_warn():
    args = configs()["existing"]
    gpu = f'node="n1", gpu="0", job="{layout.DCGM_JOB}"'
    result = _unit(
        args,
        [
            {
                "interval": "1m",
                "input_series": [
                    {"series": f"DCGM_FI_DEV_XID_ERRORS{{{gpu}}}", "values": "0 0 13 13 13 79 79 79"}
                ],
                "alert_rule_test": [
                    {"eval_time": "1m", "alertname": "GpuXidError", "exp_alerts": []},
                    {
                        "eval_time": "4m",
                        "alertname": "GpuXidError",
                        "exp_alerts": [
                            {
                                "exp_labels": {
                                    "severity": "warning",
                                    "node": "n1",
                                    "gpu": "0",
                                    "job": layout.DCGM_JOB,
                                }
                            }
                        ],
                    },
                    {"eval_time": "4m", "alertname": "GpuFellOffTheBus", "exp_alerts": []},
                    {"eval_time": "7m", "alertname": "GpuXidError", "exp_alerts": []},
                    {
                        "eval_time": "7m",
                        "alertname": "GpuFellOffTheBus",
                        "exp_alerts": [
                            {
                                "exp_labels": {
                                    "severity": "critical",
                                    "node": "n1",
                                    "gpu": "0",
                                    "job": layout.DCGM_JOB,
                                }
                            }
                        ],
                    },
                ],
            }
        ],
    )
    assert result == "", result
