"""GKE node pools with a GPU fabric (tcpxo, rdma), local SSDs and image streaming: the fabric
VPCs and their names, the node pools' extra networks, gVNIC and compact single-zone placement,
multi-networking on the cluster, the GKENetworkParamSet/Network objects task pods attach by
name (gke_machines.fabric_networks), Google's NCCL installers on the fabric pools only, and
pools without any of it keeping the arguments they had."""

from __future__ import annotations

import copy
import functools
import json

import pytest
from conftest import GKE, MEGA_POOL, ULTRA_POOL
from crds import crd_problems
from planning import by_kind, of_type, plan_for

import stack_args
from components import constants, names
from components.cluster.gke import cluster as gke_cluster
from components.cluster.gke import fabric, node_pools
from components.config import gke_machines, load_config
from components.kube import validation
from plan import cloud_check

SYSTEM = {"name": "system", "machineType": "e2-standard-8"}
MEGA = {
    **MEGA_POOL,
    "gpu": {"type": "h100", "count": 8},
    "taints": [{"key": "team", "value": "llm", "effect": "NoSchedule"}],
}
ULTRA = {key: value for key, value in ULTRA_POOL.items() if key != "zones"}
A4 = {**ULTRA, "name": "b200", "machineType": "a4-highgpu-8g", "gpu": {"type": "b200", "count": 8}}


def gke(*pools, **cluster):
    raw = copy.deepcopy(GKE)
    raw["cluster"] = {**raw["cluster"], **cluster}
    raw["nodePools"] = [SYSTEM, *copy.deepcopy(list(pools))]
    raw["resourcePools"] = [
        *({"name": p["name"], "nodePool": p["name"]} for p in pools if p.get("gpu")),
        {"name": "aux", "nodePool": "system"},
    ]
    if any(not p.get("gpu") for p in pools):
        raw["slots"] = {"maxSlotsPerPod": 1}
    return raw


def cluster_args(raw):
    return stack_args.gke_cluster_args(load_config(raw))


def args_of(raw, name):
    args = cluster_args(raw)
    pool = next(p for p in args.node_pools if p.name == name)
    return node_pools.node_pool_args(args, pool, "cluster-id", "nodes@p.iam.gserviceaccount.com")


@functools.cache
def fabric_plan(stack: str = "test"):
    return plan_for(gke(MEGA, ULTRA, A4), stack=stack)


def inputs(result, type_suffix):
    return {r["name"]: r["inputs"] for r in of_type(result, type_suffix)}


# --- what task pods attach ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("machine_type", "kind", "expected"),
    [
        ("a3-megagpu-8g", "tcpxo", [f"vpc{i}" for i in range(1, 9)]),
        ("a3-ultragpu-8g", "rdma", [f"rdma-{i}" for i in range(8)]),
        ("a4-highgpu-8g", "rdma", [f"rdma-{i}" for i in range(8)]),
    ],
)
def test_task_pods_name_networks_the_cluster_has_with_the_vpcs_the_nodes_have(machine_type, kind, expected):
    # The annotation's names are Network objects of the plan, each pointing (through its
    # parameter set) at a VPC and subnet the plan creates and the fabric pools' nodes attach.
    result = fabric_plan()
    assert gke_machines.fabric_networks(machine_type, kind) == expected
    networks = {m["metadata"]["name"]: m for m in by_kind(result, "Network")}
    params = {m["metadata"]["name"]: m for m in by_kind(result, "GKENetworkParamSet")}
    vpcs = {i["name"] for i in inputs(result, "compute/network:Network").values()}
    subnets = {i["name"]: i for i in inputs(result, "compute/subnetwork:Subnetwork").values()}
    pool = {"tcpxo": "mega", "rdma": "ultra"}[kind]
    attached = inputs(result, "container/nodePool:NodePool")[pool]["networkConfig"][
        "additionalNodeNetworkConfigs"
    ]
    for name in expected:
        assert networks[name]["spec"]["type"] == "Device"
        assert networks[name]["spec"]["parametersRef"] == {
            "group": "networking.gke.io",
            "kind": "GKENetworkParamSet",
            "name": name,
        }
        spec = params[name]["spec"]
        assert spec["deviceMode"] == ("NetDevice" if kind == "tcpxo" else "RDMA")
        assert spec["vpc"] in vpcs and spec["vpcSubnet"] in subnets
        assert {"network": spec["vpc"], "subnetwork": spec["vpcSubnet"]} in attached


def test_fabric_networks_refuses_a_machine_without_the_fabric():
    with pytest.raises(ValueError, match="has no tcpxo"):
        gke_machines.fabric_networks("a3-highgpu-8g", "tcpxo")


def test_network_objects_match_their_crd_schemas_and_daemonsets_the_kubernetes_schema():
    result = fabric_plan()
    custom = by_kind(result, "Network") + by_kind(result, "GKENetworkParamSet")
    assert len(custom) == 2 * (8 + 9)  # tcpxo: 8 networks; rdma: the second gVNIC and 8 RoCE
    for obj in custom:
        assert crd_problems(obj) == [], obj["metadata"]["name"]
        assert "namespace" not in obj["metadata"]  # cluster-scoped kinds
    for obj in by_kind(result, "DaemonSet"):
        assert list(validation.problems(obj)) == [], obj["metadata"]["name"]
    # The schemas do bite: a device mode GKE does not know is refused.
    bad = copy.deepcopy(by_kind(result, "GKENetworkParamSet")[0])
    bad["spec"]["deviceMode"] = "SRIOV"
    assert crd_problems(bad)


# --- cloud resources ---------------------------------------------------------------------------


def test_fabric_vpcs_carry_the_fabric_mtu_and_the_roce_vpc_its_zone_profile():
    networks = inputs(fabric_plan(), "compute/network:Network")
    mega = [i for n, i in networks.items() if n.startswith("fabric-tcpxo-")]
    assert len(mega) == 8 and {i["mtu"] for i in mega} == {8244}
    assert (
        networks["fabric-rdma-gvnic"]["mtu"] == 8896 and "networkProfile" not in networks["fabric-rdma-gvnic"]
    )
    roce = networks["fabric-rdma-roce"]
    assert roce["mtu"] == 8896
    assert roce["networkProfile"] == "projects/p/global/networkProfiles/us-central1-b-vpc-roce"
    for i in networks.values():
        assert i["autoCreateSubnetworks"] is False


def test_subnets_do_not_overlap_and_firewalls_admit_only_the_fabric_ranges():
    import ipaddress

    result = fabric_plan()
    subnets = inputs(result, "compute/subnetwork:Subnetwork")
    fabric_ranges = [
        ipaddress.ip_network(i["ipCidrRange"]) for n, i in subnets.items() if n.startswith("fabric-")
    ]
    assert len(fabric_ranges) == 8 + 1 + 8
    tcpxo = fabric_ranges[:0] + [
        ipaddress.ip_network(i["ipCidrRange"]) for n, i in subnets.items() if n.startswith("fabric-tcpxo-")
    ]
    rdma = [
        ipaddress.ip_network(i["ipCidrRange"]) for n, i in subnets.items() if n.startswith("fabric-rdma-")
    ]
    for group in (tcpxo, rdma):  # one node's NICs: ranges apart
        for a, first in enumerate(group):
            assert not any(first.overlaps(other) for other in group[a + 1 :])
    nodes = ipaddress.ip_network(subnets["nodes"]["ipCidrRange"])
    assert not any(r.overlaps(nodes) for r in fabric_ranges)
    firewalls = inputs(result, "compute/firewall:Firewall")
    fabric_rules = {n: i for n, i in firewalls.items() if n.startswith("fabric-")}
    # Eight TCPXO VPCs and the RDMA gVNIC VPC; none on the RoCE VPC (cluster-toolkit sets none).
    assert len(fabric_rules) == 9 and "fabric-rdma-roce-internal" not in fabric_rules
    for rule in fabric_rules.values():
        assert rule["direction"] == "INGRESS"
        assert all(
            ipaddress.ip_network(r).subnet_of(ipaddress.ip_network("192.168.0.0/16"))
            for r in rule["sourceRanges"]
        )


def test_every_fabric_name_passes_the_cloud_rules_and_fixed_names_stay_fixed():
    # As tests/invariants/test_cloud_names.py asks of every stack (no stack has a fabric pool).
    result = fabric_plan()
    assert cloud_check.problems(result.resources) == []
    for res in result.resources:
        for rule in names.rules_for(res["type"]):
            if rule.kept and rule.prop in res["inputs"]:
                assert rule.prop in res["options"].get("ignoreChanges", []), res["urn"]


def test_project_wide_fabric_names_differ_between_two_stacks_of_one_project():
    def project_names(result):
        found = set()
        for suffix in ("compute/network:Network", "compute/firewall:Firewall"):
            found |= {i["name"] for n, i in inputs(result, suffix).items() if n.startswith("fabric-")}
        return found

    one, two = project_names(fabric_plan("one")), project_names(fabric_plan("two"))
    assert len(one) == 8 + 2 + 9 and not one & two


# --- node pools ----------------------------------------------------------------------------------


def test_a_tcpxo_pool_gets_eight_networks_gvnic_and_compact_placement_in_one_zone():
    args = args_of(gke(MEGA), "mega")
    configs = args["network_config"]["additional_node_network_configs"]
    assert [c["subnetwork"] for c in configs] == [f"det-tcpxo-{i}" for i in range(1, 9)]
    assert args["network_config"]["enable_private_nodes"] is False  # kept beside them
    assert args["node_config"]["gvnic"] == {"enabled": True}
    assert args["placement_policy"] == {"type": "COMPACT"}
    assert args["node_locations"] == ["us-central1-a"]


def test_an_rdma_pool_lists_its_second_gvnic_then_the_eight_roce_subnets():
    args = args_of(gke(ULTRA), "ultra")
    subnets = [c["subnetwork"] for c in args["network_config"]["additional_node_network_configs"]]
    assert subnets == ["det-rdma-gvnic", *(f"det-rdma-roce-{i}" for i in range(8))]
    assert args["node_locations"] == ["us-central1-b"]  # the one zone that offers H200 there


def test_a_queued_fabric_pool_is_not_placed_compactly():
    queued = {**ULTRA, "spot": False, "capacity": {"types": ["flexStart"], "queued": True}}
    args = args_of({**gke(queued), "scheduler": "kueue"}, "ultra")
    assert "placement_policy" not in args
    assert args["network_config"]["additional_node_network_configs"]


def test_multi_networking_is_on_only_with_a_fabric_pool():
    def cluster(raw):
        return gke_cluster.cluster_args(cluster_args(raw), "p", fabric_net(), "nodes@p")

    assert cluster(gke(MEGA))["enable_multi_networking"] is True
    a100 = {"name": "a100", "machineType": "a2-highgpu-4g", "gpu": {"type": "a100", "count": 4}}
    assert "enable_multi_networking" not in cluster(gke(a100))


def fabric_net():
    from components.cluster.gke.network import Network

    return Network("net", "subnet", "pods", "services", [])


def test_fabric_node_pools_wait_for_the_fabric_subnets():
    result = fabric_plan()
    pools = {r["name"]: r for r in of_type(result, "container/nodePool:NodePool")}
    subnets = {
        r["urn"] for r in of_type(result, "compute/subnetwork:Subnetwork") if r["name"].startswith("fabric-")
    }
    assert subnets <= set(pools["mega"]["dependsOn"]) and subnets <= set(pools["b200"]["dependsOn"])
    assert not subnets & set(pools["system"]["dependsOn"])


# --- installers ----------------------------------------------------------------------------------


def test_installers_run_on_the_fabric_pools_only_and_tolerate_their_taints():
    result = fabric_plan()
    daemonsets = {m["metadata"]["name"]: m for m in by_kind(result, "DaemonSet")}
    expected = {
        "nccl-tcpxo-installer": ["mega"],
        "device-injector": ["mega"],
        "nccl-rdma-installer": ["ultra", "b200"],
    }
    for name, pools in expected.items():
        spec = daemonsets[name]["spec"]["template"]["spec"]
        (term,) = spec["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][
            "nodeSelectorTerms"
        ]
        assert term["matchExpressions"] == [
            {"key": "determined.ai/node-pool", "operator": "In", "values": pools}
        ]
        assert {
            "key": "nvidia.com/gpu",
            "operator": "Equal",
            "value": "present",
            "effect": "NoSchedule",
        } in spec["tolerations"]
        assert {"operator": "Exists"} not in spec["tolerations"]
        assert daemonsets[name]["metadata"]["namespace"] == "kube-system"
    assert set(daemonsets) >= set(fabric.NODE_AGENTS) == set(expected)  # each with why it is privileged
    # The policy pack (which imports only leaf modules) exempts them by these names.
    assert set(constants.GKE_FABRIC_NODE_AGENTS) == set(fabric.NODE_AGENTS)
    tcpxo = daemonsets["nccl-tcpxo-installer"]["spec"]["template"]["spec"]["tolerations"]
    assert {"key": "team", "operator": "Equal", "value": "llm", "effect": "NoSchedule"} in tcpxo


def test_installers_on_a_queued_pool_tolerate_the_taint_gke_puts_on_its_nodes():
    queued = {**ULTRA, "spot": False, "capacity": {"types": ["flexStart"], "queued": True}}
    (installer,) = fabric.cluster_objects(cluster_args({**gke(queued), "scheduler": "kueue"}))[-1:]
    tolerations = installer["spec"]["template"]["spec"]["tolerations"]
    assert {
        "key": "cloud.google.com/gke-queued",
        "operator": "Equal",
        "value": "true",
        "effect": "NoSchedule",
    } in (tolerations)


def test_installer_images_are_pinned():
    result = fabric_plan()
    images = [
        c["image"]
        for m in by_kind(result, "DaemonSet")
        if m["metadata"]["name"] in (fabric.TCPXO_INSTALLER, fabric.NRI_INJECTOR, fabric.RDMA_INSTALLER)
        for key in ("initContainers", "containers")
        for c in m["spec"]["template"]["spec"].get(key, [])
    ]
    assert fabric.TCPXO_INSTALLER_IMAGE in images and fabric.RDMA_INSTALLER_IMAGE in images
    for image in images:
        name = image.split("@")[0].rsplit("/", 1)[-1]
        assert "@sha256:" in image or (":" in name and not name.endswith(":latest")), image


def test_without_fabric_pools_no_fabric_objects_or_networks():
    result = plan_for(
        gke({"name": "a100", "machineType": "a2-highgpu-4g", "gpu": {"type": "a100", "count": 4}})
    )
    assert not by_kind(result, "Network") and not by_kind(result, "GKENetworkParamSet")
    assert not [
        m for m in by_kind(result, "DaemonSet") if m["metadata"]["name"].startswith(("nccl-", "device-"))
    ]
    assert not [r for r in of_type(result, "compute/network:Network") if r["name"].startswith("fabric-")]


# --- local SSDs and image streaming ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("pool", "count"),
    [
        ({**MEGA, "localNvme": {}}, 0),  # the machine's own 16
        (
            {
                "name": "l4",
                "machineType": "g2-standard-8",
                "gpu": {"type": "l4", "count": 1},
                "localNvme": {"count": 1},
            },
            1,
        ),
    ],
)
def test_local_nvme_becomes_ephemeral_local_ssd_storage(pool, count):
    args = args_of(gke(pool), pool["name"])
    assert args["node_config"]["ephemeral_storage_local_ssd_config"] == {"local_ssd_count": count}


@pytest.mark.parametrize(
    ("pool", "expected"),
    [
        (
            {"name": "a100", "machineType": "a2-highgpu-4g", "gpu": {"type": "a100", "count": 4}},
            {"enabled": True},
        ),
        (
            {
                "name": "a100",
                "machineType": "a2-highgpu-4g",
                "gpu": {"type": "a100", "count": 4},
                "fastImagePulls": False,
            },
            {"enabled": False},
        ),
        ({"name": "cpu", "machineType": "n2-standard-8"}, None),
        ({"name": "cpu", "machineType": "n2-standard-8", "fastImagePulls": True}, {"enabled": True}),
        (
            {
                "name": "a100",
                "machineType": "a2-highgpu-4g",
                "gpu": {"type": "a100", "count": 4},
                "imageType": "UBUNTU_CONTAINERD",
            },
            None,
        ),
    ],
)
def test_gpu_pools_on_cos_stream_images_by_default(pool, expected):
    assert args_of(gke(pool), pool["name"])["node_config"].get("gcfs_config") == expected


# --- pools without any of it ---------------------------------------------------------------------

_SCOPES = [
    "https://www.googleapis.com/auth/devstorage.read_only",
    "https://www.googleapis.com/auth/logging.write",
    "https://www.googleapis.com/auth/monitoring",
    "https://www.googleapis.com/auth/service.management.readonly",
    "https://www.googleapis.com/auth/servicecontrol",
    "https://www.googleapis.com/auth/trace.append",
]


def _before(name, machine_type, zones, taints, extra_node_config=None, extra=None):
    """node_pool_args of the GKE test stack's pools as they were before fabric, local SSDs and
    image streaming (printed from the code at 9cdd6b1)."""
    node_config = {
        "machine_type": machine_type,
        "image_type": "COS_CONTAINERD",
        "disk_size_gb": 100,
        "disk_type": "pd-balanced",
        "labels": {"determined.ai/node-pool": name},
        "taints": taints,
        "spot": False,
        "service_account": "nodes@p.iam.gserviceaccount.com",
        "oauth_scopes": _SCOPES,
        "workload_metadata_config": {"mode": "GKE_METADATA"},
        "shielded_instance_config": {"enable_secure_boot": True, "enable_integrity_monitoring": True},
        "metadata": {"disable-legacy-endpoints": "true"},
        "resource_labels": {},
        **(extra_node_config or {}),
    }
    return {
        "name": name,
        "cluster": "cluster-id",
        "location": "us-central1",
        "node_locations": zones,
        "initial_node_count": 0,
        "autoscaling": {"total_min_node_count": 0, "total_max_node_count": 1, "location_policy": "BALANCED"},
        "management": {"auto_repair": True, "auto_upgrade": True},
        "network_config": {"enable_private_nodes": False},
        "node_config": node_config,
        **(extra or {}),
    }


def test_pools_without_these_keys_keep_their_node_pool_args():
    # A CPU pool: unchanged. A GPU pool on COS: unchanged but for image streaming, which GKE
    # turns on in place (gcfs_config is not ForceNew: node_pools.image_streaming_config).
    system = _before("system", "e2-standard-8", None, [])
    assert args_of(GKE, "system") == system
    gpu_taint = [{"key": "nvidia.com/gpu", "value": "present", "effect": "NO_SCHEDULE"}]
    accelerator = [
        {
            "type": "nvidia-tesla-a100",
            "count": 4,
            "gpu_driver_installation_config": {"gpu_driver_version": "DEFAULT"},
        }
    ]
    a100 = _before(
        "a100",
        "a2-highgpu-4g",
        ["us-central1-a", "us-central1-b", "us-central1-c", "us-central1-f"],
        gpu_taint,
        {"guest_accelerators": accelerator},
        {"upgrade_settings": {"strategy": "SURGE", "max_surge": 0, "max_unavailable": 1}},
    )
    streamed = args_of(GKE, "a100")
    assert streamed["node_config"].pop("gcfs_config") == {"enabled": True}
    assert streamed == a100
    assert json.dumps(streamed, sort_keys=True) == json.dumps(a100, sort_keys=True)


# --- review 26 (gke): placement, local SSD counts, streaming role, ranges beside the fabric ----


def test_compact_placement_only_on_tcpxo_and_not_on_a_specific_reservation():
    # A3 Ultra / A4 are not among compact placement's documented machines.
    assert "placement_policy" not in args_of(gke(ULTRA), "ultra")
    assert "placement_policy" not in args_of(gke(A4), "b200")
    reserved = {
        **MEGA,
        "capacity": {
            "types": ["reservation"],
            "reservation": {"name": "a3mega-block-1", "zone": "us-central1-a"},
        },
    }
    built = args_of(gke(reserved), "mega")
    assert built["node_config"]["reservation_affinity"]["consume_reservation_type"] == "SPECIFIC_RESERVATION"
    assert "placement_policy" not in built
    assert args_of(gke(MEGA), "mega")["placement_policy"] == {"type": "COMPACT"}


@pytest.mark.parametrize(
    ("machine_type", "gpu", "count"),
    [("a2-ultragpu-8g", "a100-80gb", 8), ("a2-ultragpu-2g", "a100-80gb", 2)],
)
def test_a2_ultra_local_ssds_are_sent_as_their_number_not_0(machine_type, gpu, count):
    # Pre-Gen3: 0 would mean "disable using local SSDs as ephemeral storage".
    pool = {
        "name": "a2u",
        "machineType": machine_type,
        "gpu": {"type": gpu, "count": int(machine_type[-2])},
        "localNvme": {},
    }
    built = args_of(gke(pool), "a2u")
    assert built["node_config"]["ephemeral_storage_local_ssd_config"] == {"local_ssd_count": count}


def test_the_node_account_may_use_services_when_a_pool_streams_images():
    a100 = {"name": "a100", "machineType": "a2-highgpu-4g", "gpu": {"type": "a100", "count": 4}}
    assert node_pools.STREAMING_ROLE in node_pools.node_roles(cluster_args(gke(a100)))
    quiet = {**a100, "fastImagePulls": False}
    assert node_pools.STREAMING_ROLE not in node_pools.node_roles(cluster_args(gke(quiet)))


def test_ranges_google_would_pick_are_kept_out_of_the_fabric_range():
    import ipaddress

    from components.cluster.gke import network as gke_network
    from components.cluster.gke import shared_filesystems as gke_fs

    raw = gke(MEGA)
    raw["sharedFilesystems"] = [
        {"name": "home", "kind": "filestore", "tier": "BASIC_HDD", "zone": "us-central1-a"},
        {"name": "ent", "kind": "filestore", "tier": "ENTERPRISE"},
        {"name": "scratch", "kind": "managedLustre", "zone": "us-central1-a"},
    ]
    args = cluster_args(raw)
    fabric_range = ipaddress.ip_network(gke_machines.FABRIC_RANGE)
    taken = [ipaddress.ip_network(c) for c in ("10.10.0.0/20", "10.32.0.0/14", "10.36.0.0/20")]
    lustre = gke_network.lustre_range_args(args, "net")
    sql = gke_network.sql_range_args(args, "net")
    ranges = [
        ipaddress.ip_network(f"{lustre['address']}/{lustre['prefix_length']}"),
        ipaddress.ip_network(f"{sql['address']}/{sql['prefix_length']}"),
    ]
    by_fs = {fs.name: fs for fs in args.shared_filesystems}
    for name, prefix in (("home", 29), ("ent", 26)):
        reserved = gke_fs.filestore_network(args, "p", "net", by_fs[name])["reserved_ip_range"]
        assert reserved.endswith(f"/{prefix}")
        ranges.append(ipaddress.ip_network(reserved))
    for i, one in enumerate(ranges):
        assert not one.overlaps(fabric_range) and not any(one.overlaps(t) for t in taken)
        assert not any(one.overlaps(other) for other in ranges[i + 1 :])
    # Removing another Filestore does not move this one's range (ForceNew on the instance).
    alone = cluster_args({**raw, "sharedFilesystems": [raw["sharedFilesystems"][1]]})
    ent = next(fs for fs in alone.shared_filesystems if fs.name == "ent")
    assert gke_fs.filestore_network(alone, "p", "net", ent)["reserved_ip_range"] == str(ranges[3])
    # No fabric pool: Google picks, as before.
    plain = cluster_args({**raw, "nodePools": [SYSTEM, {**MEGA, "fabric": None}]})
    assert "address" not in gke_network.lustre_range_args(plain, "net")
    assert "reserved_ip_range" not in gke_fs.filestore_network(plain, "p", "net", by_fs["home"])


def test_a_first_fabric_pool_replaces_no_range_in_use():
    # A stack made without a fabric pool has ranges Google chose; adding one pins new ranges,
    # which must not replace a global address or a Filestore instance in use: each range is
    # fixed at creation (ignoreChanges), as name_kept does for names.
    raw = gke(MEGA)
    home = {"name": "home", "kind": "filestore", "tier": "BASIC_HDD", "zone": "us-central1-a"}
    lustre = {"name": "scratch", "kind": "managedLustre", "zone": "us-central1-a"}
    with_sql = {
        **raw,
        "database": {"mode": "managed", "tier": "db-custom-2-8192"},
        "sharedFilesystems": [home],
    }
    with_lustre = {**raw, "sharedFilesystems": [home, lustre]}
    kept = [
        ("sql", "compute/globalAddress:GlobalAddress", "sql-range", "address"),
        ("lustre", "compute/globalAddress:GlobalAddress", "lustre-range", "address"),
        ("lustre", "filestore/instance:Instance", "fs-home", "networks[0].reservedIpRange"),
    ]
    plans = {
        "sql": plan_for(with_sql, stack="ranges-kept-sql"),
        "lustre": plan_for(with_lustre, stack="ranges-kept-lustre"),
    }
    for plan, kind, name, path in kept:
        (found,) = [r for r in of_type(plans[plan], kind) if r["name"] == name]
        assert path in found["options"].get("ignoreChanges", []), name
