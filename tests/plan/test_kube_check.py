"""The plan's own check of its Kubernetes objects (plan.kube_check): what the API server
would refuse beyond its schema stops the plan as an internal error (exit 3)."""

from __future__ import annotations

import copy

import pytest
import yaml
from conftest import GKE, raw_config
from planning import plan_for

from components import constants
from components.addons import kueue
from components.kube import api_rules
from plan import cli, kube_check, runner
from plan.errors import PlanFailure


def _res(obj: dict, name: str = "r") -> dict:
    kind = f"kubernetes:{obj.get('apiVersion', 'v1').replace('v1', 'core/v1') if '/' not in obj.get('apiVersion', 'v1') else obj['apiVersion']}:{obj['kind']}"
    return {"type": kind, "name": name, "urn": f"urn:{kind}::{name}", "inputs": obj, "options": {}}


def _deployment(pod_spec: dict, labels: dict | None = None) -> dict:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "d", "namespace": "n"},
        "spec": {"template": {"metadata": {"labels": labels or {"a": "b"}}, "spec": pod_spec}},
    }


@pytest.mark.parametrize(
    ("obj", "found"),
    [
        (
            {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "2fast", "namespace": "n"}},
            "DNS-1035",
        ),
        ({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "a.b"}}, "DNS-1123 label"),
        (
            {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": "N"}},
            "DNS-1123 label",
        ),
        (
            {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role", "metadata": {"name": "a/b"}},
            "may not contain '/'",
        ),
        ({"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "c" * 53}}, "longer than 52"),
        ({"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j" * 64}}, "longer than 63"),
        (
            {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s", "labels": {"k": "v" * 64}}},
            "label value",
        ),
        (
            {
                "apiVersion": "v1",
                "kind": "Secret",
                "metadata": {"name": "s", "annotations": {"a": "x" * 262144}},
            },
            "at most 262144",
        ),
        (
            {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {"name": "c"},
                "data": {"k": "x" * (2**20 + 1)},
            },
            "at most 1048576",
        ),
        (
            {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"a/b": ""}},
            "key 'a/b'",
        ),
        (_deployment({"containers": [{"name": "c", "env": [{"name": "A=B"}]}]}), "env name 'A=B'"),
        (_deployment({"containers": [{"name": "c"}]}, labels={"bad key!": "x"}), "label key 'bad key!'"),
        (
            _deployment(
                {
                    "containers": [{"name": "c"}],
                    "tolerations": [{"key": "k", "operator": "Exists", "value": "v"}],
                }
            ),
            "must be empty when operator is Exists",
        ),
        (
            _deployment({"containers": [{"name": "c", "volumeMounts": [{"name": "v", "mountPath": "/v"}]}]}),
            "no volume named 'v'",
        ),
    ],
)
def test_what_the_api_server_refuses_is_found(obj, found):
    problems = kube_check.violations([_res(obj)])
    assert any(found in p for p in problems), problems


def test_the_master_config_secret_is_judged_at_its_real_size():
    """The plan shows master.yaml redacted: its size is the text the Secret will hold."""
    secret = {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": constants.MASTER_CONFIG_SECRET, "namespace": "determined"},
        "stringData": {"master.yaml": "[secret]"},
    }
    assert kube_check.violations([_res(secret)], "port: 8081\n") == []
    big = "description: " + "x" * (2 * 2**20) + "\n"
    (problem,) = [p for p in kube_check.violations([_res(secret)], big) if "1 MiB" in p]
    assert problem.startswith(f"kubernetes:core/v1:Secret r: data: Secret data is {len(big)} bytes")


def test_task_pod_specs_in_master_yaml_are_judged():
    master = {
        "resource_pools": [
            {"task_container_defaults": {"gpu_pod_spec": {"metadata": {"labels": {"team": "t" * 64}}}}}
        ],
        "task_container_defaults": {
            "cpu_pod_spec": {"containers": [{"name": "c", "env": [{"name": "A=B"}]}]}
        },
    }
    problems = kube_check.violations([], yaml.safe_dump(master))
    assert any(
        p.startswith(
            "master.yaml resource_pools[0].task_container_defaults.gpu_pod_spec: metadata.labels: label value"
        )
        for p in problems
    ), problems
    assert any(
        p.startswith("master.yaml task_container_defaults.cpu_pod_spec: spec.containers[0].env[0].name")
        for p in problems
    ), problems


def test_values_not_known_yet_are_not_judged():
    obj = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": "[unknown until apply]", "namespace": "n"},
    }
    assert kube_check.violations([_res(obj)]) == []


def _kueue_raw() -> dict:
    """Kueue on GKE with a pool named with 63 characters (the longest pool name)."""
    raw = raw_config(**copy.deepcopy(GKE), scheduler="kueue")
    raw["resourcePools"][0]["name"] = "p" * 63
    raw["defaultComputePool"] = "p" * 63
    return raw


def test_a_derivation_that_breaks_a_rule_stops_the_plan(monkeypatch):
    """Break the code: the queue label of a pool is its ClusterQueue's name untrimmed (a pool
    name of 63 characters makes a 74-character label on every task pod)."""
    raw = _kueue_raw()
    result = plan_for(raw)
    kube_check.check(result.resources, result.master_yaml)  # the real derivation trims it
    monkeypatch.setattr(kueue, "queue_name", lambda rp: f"determined-{rp.name}")
    with pytest.raises(PlanFailure, match=r"the Kubernetes API server would refuse the plan: .*label value"):
        plan_for(raw)  # the plan checks itself


def test_a_violation_exits_3_with_one_line(monkeypatch, capsys, tmp_path):
    """The message the user sees when the plan catches itself: `run` raising as the check
    does, through the CLI (exit 3, one line)."""
    bad = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "Bad_Name"}}

    def run(*args, **kwargs):
        kube_check.check([_res(bad, "ns")])

    monkeypatch.setattr(runner, "run", run)
    stack = tmp_path / "Pulumi.x.yaml"
    stack.write_text(yaml.safe_dump({"config": {f"determined:{k}": v for k, v in raw_config().items()}}))
    code = cli.main(["--config", str(stack), "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert code == 3, err
    (line,) = err.splitlines()
    assert (
        "the Kubernetes API server would refuse the plan: kubernetes:core/v1:Namespace ns: metadata.name: 'Bad_Name'"
        in line
    )
    assert not (tmp_path / "out").exists()


def test_the_check_runs_in_every_plan(monkeypatch):
    seen = []
    monkeypatch.setattr(
        runner.kube_check, "check", lambda resources, master_yaml=None: seen.append(len(resources))
    )
    plan_for(_kueue_raw())
    assert seen and seen[0] > 0


def test_rules_name_their_sources():
    """Every rule module constant that stands for a fact says where it comes from."""
    source = api_rules.__doc__ or ""
    assert "v0.34.0" in source and "validation.go" in source
