"""Karpenter's EC2NodeClass and NodePools per node pool (components/cluster/eks/karpenter_nodes.py):
valid against the CRD schemas of Karpenter v1.14.1 and, by hand, the CEL rules the schemas carry
(tests/crds.py evaluates no CEL); the capacity shapes; the placement of the pool's tasks (labels,
taints, instance types with the pool's GPUs); limits; names."""

from __future__ import annotations

import copy
import re

import pytest
from conftest import EKS, make_config
from crds import crd_problems

import stack_args
from components import versions
from components.cluster.eks import karpenter_nodes
from components.config import eks_instances
from components.determined import resource_pools
from components.kube.register import _CUSTOM_KINDS

ROLE = "det-karpenter-nodes"
KARPENTER = {**EKS, "cluster": {**EKS["cluster"], "autoscaler": "karpenter"}}
CR = "cr-0123456789abcdef0"
CR2 = "cr-0fedcba9876543210"


def stack(capacity=None, cluster=None, **pool_changes):
    """The EKS stack with autoscaler karpenter, its GPU pool (p4d.24xlarge, 8 A100) changed."""
    raw = copy.deepcopy(KARPENTER)
    raw["cluster"].update(cluster or {})
    pool = raw["nodePools"][1]
    pool.update(pool_changes)
    if capacity is not None:
        pool["capacity"] = capacity
    # A pool split over several NodePools is bounded by its tasks' GPU quota (capacity_rules).
    raw["resourcePools"][0]["quota"] = {"gpu": 8}
    return make_config(**raw)


def objects_of(cfg, name="a100"):
    args = stack_args.eks_cluster_args(cfg)
    pool = next(p for p in args.node_pools if p.name == name)
    return karpenter_nodes.objects(args, pool, ROLE)


def split(objs):
    node_class, *pools = objs
    assert node_class["kind"] == "EC2NodeClass" and all(p["kind"] == "NodePool" for p in pools)
    return node_class, pools


def requirement(node_pool, key):
    found = [r for r in node_pool["spec"]["template"]["spec"]["requirements"] if r["key"] == key]
    assert len(found) <= 1
    return found[0]["values"] if found else None


SHAPES = {
    "default": None,
    "spot then on-demand": {"types": ["spot", "onDemand"]},
    "on-demand then spot": {"types": ["onDemand", "spot"]},
    "reservation ids": {"types": ["reservation", "onDemand"], "reservation": {"ids": [CR, CR2]}},
    "reservation tags, capacity block": {
        "types": ["reservation"],
        "reservation": {"tags": {"purpose": "training", "team": "ml"}, "capacityBlock": True},
    },
    "reservation, on-demand, spot": {
        "types": ["reservation", "onDemand", "spot"],
        "reservation": {"ids": [CR], "tags": {"team": "ml"}},
    },
    "instance types": {"types": ["spot", "onDemand"], "instanceTypes": ["p4de.24xlarge"]},
}


# --- the CEL rules of the two schemas that these objects could break (tests/crds.py evaluates none) ---
# Each quotes the rule of tests/data/crd-schemas/karpenter.sh_v1_NodePool.json or
# karpenter.k8s.aws_v1_EC2NodeClass.json it stands for.

_LABEL_VALUE = re.compile(r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?")
_KARPENTER_SH_KEYS = ("karpenter.sh/capacity-type", "karpenter.sh/nodepool")
_ALIAS_FAMILIES = ("al2", "al2023", "bottlerocket", "windows2019", "windows2022", "windows2025")
_RESTRICTED_TAGS = ("eks:eks-cluster-name", "karpenter.sh/nodepool", "karpenter.sh/nodeclaim")


def _label_key_problems(key):
    domain = re.match(r"^([^/]+)", key)[0]
    found = []
    # self in ["karpenter.sh/capacity-type", "karpenter.sh/nodepool"] || !self.find("^([^/]+)").endsWith("karpenter.sh")
    if key not in _KARPENTER_SH_KEYS and domain.endswith("karpenter.sh"):
        found.append(f'{key}: label domain "karpenter.sh" is restricted')
    # self != "karpenter.sh/nodepool"; self != "kubernetes.io/hostname"
    if key in ("karpenter.sh/nodepool", "kubernetes.io/hostname"):
        found.append(f"{key}: label is restricted")
    # ... || !self.find("^([^/]+)").endsWith("karpenter.k8s.aws") (the allowed well-known keys: none used here)
    if domain.endswith("karpenter.k8s.aws"):
        found.append(f'{key}: label domain "karpenter.k8s.aws" is restricted')
    return found


def node_pool_cel_problems(obj):
    spec = obj["spec"]
    template = spec["template"]
    found = []
    for key in template.get("metadata", {}).get("labels", {}):
        found += _label_key_problems(key)
    for req in template["spec"]["requirements"]:
        found += _label_key_problems(req["key"])
        values = req.get("values", [])
        # x.operator == 'In' ? x.values.size() != 0 : true
        if req["operator"] == "In" and not values:
            found.append(f"{req['key']}: requirements with operator 'In' must have a value defined")
        # (x.operator == 'In' && has(x.minValues)) ? x.values.size() >= x.minValues : true
        if req["operator"] == "In" and len(values) < req.get("minValues", 0):
            found.append(f"{req['key']}: fewer values than minValues")
        # Gt/Lt/Gte/Lte: one non-negative integer
        if req["operator"] in ("Gt", "Lt", "Gte", "Lte") and not (len(values) == 1 and values[0].isdigit()):
            found.append(f"{req['key']}: needs a single positive integer value")
        # values: items of at most 63 characters matching the label-value pattern
        found += [
            f"{req['key']}: value {v!r}" for v in values if len(v) > 63 or not _LABEL_VALUE.fullmatch(v)
        ]
    ref = template["spec"]["nodeClassRef"]
    # group, kind, name: self != ''
    found += [f"nodeClassRef.{k} may not be empty" for k in ("group", "kind", "name") if not ref.get(k)]
    # budgets: self.all(x, has(x.schedule) == has(x.duration))
    for budget in spec.get("disruption", {}).get("budgets", []):
        if ("schedule" in budget) != ("duration" in budget):
            found.append("'schedule' must be set with 'duration'")
    # static NodePools (replicas): only limits.nodes, no weight
    if "replicas" in spec:
        found.append("a static NodePool (replicas) is not what these pools are")
    return found


def node_class_cel_problems(obj):
    spec = obj["spec"]
    found = []
    terms = spec["amiSelectorTerms"]
    aliases = [t["alias"] for t in terms if "alias" in t]
    for alias in aliases:
        # self.matches('^[a-zA-Z0-9]+@.+$'); self.split('@')[0] in [...]
        if not re.fullmatch(r"[a-zA-Z0-9]+@.+", alias) or alias.split("@")[0] not in _ALIAS_FAMILIES:
            found.append(f"alias {alias!r} is improperly formatted or of an unknown family")
    # !(self.exists(x, has(x.alias)) && self.size() != 1); alias alone in its term
    if aliases and (len(terms) != 1 or len(terms[0]) != 1):
        found.append("'alias' is mutually exclusive")
    # (has(self.role) && !has(self.instanceProfile)) || (!has(self.role) && has(self.instanceProfile))
    if ("role" in spec) == ("instanceProfile" in spec) or spec.get("role") == "":
        found.append("must specify exactly one of ['role', 'instanceProfile']")
    for field, keys in (
        ("subnetSelectorTerms", ("tags", "id")),
        ("securityGroupSelectorTerms", ("tags", "id", "name")),
    ):
        selector = spec[field]
        # self.size() != 0; self.all(x, has(x.tags) || has(x.id) ...); 'id' mutually exclusive
        if not selector or not all(any(k in t for k in keys) for t in selector):
            found.append(f"{field}: a term without tags or id")
        if any("id" in t and len(t) > 1 for t in selector):
            found.append(f"{field}: 'id' is mutually exclusive")
        for term in selector:
            # tags: self.all(k, k != '' && self[k] != '')
            if any(not k or not v for k, v in term.get("tags", {}).items()):
                found.append(f"{field}: empty tag keys or values aren't supported")
    for term in spec.get("capacityReservationSelectorTerms", []):
        # self.all(x, has(x.tags) || has(x.id) || has(x.instanceMatchCriteria))
        if not any(k in term for k in ("tags", "id", "instanceMatchCriteria")):
            found.append("capacityReservationSelectorTerms: a term without tags or id")
        # 'id' is mutually exclusive
        if "id" in term and len(term) > 1:
            found.append("capacityReservationSelectorTerms: 'id' is mutually exclusive")
        if any(not k or not v for k, v in term.get("tags", {}).items()):
            found.append("capacityReservationSelectorTerms: empty tag keys or values aren't supported")
    # rootVolume: at most one
    if sum(1 for m in spec.get("blockDeviceMappings", []) if m.get("rootVolume")) > 1:
        found.append("must have only one blockDeviceMappings with rootVolume")
    for mapping in spec.get("blockDeviceMappings", []):
        # has(self.snapshotID) || has(self.volumeSize)
        if "ebs" in mapping and not ({"snapshotID", "volumeSize"} & set(mapping["ebs"])):
            found.append("snapshotID or volumeSize must be defined")
    for key in spec.get("tags", {}):
        # k != ''; not eks:eks-cluster-name, karpenter.sh/nodepool, ...; !k.startsWith('kubernetes.io/cluster')
        if not key or key in _RESTRICTED_TAGS or key == "karpenter.k8s.aws/ec2nodeclass":
            found.append(f"tag {key!r} is restricted")
        if key.startswith("kubernetes.io/cluster"):
            found.append(f"tag {key!r} is restricted")
    return found


def cel_problems(obj):
    return node_pool_cel_problems(obj) if obj["kind"] == "NodePool" else node_class_cel_problems(obj)


@pytest.mark.parametrize("shape", list(SHAPES))
def test_every_object_conforms_to_its_crd_schema_and_cel_rules(shape):
    objs = objects_of(stack(SHAPES[shape], cluster={"tags": {"cost-center": "ml", "empty": ""}}))
    for obj in objs:
        assert crd_problems(obj) == [], (obj["kind"], crd_problems(obj))
        assert cel_problems(obj) == [], (obj["kind"], cel_problems(obj))


def test_the_cel_checks_catch_what_they_stand_for():
    node_class, (node_pool,) = split(objects_of(stack()))
    bad_pool = copy.deepcopy(node_pool)
    bad_pool["spec"]["template"]["metadata"]["labels"]["karpenter.sh/x"] = "y"
    bad_pool["spec"]["template"]["spec"]["requirements"].append({"key": "a", "operator": "In", "values": []})
    assert len(cel_problems(bad_pool)) == 2
    bad_class = copy.deepcopy(node_class)
    bad_class["spec"]["amiSelectorTerms"] = [{"alias": "al2023@v1"}, {"id": "ami-0123"}]
    bad_class["spec"]["instanceProfile"] = "x"
    bad_class["spec"]["capacityReservationSelectorTerms"] = [{"id": CR, "tags": {"a": "b"}}]
    bad_class["spec"]["tags"] = {"kubernetes.io/cluster/det": "owned"}
    assert len(cel_problems(bad_class)) == 4


def test_the_objects_are_registered_as_custom_resources():
    for obj in objects_of(stack()):
        assert (obj["apiVersion"], obj["kind"]) in _CUSTOM_KINDS


# --- capacity shapes -------------------------------------------------------------------------


def test_one_on_demand_node_pool_by_default_without_weight_or_reservations():
    node_class, (node_pool,) = split(objects_of(stack()))
    assert node_pool["metadata"]["name"] == "a100"
    assert requirement(node_pool, "karpenter.sh/capacity-type") == ["on-demand"]
    assert requirement(node_pool, "node.kubernetes.io/instance-type") == ["p4d.24xlarge"]
    assert "weight" not in node_pool["spec"]
    assert "capacityReservationSelectorTerms" not in node_class["spec"]


def test_spot_falling_back_to_on_demand_is_karpenters_own_order_in_one_node_pool():
    _, (node_pool,) = split(objects_of(stack({"types": ["spot", "onDemand"]})))
    assert requirement(node_pool, "karpenter.sh/capacity-type") == ["spot", "on-demand"]
    assert "weight" not in node_pool["spec"]


def test_legacy_spot_flag_is_one_spot_node_pool():
    _, (node_pool,) = split(objects_of(stack(spot=True)))
    assert requirement(node_pool, "karpenter.sh/capacity-type") == ["spot"]


def test_on_demand_before_spot_is_two_node_pools_weighted_in_the_users_order():
    _, pools = split(objects_of(stack({"types": ["onDemand", "spot"]})))
    assert [p["metadata"]["name"] for p in pools] == ["a100", "a100-spot"]
    assert [requirement(p, "karpenter.sh/capacity-type") for p in pools] == [["on-demand"], ["spot"]]
    weights = [p["spec"]["weight"] for p in pools]
    assert weights == sorted(weights, reverse=True) and len(set(weights)) == 2


def test_reservation_first_then_on_demand_then_spot():
    node_class, pools = split(objects_of(stack(SHAPES["reservation, on-demand, spot"])))
    assert [p["metadata"]["name"] for p in pools] == ["a100", "a100-spot"]
    assert [requirement(p, "karpenter.sh/capacity-type") for p in pools] == [
        ["reserved", "on-demand"],
        ["spot"],
    ]
    assert node_class["spec"]["capacityReservationSelectorTerms"] == [{"id": CR}, {"tags": {"team": "ml"}}]


def test_reservations_by_id():
    node_class, (node_pool,) = split(objects_of(stack(SHAPES["reservation ids"])))
    assert node_class["spec"]["capacityReservationSelectorTerms"] == [{"id": CR}, {"id": CR2}]
    assert requirement(node_pool, "karpenter.sh/capacity-type") == ["reserved", "on-demand"]


def test_capacity_blocks_by_tags_are_reserved_capacity_only():
    node_class, (node_pool,) = split(objects_of(stack(SHAPES["reservation tags, capacity block"])))
    assert node_class["spec"]["capacityReservationSelectorTerms"] == [
        {"tags": {"purpose": "training", "team": "ml"}}
    ]
    assert requirement(node_pool, "karpenter.sh/capacity-type") == ["reserved"]


def test_instance_types_are_alternatives_each_carrying_the_pools_gpus():
    _, (node_pool,) = split(objects_of(stack(SHAPES["instance types"])))
    types = requirement(node_pool, "node.kubernetes.io/instance-type")
    assert types == ["p4d.24xlarge", "p4de.24xlarge"]
    for instance_type in types:
        assert eks_instances.gpu_count(instance_type) == 8
        assert eks_instances.accelerator(instance_type) in ("nvidia-tesla-a100", "nvidia-a100-80gb")


def test_zones_of_the_pool_become_a_requirement():
    _, (node_pool,) = split(objects_of(stack(zones=["us-east-1a", "us-east-1b"])))
    assert requirement(node_pool, "topology.kubernetes.io/zone") == ["us-east-1a", "us-east-1b"]
    _, (unzoned,) = split(objects_of(stack()))
    assert requirement(unzoned, "topology.kubernetes.io/zone") is None


# --- placement: the pool's tasks land on nodes these NodePools make ----------------------------


def tolerated(taint, tolerations):
    return any(
        t.get("key") == taint["key"]
        and t.get("effect") in (None, taint["effect"])
        and (t.get("operator") == "Exists" or t.get("value", "") == taint.get("value", ""))
        for t in tolerations
    )


@pytest.mark.parametrize("shape", ["default", "on-demand then spot", "reservation, on-demand, spot"])
@pytest.mark.parametrize(("resource_pool", "node_pool_name"), [("a100", "a100"), ("cpu", "cpu")])
def test_task_pods_select_the_labels_and_tolerate_the_taints_of_every_node_pool(
    shape, resource_pool, node_pool_name
):
    raw = copy.deepcopy(KARPENTER)
    if SHAPES[shape]:
        raw["nodePools"][1]["capacity"] = SHAPES[shape]
    raw["nodePools"].append(
        {
            "name": "cpu",
            "machineType": "c7i.4xlarge",
            "labels": {"team": "etl"},
            "maxNodes": 4,
            "taints": [{"key": "dedicated", "value": "etl", "effect": "NoSchedule"}],
        }
    )
    raw["resourcePools"] = [*raw["resourcePools"], {"name": "cpu", "nodePool": "cpu"}]
    raw["resourcePools"][0]["quota"] = {"gpu": 8}  # split pools are bounded by it
    cfg = make_config(**raw)
    rp = next(r for r in cfg.resource_pools if r.name == resource_pool)
    specs = resource_pools.pool_pod_specs(cfg, rp)
    _, pools = split(objects_of(cfg, node_pool_name))
    for node_pool in pools:
        template = node_pool["spec"]["template"]
        taints = template["spec"].get("taints", [])
        assert taints, "both pools are tainted"
        for pod in specs.values():
            spec = pod["spec"]
            assert spec["nodeSelector"].items() <= template["metadata"]["labels"].items()
            assert all(tolerated(taint, spec["tolerations"]) for taint in taints)
            # Karpenter never moves a running task by its own choice (the module's docstring).
            assert pod["metadata"]["annotations"]["karpenter.sh/do-not-disrupt"] == "true"


def test_gpu_nodes_are_labelled_for_the_device_plugin_and_tainted_for_gpu_tasks():
    _, (node_pool,) = split(objects_of(stack()))
    template = node_pool["spec"]["template"]
    assert template["metadata"]["labels"] == {
        "determined.ai/node-pool": "a100",
        "nvidia.com/gpu.present": "true",
    }
    assert template["spec"]["taints"] == [
        {"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}
    ]


def test_every_instance_type_of_a_gpu_pool_carries_the_gpus_its_tasks_ask_for():
    cfg = stack(SHAPES["instance types"])
    gpu = cfg.node_pools[1].gpu
    for node_pool in split(objects_of(cfg))[1]:
        for instance_type in requirement(node_pool, "node.kubernetes.io/instance-type"):
            assert eks_instances.gpu_count(instance_type) == gpu.count


# --- limits, disruption, AMI, node class -----------------------------------------------------


@pytest.mark.parametrize("shape", ["default", "on-demand then spot", "reservation, on-demand, spot"])
def test_every_node_pool_is_limited_to_max_nodes_and_their_gpus(shape):
    _, pools = split(objects_of(stack(SHAPES[shape], maxNodes=3)))
    for node_pool in pools:
        assert node_pool["spec"]["limits"] == {"nodes": "3", "nvidia.com/gpu": "24"}


def test_a_cpu_pool_is_limited_by_nodes():
    cfg = make_config(
        **KARPENTER
        | {
            "nodePools": [
                *KARPENTER["nodePools"],
                {"name": "cpu", "machineType": "c7i.4xlarge", "maxNodes": 5},
            ]
        }
    )
    _, (node_pool,) = split(objects_of(cfg, "cpu"))
    assert node_pool["spec"]["limits"] == {"nodes": "5"}
    assert "taints" not in node_pool["spec"]["template"]["spec"]
    assert node_pool["spec"]["template"]["metadata"]["labels"] == {"determined.ai/node-pool": "cpu"}


def test_disruption_consolidates_idle_nodes_and_expires_without_forcing_running_tasks():
    _, (node_pool,) = split(objects_of(stack()))
    spec = node_pool["spec"]
    assert spec["disruption"] == {
        "consolidationPolicy": "WhenEmptyOrUnderutilized",
        "consolidateAfter": "10m",
        "budgets": [{"nodes": "10%"}],
    }
    assert spec["template"]["spec"]["expireAfter"] == "Never"
    # A terminationGracePeriod would let drift and expiry delete do-not-disrupt task pods.
    assert "terminationGracePeriod" not in spec["template"]["spec"]
    assert resource_pools.NO_DISRUPTION["karpenter.sh/do-not-disrupt"] == "true"


def test_the_ami_is_a_pinned_al2023_alias_released_for_every_offered_kubernetes_version():
    node_class, _ = split(objects_of(stack()))
    assert node_class["spec"]["amiSelectorTerms"] == [{"alias": "al2023@v20260714"}]
    assert "latest" not in karpenter_nodes.AMI_ALIAS
    assert set(versions.EKS_VERSIONS) <= set(karpenter_nodes.AMI_KUBERNETES_MINORS)


def test_node_class_root_volume_metadata_role_network_and_tags():
    cfg = stack(diskSizeGb=500, cluster={"tags": {"cost-center": "ml"}})
    node_class, (node_pool,) = split(objects_of(cfg))
    spec = node_class["spec"]
    assert spec["role"] == ROLE
    assert spec["blockDeviceMappings"] == [
        {
            "deviceName": "/dev/xvda",
            "rootVolume": True,
            "ebs": {
                "volumeSize": "500Gi",
                "volumeType": "gp3",
                "encrypted": True,
                "deleteOnTermination": True,
            },
        }
    ]
    assert spec["metadataOptions"]["httpTokens"] == "required"
    assert spec["metadataOptions"]["httpPutResponseHopLimit"] == 1
    assert spec["tags"] == {"cost-center": "ml"}
    assert spec["subnetSelectorTerms"] == [{"tags": {"karpenter.sh/discovery": "det"}}]
    assert spec["securityGroupSelectorTerms"] == [{"tags": {"karpenter.sh/discovery": "det"}}]
    ref = node_pool["spec"]["template"]["spec"]["nodeClassRef"]
    assert ref == {
        "group": "karpenter.k8s.aws",
        "kind": "EC2NodeClass",
        "name": node_class["metadata"]["name"],
    }
    assert node_class["apiVersion"] == f"{ref['group']}/v1"


# --- names ----------------------------------------------------------------------------------


@pytest.mark.parametrize("shape", list(SHAPES))
def test_names_are_dns_labels_and_unique_per_kind(shape):
    name = "a" * 50
    raw = copy.deepcopy(KARPENTER)
    raw["nodePools"][1] = {**raw["nodePools"][1], "name": name}
    if SHAPES[shape]:
        raw["nodePools"][1]["capacity"] = SHAPES[shape]
    raw["resourcePools"][0]["nodePool"] = name
    raw["resourcePools"][0]["quota"] = {"gpu": 8}  # split pools are bounded by it
    objs = objects_of(make_config(**raw), name)
    for obj in objs:
        assert re.fullmatch(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?", obj["metadata"]["name"])
        assert len(obj["metadata"]["name"]) <= 63
    node_pool_names = [o["metadata"]["name"] for o in objs if o["kind"] == "NodePool"]
    assert len(set(node_pool_names)) == len(node_pool_names)
    assert node_pool_names == karpenter_nodes.node_pool_names(make_config(**raw).node_pools[1])
