"""The plan judged by the pack the way `pulumi preview --policy-pack policies` judges it: the
pack started as its own process and reached over the analyzer protocol (plan.policy_check
.run_pack), and the same findings from the pack's policies served in this process
(plan.policy_check.evaluate, what tests use), on the stacks of stacks/ (dev and prod, GKE,
EKS, an existing cluster) in a first preview and in an update.

Each case starts the pack (about a second); PLAN_PACK_EVERY_STACK=1 adds every fixture stack."""

from __future__ import annotations

import json
import os
import re
import runpy

import pulumi_policy
import pytest
from conftest import EKS, GKE, ROOT, pulumi_config
from planning import FIXTURE_STACKS, stack_name

from plan import analyzer, policy_check, runner, stackfile
from plan.standins import prepare
from policies import catalog
from policies.rule import context_from_config

STACKS = sorted(stackfile.STACKS_DIR.glob("Pulumi.*.yaml"))
FIXTURES = sorted(FIXTURE_STACKS.glob("*.yaml"))
THROUGH_THE_PACK = STACKS + (FIXTURES if os.environ.get("PLAN_PACK_EVERY_STACK") == "1" else [])
# What each stack shows on purpose (every other finding is a regression): dev cloud stacks
# whose API endpoint admits any address until the user lists theirs; a master load balancer
# without source ranges; chart-parity's networkMode host, in master.yaml, which a first
# preview does not know yet; the prod stacks' spot-only L4 pools (tests/invariants/
# test_policy_stacks.py KEPT_ADVICE).
FENCE = {"control-plane-endpoint-fenced"}
SPOT_ONLY = {"prod-gpu-pools-not-spot-only"}
KEPT = {
    **dict.fromkeys(["gke-prod", "eks-prod"], SPOT_ONLY),
    **dict.fromkeys(["gke-dev", "eks-dev", "gke-operator", "gke-shared-vpc", "kueue-gke"], FENCE),
    **dict.fromkeys(["tls-ingress-eks", "tls-ingress-gke"], FENCE),
    **dict.fromkeys(["karpenter-eks", "compute-class-gke", "queued-gke"], FENCE),
    **dict.fromkeys(["pre-pull-eks", "eks-fabric-nodes", "shared-fs-gke-0.34.0", "fabric-rdma-gke"], FENCE),
    "tls-master": {"lb-source-ranges"},
    "chart-parity": {"no-privileged-pods"},
}
KEPT_IN_PREVIEW = {"chart-parity": set()}
# A whole number shown as a double ("0.0 GPU node(s)"): how an int assumption reads in a message.
DOUBLE = re.compile(r"(?<![\d.])\d+\.0(?![\d.])")


def _plan(path, preview: bool):
    config, secret_keys = stackfile.load_stack_file(path)
    prepared = prepare(config, secret_keys)
    result = runner.run(prepared, stack_name(path), policies=None, preview=preview)
    deployment = policy_check.Deployment(
        result.stack,
        sorted(result.recorder.resources, key=lambda r: r.urn),
        prepared.config,
        prepared.secret_keys,
        preview,
        result.recorder.stack_outputs,
    )
    return prepared, result, deployment


@pytest.mark.parametrize("preview", [False, True], ids=["update", "preview"])
@pytest.mark.parametrize("path", THROUGH_THE_PACK, ids=stack_name)
def test_the_pack_as_its_own_process_and_in_this_one_judge_alike(path, preview):
    prepared, result, deployment = _plan(path, preview)
    found = result.violations  # the pack, started as the CLI starts it
    served = policy_check.evaluate(
        catalog.policies(context_from_config(prepared.config)), deployment, result.secrets
    )
    assert found == served
    findings = {v["policy"] for v in found if not policy_check.not_runnable(v)}
    kept = KEPT_IN_PREVIEW.get(result.stack, KEPT.get(result.stack)) if preview else KEPT.get(result.stack)
    assert findings == (kept or set())
    assert preview or not [v for v in found if policy_check.not_runnable(v)]
    for violation in found:
        assert not DOUBLE.search(violation["message"]), violation["message"]


def _gpu_stack(raw: dict, min_nodes: int) -> dict:
    pools = [dict(p) for p in raw["nodePools"]]
    pools[1] |= {"minNodes": min_nodes, "maxNodes": 2}
    return {**raw, "environment": "dev", "nodePools": pools}


@pytest.mark.parametrize(
    ("raw", "kind"), [(GKE, "GKE node pool"), (EKS, "EKS node group")], ids=["gke", "eks"]
)
def test_a_dev_gpu_pool_kept_up_is_reported_through_the_protocol(raw, kind):
    result = runner.plan(pulumi_config(_gpu_stack(raw, 1)), [], "gpu", policies=None)
    (violation,) = [v for v in result.violations if v["policy"] == "dev-gpu-pools-scale-to-zero"]
    assert violation["level"] == "advisory"
    assert violation["message"].startswith(
        f"{kind} 'a100' keeps 1 GPU node(s) running when idle (minimum size 1); a dev GPU pool should scale "
        "to zero. Fix: "
    )


# --- every stack and fixture: the pack's process builds the policies this one does ----------


def _served_by_the_pack(env: dict[str, str], monkeypatch) -> list[tuple[str, str]]:
    """The policies policies/__main__.py serves in a process with `env` (its only input)."""
    served = {}
    monkeypatch.setattr(os, "environ", {**env})
    monkeypatch.setattr(pulumi_policy, "PolicyPack", lambda **kwargs: served.update(kwargs))
    runpy.run_path(str(ROOT / "policies" / "__main__.py"), run_name="__main__")
    return [(p.name, p.enforcement_level.value) for p in served["policies"]]


@pytest.mark.parametrize("environment", ["dev", "prod"])
@pytest.mark.parametrize("path", STACKS + FIXTURES, ids=stack_name)
def test_every_stack_gets_the_same_policies_from_the_pack_process(path, environment, monkeypatch):
    config, secret_keys = stackfile.load_stack_file(path)
    if config.get("determined:environment", "dev") != environment:
        config["determined:environment"] = environment
        config.pop("determined:allowDataDeletion", None)  # refused in prod
    prepared = prepare(config, secret_keys)
    in_process = [
        (p.name, p.enforcement_level.value) for p in catalog.policies(context_from_config(prepared.config))
    ]
    for preview in (False, True):
        deployment = policy_check.Deployment(
            stack_name(path), [], prepared.config, prepared.secret_keys, preview
        )
        env = analyzer.launch(policy_check.PACK, deployment.session()).env
        assert json.loads(env["PULUMI_CONFIG"]) == prepared.config
        with monkeypatch.context() as patch:
            assert _served_by_the_pack(env, patch) == in_process
