"""GKE queued provisioning through Kueue's ProvisioningRequest admission check: the
ProvisioningRequestConfig and AdmissionCheck against Kueue 0.19.2's CRD schemas, the queued pool's
ClusterQueue and ResourceFlavor, Kueue's deletion of Jobs it deactivated, the GKE node pool inputs
(pulumi-gcp 10.2.0 names), the plan of tests/fixtures/stacks/Pulumi.queued-gke.yaml, and the
refusals."""

from __future__ import annotations

import copy
import inspect
import json
import re

import pulumi_gcp as gcp
import pytest
from conftest import GKE
from crds import SCHEMA_DIR, crd_problems, scopes
from planning import by_kind, one, planned

import stack_args
from components.addons import kueue, provisioning
from components.cluster.gke import node_pools, queued
from components.config import ConfigError, load_config
from components.determined import resource_pools

QUEUED = {"types": ["flexStart"], "queued": True}
RETRY_FIELDS = ("backoffLimitCount", "backoffBaseSeconds", "backoffMaxSeconds")


def gke(**changes):
    """conftest.GKE with Kueue and its a100 pool queued, then `changes` over the top keys."""
    raw = copy.deepcopy(GKE)
    raw["scheduler"] = "kueue"
    raw["nodePools"][1] |= {"maxNodes": 3, "capacity": copy.deepcopy(QUEUED)}
    return {**raw, **changes}


def problems(raw) -> list[str]:
    with pytest.raises(ConfigError) as info:
        load_config(raw)
    return [str(p) for p in info.value.problems]


@pytest.fixture(scope="module")
def cfg():
    return load_config(gke())


@pytest.fixture(scope="module")
def queued_pool(cfg):
    return cfg.node_pool("a100")


def of_kind(objects, kind):
    return [o for o in objects if o["kind"] == kind]


# --- the objects against their CRD schemas -----------------------------------------------------


def test_the_check_and_its_config_match_their_crd_schemas():
    for obj in provisioning.objects():
        assert crd_problems(obj) == [], obj["kind"]
    for name in (
        "kueue.x-k8s.io_v1beta2_AdmissionCheck.json",
        "kueue.x-k8s.io_v1beta2_ProvisioningRequestConfig.json",
        "autoscaling.x-k8s.io_v1_ProvisioningRequest.json",
    ):
        assert (SCHEMA_DIR / name).exists() and name in scopes(), name


@pytest.mark.parametrize(
    ("kind", "path", "wrong"),
    [
        ("ProvisioningRequestConfig", ("spec", "provisioningClass"), "x"),  # misspelt
        ("ProvisioningRequestConfig", ("spec", "retryStrategy", "backoffLimit"), 3),
        ("ProvisioningRequestConfig", ("spec", "provisioningClassName"), "Queued_Provisioning"),
        ("AdmissionCheck", ("spec", "parameters", "group"), "kueue.x-k8s.io"),
        ("AdmissionCheck", ("spec", "controller"), "x"),
    ],
)
def test_a_field_the_schema_refuses_is_caught(kind, path, wrong):
    (obj,) = of_kind(provisioning.objects(), kind)
    bad = copy.deepcopy(obj)
    node = bad
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = wrong
    assert crd_problems(bad) != []


def test_the_check_runs_kueues_provisioning_controller_with_the_config():
    check = provisioning.admission_check()
    config = provisioning.provisioning_request_config()
    assert check["spec"]["controllerName"] == "kueue.x-k8s.io/provisioning-request"
    params = check["spec"]["parameters"]
    assert (params["apiGroup"], params["kind"]) == ("kueue.x-k8s.io", config["kind"])
    assert params["name"] == config["metadata"]["name"]
    assert config["apiVersion"] == check["apiVersion"] == "kueue.x-k8s.io/v1beta2"


def test_the_config_asks_gke_queued_provisioning_for_gpu_jobs():
    spec = provisioning.provisioning_request_config()["spec"]
    assert spec["provisioningClassName"] == "queued-provisioning.gke.io"
    assert spec["managedResources"] == ["nvidia.com/gpu"]
    assert "parameters" not in spec and "podSetUpdates" not in spec


def test_requests_are_retried_more_than_kueues_defaults_with_its_backoff():
    """The CRD's default retryStrategy is Kueue's (3 retries, 60 s, 1800 s): a queue that may take
    days gets more retries, spaced as Kueue spaces them."""
    schema = json.loads((SCHEMA_DIR / "kueue.x-k8s.io_v1beta2_ProvisioningRequestConfig.json").read_text())
    default = schema["properties"]["spec"]["properties"]["retryStrategy"]["default"]
    retry = provisioning.provisioning_request_config()["spec"]["retryStrategy"]
    assert set(retry) == set(RETRY_FIELDS)
    assert retry["backoffLimitCount"] > default["backoffLimitCount"]
    assert retry["backoffBaseSeconds"] == default["backoffBaseSeconds"]
    assert retry["backoffMaxSeconds"] == default["backoffMaxSeconds"]


def test_a_request_kueue_would_make_from_the_config_is_a_valid_provisioning_request():
    """Kueue copies the class and the Job's pod template into an autoscaling.x-k8s.io/v1
    ProvisioningRequest (pkg/controller/admissionchecks/provisioning/controller.go at v0.19.2)."""
    spec = provisioning.provisioning_request_config()["spec"]
    request = {
        "apiVersion": "autoscaling.x-k8s.io/v1",
        "kind": "ProvisioningRequest",
        "metadata": {
            "name": "exp-1-trial-2-determined-queued-provisioning-1",
            "namespace": "det-a100",
            "labels": {"kueue.x-k8s.io/managed": "true"},
        },
        "spec": {
            "provisioningClassName": spec["provisioningClassName"],
            "podSets": [{"count": 2, "podTemplateRef": {"name": "ppt-exp-1-main"}}],
        },
    }
    assert crd_problems(request) == []
    request["spec"]["provisioningClassName"] = "Not A Class"
    assert crd_problems(request) != []


# --- the queued pool's queue and flavor ----------------------------------------------------------


def test_only_the_queued_pools_cluster_queue_names_the_check(cfg):
    objects = resource_pools.queue_objects(cfg)
    checks = {
        q["metadata"]["name"]: q["spec"].get("admissionChecksStrategy")
        for q in of_kind(objects, "ClusterQueue")
    }
    assert checks == {
        "determined-a100": {"admissionChecks": [{"name": provisioning.NAME}]},
        "determined-aux": None,
    }
    (check,) = of_kind(objects, "AdmissionCheck")
    assert check["metadata"]["name"] == provisioning.NAME
    assert len(of_kind(objects, "ProvisioningRequestConfig")) == 1
    for obj in objects:
        assert crd_problems(obj) == [], obj["metadata"]["name"]


def test_the_check_and_config_come_once_for_several_queued_pools():
    raw = gke()
    raw["nodePools"].append({**copy.deepcopy(raw["nodePools"][1]), "name": "a100b"})
    raw["resourcePools"].append({"name": "b", "nodePool": "a100b"})
    objects = resource_pools.queue_objects(load_config(raw))
    assert len(of_kind(objects, "AdmissionCheck")) == len(of_kind(objects, "ProvisioningRequestConfig")) == 1
    with_check = [q for q in of_kind(objects, "ClusterQueue") if "admissionChecksStrategy" in q["spec"]]
    assert sorted(q["metadata"]["name"] for q in with_check) == ["determined-a100", "determined-b"]


def test_without_a_queued_pool_there_is_no_check():
    raw = gke()
    del raw["nodePools"][1]["capacity"]
    objects = resource_pools.queue_objects(load_config(raw))
    assert not of_kind(objects, "AdmissionCheck") and not of_kind(objects, "ProvisioningRequestConfig")
    assert all("admissionChecksStrategy" not in q["spec"] for q in of_kind(objects, "ClusterQueue"))


def test_the_queued_flavor_tolerates_the_taint_gke_puts_on_queued_nodes(cfg, queued_pool):
    flavor = kueue.resource_flavor(queued_pool)
    toleration = {"key": "cloud.google.com/gke-queued", "operator": "Equal", "value": "true"}
    assert {**toleration, "effect": "NoSchedule"} in flavor["spec"]["tolerations"]
    # The GPU taint stays first; the queued one is added once.
    assert flavor["spec"]["tolerations"][0]["key"] == "nvidia.com/gpu"
    assert flavor["spec"]["tolerations"].count(provisioning.QUEUED_TAINT.toleration) == 1
    other = kueue.resource_flavor(cfg.node_pool("system"))
    assert "tolerations" not in other["spec"]


def test_the_queued_toleration_is_not_doubled_when_the_pool_lists_the_taint(queued_pool):
    taints = [*queued_pool.all_taints, provisioning.QUEUED_TAINT]

    class Listed(type(queued_pool)):
        @property
        def all_taints(self):
            return taints

    pool = Listed.model_construct(**dict(queued_pool))
    tolerations = kueue.resource_flavor(pool)["spec"]["tolerations"]
    assert tolerations == [t.toleration for t in taints]


# --- Kueue deletes the Jobs it deactivated -------------------------------------------------------


def test_kueue_deletes_a_job_whose_workload_it_deactivated():
    """A Workload deactivated after its last failed request would leave its Job suspended and the
    task waiting forever: Kueue deletes the Job (afterDeactivatedByKueue, WorkloadRetentionPolicy
    in apis/config/v1beta2/configuration_types.go:783-804 at v0.19.2), which the master fails."""
    policies = kueue.manager_config(600)["objectRetentionPolicies"]
    assert set(policies) == {"workloads"}
    assert set(policies["workloads"]) <= {"afterFinished", "afterDeactivatedByKueue"}
    retention = policies["workloads"]["afterDeactivatedByKueue"]
    assert re.fullmatch(r"\d+(s|m|h)", retention), "a Go duration"
    assert "afterFinished" not in policies["workloads"]  # finished Jobs are the master's to delete


# --- the GKE node pool inputs --------------------------------------------------------------------


def init_params(cls) -> set[str]:
    return set(inspect.signature(cls.__init__).parameters) - {"self", "__self__", "resource_name", "opts"}


def test_a_queued_pool_gets_what_gke_requires(queued_pool):
    assert queued.node_pool_settings(queued_pool) == {
        "queued_provisioning": {"enabled": True},
        "initial_node_count": 0,
        "autoscaling": {"total_min_node_count": 0, "total_max_node_count": 3, "location_policy": "ANY"},
        "management": {"auto_repair": False},
        "node_config": {
            "flex_start": True,
            "spot": False,
            "reservation_affinity": {"consume_reservation_type": "NO_RESERVATION"},
        },
    }


def test_other_pools_get_nothing(cfg):
    assert queued.node_pool_settings(cfg.node_pool("system")) == {}


def test_the_settings_are_pulumi_gcp_node_pool_inputs(queued_pool):
    settings = queued.node_pool_settings(queued_pool)
    c = gcp.container
    assert set(settings) <= init_params(c.NodePoolArgs)
    nested = {
        "queued_provisioning": c.NodePoolQueuedProvisioningArgs,
        "autoscaling": c.NodePoolAutoscalingArgs,
        "management": c.NodePoolManagementArgs,
        "node_config": c.NodePoolNodeConfigArgs,
    }
    for key, cls in nested.items():
        assert set(settings[key]) <= init_params(cls), key
    affinity = settings["node_config"]["reservation_affinity"]
    assert set(affinity) <= init_params(c.NodePoolNodeConfigReservationAffinityArgs)
    # The accepted values, as the SDK documents them.
    assert f'`"{affinity["consume_reservation_type"]}"`' in inspect.getdoc(
        c.NodePoolNodeConfigReservationAffinityArgs.__init__
    )


def test_merged_keeps_what_the_settings_leave_and_copies_what_they_bring(cfg, queued_pool):
    args = {"management": {"auto_repair": True, "auto_upgrade": True}, "node_config": {"spot": True, "x": 1}}
    settings = queued.node_pool_settings(queued_pool)
    out = queued.merged(args, settings)
    assert out["management"] == {"auto_repair": False, "auto_upgrade": True}
    assert out["node_config"]["x"] == 1 and out["node_config"]["spot"] is False
    assert args["management"]["auto_repair"] is True  # left as it was
    out["queued_provisioning"]["enabled"] = False
    assert settings["queued_provisioning"]["enabled"] is True
    assert queued.merged(args, {}) == args


def test_the_node_pool_args_with_the_settings_merged(cfg):
    """What components/cluster/gke/node_pools.py sends once it merges the settings in: the
    pool's own inputs kept, the queued ones over them."""
    args = stack_args.gke_cluster_args(cfg)
    pool = next(p for p in args.node_pools if p.name == "a100")
    base = node_pools.node_pool_args(args, pool, "cluster-id", "nodes@p.iam.gserviceaccount.com")
    out = queued.merged(base, queued.node_pool_settings(pool))
    assert out["queued_provisioning"] == {"enabled": True}
    assert out["node_config"]["guest_accelerators"] == base["node_config"]["guest_accelerators"]
    assert out["node_config"]["flex_start"] is True
    assert out["node_config"]["machine_type"] == "a2-highgpu-4g"
    assert out["autoscaling"]["total_max_node_count"] == 3
    assert out["management"] == {"auto_repair": False, "auto_upgrade": True}


# --- the plan ------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def plan():
    return planned("queued-gke")


def node_pool_inputs(plan, name):
    (pool,) = [
        r for r in plan.resources if r["type"] == "gcp:container/nodePool:NodePool" and r["name"] == name
    ]
    return pool["inputs"]


def test_the_plan_has_the_check_its_config_and_the_queue_wired_to_it(plan):
    check = one(plan, "AdmissionCheck", provisioning.NAME)
    config = one(plan, "ProvisioningRequestConfig", provisioning.NAME)
    assert check["spec"]["parameters"]["name"] == config["metadata"]["name"]
    queue = one(plan, "ClusterQueue", "determined-h100")
    assert queue["spec"]["admissionChecksStrategy"] == {"admissionChecks": [{"name": provisioning.NAME}]}
    assert "admissionChecksStrategy" not in one(plan, "ClusterQueue", "determined-aux")["spec"]
    flavor = one(plan, "ResourceFlavor", "determined-h100")
    assert provisioning.QUEUED_TAINT.toleration in flavor["spec"]["tolerations"]
    for kind in (
        "AdmissionCheck",
        "ProvisioningRequestConfig",
        "ClusterQueue",
        "ResourceFlavor",
        "LocalQueue",
    ):
        for obj in by_kind(plan, kind):
            assert crd_problems(obj) == [], (kind, obj["metadata"]["name"])


def test_the_plans_queued_pool_is_flex_start_from_zero_without_reservations(plan):
    inputs = node_pool_inputs(plan, "h100")
    assert inputs["nodeConfig"]["flexStart"] is True
    assert inputs["nodeConfig"]["spot"] is False
    assert inputs["nodeConfig"]["reservationAffinity"] == {"consumeReservationType": "NO_RESERVATION"}
    assert inputs["autoscaling"]["totalMinNodeCount"] == 0
    assert inputs["autoscaling"]["locationPolicy"] == "ANY"
    assert inputs["initialNodeCount"] == 0
    assert inputs["management"]["autoRepair"] is False
    # GKE adds the queued taint itself: not sent.
    assert all(t["key"] != provisioning.QUEUED_TAINT.key for t in inputs["nodeConfig"]["taints"])


def test_the_plans_queued_pool_is_queued(plan):
    assert node_pool_inputs(plan, "h100").get("queuedProvisioning") == {"enabled": True}


def test_the_plans_queued_task_pods_select_the_pool_and_carry_the_queue_label(plan):
    pools = {p["pool_name"]: p for p in _master_pools(plan)}
    tcd = pools["h100"]["task_container_defaults"]
    for key in ("cpu_pod_spec", "gpu_pod_spec"):
        pod = tcd[key]
        assert pod["spec"]["nodeSelector"]["determined.ai/node-pool"] == "h100"
        assert pod["metadata"]["labels"][kueue.QUEUE_LABEL] == "determined-h100"


def _master_pools(plan):
    import yaml

    return yaml.safe_load(plan.master_yaml)["resource_pools"]


# --- refusals ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("changes", "where", "says"),
    [
        ({"scheduler": "default"}, "nodePools[1].capacity.queued", "set scheduler: kueue"),
        ({"master": {"version": "0.33.0"}}, "nodePools[1].capacity.queued", "0.34.0 or newer"),
        ({"defaultAuxPool": "a100"}, "nodePools[1].capacity.queued", "aux pool"),
    ],
)
def test_a_queued_pool_is_refused(changes, where, says):
    found = problems(gke(**changes))
    assert any(p.startswith(f"determined:{where}: ") and says in p for p in found), found


def test_a_queued_cpu_pool_is_refused():
    raw = gke()
    raw["nodePools"][0] |= {"capacity": copy.deepcopy(QUEUED)}
    found = problems(raw)
    assert any(p.startswith("determined:nodePools[0].capacity.queued: ") and "GPU pools" in p for p in found)


@pytest.mark.parametrize("types", [["spot"], ["flexStart", "spot"], ["onDemand"]])
def test_a_queued_pool_of_other_types_is_refused(types):
    raw = gke()
    raw["nodePools"][1]["capacity"]["types"] = types
    found = problems(raw)
    assert any("nodePools[1].capacity" in p and "flexStart" in p for p in found), found


def test_a_queued_pool_on_eks_is_refused():
    raw = {
        "cloud": "eks",
        "cluster": {"name": "det", "region": "us-east-1"},
        "scheduler": "kueue",
        "nodePools": [
            {"name": "system", "machineType": "m6i.2xlarge"},
            {
                "name": "a100",
                "machineType": "p4d.24xlarge",
                "gpu": {"type": "nvidia-tesla-a100", "count": 8},
                "capacity": copy.deepcopy(QUEUED),
            },
        ],
        "resourcePools": [{"name": "a100", "nodePool": "a100"}, {"name": "aux", "nodePool": "system"}],
    }
    found = problems(raw)
    assert any(p.startswith("determined:nodePools[1].capacity.queued: ") for p in found), found
