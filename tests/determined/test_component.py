"""The Determined component as a library: built from DeterminedArgs alone (no stack config)
under the plan's recording mocks; its Args described field by field; its public outputs typed
and described where the SDK's schema analyzer reads them; the URNs of deployed stacks kept
by the alias of its old type; and nothing in components/determined/ (or the add-ons it
installs) reading the stack config."""

from __future__ import annotations

import types

import pulumi
import pulumi_kubernetes as k8s
import pytest
from component_args import undescribed_outputs
from conftest import ROOT
from pydantic import BaseModel, Field

import stack_args
from components.cluster import ClusterHandle
from components.config import decode_raw, rules
from components.config.base import ConfigModel
from components.config.errors import ConfigError
from components.determined import determined
from components.determined.args import DeterminedArgs
from components.determined.determined import Determined
from plan import runner, stackfile
from plan.mocks import Recorder

ARGS = {
    "cloud": "existing",
    "clusterName": "lib",
    "namespace": "det",
    "nodePools": [
        {"name": "system", "nodeSelector": {"pool": "system"}},
        {"name": "gpu", "nodeSelector": {"pool": "gpu"}, "gpu": {"type": "nvidia-l4", "count": 1}},
    ],
    "resourcePools": [{"name": "gpu", "nodePool": "gpu"}],
}


def run(args: DeterminedArgs) -> Recorder:
    """A program of its own that deploys Determined onto a cluster it reaches with a provider
    of its own, run under the plan's recording mocks."""

    def main() -> None:
        provider = k8s.Provider("cluster", kubeconfig="~/.kube/config", context="lib")
        det = Determined("determined", args, ClusterHandle(provider=provider))
        pulumi.export("url", det.url)
        pulumi.export("namespace", det.namespace)
        pulumi.export("pools", det.resource_pool_namespaces)
        pulumi.export("password", det.initial_user_password)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(runner, "program", lambda: types.SimpleNamespace(main=main))
        return runner.run_program({}, [], "lib")


def test_determined_from_its_args_alone_registers_the_master_database_and_pools():
    recorder = run(DeterminedArgs.model_validate(ARGS))
    (component,) = [r for r in recorder.resources if r.type == "determined:index:Determined"]
    children = {r.type for r in recorder.resources if r.parent == component.urn}
    assert {
        "determined:components:Master",
        "determined:components:Database",
        "determined:components:ResourcePools",
        "kubernetes:core/v1:Namespace",
    } <= children
    kinds = {(r.type, r.name) for r in recorder.resources}
    assert ("kubernetes:apps/v1:Deployment", "det/determined-master") in kinds
    assert ("kubernetes:core/v1:Namespace", "det-gpu") in kinds
    # The outputs other programs use, registered and exported from the attributes.
    assert set(component.outputs) == {
        "url",
        "namespace",
        "resourcePoolNamespaces",
        "initialUserPassword",
        "masterVersion",
        "grafanaUrl",
        "grafanaAdminPassword",
    }
    out = recorder.stack_outputs
    assert out["url"] == "http://determined-master-service.det.svc.cluster.local:8080"
    assert out["namespace"] == "det" and out["pools"] == {"gpu": "det-gpu"}
    assert out["password"]  # generated: a secret


def test_deployed_stacks_keep_their_urns_through_the_old_type():
    recorder = run(DeterminedArgs.model_validate(ARGS))
    (component,) = [r for r in recorder.resources if r.type == "determined:index:Determined"]
    assert [spec.spec.type for spec in component.request.aliases] == [determined.OLD_TYPE]
    assert determined.OLD_TYPE == "determined:components:Determined"


def undescribed(model: type[BaseModel]) -> list[str]:
    """Fields of `model` without a description."""
    return [name for name, info in model.model_fields.items() if not (info.description or "").strip()]


def test_every_args_field_is_described():
    assert undescribed(DeterminedArgs) == []
    assert (DeterminedArgs.__doc__ or "").strip()


def test_a_field_without_a_description_is_found():
    class Careless(ConfigModel):
        described: int = Field(1, description="Says what it is.")
        bare: int = 2

    assert undescribed(Careless) == ["bare"]


def test_args_are_checked_key_by_key_as_the_stack_sections_are():
    """A bad value is a ConfigError (a pulumi.RunError: printed without a traceback), one line
    per problem naming its key, as a stack file's is."""
    with pytest.raises(ConfigError, match="nodePools"):
        DeterminedArgs.model_validate({**ARGS, "nodePools": []})
    with pytest.raises(ConfigError, match="node_pools"):  # camelCase keys, as in a stack file
        DeterminedArgs.model_validate({**ARGS, "node_pools": ARGS["nodePools"]})
    # The names the parts look up resolve; every dangling one is its own line.
    with pytest.raises(ConfigError) as refused:
        DeterminedArgs.model_validate(
            {**ARGS, "resourcePools": [{"name": "gpu", "nodePool": "tpu"}], "defaultAuxPool": "cpu"}
        )
    assert str(refused.value).splitlines() == [
        "determined:resourcePools[0].nodePool: no node pool named 'tpu' (nodePools: "
        + ", ".join(pool["name"] for pool in ARGS["nodePools"])
        + ")",
        "determined:defaultAuxPool: no resource pool named 'cpu' (resourcePools: gpu)",
    ]
    with pytest.raises(ConfigError, match="defaultAuxPool"):
        DeterminedArgs(**{**ARGS, "defaultAuxPool": "cpu"})


def test_the_views_the_parts_read_are_the_stack_configs_own():
    """DeterminedArgs and the stack configuration derive task namespaces, pools, slots... with
    one copy of the logic (components.config.views)."""
    from components.config.stack import StackConfig
    from components.config.views import DeploymentViews

    assert issubclass(DeterminedArgs, DeploymentViews) and issubclass(StackConfig, DeploymentViews)
    args = DeterminedArgs.model_validate(ARGS)
    assert args.task_namespaces == ["det-tasks", "det-gpu"]
    assert args.compute_pool == "gpu" and args.slot_type == "gpu"
    assert args.master_node_pool is not None and args.master_node_pool.name == "system"


def test_public_outputs_are_typed_and_described_at_class_level():
    assert {"url", "namespace", "initial_user_password"} <= set(Determined.__annotations__)
    assert undescribed_outputs(Determined) == []


STACK_FILES = sorted(
    [*(ROOT / "stacks").glob("Pulumi.*.yaml"), *(ROOT / "tests/fixtures/stacks").glob("Pulumi.*.yaml")]
)


@pytest.mark.parametrize(
    "path", STACK_FILES, ids=lambda p: p.name.removeprefix("Pulumi.").removesuffix(".yaml")
)
def test_the_rules_run_on_the_args_judge_them_as_they_judge_the_stack(path):
    """Each rule DeterminedArgs runs on itself finds, on a stack's Args, what it finds on the
    stack's config: the Args hold every value the rule reads, under the same name."""
    raw = {k.removeprefix("determined:"): v for k, v in stackfile.load_stack_file(path)[0].items()}
    cfg = stack_args.load_stack(decode_raw({k: v for k, v in raw.items() if ":" not in k}))
    args = stack_args.determined_args(cfg)
    for rule in rules.DETERMINED_RULES:
        on_stack: list[tuple[str, str]] = []
        on_args: list[tuple[str, str]] = []
        rule(cfg, lambda path, message, found=on_stack: found.append((path, message)))
        rule(args, lambda path, message, found=on_args: found.append((path, message)))
        assert on_args == on_stack, rule.__name__


def test_the_args_are_refused_what_a_stack_file_is():
    with pytest.raises(ConfigError) as refused:
        DeterminedArgs.model_validate(
            {**ARGS, "namespace": "kube-system", "master": {**ARGS.get("master", {}), "version": "9.9.9"}}
        )
    lines = str(refused.value).splitlines()
    assert any(
        line.startswith("determined:namespace: 'kube-system' belongs to the cluster") for line in lines
    )
    assert any(line.startswith("determined:master.version: Determined 9.9.9 is newer") for line in lines)
