"""The PromQL checks every dashboard and alert of the project goes through (issue 24).

Usage (a test in tests/observability/ imports it by module name, as the other test helpers are):

    from promql import check_expressions, check_rule_spec, check_rules_file, run_rule_tests

    problems = check_expressions({"gpu.json: panel 'GPU utilisation', target A": expr, ...})
    assert not problems, "\\n".join(problems)

    assert not check_rule_spec(prometheus_rule(args)["spec"])     # a PrometheusRule's spec
    assert not check_rules_file(path)                             # a rules file or a PrometheusRule
    assert not run_rule_tests(spec, [{"interval": "1m", "input_series": [...], "alert_rule_test": [...]}])

Each problem is one line naming the expression's key. Two checks per expression:
1. It parses, with the real Prometheus parser: `promtool check rules` of Debian bookworm's
   `prometheus` 2.42 (`make tools` puts it in .tools/; `make test` depends on it; the
   environment variable PROMTOOL names another). Without promtool every expression is a problem
   (the tests fail, they do not skip: CI installs it, and a skipped check looks like a passed one).
   promtool 2.42 is older than the Prometheus that runs (v3.14.0): PromQL added since (e.g.
   `info()`, `limitk`) is refused here, which keeps the expressions to what both read.
   Grafana's variables are substituted first ($__rate_interval, $__interval, $__range... by a
   duration, `$var` / `${var}` inside a quoted label value is left as it is: it is a string).
2. Every metric it names (a selector's name, or an `__name__` matcher: `=` names one, `=~`
   must match at least one known name) exists in tests/data/metrics/*.json and is on by
   default in what the project deploys (DCGM: in both the dcgm-exporter chart's default list
   and the GPU operator's exporter list; kube-state-metrics: a collector kube-prometheus-stack
   enables, not opt-in; node and postgres exporters: a default collector; Kueue: registered
   by default). Histograms also have `_bucket`, `_sum`, `_count`; summaries `_sum`, `_count`.
   Names the project records itself (`layout.RECORDING_RULES`, and the `record:` names of a
   checked rule spec) and Prometheus' own series (prometheus-builtins.json) are known too.

The parser for (2) is promql-parser (PyPI, pinned in requirements-dev.txt): it builds the
syntax tree promtool does not expose.
"""

from __future__ import annotations

import functools
import json
import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

import promql_parser
import yaml

from components.observability import layout

ROOT = Path(__file__).resolve().parents[2]
METRICS_DIR = ROOT / "tests" / "data" / "metrics"
PROMTOOL = ROOT / ".tools" / "prometheus" / "usr" / "bin" / "promtool"

# Grafana's built-in variables (https://grafana.com/docs/grafana/latest/dashboards/variables/
# add-template-variables/#global-variables): each by a value of its kind, the longer names first.
GRAFANA_VARIABLES = {
    "__rate_interval_ms": "300000",
    "__rate_interval": "5m",
    "__interval_ms": "300000",
    "__interval": "5m",
    "__range_ms": "3600000",
    "__range_s": "3600",
    "__range": "1h",
}
_VARIABLE = re.compile(r"\$\{(\w+)(?::\w+)?\}|\$(\w+)|\[\[(\w+)\]\]")
_STRING = re.compile(r"\"(?:[^\"\\]|\\.)*\"|'(?:[^'\\]|\\.)*'|`[^`]*`")


def substitute_grafana(expr: str) -> str:
    """`expr` with Grafana's built-in variables replaced; other `$var`s inside quoted strings
    are kept (a label value), outside them they are left for the parser to reject."""

    def one(match: re.Match[str]) -> str:
        name = match.group(1) or match.group(2) or match.group(3)
        return GRAFANA_VARIABLES.get(name, match.group(0))

    out, last = [], 0
    for string in _STRING.finditer(expr):
        out.append(_VARIABLE.sub(one, expr[last : string.start()]))
        out.append(string.group(0))
        last = string.end()
    out.append(_VARIABLE.sub(one, expr[last:]))
    return "".join(out)


# --- known metric names -------------------------------------------------------------------------


def _why_disabled(entry: Mapping[str, Any]) -> str | None:
    """None when the metric is on in what the project deploys, else why it is not."""
    enabled_in = entry.get("enabled_in")
    if enabled_in is not None and not all(enabled_in.values()):
        off = [where for where, on in enabled_in.items() if not on]
        return "not in the exporter's default metric list: " + "; ".join(off)
    if entry.get("enabled_by_kube_prometheus_stack_default") is False:
        return f"kube-state-metrics collector {entry.get('collector')!r} is off in kube-prometheus-stack"
    if str(entry.get("opt_in", "")).lower() == "opt-in":
        return "kube-state-metrics opt-in metric (--metric-opt-in-list)"
    if entry.get("default_enabled") is False:
        flag = entry.get("needs_flag") or f"collector {entry.get('collector')!r}"
        return f"off by default (needs {flag})"
    if str(entry.get("registered_by", "")).startswith("not registered"):
        return "declared but never registered"
    return None


_SUFFIXES = {"histogram": ("_bucket", "_sum", "_count"), "summary": ("_sum", "_count")}


@functools.cache
def known_metrics() -> tuple[
    dict[str, tuple[str, str | None]], list[tuple[re.Pattern[str], str, str | None]]
]:
    """({name: (data file, why disabled or None)}, [(name pattern, data file, why disabled)])
    from every tests/data/metrics/*.json."""
    names: dict[str, tuple[str, str | None]] = {}
    patterns = []
    for path in sorted(METRICS_DIR.glob("*.json")):
        for entry in json.loads(path.read_text())["metrics"]:
            why = _why_disabled(entry)
            if "name_pattern" in entry:
                patterns.append((re.compile(entry["name_pattern"]), path.name, why))
                continue
            kind = str(entry.get("type", "")).split()[0] if entry.get("type") else ""
            for suffix in ("", *_SUFFIXES.get(kind, ())):
                name = entry["name"] + suffix
                # A name in two files (go_*, process_*): on if on in either.
                if name not in names or names[name][1] is not None:
                    names[name] = (path.name, why)
    return names, patterns


def metric_problem(name: str, recorded: frozenset[str] = frozenset()) -> str | None:
    """None when `name` is a known metric that is on by default, else what is wrong."""
    if name in recorded or name in layout.RECORDING_RULES:
        return None
    names, patterns = known_metrics()
    if name in names:
        source, why = names[name]
        return None if why is None else f"metric {name} ({source}) is {why}"
    for pattern, source, why in patterns:
        if pattern.fullmatch(name):
            return None if why is None else f"metric {name} ({source}) is {why}"
    return f"unknown metric {name} (not in tests/data/metrics)"


# --- the syntax tree ----------------------------------------------------------------------------


def _children(node: Any) -> Iterator[Any]:
    for attr in ("lhs", "rhs", "expr", "param", "vector_selector"):
        child = getattr(node, attr, None)
        if child is not None and not isinstance(child, (str, int, float)):
            yield child
    if isinstance(node, promql_parser.Call):
        yield from node.args


def _selectors(node: Any) -> Iterator[promql_parser.VectorSelector]:
    if isinstance(node, promql_parser.VectorSelector):
        yield node
        return
    for child in _children(node):
        yield from _selectors(child)


def _names_in(selector: promql_parser.VectorSelector) -> list[tuple[str, str]]:
    """[(op, name)]: `=` for a name, `=~` for a regex over names."""
    found = [("=", selector.name)] if selector.name else []
    matchers = list(selector.matchers.matchers)
    for group in selector.matchers.or_matchers or []:
        matchers.extend(group)
    for matcher in matchers:
        # `!=` and `!~` on __name__ name no metric to check.
        if matcher.name == "__name__" and matcher.op == promql_parser.MatchOp.Equal:
            found.append(("=", matcher.value))
        elif matcher.name == "__name__" and matcher.op == promql_parser.MatchOp.Re:
            found.append(("=~", matcher.value))
    return found


def metric_names(expr: str) -> list[str]:
    """The metric names (and `__name__` regexes, as `~regex`) `expr` selects; raises
    ValueError when it does not parse."""
    out = []
    for selector in _selectors(promql_parser.parse(substitute_grafana(expr))):
        for op, name in _names_in(selector):
            out.append(name if op == "=" else f"~{name}")
    return out


def _name_problems(key: str, expr: str, recorded: frozenset[str]) -> list[str]:
    try:
        tree = promql_parser.parse(substitute_grafana(expr))
    except ValueError as error:
        return [f"{key}: promql-parser: {error}"]
    problems = []
    names, _ = known_metrics()
    for selector in _selectors(tree):
        for op, name in _names_in(selector):
            if op == "=":
                problem = metric_problem(name, recorded)
            else:
                regex = re.compile(name)
                hits = [n for n in [*names, *recorded, *layout.RECORDING_RULES] if regex.fullmatch(n)]
                # Fine when it matches at least one name that is on.
                on = [n for n in hits if metric_problem(n, recorded) is None]
                problem = None if on else f"__name__=~{name!r} matches no known metric that is on by default"
            if problem:
                problems.append(f"{key}: {problem}")
    return problems


# --- promtool -----------------------------------------------------------------------------------


def promtool() -> str | None:
    """The promtool to run: $PROMTOOL, the one `make tools` installs, or one on PATH."""
    if os.environ.get("PROMTOOL"):
        return os.environ["PROMTOOL"]
    if PROMTOOL.exists():
        return str(PROMTOOL)
    return shutil.which("promtool")


_MISSING = "promtool not found: run `make tools` (Debian's prometheus 2.42 into .tools/) or set PROMTOOL"


def promtool_check(rules: Mapping[str, Any], lint: str = "duplicate-rules") -> list[str]:
    """`promtool check rules` of a rules file's content ({"groups": [...]}): its error lines
    (`lint`: promtool's --lint, fatal)."""
    tool = promtool()
    if tool is None:
        return [_MISSING]
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "rules.yaml"
        path.write_text(yaml.safe_dump(dict(rules), sort_keys=False))
        run = subprocess.run(
            [tool, "check", "rules", f"--lint={lint}", "--lint-fatal", str(path)],
            capture_output=True,
            text=True,
            check=False,
        )
    if run.returncode == 0:
        return []
    lines = [line.strip() for line in (run.stdout + run.stderr).splitlines()]
    return [line.replace(str(path), "rules") for line in lines if line.startswith(str(path))] or [
        f"promtool exit {run.returncode}: {(run.stdout + run.stderr).strip()}"
    ]


def check_expressions(exprs: Mapping[str, str], recorded: Iterable[str] = ()) -> list[str]:
    """Problems of PromQL expressions {key: expression} (a dashboard panel's target, an
    alert...): promtool's parse errors and unknown or disabled metric names, one line each
    naming the key; [] when all is well. `recorded`: more names recording rules make (those
    of layout.RECORDING_RULES are known anyway)."""
    keys = list(exprs)
    groups = [
        {"name": f"e{i}", "rules": [{"record": "check:expression", "expr": substitute_grafana(exprs[key])}]}
        for i, key in enumerate(keys)
    ]
    problems = []
    # One recording rule per expression, all named alike: no duplicate-rule lint.
    for line in promtool_check({"groups": groups}, lint="none") if groups else []:
        found = re.search(r'group "e(\d+)"', line)
        problems.append(f"{keys[int(found.group(1))]}: promtool: {line}" if found else line)
    for key in keys:
        problems.extend(_name_problems(key, exprs[key], frozenset(recorded)))
    return problems


def check_rule_spec(spec: Mapping[str, Any]) -> list[str]:
    """Problems of a PrometheusRule's spec ({"groups": [...]}, a rules file's shape): promtool
    checks the whole file (parse, duplicate rules, labels and annotations templates), then
    every expression's metric names, knowing the names the spec records."""
    problems = list(promtool_check(spec))
    rules = [rule for group in spec.get("groups", []) for rule in group.get("rules", [])]
    recorded = frozenset(rule["record"] for rule in rules if "record" in rule)
    for group in spec.get("groups", []):
        for rule in group.get("rules", []):
            key = f"{group.get('name')}/{rule.get('alert') or rule.get('record')}"
            problems.extend(_name_problems(key, str(rule.get("expr", "")), recorded))
    return problems


def check_rules_file(path: str | Path) -> list[str]:
    """check_rule_spec of a file: a Prometheus rules file or a PrometheusRule manifest."""
    document = yaml.safe_load(Path(path).read_text())
    return check_rule_spec(document.get("spec", document))


def run_rule_tests(
    spec: Mapping[str, Any], tests: list[Mapping[str, Any]], evaluation_interval: str = "1m"
) -> str:
    """Run `promtool test rules` (unit tests: input series, expected alerts) on a rule spec;
    returns '' when they pass, else promtool's output. `tests` are the unit-test file's `tests:`
    entries (https://prometheus.io/docs/prometheus/2.42/configuration/unit_testing_rules/)."""
    tool = promtool()
    if tool is None:
        return _MISSING
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "rules.yaml").write_text(yaml.safe_dump(dict(spec), sort_keys=False))
        (Path(tmp) / "test.yaml").write_text(
            yaml.safe_dump(
                {
                    "rule_files": ["rules.yaml"],
                    "evaluation_interval": evaluation_interval,
                    "tests": list(tests),
                },
                sort_keys=False,
            )
        )
        run = subprocess.run(
            [tool, "test", "rules", "test.yaml"], cwd=tmp, capture_output=True, text=True, check=False
        )
    return "" if run.returncode == 0 else (run.stdout + run.stderr).strip()
