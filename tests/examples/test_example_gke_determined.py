"""examples/gke-determined: a program of its own that composes GkeCluster and Determined
from their Args (no stack config), planned under the project's mocks with the plan's checks
(cloud and Kubernetes API rules, master.yaml against its release, the policy pack)."""

from __future__ import annotations

import ast
import importlib.util
import types
from pathlib import Path

import pytest
from conftest import ROOT
from planning import by_kind, of_type, one

from plan import runner
from plan.standins import Prepared
from policies import catalog
from policies.rule import context_from_config

EXAMPLE = ROOT / "examples" / "gke-determined"
PROJECT = "example-project"


def load_example(path: Path) -> types.ModuleType:
    """The example's __main__.py as a module (not run as a script: nothing registers yet)."""
    spec = importlib.util.spec_from_file_location("gke_determined_example", path / "__main__.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def example() -> types.ModuleType:
    return load_example(EXAMPLE)


@pytest.fixture(scope="module")
def planned_example(example):
    """The example planned as `python -m plan` plans a stack: run under the recording mocks,
    then every check of the plan (runner.run) and the policy pack's rules."""
    # The example has no stack config: the plan's config is the one key it reads, and
    # master.yaml is checked against the release the example's Args name.
    section = example.ClusterSection.model_validate(example.CLUSTER | {"project": PROJECT})
    master = example.determined_args(section).master
    prepared = Prepared(
        config={"gcp:project": PROJECT}, secret_keys=[], cfg=types.SimpleNamespace(master=master)
    )
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(runner, "program", lambda: example)
        # The pack's rules, served in this process (as `--policy-pack policies` would judge it).
        return runner.run(
            prepared, "example", policies=catalog.policies(context_from_config(prepared.config))
        )


def test_the_example_registers_the_cluster_its_node_pools_and_the_master(planned_example):
    types_ = {r["type"] for r in planned_example.resources}
    assert {"determined:index:GkeCluster", "determined:index:Determined"} <= types_
    (cluster,) = of_type(planned_example, "gcp:container/cluster:Cluster")
    assert cluster["inputs"]["name"] == "det-example"
    assert sorted(p["name"] for p in of_type(planned_example, "gcp:container/nodePool:NodePool")) == [
        "l4",
        "system",
    ]
    master = one(planned_example, "Deployment", "determined-master")
    assert master["metadata"]["namespace"] == "determined"
    assert {ns["metadata"]["name"] for ns in by_kind(planned_example, "Namespace")} >= {
        "determined",
        "det-l4",
        "det-aux",
    }


def test_the_example_passes_the_plans_checks(planned_example):
    # runner.run raised on a cloud, Kubernetes or master.yaml problem; the pack judged it.
    assert planned_example.master_yaml
    assert planned_example.mandatory_violations == []


def test_the_example_exports_how_to_reach_its_master(planned_example):
    # masterVersion: what the next update reads back (else it waits for a database dump).
    assert set(planned_example.outputs) == {
        "kubeconfig",
        "checkpointBucket",
        "masterUrl",
        "initialUserPassword",
        "masterVersion",
    }
    assert planned_example.outputs["initialUserPassword"] == "[secret]"


def test_the_example_uses_the_components_not_the_stack_configuration():
    tree = ast.parse((EXAMPLE / "__main__.py").read_text())
    imported = {
        (node.module, alias.name)
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom)
        for alias in node.names
    }
    assert ("components.cluster.gke", "GkeCluster") in imported
    assert any(name == "Determined" for _, name in imported)
    stack_level = {"StackConfig", "GkeStack", "load_config", "read_pulumi_config", "connect_cluster"}
    assert not {name for _, name in imported} & stack_level
    assert not any(
        module and module.startswith(("stack_args", "components.config.stack")) for module, _ in imported
    )
