"""Helm values of every stack (stacks/ and fixtures): every Helm Release passes only values
its chart reads. Helm silently ignores a key the chart does not know, so a misspelt key
(or one a chart upgrade renamed) would deploy the chart's default without any error.

A chart's keys come from tests/data/chart-keys/<chart>-<version>.txt: `# chart:`,
`# version:` and `# aliases:` header lines, then `path kind` lines, kind `S` a scalar
leaf, `L` a list, `*` a free-form subtree; maps are implied by the paths and null is
accepted anywhere (it deletes a default). A Release is checked against the key set
whose chart (or alias) and version match its own exactly; a Release of a chart or version
without a key set fails.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import stack_plans
from conftest import ROOT

from components import versions

KEYS_DIR = ROOT / "tests" / "data" / "chart-keys"
RELEASE_TYPE = "kubernetes:helm.sh/v3:Release"
KINDS = {"S", "L", "*"}


@dataclass(frozen=True)
class ChartKeys:
    """The value key paths of one chart version: {path as a tuple of keys: kind}, and the
    maps the paths imply."""

    chart: str
    version: str
    aliases: frozenset[str]
    paths: dict[tuple[str, ...], str]
    maps: frozenset[tuple[str, ...]]

    @property
    def names(self) -> frozenset[str]:
        return self.aliases | {self.chart}


def load_keys(path: Path) -> ChartKeys:
    """A key set file; malformed lines, a missing header or a path both a leaf and a map
    are errors."""
    header: dict[str, str] = {}
    paths: dict[tuple[str, ...], str] = {}
    for number, line in enumerate(path.read_text().splitlines(), 1):
        text = line.strip()
        if not text:
            continue
        if text.startswith("#"):
            key, sep, value = text[1:].strip().partition(":")
            if sep and key.strip() in ("chart", "version", "aliases") and key.strip() not in header:
                header[key.strip()] = value.strip()
            continue
        fields = text.split()
        # `\.` is a dot inside one key (grafana's `grafana.ini`).
        parts = [part.replace("\\.", ".") for part in re.split(r"(?<!\\)\.", fields[0])] if fields else []
        if len(fields) != 2 or fields[1] not in KINDS or "" in parts:
            raise ValueError(f"{path.name}:{number}: expected 'path kind' (kind S, L or *), got {line!r}")
        key_path = tuple(parts)
        if key_path in paths:
            raise ValueError(f"{path.name}:{number}: {fields[0]} listed twice")
        paths[key_path] = fields[1]
    missing = {"chart", "version"} - header.keys()
    if missing:
        raise ValueError(f"{path.name}: no '# {sorted(missing)[0]}:' header line")
    maps = frozenset(p[:i] for p in paths for i in range(1, len(p)))
    leaves_with_children = sorted(".".join(p) for p in maps & paths.keys())
    if leaves_with_children:
        raise ValueError(f"{path.name}: {leaves_with_children[0]} is both a leaf and a map")
    aliases = frozenset(a.strip() for a in header.get("aliases", "").split(",") if a.strip())
    return ChartKeys(header["chart"], header["version"], aliases, paths, maps)


def all_keys(directory: Path = KEYS_DIR) -> list[ChartKeys]:
    return [load_keys(path) for path in sorted(directory.glob("*.txt"))]


def keys_for(chart: str, version: str, key_sets: list[ChartKeys]) -> ChartKeys | None:
    """The key set of a Release's chart (its last path segment: `repo/name`, an OCI
    reference or a URL) at exactly `version`."""
    name = chart.rstrip("/").rsplit("/", 1)[-1]
    matches = [k for k in key_sets if name in k.names and k.version == version]
    return matches[0] if matches else None


def _kind_of(value: Any) -> str:
    if isinstance(value, dict):
        return "a map"
    if isinstance(value, (list, tuple)):
        return "a list"
    return "a scalar"


def unknown_paths(values: Any, keys: ChartKeys, _prefix: tuple[str, ...] = ()) -> list[str]:
    """Dotted paths (with what is wrong) of the values the chart does not read: keys it does
    not know, a key below a scalar or list, a value of the wrong shape. None is accepted
    anywhere; everything below a `*` path is accepted."""
    if values is None:
        return []
    if not isinstance(values, dict):
        where = ".".join(_prefix) or "values"
        return [f"{where}: {_kind_of(values)} where the chart expects a map"]
    found: list[str] = []
    for raw_key, value in values.items():
        key = str(raw_key)
        path = (*_prefix, key)
        dotted = ".".join(path)
        if "." in key and path not in keys.paths and path not in keys.maps:
            # Helm reads {"a.b": 1} as the literal key "a.b", never as a.b.
            found.append(f"{dotted}: a key written with a dot (Helm reads it literally; nest it instead)")
            continue
        if value is None:
            if path not in keys.paths and path not in keys.maps:
                found.append(f"{dotted}: unknown key")
            continue
        kind = keys.paths.get(path)
        if kind == "*":
            continue
        if kind == "S":
            if isinstance(value, dict) and value:
                found += [f"{dotted}.{below}: a key below the scalar {dotted}" for below in value]
            elif isinstance(value, (dict, list, tuple)):
                found.append(f"{dotted}: {_kind_of(value)} where the chart expects a scalar")
            continue
        if kind == "L":
            if not isinstance(value, (list, tuple)):
                found.append(f"{dotted}: {_kind_of(value)} where the chart expects a list")
            continue
        if path in keys.maps:
            found += unknown_paths(value, keys, path)
            continue
        found.append(f"{dotted}: unknown key")
    return found


# --- the checker ---------------------------------------------------------------------------------

SAMPLE = """\
# chart: sample
# version: 1.2.3
# aliases: sample, sample-alias
# a comment: not a header
image.repository S
image.tag S
nodeSelector *
ports L
worker.config.enabled S
"""


@pytest.fixture
def sample(tmp_path):
    path = tmp_path / "sample-1.2.3.txt"
    path.write_text(SAMPLE)
    return load_keys(path)


def test_the_key_set_format_is_read(sample):
    assert (sample.chart, sample.version) == ("sample", "1.2.3")
    assert sample.names == {"sample", "sample-alias"}
    assert sample.paths[("worker", "config", "enabled")] == "S"
    assert sample.maps == {("image",), ("worker",), ("worker", "config")}


@pytest.mark.parametrize(
    "text",
    [
        "# chart: x\n# version: 1\na.b X\n",  # unknown kind
        "# chart: x\n# version: 1\na.b\n",  # no kind
        "# chart: x\n# version: 1\na..b S\n",  # empty key
        "# chart: x\n# version: 1\na S\na.b S\n",  # a leaf with children
        "# chart: x\na S\n",  # no version
    ],
)
def test_a_malformed_key_set_is_an_error(tmp_path, text):
    path = tmp_path / "bad.txt"
    path.write_text(text)
    with pytest.raises(ValueError):
        load_keys(path)


def test_values_the_chart_reads_pass(sample):
    values = {
        "image": {"repository": "r", "tag": 3},
        "nodeSelector": {"pool": "gpu", "deep": {"any": ["thing"]}},
        "ports": [{"name": "http"}],
        "worker": {"config": {"enabled": False}},
    }
    assert unknown_paths(values, sample) == []
    # Null deletes a default: accepted for a leaf, a map or a free-form key.
    assert unknown_paths({"image": None, "worker": {"config": None}, "ports": None}, sample) == []
    assert unknown_paths({}, sample) == []
    assert unknown_paths(None, sample) == []


@pytest.mark.parametrize(
    ("values", "expected"),
    [
        ({"image": {"tga": "1"}}, "image.tga: unknown key"),
        ({"imagee": {"tag": "1"}}, "imagee: unknown key"),
        ({"image": {"tag": {}}}, "image.tag: a map where the chart expects a scalar"),
        ({"image": {"tag": ["1"]}}, "image.tag: a list where the chart expects a scalar"),
        ({"image": {"tag": {"major": 1}}}, "image.tag.major: a key below the scalar image.tag"),
        ({"image": {"tag": {"x": None}}}, "image.tag.x: a key below the scalar image.tag"),
        (
            {"worker": {"config": {"enabled": {"really": True}}}},
            "worker.config.enabled.really: a key below the scalar worker.config.enabled",
        ),
        ({"ports": {"http": 80}}, "ports: a map where the chart expects a list"),
        ({"image": "repo:tag"}, "image: a scalar where the chart expects a map"),
        ({"worker": ["a"]}, "worker: a list where the chart expects a map"),
        (
            {"image.tag": "1"},
            "image.tag: a key written with a dot (Helm reads it literally; nest it instead)",
        ),
        (
            {"worker": {"config.enabled": True}},
            "worker.config.enabled: a key written with a dot (Helm reads it literally; nest it instead)",
        ),
        ({"typo": None}, "typo: unknown key"),
    ],
)
def test_values_the_chart_does_not_read_are_reported(sample, values, expected):
    assert unknown_paths(values, sample) == [expected]


def test_a_key_with_a_dot_is_written_escaped(tmp_path):
    path = tmp_path / "dotted.txt"
    path.write_text("# chart: x\n# version: 1\ngrafana.grafana\\.ini *\n")
    keys = load_keys(path)
    assert keys.paths == {("grafana", "grafana.ini"): "*"}
    assert unknown_paths({"grafana": {"grafana.ini": {"server": {"root_url": "x"}}}}, keys) == []
    assert unknown_paths({"grafana": {"grafana.init": {}}}, keys) == [
        "grafana.grafana.init: a key written with a dot (Helm reads it literally; nest it instead)"
    ]


def test_every_problem_is_reported(sample):
    values = {"image": {"tga": "1", "repository": "r"}, "portz": [], "worker": {"config": {"enable": True}}}
    assert sorted(unknown_paths(values, sample)) == [
        "image.tga: unknown key",
        "portz: unknown key",
        "worker.config.enable: unknown key",
    ]


def test_a_release_selects_its_key_set_by_chart_name_and_exact_version(sample):
    assert keys_for("sample", "1.2.3", [sample]) is sample
    assert keys_for("sample-alias", "1.2.3", [sample]) is sample
    assert keys_for("oci://registry.example/charts/sample", "1.2.3", [sample]) is sample
    assert keys_for("repo/sample", "1.2.3", [sample]) is sample
    assert keys_for("sample", "v1.2.3", [sample]) is None
    assert keys_for("sample", "1.2.4", [sample]) is None
    assert keys_for("other", "1.2.3", [sample]) is None


# --- the project's key sets ------------------------------------------------------------------------


def test_every_key_set_file_is_well_formed_and_named_after_its_chart():
    files = sorted(KEYS_DIR.glob("*.txt"))
    assert files, f"no key sets in {KEYS_DIR}"
    for path in files:
        keys = load_keys(path)
        assert path.name == f"{keys.chart}-{keys.version}.txt", (
            f"{path.name}: header says {keys.chart} {keys.version}"
        )
        assert keys.paths, f"{path.name}: no key paths"


def test_the_default_gpu_operator_version_has_a_key_set():
    assert keys_for(versions.GPU_OPERATOR_CHART, versions.DEFAULT_GPU_OPERATOR_VERSION, all_keys()), (
        f"no key set for {versions.GPU_OPERATOR_CHART} {versions.DEFAULT_GPU_OPERATOR_VERSION}: "
        "add the key set to tests/data/chart-keys"
    )


# --- every stack's Releases ----------------------------------------------------------------------------


def releases(stack: stack_plans.Planned) -> list[dict[str, Any]]:
    return [r for r in stack.result.resources if r["type"] == RELEASE_TYPE]


def release_problems(stack: stack_plans.Planned, key_sets: list[ChartKeys]) -> list[str]:
    problems = []
    for release in releases(stack):
        inputs = release["inputs"]
        chart, version = str(inputs.get("chart", "")), str(inputs.get("version", ""))
        where = f"{stack.name}: Release {release['name']} ({chart} {version or 'unpinned'})"
        if inputs.get("valueYamlFiles"):
            problems.append(f"{where}: passes valueYamlFiles, which this check cannot read; pass values")
        keys = keys_for(chart, version, key_sets)
        if keys is None:
            problems.append(
                f"{where}: no key set for this chart and version; add the key set to tests/data/chart-keys"
            )
            continue
        problems += [f"{where}: {problem}" for problem in unknown_paths(inputs.get("values"), keys)]
    return problems


@pytest.fixture(scope="module")
def key_sets():
    return all_keys()


@pytest.fixture(scope="module", params=stack_plans.NAMES)
def stack(request):
    return stack_plans.plan(request.param)


def test_every_release_passes_only_values_its_chart_reads(stack, key_sets):
    problems = release_problems(stack, key_sets)
    assert not problems, "\n".join(problems)


def test_the_stacks_register_releases_to_check():
    checked = [(name, r["name"]) for name in stack_plans.NAMES for r in releases(stack_plans.plan(name))]
    assert checked, "no stack registers a Helm Release: the value check checks nothing"
    assert ("fixture:gke-operator", "gpu-operator") in checked
