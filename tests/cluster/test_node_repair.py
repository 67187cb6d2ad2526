"""Node health on the cloud side: GKE node auto-repair on every pool, GPU pools included; EKS node
auto repair on every managed node group and the node monitoring agent add-on, whose DCGM server
tolerates the GPU groups' taints; `cluster.nodeRepair: false` turns both off; GKE's managed DCGM
metrics as GkeClusterArgs.gke_managed_dcgm asks."""

from __future__ import annotations

import copy
import json

import jsonschema
import pulumi_gcp as gcp
import pytest
import yaml
from conftest import EKS, GKE, ROOT
from planning import FIXTURE_STACKS, of_type, plan_for, planned, resource, stack_name

import stack_args
from components.cluster.eks import cluster as eks_cluster
from components.cluster.eks import node_groups
from components.cluster.gke import cluster as gke_cluster
from components.cluster.gke import monitoring
from components.config import ConfigError, load_config
from plan import stackfile

AGENT = eks_cluster.NODE_MONITORING_AGENT
AGENT_SCHEMA = json.loads(
    (ROOT / "tests" / "data" / "addon-schemas" / "eks-node-monitoring-agent-v1.7.0.json").read_text()
)


def _stacks_of(cloud: str) -> list[str]:
    """Every stack of stacks/ and tests/fixtures/stacks/ on `cloud`, by name."""
    paths = [*sorted(stackfile.STACKS_DIR.glob("Pulumi.*.yaml")), *sorted(FIXTURE_STACKS.glob("*.yaml"))]
    return [
        stack_name(path)
        for path in paths
        if yaml.safe_load(path.read_text())["config"].get("determined:cloud") == cloud
    ]


GKE_STACKS = _stacks_of("gke")
EKS_STACKS = _stacks_of("eks")


def repair_off(raw: dict) -> dict:
    raw = copy.deepcopy(raw)
    raw["cluster"] = {**raw["cluster"], "nodeRepair": False}
    return raw


def test_the_stack_lists_cover_both_clouds():
    assert {"gke-dev", "gke-prod"} <= set(GKE_STACKS) and {"eks-dev", "eks-prod"} <= set(EKS_STACKS)


# --- GKE: auto-repair on every pool ------------------------------------------------------------


@pytest.mark.parametrize("stack", GKE_STACKS)
def test_every_gke_pool_gpu_pools_included_is_auto_repaired(stack):
    pools = of_type(planned(stack), "container/nodePool:NodePool")
    assert any("guestAccelerators" in p["inputs"]["nodeConfig"] for p in pools), "no GPU pool planned"
    for pool in pools:
        # Flex-start VMs (capacity flexStart, queued) run without auto-repair, as GKE requires
        # (GoogleCloudPlatform/cluster-toolkit@01a7a3e modules/compute/gke-node-pool/main.tf:
        # "enable_flex_start needs node auto_repair set to false").
        repaired = not pool["inputs"]["nodeConfig"].get("flexStart")
        assert pool["inputs"]["management"] == {"autoRepair": repaired, "autoUpgrade": True}, pool["name"]


def test_node_repair_off_turns_gke_auto_repair_off_on_every_pool_and_keeps_auto_upgrade():
    pools = of_type(plan_for(repair_off(GKE), stack="repair-off"), "container/nodePool:NodePool")
    assert {p["name"] for p in pools} == {"system", "a100"}
    for pool in pools:
        assert pool["inputs"]["management"] == {"autoRepair": False, "autoUpgrade": True}, pool["name"]


# --- GKE: managed DCGM metrics ----------------------------------------------------------------


def gke_args(**update):
    return stack_args.gke_cluster_args(load_config(copy.deepcopy(GKE))).model_copy(update=update)


def test_gke_monitoring_is_left_to_the_cluster_unless_asked():
    assert monitoring.monitoring_config(gke_args()) is None
    result = plan_for(copy.deepcopy(GKE), stack="monitoring-default")
    assert "monitoringConfig" not in resource(result, "container/cluster:Cluster", "cluster")["inputs"]


def test_managed_dcgm_adds_dcgm_to_gkes_defaults_with_managed_collection():
    config = monitoring.monitoring_config(gke_args(gke_managed_dcgm=True))
    assert config == {
        "enable_components": [*monitoring.GKE_DEFAULT_COMPONENTS, "DCGM"],
        "managed_prometheus": {"enabled": True},
    }
    # Sending the list replaces the cluster's: GKE's defaults must all be in it.
    assert {"SYSTEM_COMPONENTS", "POD", "DEPLOYMENT", "KUBELET", "CADVISOR"} <= set(
        config["enable_components"]
    )
    # The pulumi-gcp input names (an unknown name is a TypeError).
    gcp.container.ClusterMonitoringConfigArgs(
        enable_components=config["enable_components"],
        managed_prometheus=gcp.container.ClusterMonitoringConfigManagedPrometheusArgs(
            **config["managed_prometheus"]
        ),
    )
    args = gke_cluster.cluster_args(gke_args(gke_managed_dcgm=True), "p", _network(), "nodes@p")
    assert args["monitoring_config"] == config


def test_managed_dcgm_off_keeps_gkes_defaults_without_dcgm():
    config = monitoring.monitoring_config(gke_args(gke_managed_dcgm=False))
    assert config == {"enable_components": list(monitoring.GKE_DEFAULT_COMPONENTS)}
    assert "DCGM" not in config["enable_components"] and "SYSTEM_COMPONENTS" in config["enable_components"]
    gcp.container.ClusterMonitoringConfigArgs(**config)


def _network():
    from components.cluster.gke.network import Network

    return Network(network="net", subnetwork="nodes", pods_range=None, services_range=None, sql_ready=[])


# --- EKS: node auto repair on every group, the node monitoring agent -----------------------------


def tolerates(toleration: dict, taint: dict) -> bool:
    """Whether a Kubernetes toleration tolerates a taint (key, effect, and value unless Exists)."""
    if toleration.get("key") not in (None, taint["key"]):
        return False
    if toleration.get("effect") not in (None, taint["effect"]):
        return False
    return toleration.get("operator") == "Exists" or toleration.get("value") == taint.get("value")


EFFECTS = {"NO_SCHEDULE": "NoSchedule", "PREFER_NO_SCHEDULE": "PreferNoSchedule", "NO_EXECUTE": "NoExecute"}


@pytest.mark.parametrize("stack", EKS_STACKS)
def test_every_eks_group_is_repaired_and_the_agent_tolerates_every_gpu_taint(stack):
    result = planned(stack)
    groups = of_type(result, "eks/nodeGroup:NodeGroup")
    gpu_groups = [g for g in groups if g["inputs"]["amiType"] == node_groups.AMI_GPU]
    # GPU nodes Karpenter makes (cluster.autoscaler karpenter): the agent's DCGM server runs there too.
    karpenter_gpu_taints = [
        (m["metadata"]["name"], taint)
        for m in result.manifests
        if m["kind"] == "NodePool" and "nvidia.com/gpu" in m["spec"].get("limits", {})
        for taint in m["spec"]["template"]["spec"].get("taints", [])
    ]
    assert gpu_groups or karpenter_gpu_taints, "no GPU group or GPU NodePool planned"
    for group in groups:
        expected = {"enabled": True}
        if group in gpu_groups:
            expected["maxParallelNodesRepairedCount"] = node_groups.GPU_REPAIR_PARALLELISM
        assert group["inputs"]["nodeRepairConfig"] == expected, group["name"]

    (agent,) = [a for a in of_type(result, "eks/addon:Addon") if a["inputs"]["addonName"] == AGENT]
    values = json.loads(agent["inputs"]["configurationValues"])
    jsonschema.validate(values, AGENT_SCHEMA)
    tolerations = values["dcgmAgent"]["tolerations"]
    for group in gpu_groups:
        for taint in group["inputs"]["taints"]:
            taint = {**taint, "effect": EFFECTS[taint["effect"]]}
            assert any(tolerates(t, taint) for t in tolerations), (group["name"], taint)
    for name, taint in karpenter_gpu_taints:
        assert any(tolerates(t, taint) for t in tolerations), (name, taint)
    # At the add-on's default version for the cluster's minor, like every add-on.
    version = resource(result, "eks/cluster:Cluster", "cluster")["inputs"]["version"]
    assert agent["inputs"]["addonVersion"].startswith(f"v1.{version.split('.')[1]}.")


def test_extra_gpu_taints_are_tolerated_and_cpu_taints_are_not():
    raw = copy.deepcopy(EKS)
    raw["nodePools"][0]["taints"] = [{"key": "infra", "value": "yes", "effect": "NoSchedule"}]
    raw["nodePools"][1]["taints"] = [{"key": "team", "value": "vision", "effect": "NoExecute"}]
    raw["nodePools"].insert(0, {"name": "base", "machineType": "m6i.xlarge"})
    raw["resourcePools"][1]["nodePool"] = "base"
    args = stack_args.eks_cluster_args(load_config(raw))
    values = eks_cluster.node_monitoring_settings(args)
    assert values == {
        "dcgmAgent": {
            "tolerations": [
                {"key": "nvidia.com/gpu", "operator": "Equal", "value": "present", "effect": "NoSchedule"},
                {"key": "team", "operator": "Equal", "value": "vision", "effect": "NoExecute"},
            ]
        }
    }
    jsonschema.validate(values, AGENT_SCHEMA)


def test_without_gpu_groups_the_agent_keeps_its_defaults():
    raw = copy.deepcopy(EKS)
    raw["nodePools"] = raw["nodePools"][:1]
    raw["resourcePools"] = [{"name": "aux", "nodePool": "system"}]
    raw["slots"] = {"type": "cpu", "maxSlotsPerPod": 1}
    args = stack_args.eks_cluster_args(load_config(raw))
    assert eks_cluster.node_monitoring_settings(args) is None
    assert eks_cluster.addon_configuration(AGENT, args) is None
    assert AGENT in eks_cluster.addons(args)


def test_the_schema_refuses_what_eks_would_refuse():
    # The check above can fail: a key outside the schema is refused.
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"dcgmAgent": {"tolerations": [], "hostPort": 5555}}, AGENT_SCHEMA)


def test_node_repair_off_removes_the_agent_and_turns_repair_off_explicitly():
    result = plan_for(repair_off(EKS), stack="repair-off")
    assert AGENT not in {a["inputs"]["addonName"] for a in of_type(result, "eks/addon:Addon")}
    groups = of_type(result, "eks/nodeGroup:NodeGroup")
    assert {g["name"] for g in groups} == {"system", "a100"}
    # Sent as false, not left out: an absent input would keep what the group has.
    assert all(g["inputs"]["nodeRepairConfig"] == {"enabled": False} for g in groups)


def test_repair_settings_change_a_group_in_place():
    assert "node_repair_config" in node_groups.IN_PLACE_INPUTS


def test_determined_waits_for_the_system_add_ons_not_for_the_agent():
    result = planned("eks-dev")
    urn = {a["inputs"]["addonName"]: a["urn"] for a in of_type(result, "eks/addon:Addon")}
    assert [r for r in result.resources if urn["coredns"] in (r["dependsOn"] or [])]
    assert not [r["name"] for r in result.resources if urn[AGENT] in (r["dependsOn"] or [])]


# --- the switch in the configuration ---------------------------------------------------------


@pytest.mark.parametrize("base", [GKE, EKS])
def test_a_bad_node_repair_value_is_one_line_naming_its_key(base):
    raw = copy.deepcopy(base)
    raw["cluster"] = {**raw["cluster"], "nodeRepair": "yes", "zones": 7}
    with pytest.raises(ConfigError) as info:
        load_config(raw)
    lines = [str(p) for p in info.value.problems]
    repair = [line for line in lines if "cluster.nodeRepair" in line]
    assert len(repair) == 1 and "\n" not in repair[0], lines
    assert any("cluster.zones" in line for line in lines), lines


def test_existing_clusters_have_no_node_repair_key():
    from conftest import raw_config as existing

    raw = existing()
    raw["cluster"] = {**raw["cluster"], "nodeRepair": True}
    with pytest.raises(ConfigError) as info:
        load_config(raw)
    assert any("cluster.nodeRepair" in str(p) for p in info.value.problems)
