"""The outside scan: checkov's Kubernetes checks pass on every stack's manifests.

Every stack of stacks/ and tests/fixtures/stacks/ (and the GKE driver installer in both its
node image variants, only one of which a stack uses) is written to a directory of its own and
scanned once per session by checkov (in .venv-scan; `make test` makes it). No check may
fail. A check is skipped only through components/kube/scan_exceptions.py, which annotates the
object itself with the check and why; every such annotation must excuse a real finding: each
object that carries skips is scanned a second time without them (renamed, beside the
original), and each skipped check must fail there.
"""

from __future__ import annotations

import json
import re
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import planning
import pytest
import stack_plans
import yaml
from conftest import ROOT

from components import constants
from components.addons import gke_driver_installer
from components.determined import upgrade_dump
from components.kube import scan_exceptions
from plan import mocks

SCAN_PYTHON = ROOT / ".venv-scan" / "bin" / "python"
SCAN_STAMP = ROOT / ".venv-scan" / ".installed"
DRIVER = Path(__file__).resolve().parent / "checkov_scan.py"
OBJECTS = "objects.yaml"
UNSKIPPED = "unskipped.yaml"
UNSKIPPED_SUFFIX = "-unskipped"
DUMPER = getattr(yaml, "CSafeDumper", yaml.SafeDumper)  # libyaml: several times faster


@dataclass
class Unit:
    """One scanned directory: a stack's objects, and the skip-annotated ones without skips."""

    name: str
    objects: list[dict[str, Any]]
    # file -> [(first line, object)], to place checkov's findings (it reports lines).
    lines: dict[str, list[tuple[int, dict[str, Any]]]] = field(default_factory=dict)


def upgrade_dumps(name: str) -> list[dict[str, Any]]:
    """The dump Jobs before the master of an update that changes the master version: the
    plans are of first installs, which have none (upgrade_dump.needed)."""
    token = upgrade_dump.READ_STACK_OUTPUTS
    saved = mocks.INVOKES[token]
    previous = {upgrade_dump.VERSION_OUTPUT: "0.0.0"}
    mocks.INVOKES[token] = lambda req: {"name": "", "outputs": previous, "secretOutputNames": []}
    try:
        result = planning.plan_file(stack_plans.STACK_FILES[name])
    finally:
        mocks.INVOKES[token] = saved
    prefix = constants.PRE_UPGRADE_JOB_PREFIX
    jobs = [m for m in result.manifests if m["kind"] == "Job" and m["metadata"]["name"].startswith(prefix)]
    # With the NetworkPolicies that select their pods (graph checks look for them).
    return jobs + [m for m in result.manifests if m["kind"] == "NetworkPolicy"]


def units() -> list[Unit]:
    found = [Unit(name, stack_plans.plan(name).result.manifests) for name in stack_plans.NAMES]
    # Only one driver installer variant runs in a stack; scan both as register() gives them.
    for image_type in gke_driver_installer.IMAGE_TYPES:
        obj = scan_exceptions.annotated(gke_driver_installer.daemonset(image_type))
        found.append(Unit(f"addon:gke-driver-installer-{image_type}", [obj]))
    # The dump before an upgrade, with a mirror named by tag.
    found.append(Unit("upgrade:db-restore", upgrade_dumps("fixture:db-restore")))
    return found


def skip_annotations(obj: dict[str, Any]) -> dict[str, str]:
    annotations = obj["metadata"].get("annotations") or {}
    return {k: v for k, v in annotations.items() if k.startswith(scan_exceptions.ANNOTATION_PREFIX)}


def original(copy: dict[str, Any]) -> dict[str, Any]:
    """The object an unskipped copy was made from (as the skip table sees it)."""
    meta = {**copy["metadata"], "name": copy["metadata"]["name"].removesuffix(UNSKIPPED_SUFFIX)}
    return {**copy, "metadata": meta}


def without_skips(obj: dict[str, Any]) -> dict[str, Any]:
    meta = dict(obj["metadata"])
    meta["name"] = meta["name"] + UNSKIPPED_SUFFIX
    meta["annotations"] = {
        k: v for k, v in (meta.get("annotations") or {}).items() if k not in skip_annotations(obj)
    }
    return {**obj, "metadata": meta}


def write(path: Path, objects: list[dict[str, Any]]) -> list[tuple[int, dict[str, Any]]]:
    """Objects as one multi-document file; (first line of each, object)."""
    lines, parts, line = [], [], 1
    for obj in objects:
        text = yaml.dump(obj, Dumper=DUMPER, sort_keys=False)
        lines.append((line + 1, obj))  # after its `---`
        parts.append("---\n" + text)
        line += 1 + text.count("\n")
    path.write_text("".join(parts))
    return lines


def directory_name(unit: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]", "_", unit)


@dataclass
class Finding:
    unit: str
    obj: dict[str, Any]
    unskipped: bool
    check: str
    name: str
    comment: str | None

    @property
    def where(self) -> str:
        meta = self.obj["metadata"]
        name = meta["name"].removesuffix(UNSKIPPED_SUFFIX) if self.unskipped else meta["name"]
        return f"{self.unit}: {self.obj['kind']} {meta.get('namespace', '-')}/{name}"


def place(unit: Unit, raw: dict[str, Any]) -> tuple[dict[str, Any], bool]:
    """The object a finding is about (the last one starting at or before its line)."""
    starts = unit.lines[raw["file"]]
    obj = max((s for s in starts if s[0] <= raw["line"]), key=lambda s: s[0])[1]
    return obj, raw["file"] == UNSKIPPED


@pytest.fixture(scope="session")
def scan(tmp_path_factory) -> dict[str, Any]:
    if not (SCAN_PYTHON.exists() and SCAN_STAMP.exists()):
        pytest.fail(
            "checkov is not installed in .venv-scan: run `make test` (it creates .venv-scan from "
            "requirements-scan.txt), or `python3 -m venv .venv-scan && .venv-scan/bin/python -m pip "
            "install -r requirements-scan.txt && touch .venv-scan/.installed`",
            pytrace=False,
        )
    root = tmp_path_factory.mktemp("checkov")
    by_directory = {}
    for unit in units():
        directory = root / directory_name(unit.name)
        directory.mkdir()
        unit.lines[OBJECTS] = write(directory / OBJECTS, unit.objects)
        skipping = [without_skips(obj) for obj in unit.objects if skip_annotations(obj)]
        if skipping:
            unit.lines[UNSKIPPED] = write(directory / UNSKIPPED, skipping)
        by_directory[directory.name] = unit
    out = root / "results.json"
    run = subprocess.run(
        [str(SCAN_PYTHON), str(DRIVER), str(root), str(out)], capture_output=True, text=True, check=False
    )
    assert run.returncode == 0, f"checkov failed:\n{run.stderr[-3000:]}"
    results = json.loads(out.read_text())
    assert set(results) == set(by_directory)
    found: dict[str, list[Finding]] = {"failed": [], "skipped": []}
    for directory, result in results.items():
        unit = by_directory[directory]
        assert not result["parsing_errors"], (
            f"{unit.name}: checkov could not parse {result['parsing_errors']}"
        )
        # Every object was read (an unread one would pass every check).
        scanned = {r.rsplit(f"/{directory}/", 1)[-1] for r in result["resources"]}
        for file, starts in unit.lines.items():
            for _, obj in starts:
                meta = obj["metadata"]
                key = f"{file}:{obj['kind']}.{meta.get('namespace', 'default')}.{meta['name']}"
                assert key in scanned, f"{unit.name}: checkov did not scan {key}"
        for outcome in found:
            for raw in result[outcome]:
                obj, unskipped = place(unit, raw)
                found[outcome].append(
                    Finding(unit.name, obj, unskipped, raw["check"], raw["name"], raw["comment"])
                )
    return {"units": list(by_directory.values()), **found}


def test_no_check_fails_on_any_stack(scan):
    failures = sorted({f"{f.where}: {f.check} {f.name}" for f in scan["failed"] if not f.unskipped})
    assert not failures, f"{len(failures)} failed checkov checks:\n" + "\n".join(failures)


def test_checkov_skips_exactly_what_the_objects_say_and_why(scan):
    skipped = {(f.where, f.check, f.comment) for f in scan["skipped"] if not f.unskipped}
    annotated = set()
    for unit in scan["units"]:
        for obj in unit.objects:
            where = Finding(unit.name, obj, False, "", "", None).where
            for value in skip_annotations(obj).values():
                check, reason = value.split("=", 1)
                annotated.add((where, check, reason))
    assert annotated, "no object carries a skip: the annotations are not applied"
    assert skipped == annotated


def graph_check(check: str) -> bool:
    """checkov's graph checks (CKV2_*) judge an object by the others it connects to, and
    connect across namespaces (a NetworkPolicy selecting by expressions only connects to every
    pod it sees): whether one passes depends on the rest of the stack."""
    return check.startswith("CKV2_")


def test_every_skip_excuses_a_finding(scan):
    # Without its skips, an object fails every check it skips, else the skip is stale (a
    # graph check: some object with that entry fails it).
    failed_unskipped = {(f.where, f.check) for f in scan["failed"] if f.unskipped}
    graph_excused = {
        (key, f.check)
        for f in scan["failed"]
        if f.unskipped and graph_check(f.check)
        for key in scan_exceptions.keys(original(f.obj))
    }
    stale = set()
    for unit in scan["units"]:
        for obj in unit.objects:
            where = Finding(unit.name, obj, False, "", "", None).where
            for value in skip_annotations(obj).values():
                check = value.split("=", 1)[0]
                if graph_check(check):
                    keys = scan_exceptions.keys(obj)
                    if not any((key, check) in graph_excused for key in keys):
                        stale.add(
                            f"{obj['kind']} {obj['metadata']['name']}: skips {check}, which no scan fails"
                        )
                elif (where, check) not in failed_unskipped:
                    stale.add(f"{where}: skips {check}, which passes without the skip")
    assert not stale, "\n".join(sorted(stale))


def test_every_entry_of_the_skip_table_is_used(scan):
    used = set()
    for unit in scan["units"]:
        for obj in unit.objects:
            applied = {id(skip) for skip in scan_exceptions.skips_for(obj)}
            used |= applied
    unused = [
        f"{kind} {name}: {skip.check}"
        for (kind, name), skips in scan_exceptions.SKIPS.items()
        for skip in skips
        if id(skip) not in used
    ]
    assert not unused, "skips no scanned object needs:\n" + "\n".join(unused)


# --- the table itself (no checkov needed) ------------------------------------------------------


@pytest.mark.parametrize(
    "key,skip",
    [(key, skip) for key, skips in scan_exceptions.SKIPS.items() for skip in skips],
    ids=lambda v: v.check if isinstance(v, scan_exceptions.Skip) else "/".join(v),
)
def test_each_skip_names_a_check_and_gives_a_one_line_reason(key, skip):
    assert re.fullmatch(r"CKV2?_K8S_\d+", skip.check)
    assert skip.reason.strip() and len(skip.reason) >= 20, "a reason says why"
    assert "\n" not in skip.reason and len(skip.reason) <= 200
    assert "=" not in skip.reason, "checkov splits the annotation at '='"


def test_an_object_skips_each_check_once():
    for key, skips in scan_exceptions.SKIPS.items():
        checks = [skip.check for skip in skips]
        assert len(checks) == len(set(checks)), key


def test_annotations_are_in_checkovs_form_and_keep_the_objects_own():
    obj = {
        "kind": "Deployment",
        "metadata": {"name": "determined-master", "annotations": {"a": "b"}},
        "spec": {"template": {"spec": {"containers": [{"name": "m", "image": "x:1", "resources": {}}]}}},
    }
    out = scan_exceptions.annotated(obj)
    assert obj["metadata"]["annotations"] == {"a": "b"}, "the input is left alone"
    annotations = out["metadata"]["annotations"]
    assert annotations["a"] == "b"
    skips = {k: v for k, v in annotations.items() if k != "a"}
    assert all(re.fullmatch(r"checkov\.io/skip\d+", k) for k in skips)
    assert {v.split("=")[0] for v in skips.values()} == {
        "CKV_K8S_38",
        "CKV_K8S_43",
        "CKV_K8S_15",
        "CKV_K8S_11",
    }
    # Conditional skips follow the object: a digest and a CPU limit need none of theirs.
    container = obj["spec"]["template"]["spec"]["containers"][0]
    container["image"] = "x:1@sha256:" + "a" * 64
    container["resources"] = {"limits": {"cpu": "1"}}
    assert [
        v.split("=")[0] for v in scan_exceptions.annotations(scan_exceptions.skips_for(obj)).values()
    ] == ["CKV_K8S_38"]
    assert scan_exceptions.annotated({"kind": "Service", "metadata": {"name": "x"}}) == {
        "kind": "Service",
        "metadata": {"name": "x"},
    }


def test_objects_named_per_run_are_found_by_their_component(monkeypatch):
    skip = scan_exceptions.Skip("CKV_K8S_40", "a reason long enough to say why")
    monkeypatch.setitem(scan_exceptions.SKIPS, ("Job", "database-backup"), (skip,))
    job = {
        "kind": "Job",
        "metadata": {
            "name": "determined-db-backup-0-38-1",
            "labels": {"app.kubernetes.io/name": "database-backup"},
        },
    }
    assert scan_exceptions.skips_for(job) == [skip]
    assert scan_exceptions.skips_for({**job, "kind": "CronJob"}) == []
