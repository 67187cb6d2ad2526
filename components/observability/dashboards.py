"""The project's Grafana dashboards, provisioned as ConfigMaps Grafana's sidecar loads.

The dashboards are JSON files in data/dashboards/ (gpu, allocation, queues, determined),
edited as Grafana exports them. Each becomes one ConfigMap in the monitoring namespace
carrying the sidecar's label (layout.DASHBOARD_LABELS: kube-prometheus-stack 88.5.3
values.yaml:1539-1540 `grafana.sidecar.dashboards.label: grafana_dashboard`, `labelValue: "1"`)
and a folder annotation: with `sidecar_values()` merged into the chart's `grafana` values the
sidecar files them under that folder (grafana chart 12.11.1 values.yaml:1202-1204
`folderAnnotation`, templates/_pod.tpl:791-793 its FOLDER_ANNOTATION env; values.yaml:1276 and
templates/_config.tpl:159-168 `provider.foldersFromFilesStructure` makes the sub-directories
Grafana folders).

Every panel and variable reads the data source through the `datasource` template variable
(type `datasource`, query `prometheus`), as the chart's own dashboards do
(templates/grafana/dashboards-1.14/*.yaml), so it binds to the default Prometheus data source
the chart provisions (templates/grafana/configmaps-datasources.yaml:27-37, values.yaml:1557-1563:
name `Prometheus`, uid `prometheus`, isDefault) whatever its uid.

`schemaVersion` 41: Grafana 12.0's dashboard schema (grafana/grafana@7501ffa8
apps/dashboard/pkg/migration/schemaversion/migrations.go:8-9 LATEST_VERSION = 41); Grafana
migrates an older schema forward when it loads a dashboard, so the Grafana the chart ships
(grafana chart 12.11.1, appVersion 13.2.0: charts/grafana/Chart.yaml:3-5) reads it, as it
reads the chart's own dashboards at schemaVersion 39.
"""

from __future__ import annotations

import functools
import json
import re
from pathlib import Path
from typing import Any

from components import kube
from components.determined.args import DeterminedArgs
from components.observability import layout

COMPONENT = "grafana-dashboards"
DASHBOARD_DIR = Path(__file__).resolve().parent / "data" / "dashboards"
# The annotation the sidecar reads a dashboard's folder from, and that folder.
FOLDER_ANNOTATION = "grafana_folder"
FOLDER = "Determined"
# A ConfigMap's data may not exceed 1 MiB (Kubernetes: "ConfigMap ... cannot exceed 1 MiB",
# https://kubernetes.io/docs/concepts/configuration/configmap/#motivation).
CONFIG_MAP_LIMIT = 1024 * 1024

# Grafana's variable functions that wrap a PromQL selector or expression
# (https://grafana.com/docs/grafana/latest/datasources/prometheus/template-variables/#query-variable).
_VARIABLE_FUNCTION = re.compile(r"^\s*(label_values|query_result)\((.*)\)\s*$", re.DOTALL)


@functools.cache
def _texts() -> dict[str, str]:
    return {path.stem: path.read_text() for path in sorted(DASHBOARD_DIR.glob("*.json"))}


def dashboards() -> dict[str, dict[str, Any]]:
    """{file stem: the dashboard's JSON model} of every file in data/dashboards/."""
    return {name: json.loads(text) for name, text in _texts().items()}


def config_map_name(name: str) -> str:
    """The ConfigMap of dashboard `name` (a file stem)."""
    return f"dashboard-{name}"


def config_maps(args: DeterminedArgs) -> list[dict[str, Any]]:
    """One ConfigMap per dashboard in the monitoring namespace, labelled for Grafana's
    dashboard sidecar, with the dashboard's JSON as `<name>.json`."""
    out = []
    for name, text in _texts().items():
        meta = kube.metadata(config_map_name(name), COMPONENT, layout.namespace(args.namespace))
        meta["labels"] = {**meta["labels"], **layout.DASHBOARD_LABELS}
        meta["annotations"] = {FOLDER_ANNOTATION: FOLDER}
        out.append(kube.manifest("v1", "ConfigMap", meta, data={f"{name}.json": text}))
    return out


def sidecar_values() -> dict[str, Any]:
    """What to merge into the chart's `grafana.sidecar.dashboards` values so the folder
    annotation takes effect (keys: grafana chart 12.11.1 values.yaml:1204, 1276)."""
    return {"folderAnnotation": FOLDER_ANNOTATION, "provider": {"foldersFromFilesStructure": True}}


def _panels(board: dict[str, Any]) -> list[dict[str, Any]]:
    found = []
    for panel in board.get("panels", []):
        found.append(panel)
        found.extend(panel.get("panels", []))  # a collapsed row keeps its panels inside
    return found


def variable_expression(query: str) -> str:
    """The PromQL inside a query variable: `label_values(<selector>, <label>)` gives the
    selector, `query_result(<expr>)` the expression; anything else is taken as PromQL."""
    found = _VARIABLE_FUNCTION.match(query)
    if not found:
        return query
    function, inner = found.groups()
    if function == "label_values":
        # The label is the last argument: a bare name after the selector's closing brace.
        selector, _, label = inner.rpartition(",")
        if selector and re.fullmatch(r"\s*[a-zA-Z_]\w*\s*", label):
            return selector.strip()
    return inner.strip()


def expressions() -> dict[str, str]:
    """Every PromQL expression of the dashboards: {"<file>.json: panel '<title>' <refId>" or
    "<file>.json: variable <name>": expression}, query variables unwrapped to their PromQL."""
    out = {}
    for name, board in dashboards().items():
        for variable in board.get("templating", {}).get("list", []):
            if variable.get("type") != "query":
                continue
            query = variable.get("query")
            text = query.get("query", "") if isinstance(query, dict) else str(query or "")
            out[f"{name}.json: variable {variable['name']}"] = variable_expression(text)
        for panel in _panels(board):
            for target in panel.get("targets", []):
                if "expr" in target:
                    out[f"{name}.json: panel {panel.get('title')!r} {target.get('refId')}"] = target["expr"]
    return out
