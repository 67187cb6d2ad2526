"""The configuration reference (docs/reference/configuration.md) and Pulumi.yaml's `config:`
block are what scripts/config_reference.py writes from the models, and cover every key."""

from __future__ import annotations

import json
import re
import typing
from pathlib import Path

import jsonschema
import pytest
import yaml
from conftest import ROOT
from pydantic import BaseModel

from components.config import EksStack, ExistingStack, GkeStack, StackConfig, decode_raw, load_config
from plan import stackfile
from scripts import config_reference

PAGE = ROOT / "docs" / "reference" / "configuration.md"
STACKS = sorted(
    [*(ROOT / "stacks").glob("Pulumi.*.yaml"), *(ROOT / "tests/fixtures/stacks").glob("Pulumi.*.yaml")]
)


def test_the_committed_page_is_what_the_script_writes():
    assert PAGE.read_text() == config_reference.render(), (
        "docs/reference/configuration.md differs from the models: run .venv/bin/python scripts/config_reference.py"
    )


def test_the_committed_project_file_is_what_the_script_writes():
    text = (ROOT / "Pulumi.yaml").read_text()
    assert text == config_reference.project_file(text), (
        "Pulumi.yaml's config block differs from the models: run .venv/bin/python scripts/config_reference.py"
    )


def _reachable_models() -> set[type[BaseModel]]:
    """Every model a stack file's values can reach, found from the annotations (a walk of
    its own, not the script's)."""
    found: set[type[BaseModel]] = set()

    def visit(tp: typing.Any) -> None:
        if isinstance(tp, type) and issubclass(tp, BaseModel):
            if tp not in found:
                found.add(tp)
                for info in tp.model_fields.values():
                    visit(info.annotation)
            return
        for arg in typing.get_args(tp):
            visit(arg)

    # The stacks of each cloud (StackConfig's cloud, cluster and nodePools are retyped by each).
    for stack in (ExistingStack, GkeStack, EksStack):
        visit(stack)
    return found


def _page_keys() -> list[str]:
    return re.findall(r"^\| `([^`]+)` \|", PAGE.read_text(), flags=re.MULTILINE)


def test_every_key_of_the_models_is_on_the_page():
    last = {key.rsplit(".", 1)[-1].removesuffix("[]") for key in _page_keys()}
    missing = sorted(
        f"{model.__qualname__}.{info.alias or name}"
        for model in _reachable_models()
        for name, info in model.model_fields.items()
        if (info.alias or name) not in last
    )
    assert not missing, f"keys missing from {PAGE.name}: {', '.join(missing)}"
    assert len(_reachable_models()) > 30


def test_every_key_is_on_the_page_with_its_description():
    text = PAGE.read_text()
    for model in _reachable_models():
        for name, info in model.model_fields.items():
            description = " ".join((info.description or "").split()).replace("|", "\\|")
            assert f"| {description} |" in text, f"{model.__qualname__}.{info.alias or name}"


@pytest.mark.parametrize("key", ["master.proxy.noProxy", "nodePools[].gpu.sharing.strategy", "database.host"])
def test_nested_keys_are_listed_by_their_full_path(key):
    assert key in _page_keys()


def test_pulumi_yaml_declares_the_top_level_keys_with_the_models_types():
    project = yaml.safe_load((ROOT / "Pulumi.yaml").read_text())
    declared = {key.removeprefix("determined:"): entry for key, entry in project["config"].items()}
    top = {info.alias or name: info for name, info in StackConfig.model_fields.items()}
    undeclared = config_reference.undeclared()
    assert set(declared) | set(undeclared) == set(top)
    assert not set(declared) & set(undeclared)
    for key, entry in declared.items():
        assert entry["description"] == " ".join((top[key].description or "").split()), key
    # The keys without a default are the ones the models require.
    required = {key for key, info in top.items() if info.is_required()}
    assert {key for key, entry in declared.items() if "default" not in entry} == required & set(declared)


def test_the_pulumi_cli_accepts_the_project_file():
    """The CLI validates Pulumi.yaml against its JSON schema before anything else
    (pulumi/pulumi sdk/go/common/workspace/project.json at 0498be1, copied to tests/data):
    a config type it does not know (`object`) fails every command of every stack."""
    schema = json.loads((ROOT / "tests/data/pulumi-project.schema.json").read_text())
    project = yaml.safe_load((ROOT / "Pulumi.yaml").read_text())
    problems = [e.message for e in jsonschema.Draft202012Validator(schema).iter_errors(project)]
    assert problems == []


def _pulumi_accepts(entry: dict[str, typing.Any], value: typing.Any) -> bool:
    """ValidateConfigValue in pulumi/pulumi sdk/go/common/workspace/project.go (at 0498be1):
    how the CLI checks a declared key's default and each stack's value."""
    kind = entry["type"]
    if kind == "string":
        return isinstance(value, str)
    if kind == "integer":
        return (isinstance(value, int) and not isinstance(value, bool)) or (
            isinstance(value, str) and value.lstrip("-").isdigit()
        )
    if kind == "boolean":
        return isinstance(value, bool) or value in ("true", "false")
    return isinstance(value, list) and all(_pulumi_accepts(entry["items"], item) for item in value)


@pytest.mark.parametrize("path", STACKS, ids=lambda p: p.name.removeprefix("Pulumi.").removesuffix(".yaml"))
def test_the_pulumi_cli_accepts_each_stacks_values_and_the_defaults(path: Path):
    project = yaml.safe_load((ROOT / "Pulumi.yaml").read_text())
    values = yaml.safe_load(path.read_text())["config"]  # as the stack file holds them
    for key, entry in project["config"].items():
        if "default" in entry:
            assert _pulumi_accepts(entry, entry["default"]), key
        if key in values:
            assert _pulumi_accepts(entry, values[key]), f"{path.name}: {key}"


def _as_pulumi_passes_it(value: typing.Any) -> str:
    """A project default as the program receives it: text for scalars, JSON otherwise
    (createConfigValue in pulumi/pulumi pkg/workspace/config.go)."""
    if isinstance(value, bool):
        return str(value).lower()
    return value if isinstance(value, str) else json.dumps(value)


def _loaded(raw: dict[str, typing.Any]) -> dict[str, typing.Any]:
    return load_config(decode_raw(raw)).model_dump(mode="json")


@pytest.mark.parametrize("path", STACKS, ids=lambda p: p.name.removeprefix("Pulumi.").removesuffix(".yaml"))
def test_the_declared_defaults_mean_what_leaving_the_keys_out_means(path: Path):
    """Pulumi hands the program a declared default for every key the stack file leaves out:
    every stack must validate to the same configuration with them as without."""
    raw = {k.removeprefix("determined:"): v for k, v in stackfile.load_stack_file(path)[0].items()}
    raw = {k: v for k, v in raw.items() if ":" not in k}
    defaults = {
        key.removeprefix("determined:"): _as_pulumi_passes_it(entry["default"])
        for key, entry in config_reference.project_config().items()
        if "default" in entry
    }
    assert _loaded({**defaults, **raw}) == _loaded(raw)
