"""The project's Grafana dashboards: well-formed JSON, PromQL that parses and names only
metrics that exist and are on, the labels and jobs the scrapes set, ConfigMaps the API server
takes, numbers right on known series (promtool evaluates the panels' queries), and a docs page
that names every dashboard, panel and alert."""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path

import pytest
from component_args import make_args
from conftest import GKE
from promql import check_expressions, run_rule_tests

from components import constants
from components.kube import validation
from components.observability import dashboards, layout

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "observability.md"
NAMES = ("allocation", "determined", "gpu", "queues")


@pytest.fixture(scope="module")
def boards():
    return dashboards.dashboards()


def _panels(board):
    for panel in board["panels"]:
        yield panel
        yield from panel.get("panels", [])


def _panel(board, title):
    (found,) = [p for p in _panels(board) if p.get("title") == title]
    return found


# --- the JSON ------------------------------------------------------------------------------------


def test_every_dashboard_file_loads_and_the_set_is_the_four(boards):
    assert sorted(boards) == list(NAMES)
    for path in dashboards.DASHBOARD_DIR.glob("*.json"):
        json.loads(path.read_text())


def test_uids_and_titles_are_unique_and_grafana_sized(boards):
    uids = [b["uid"] for b in boards.values()]
    titles = [b["title"] for b in boards.values()]
    assert len(set(uids)) == len(uids) and len(set(titles)) == len(titles)
    # Grafana refuses a dashboard uid longer than 40 characters.
    assert all(re.fullmatch(r"[a-zA-Z0-9_-]{1,40}", uid) for uid in uids)
    assert {b["title"] for b in boards.values()} == {"GPUs", "GPU allocation", "Queues", "Determined"}


def test_schema_version_and_panel_layout(boards):
    for name, board in boards.items():
        assert board["schemaVersion"] == 41, name
        assert "id" not in board or board["id"] is None, name  # provisioning gives the id
        ids = [p["id"] for p in _panels(board)]
        assert len(ids) == len(set(ids)), name
        # Titles name the panels in expressions(), the docs page and the tests.
        titles = [p["title"] for p in _panels(board)]
        assert len(titles) == len(set(titles)), name
        for panel in _panels(board):
            pos = panel["gridPos"]
            assert pos["x"] >= 0 and pos["x"] + pos["w"] <= 24, (name, panel["title"])
            assert panel.get("description") or panel["type"] in ("row", "text"), (name, panel["title"])


def test_every_query_reads_the_datasource_variable(boards):
    for name, board in boards.items():
        (source,) = [v for v in board["templating"]["list"] if v["name"] == "datasource"]
        assert (source["type"], source["query"]) == ("datasource", "prometheus"), name
        for variable in board["templating"]["list"]:
            if variable["type"] == "query":
                assert variable["datasource"] == {"type": "prometheus", "uid": "${datasource}"}, name
        for panel in _panels(board):
            if panel["type"] in ("row", "text"):
                continue
            assert panel["datasource"] == {"type": "prometheus", "uid": "${datasource}"}, (
                name,
                panel["title"],
            )
            assert panel["targets"], (name, panel["title"])
            refs = [t["refId"] for t in panel["targets"]]
            assert len(refs) == len(set(refs)), (name, panel["title"])
            for target in panel["targets"]:
                assert target["datasource"] == {"type": "prometheus", "uid": "${datasource}"}, name


def test_variables_used_in_queries_are_defined(boards):
    builtins = {"__rate_interval", "__interval", "__range", "__range_s", "__range_ms"}
    for name, board in boards.items():
        defined = {v["name"] for v in board["templating"]["list"]} | builtins
        for key, expr in dashboards.expressions().items():
            if key.startswith(f"{name}.json"):
                used = set(re.findall(r"\$\{?(\w+)", expr))
                assert used <= defined, (key, used - defined)


# --- the PromQL ----------------------------------------------------------------------------------


def test_expressions_cover_every_target_and_query_variable(boards):
    exprs = dashboards.expressions()
    targets = sum(len(p.get("targets", [])) for b in boards.values() for p in _panels(b))
    variables = sum(1 for b in boards.values() for v in b["templating"]["list"] if v["type"] == "query")
    assert len(exprs) == targets + variables
    assert exprs["gpu.json: variable node_pool"] == "kube_node_labels"


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ('label_values(kube_pod_labels{a="b, c"}, label_x)', 'kube_pod_labels{a="b, c"}'),
        ("label_values(up, job)", "up"),
        ("query_result(sum(up))", "sum(up)"),
        ("sum(up)", "sum(up)"),
    ],
)
def test_variable_queries_are_unwrapped_to_their_promql(query, expected):
    assert dashboards.variable_expression(query) == expected


def test_every_expression_parses_and_names_only_metrics_that_are_on():
    problems = check_expressions(dashboards.expressions())
    assert not problems, "\n".join(problems)


def test_the_check_does_catch_a_metric_that_is_off_or_unknown():
    exprs = dashboards.expressions()
    key = "gpu.json: panel 'Utilisation' A"
    broken = {
        key: exprs[key].replace("DCGM_FI_DEV_GPU_UTIL", "DCGM_FI_PROF_SM_ACTIVE"),
        "typo": exprs[key].replace("DCGM_FI_DEV_GPU_UTIL", "DCGM_FI_DEV_GPU_UTILISATION"),
    }
    problems = check_expressions(broken)
    assert any(key in p and "DCGM_FI_PROF_SM_ACTIVE" in p for p in problems), problems
    assert any("DCGM_FI_DEV_GPU_UTILISATION" in p for p in problems), problems


def test_jobs_are_the_scrapes_jobs():
    jobs = {layout.MASTER_JOB, layout.DCGM_JOB, layout.POSTGRES_JOB}
    used = {job for expr in dashboards.expressions().values() for job in re.findall(r'\bjob="([^"]+)"', expr)}
    assert used and used <= jobs, used - jobs


def test_kube_state_metrics_labels_are_the_allowlisted_ones(boards):
    allowed = {layout.ksm_label(k) for k in [*layout.TASK_POD_LABELS, *layout.NODE_LABELS_ALLOWLIST]}
    text = json.dumps(boards)
    used = set(re.findall(r"\blabel_[a-zA-Z0-9_]+", text)) - {"label_values"}
    assert used and used <= allowed, used - allowed
    assert layout.ksm_label(constants.NODE_POOL_LABEL) == "label_determined_ai_node_pool"


def test_task_pod_labels_are_determined_ones():
    # Every one is a label the master sets on task pods (determined.ai/ prefix), none twice.
    assert len(set(layout.TASK_POD_LABELS)) == len(layout.TASK_POD_LABELS)
    assert all(k.startswith("determined.ai/") for k in layout.TASK_POD_LABELS)


def test_backup_age_reads_the_projects_backup_cronjob():
    cronjobs = {
        name for expr in dashboards.expressions().values() for name in re.findall(r'cronjob="([^"]+)"', expr)
    }
    assert cronjobs == {constants.BACKUP_CRONJOB}


def test_gpu_series_are_selected_by_the_node_label_the_scrape_sets():
    exprs = dashboards.expressions()
    assert layout.NODE_LABEL == "node"
    assert 'DCGM_FI_DEV_GPU_UTIL{node=~"$node"' in exprs["gpu.json: panel 'Utilisation' A"]


# --- the numbers, on known series (promtool evaluates the panels' queries) ------------------------

# Grafana's variables at "All" and the ranges the evaluation uses.
VARIABLES = {
    "$resource_pool": ".*",
    "$workspace": ".*",
    "$node_pool": ".*",
    "$node": ".*",
    "$namespace": ".*",
    "$__rate_interval": "5m",
    "$__range": "1h",
}


def _query(board, title, ref="A"):
    panel = _panel(board, title)
    (target,) = [t for t in panel["targets"] if t["refId"] == ref]
    expr = target["expr"]
    for name, value in sorted(VARIABLES.items(), key=lambda kv: -len(kv[0])):
        expr = expr.replace(name, value)
    return expr


def _labels(**labels):
    return "{" + ", ".join(f'{k}="{v}"' for k, v in labels.items()) + "}"


def _task(pod, namespace, task, kind, pool, workspace):
    return {
        "namespace": namespace,
        "pod": pod,
        "label_determined_ai_task_id": task,
        "label_determined_ai_task_type": kind,
        "label_determined_ai_resource_pool": pool,
        "label_determined_ai_workspace": workspace,
        "label_determined_ai_user": "alice",
    }


# Two hours of one-minute samples: trial-1 (2 GPUs, one busy), nb-1 (1 GPU, idle, started at
# 10 minutes), trial-2 pending for the last 30 minutes, an idle GPU no task holds.
TRIAL = _task("trial-1", "det-a100", "1.1", "TRIAL", "a100", "team")
NOTEBOOK = _task("nb-1", "det-a100", "nb", "NOTEBOOK", "a100", "alice-ws")
PENDING = _task("trial-2", "det-t4", "2.1", "TRIAL", "t4", "team")
SERIES = [
    *[
        {"series": f"kube_pod_labels{_labels(**t, uid=t['pod'])}", "values": "1x150"}
        for t in (TRIAL, NOTEBOOK, PENDING)
    ],
    {"series": 'kube_pod_labels{namespace="mon", pod="dcgm-exporter-x", uid="x"}', "values": "1x150"},
    *[
        {
            "series": "kube_pod_container_resource_requests"
            + _labels(
                namespace=t["namespace"],
                pod=t["pod"],
                container="c",
                resource="nvidia_com_gpu",
                unit="integer",
            ),
            "values": f"{n}x150",
        }
        for t, n in ((TRIAL, 2), (NOTEBOOK, 1), (PENDING, 1))
    ],
    *[
        {
            "series": f"kube_pod_status_phase{_labels(namespace=t['namespace'], pod=t['pod'], phase=phase)}",
            "values": f"{value}x150",
        }
        for t in (TRIAL, NOTEBOOK)
        for phase, value in (("Running", 1), ("Pending", 0))
    ],
    *[
        {
            "series": f"kube_pod_status_phase{_labels(namespace='det-t4', pod='trial-2', phase=phase)}",
            "values": f"{value}x150",
        }
        for phase, value in (("Running", 0), ("Pending", 1))
    ],
    {"series": 'kube_pod_created{namespace="det-t4", pod="trial-2"}', "values": "5400x150"},
    {"series": 'kube_pod_start_time{namespace="det-a100", pod="nb-1"}', "values": "600x150"},
    {"series": 'kube_pod_start_time{namespace="det-a100", pod="trial-1"}', "values": "0x150"},
    *[
        {
            "series": f"kube_node_labels{_labels(node=node, label_determined_ai_node_pool=pool)}",
            "values": "1x150",
        }
        for node, pool in (("n1", "a100"), ("n2", "a100"))
    ],
    *[
        {
            "series": f"kube_node_status_allocatable{_labels(node=node, resource='nvidia_com_gpu', unit='integer')}",
            "values": "4x150",
        }
        for node in ("n1", "n2")
    ],
    *[
        {
            "series": f"DCGM_FI_DEV_GPU_UTIL{_labels(node=node, gpu=gpu, namespace=ns, pod=pod)}",
            "values": f"{u}x150",
        }
        for node, gpu, ns, pod, u in (
            ("n1", "0", "det-a100", "trial-1", 90),
            ("n1", "1", "det-a100", "trial-1", 0),
            ("n1", "2", "det-a100", "nb-1", 2),
            ("n2", "0", "mon", "dcgm-exporter-x", 0),
        )
    ],
    {
        "series": 'kube_cronjob_status_last_successful_time{namespace="determined", cronjob="determined-db-backup"}',
        "values": "3600x150",
    },
]
AT = "2h"
# GPU-hours are evaluated one hour (the range) minus a step after the series start: the window
# then holds 60 one-minute samples both in promtool 2.42's closed ranges and in the left-open
# ranges of Prometheus 3, which kube-prometheus-stack 88.5.3 runs
# (https://prometheus.io/docs/prometheus/latest/migration/, "Range selectors and lookback").
HOUR_AT = "59m"


def _evaluate(cases):
    """promtool test rules with the SERIES and one promql_expr_test per (expr, samples[, time])."""
    tests = [
        {
            "interval": "1m",
            "input_series": SERIES,
            "promql_expr_test": [
                {"expr": case[0], "eval_time": case[2] if len(case) > 2 else AT, "exp_samples": case[1]}
                for case in cases
            ],
        }
    ]
    return run_rule_tests({"groups": []}, tests)


def _one(value, **labels):
    return [{"labels": _labels(**labels) if labels else "{}", "value": value}]


def test_allocation_numbers(boards):
    board = boards["allocation"]
    pool = "label_determined_ai_resource_pool"
    ws = "label_determined_ai_workspace"
    cases = [
        (_query(board, "GPUs allocated"), _one(3)),  # trial-1's 2 and nb-1's 1; trial-2 pends
        (_query(board, "GPUs busy"), _one(1)),
        (_query(board, "GPUs allocated but idle"), _one(2)),
        (_query(board, "GPUs in the cluster"), _one(8)),
        (_query(board, "Allocated vs busy GPUs per resource pool", "A"), _one(3, **{pool: "a100"})),
        (_query(board, "Allocated vs busy GPUs per resource pool", "B"), _one(1, **{pool: "a100"})),
        (
            _query(board, "GPU-hours per workspace (dashboard range)", "A"),
            [
                {"labels": _labels(**{ws: "team"}), "value": 2},
                {"labels": _labels(**{ws: "alice-ws"}), "value": 1},
            ],
            HOUR_AT,
        ),
        (_query(board, "GPU-hours per workspace (dashboard range)", "B"), _one(1, **{ws: "team"}), HOUR_AT),
        # trial-1 was busy at the last step; nb-1 never was: since it started (600 s).
        (
            _query(board, "Allocated GPUs, longest idle first", "C"),
            [{"labels": '{pod="trial-1"}', "value": 0}, {"labels": '{pod="nb-1"}', "value": 7200 - 600}],
        ),
    ]
    out = _evaluate(cases)
    assert out == "", out


def test_queue_and_gpu_numbers(boards):
    queues, gpu, master = boards["queues"], boards["gpu"], boards["determined"]
    cases = [
        (_query(queues, "Pending task pods"), _one(1)),
        (_query(queues, "Longest wait"), _one(7200 - 5400)),
        (
            _query(queues, "Pending task pods per resource pool"),
            _one(1, label_determined_ai_resource_pool="t4"),
        ),
        (_query(gpu, "GPUs reporting"), _one(4)),
        (_query(gpu, "GPUs held by Determined tasks"), _one(3)),
        (_query(gpu, "Idle GPUs held by tasks"), _one(2)),
        (_query(gpu, "GPUs with an XID error"), _one(0)),
        (_query(master, "Backup age"), _one(7200 - 3600)),
    ]
    out = _evaluate(cases)
    assert out == "", out


def test_the_evaluation_does_catch_a_wrong_number(boards):
    out = _evaluate([(_query(boards["allocation"], "GPUs allocated but idle"), _one(3))])
    assert "GPUs" in out or "exp" in out.lower(), out
    assert out != ""


# --- the ConfigMaps ------------------------------------------------------------------------------


def test_config_maps_are_valid_labelled_and_in_the_monitoring_namespace():
    args = make_args()
    maps = dashboards.config_maps(args)
    assert [m["metadata"]["name"] for m in maps] == [f"dashboard-{n}" for n in NAMES]
    for cm in maps:
        assert list(validation.problems(cm)) == [], cm["metadata"]["name"]
        meta = cm["metadata"]
        assert meta["namespace"] == layout.namespace(args.namespace) == "determined-monitoring"
        assert meta["labels"]["grafana_dashboard"] == "1"
        assert layout.DASHBOARD_LABELS.items() <= meta["labels"].items()
        assert meta["annotations"] == {dashboards.FOLDER_ANNOTATION: dashboards.FOLDER}
        (key,) = cm["data"]
        assert json.loads(cm["data"][key])["uid"]


def test_the_schema_check_does_catch_a_broken_config_map():
    broken = copy.deepcopy(dashboards.config_maps(make_args())[0])
    broken["data"]["gpu.json"] = {"not": "a string"}
    assert list(validation.problems(broken)) != []


def test_config_maps_stay_far_under_the_one_mib_limit():
    for cm in dashboards.config_maps(make_args()):
        size = sum(len(k.encode()) + len(v.encode()) for k, v in cm["data"].items())
        # Half the limit: room to grow without meeting it by surprise.
        assert size < dashboards.CONFIG_MAP_LIMIT // 2, (cm["metadata"]["name"], size)


def test_sidecar_values_are_keys_of_the_chart():
    keys = (ROOT / "tests/data/chart-keys/kube-prometheus-stack-88.5.3.txt").read_text().split("\n")
    known = {line.split()[0] for line in keys if line.strip()}
    values = dashboards.sidecar_values()
    assert "grafana.sidecar.dashboards.folderAnnotation" in known
    assert "grafana.sidecar.dashboards.provider.foldersFromFilesStructure" in known
    assert values["folderAnnotation"] == dashboards.FOLDER_ANNOTATION


# --- the docs page -------------------------------------------------------------------------------


def test_the_docs_page_describes_every_dashboard_and_panel(boards):
    text = DOC.read_text()
    missing = [
        f"{name}: {title}"
        for name, board in boards.items()
        for title in [board["title"], *(p["title"] for p in _panels(board))]
        if title not in text
    ]
    assert not missing, missing


def test_the_docs_page_names_every_alert():
    alerts = pytest.importorskip("components.observability.alerts")
    # A stack where every alert applies: GKE (in-cluster database and its backups), a GPU pool
    # with a maximum size, Kueue, a cert-manager certificate.
    raw = copy.deepcopy(GKE)
    raw["nodePools"][1]["maxNodes"] = 4
    args = make_args(
        **raw,
        scheduler="kueue",
        observability={"enabled": True},
        tls={
            "mode": "ingress",
            "host": "det.example.com",
            "certificate": {"source": "certManager", "email": "a@b.io"},
        },
    )
    spec = alerts.prometheus_rule(args)["spec"]
    names = {rule["alert"] for group in spec["groups"] for rule in group["rules"] if "alert" in rule}
    assert len(names) >= 10
    text = DOC.read_text()
    assert not [n for n in sorted(names) if f"`{n}`" not in text]
