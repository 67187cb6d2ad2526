"""Bad stack files, run the way users run them: `python -m plan --config <file>`.

Every case of tests/fixtures/bad-config/*.yaml is a stack file the plan must refuse, one
line per problem: exit status 2, each expected `determined:<key path>: <message>` line,
every line naming a key path (after the one header line), no traceback, no Python class
name or regular expression, no secret the file holds, nothing registered and nothing
written. The cases run in-process through `plan.cli.main` (the entry point of `python -m
plan`); one of them also runs as a real process.

A case (see bases.yaml for the valid stacks cases start from):

    - name: pool namespace kube-system          # unique
      base: gke                                 # existing (default), gke, eks or none
      config:                                   # top-level keys replacing the base's
        determined:namespace: kube-system
      drop: [determined:tls]                    # optional: top-level keys to remove
      expect:                                   # lines that must be printed (their start)
        - "determined:namespace: 'kube-system' belongs to the cluster itself"
      secret: Planted-Secret-1                  # optional: text that must never be printed
"""

from __future__ import annotations

import copy
import inspect
import os
import re
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml
from conftest import ROOT
from pydantic import BaseModel

from components.config.stack import EksStack, ExistingStack, GkeStack
from plan import cli, runner, stackfile

CORPUS = ROOT / "tests" / "fixtures" / "bad-config"
CASE_KEYS = {"name", "base", "config", "drop", "expect", "secret"}
HEADER = "Configuration errors in {path}:"

# Keys whose values are secret by nature wherever they sit (components.config.secrets), and, in
# master.configOverrides, keys named like secrets (as the overrides' redaction finds them).
SECRET_KEYS = {
    "password",
    "initialUserPassword",
    "connectionString",
    "accessKey",
    "secretKey",
    "credential",
    "signingKey",
}
SECRET_OVERRIDE_KEY = re.compile(r"^[a-z_]*(password|secret|token|_key)[a-z_]*$")

# What a message must never show: Python internals and regular-expression syntax.
INTERNALS = (
    "Traceback",
    "pydantic",
    "ValidationError",
    "SecretStr",
    "Annotated",
    "Literal[",
    "NoneType",
    "<class",
    "input_value",
    "input_type",
    "function-after",
    "function-before",
    "[key]",
    "\\d",
    "\\S",
    "\\s",
    "(?:",
    "(?P",
    "[^",
    "[a-z",
    "[A-Z",
    "[0-9",
    "{1,",
    "{0,",
)


def _model_classes() -> set[str]:
    """Names of every configuration model class (a message never names one)."""
    names = set()
    for module in list(sys.modules.values()):
        if getattr(module, "__name__", "").startswith("components.config"):
            for name, value in vars(module).items():
                if inspect.isclass(value) and issubclass(value, BaseModel) and value is not BaseModel:
                    names.add(name)
    return names


def _load(path: Path) -> Any:
    # Read as the plan reads stack files (YAML 1.2 scalars, a key twice is an error), so a
    # case holds exactly the values its stack file will.
    return yaml.load(path.read_text(encoding="utf-8"), Loader=stackfile._Loader)


@dataclass(frozen=True)
class BadCase:
    name: str
    source: str
    entry: dict[str, Any]
    config: dict[str, Any]
    expect: list[str]
    secrets: list[str] = field(default_factory=list)


def _strings(value: Any) -> list[str]:
    """Every key and scalar of a value, as text."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return [str(value)]
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in (*_strings(k), *_strings(v))]
    if isinstance(value, list):
        return [s for item in value for s in _strings(item)]
    return []


def _secret_values(value: Any) -> list[str]:
    """Values at secret-by-nature keys, long enough that finding one in a message means it
    was shown."""
    found = []
    if isinstance(value, dict):
        for key, item in value.items():
            secret = key in SECRET_KEYS or bool(SECRET_OVERRIDE_KEY.match(str(key)))
            if secret and isinstance(item, str) and len(item) >= 8:
                found.append(item)
            found += _secret_values(item)
    elif isinstance(value, list):
        for item in value:
            found += _secret_values(item)
    return found


def load_cases() -> list[BadCase]:
    bases = _load(CORPUS / "bases.yaml")
    cases = []
    for path in sorted(CORPUS.glob("*.yaml")):
        if path.name == "bases.yaml":
            continue
        for entry in _load(path) or []:
            config = copy.deepcopy(bases[entry.get("base", "existing")])
            for key in entry.get("drop") or []:
                config.pop(key, None)
            config.update(copy.deepcopy(entry.get("config") or {}))
            planted = [entry["secret"]] if entry.get("secret") else []
            cases.append(
                BadCase(
                    name=str(entry.get("name")),
                    source=path.name,
                    entry=entry,
                    config=config,
                    expect=list(entry.get("expect") or []),
                    secrets=planted + _secret_values(config),
                )
            )
    return cases


CASES = load_cases()
BY_NAME = {case.name: case for case in CASES}


def write_case(directory: Path, case: BadCase) -> Path:
    path = directory / "Pulumi.case.yaml"
    path.write_text(yaml.safe_dump({"config": case.config}, allow_unicode=True, sort_keys=False))
    return path


@dataclass
class Run:
    code: int
    out: str
    err: str
    path: Path


@pytest.fixture
def run_case(tmp_path, monkeypatch, capsys):
    """Run a case through the plan's command line in this process."""
    registered = []

    def never_run(*args, **kwargs):
        registered.append(args)
        raise AssertionError("a refused configuration reached the program")

    monkeypatch.setattr(runner, "run", never_run)
    monkeypatch.chdir(tmp_path)

    def run(case: BadCase) -> Run:
        path = write_case(tmp_path, case)
        capsys.readouterr()
        code = cli.main(["--config", path.name, "--out", "out"])
        captured = capsys.readouterr()
        assert registered == [], "resources were registered"
        # Nothing written: no output directory, nothing beside the stack file.
        assert sorted(p.name for p in tmp_path.iterdir()) == [path.name]
        return Run(code, captured.out, captured.err, path)

    return run


# --- the corpus itself ----------------------------------------------------------------------


def _top_keys(model: type[BaseModel]) -> set[str]:
    return {info.alias or name for name, info in model.model_fields.items()}


def test_the_corpus_is_large_well_formed_and_covers_every_section():
    assert len(CASES) >= 80, len(CASES)
    names = [case.name for case in CASES]
    assert len(names) == len(set(names)), [n for n in names if names.count(n) > 1]
    bases = _load(CORPUS / "bases.yaml")
    covered = set()
    for case in CASES:
        where = f"{case.source}: {case.name}"
        assert set(case.entry) <= CASE_KEYS, where
        assert case.entry.get("base", "existing") in bases, where
        assert case.expect, where
        for line in case.expect:
            assert re.match(r"determined:[^:\s][^:]*: \S", line), f"{where}: {line!r}"
            covered.add(re.split(r"[.\[:]", line.removeprefix("determined:"), maxsplit=1)[0])
        for key in case.entry.get("config") or {}:
            assert key.startswith("determined:"), where
        if case.entry.get("secret"):
            # A planted secret the stack file does not hold proves nothing.
            assert case.entry["secret"] in "\n".join(_strings(case.config)), where
    sections = _top_keys(ExistingStack) | _top_keys(GkeStack) | _top_keys(EksStack)
    assert sections - covered == set(), "sections without a bad-config case"
    assert sum(bool(case.entry.get("secret")) for case in CASES) >= 10


# --- every case, as a user runs it ----------------------------------------------------------


def _without_values(line: str, case: BadCase) -> str:
    """The line with the case's own values taken out: a value may itself look like a
    regular expression or a class name, and a message may quote it."""
    for value in sorted(set(_strings(case.config)), key=len, reverse=True):
        if len(value) >= 3:
            line = line.replace(repr(value), "«value»").replace(value, "«value»")
    return line


@pytest.mark.parametrize("name", list(BY_NAME))
def test_a_bad_stack_file_is_refused_naming_each_key(run_case, name):
    case = BY_NAME[name]
    run = run_case(case)
    assert run.code == 2, run.err
    assert run.out == ""
    lines = run.err.splitlines()
    assert lines and lines[0] == HEADER.format(path=run.path.name), run.err
    problems = [line[2:] for line in lines[1:]]
    assert all(line.startswith("  determined:") for line in lines[1:]), run.err
    assert all(re.match(r"determined:\S[^:]*: \S", p) for p in problems), run.err
    assert len(problems) == len(set(problems)), "a problem printed twice"
    for expected in case.expect:
        assert any(p.startswith(expected) for p in problems), f"missing {expected!r} in:\n{run.err}"
    classes = _model_classes()
    for problem in problems:
        # The CLI cuts a line at 1000 characters: a message must say what is allowed before.
        assert not problem.endswith("..."), problem
        shown = _without_values(problem, case)
        assert not [m for m in INTERNALS if m in shown], problem
        assert not [c for c in classes if re.search(rf"\b{c}\b", shown)], problem
    for secret in case.secrets:
        assert secret not in run.err, f"a secret is shown: {secret!r}"


def test_the_real_process_exits_2_with_the_same_lines_and_no_traceback(tmp_path_factory, run_case):
    case = BY_NAME["proxy password in a URL"]
    directory = tmp_path_factory.mktemp("process")
    path = write_case(directory, case)
    process = subprocess.run(
        [sys.executable, "-m", "plan", "--config", path.name, "--out", "out"],
        cwd=directory,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert process.returncode == 2, process.stderr
    assert "Traceback" not in process.stderr and process.stdout == ""
    assert case.secrets and not any(s in process.stderr for s in case.secrets)
    assert sorted(p.name for p in directory.iterdir()) == [path.name]
    assert process.stderr == run_case(case).err
