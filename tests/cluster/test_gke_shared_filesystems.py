"""GKE shared filesystems (sharedFilesystems of kinds filestore, gcsFuse, managedLustre): what
the cluster component creates for each, kept and protected like every data holder, placed in
the zone of the pools that mount it, reachable from the nodes only, and handed to the app as
volumes whose sources point at what was created."""

from __future__ import annotations

import copy
import functools

import pytest
import yaml
from conftest import ROOT
from planning import of_type, plan_for, resource

import stack_args
from components import names
from components.cluster.gke import filesystem_addons
from components.cluster.gke import network as gke_network
from components.cluster.gke import shared_filesystems as gke_fs
from components.config import gcs_fuse, load_config
from components.config.errors import ConfigError

STACKS = ROOT / "stacks"
FIXTURES = ROOT / "tests" / "fixtures" / "stacks"

FILESYSTEMS = [
    {"name": "datasets", "kind": "filestore", "resourcePools": ["l4"], "readOnly": True},
    {"name": "hub", "kind": "gcsFuse", "onlyDir": "models/"},
    {"name": "refs", "kind": "gcsFuse", "bucket": "team-refs", "readOnly": True},
    {"name": "scratch", "kind": "managedLustre", "resourcePools": ["l4"]},
]


def _raw(path) -> dict:
    raw = yaml.safe_load(path.read_text())["config"]
    return {key.split(":", 1)[1]: value for key, value in raw.items()}


def gke_dev(**changes) -> dict:
    raw = copy.deepcopy(_raw(STACKS / "Pulumi.gke-dev.yaml"))
    raw["sharedFilesystems"] = copy.deepcopy(FILESYSTEMS)
    raw.update(changes)
    return raw


@functools.cache
def dev():
    return plan_for(gke_dev(), stack="fs-dev")


@functools.cache
def prod():
    return plan_for(gke_dev(environment="prod"), stack="fs-prod")


@functools.cache
def shared_vpc():
    """An existing network, checkpoints on S3 (no checkpoint bucket identity), Cloud SQL."""
    raw = copy.deepcopy(_raw(FIXTURES / "Pulumi.gke-shared-vpc.yaml"))
    raw["sharedFilesystems"] = [
        {"name": "datasets", "kind": "filestore", "tier": "REGIONAL"},
        {"name": "hub", "kind": "gcsFuse", "resourcePools": ["a100"]},
        {"name": "scratch", "kind": "managedLustre", "resourcePools": ["a100"]},
    ]
    return raw, plan_for(raw, stack="fs-shared")


def inputs(result, type_suffix: str, name: str) -> dict:
    return resource(result, type_suffix, name)["inputs"]


def options(result, type_suffix: str, name: str) -> dict:
    return resource(result, type_suffix, name).get("options", {})


def volume_of(result, claim_namespace: str, fs: str) -> dict:
    return inputs(result, "core/v1:PersistentVolume", f"shared-{fs}.{claim_namespace}")["spec"]


# --- Filestore ----------------------------------------------------------------------------


def test_filestore_sits_in_the_zone_of_the_pools_that_mount_it_and_serves_nfs_4_1():
    args = stack_args.gke_cluster_args(load_config(gke_dev()))
    instance = inputs(dev(), "filestore/instance:Instance", "fs-datasets")
    # The l4 pool's first zone (its GPU's zones within cluster.zones), where its nodes mount from.
    assert instance["location"] == gke_fs.pools_zones(args, "datasets")[0] == "us-central1-a"
    assert instance["tier"] == "ZONAL"
    assert instance["protocol"] == "NFS_V4_1"
    assert instance["fileShares"]["capacityGb"] == 1024
    assert instance["networks"][0]["network"] == inputs(dev(), "compute/network:Network", "network")["name"]


def test_a_filesystem_goes_to_a_zone_every_mounting_pool_runs_in():
    # The system pool runs in both cluster zones, the GPU pool in the second only: a share
    # in the first would be read across zones by every GPU node.
    raw = gke_dev(sharedFilesystems=[{"name": "datasets", "kind": "filestore"}])
    raw["nodePools"] = [raw["nodePools"][0], {**raw["nodePools"][1], "zones": ["us-central1-b"]}]
    raw["resourcePools"] = raw["resourcePools"][::-1]  # the system pool's first
    args = stack_args.gke_cluster_args(load_config(raw))
    assert gke_fs.pools_zones(args, "datasets")[0] == "us-central1-b"
    result = plan_for(raw, stack="fs-zone")
    assert inputs(result, "filestore/instance:Instance", "fs-datasets")["location"] == "us-central1-b"


def test_filestore_exports_to_the_node_range_only():
    exports = inputs(dev(), "filestore/instance:Instance", "fs-datasets")["fileShares"]["nfsExportOptions"]
    assert exports == [
        {"ipRanges": ["10.10.0.0/20"], "accessMode": "READ_WRITE", "squashMode": "NO_ROOT_SQUASH"}
    ]
    assert "0.0.0.0/0" not in str(exports)


def test_filestore_is_kept_in_dev_and_protected_twice_in_prod():
    assert options(dev(), "filestore/instance:Instance", "fs-datasets").get("retainOnDelete") is True
    assert not options(dev(), "filestore/instance:Instance", "fs-datasets").get("protect")
    assert inputs(dev(), "filestore/instance:Instance", "fs-datasets")["deletionProtectionEnabled"] is False
    assert options(prod(), "filestore/instance:Instance", "fs-datasets").get("protect") is True
    assert options(prod(), "filestore/instance:Instance", "fs-datasets").get("retainOnDelete") is True
    assert inputs(prod(), "filestore/instance:Instance", "fs-datasets")["deletionProtectionEnabled"] is True


def test_filestore_deletion_is_possible_only_with_allow_data_deletion():
    result = plan_for(gke_dev(allowDataDeletion=True, sharedFilesystems=FILESYSTEMS[:1]), stack="fs-delete")
    assert not options(result, "filestore/instance:Instance", "fs-datasets").get("retainOnDelete")


def test_a_kept_filestore_keeps_the_network_it_is_attached_to():
    # Google refuses to delete a network while an instance peered with it lives: destroy
    # would fail midway (as for a kept Cloud SQL instance).
    assert options(dev(), "compute/network:Network", "network").get("retainOnDelete") is True
    result = plan_for(gke_dev(allowDataDeletion=True, sharedFilesystems=FILESYSTEMS[:1]), stack="fs-delete")
    assert not options(result, "compute/network:Network", "network").get("retainOnDelete")
    plain = plan_for(gke_dev(sharedFilesystems=[]), stack="fs-none")
    assert not options(plain, "compute/network:Network", "network").get("retainOnDelete")


def test_the_volume_points_at_the_instance_ip_and_share():
    spec = volume_of(dev(), "det-l4", "datasets")
    assert spec["nfs"]["path"] == f"/{gke_fs.SHARE}"
    assert spec["nfs"]["server"].startswith("10.30.")  # the mock's instance address, not a placeholder
    assert spec["mountOptions"] == ["nfsvers=4.1"]
    assert spec["capacity"] == {"storage": "1024Gi"}


def test_basic_tiers_serve_nfs_3_and_regional_tiers_the_region():
    args = stack_args.gke_cluster_args(load_config(gke_dev()))
    basic = load_config(gke_dev(sharedFilesystems=[{"name": "d", "kind": "filestore", "tier": "BASIC_HDD"}]))
    fs = basic.shared_filesystems[0]
    built = gke_fs.filestore_args(stack_args.gke_cluster_args(basic), fs, "p", "projects/p/global/networks/n")
    assert "protocol" not in built and gke_fs.mount_options(fs) == ["nfsvers=3"]
    regional = load_config(
        gke_dev(sharedFilesystems=[{"name": "d", "kind": "filestore", "tier": "REGIONAL"}])
    )
    assert gke_fs.location(args, regional.shared_filesystems[0]) == "us-central1"


def test_an_existing_network_in_a_host_project_uses_private_service_access():
    raw, result = shared_vpc()
    instance = inputs(result, "filestore/instance:Instance", "fs-datasets")
    assert instance["location"] == "us-east4"  # REGIONAL
    assert instance["networks"][0]["network"] == "shared-vpc"  # a name in the cluster's project
    args = stack_args.gke_cluster_args(load_config(raw))
    host = args.model_copy(
        update={
            "cluster": args.cluster.model_copy(
                update={
                    "network": args.cluster.network.model_copy(
                        update={"name": "projects/host/global/networks/shared"}
                    )
                }
            )
        }
    )
    assert gke_fs.filestore_network(host, "plan-project", "projects/host/global/networks/shared") == {
        "network": "projects/host/global/networks/shared",
        "modes": ["MODE_IPV4"],
        "connect_mode": "PRIVATE_SERVICE_ACCESS",
    }
    # The node range of an existing network is not known: Filestore's default (the VPC).
    assert "nfsExportOptions" not in instance["fileShares"]


# --- Cloud Storage FUSE -------------------------------------------------------------------


def test_the_created_bucket_is_the_one_the_pods_mount():
    cfg = load_config(gke_dev())
    bucket = inputs(dev(), "storage/bucket:Bucket", "fs-hub")
    # The Determined side renders the pods' volume from the configuration alone.
    assert bucket["name"] == gcs_fuse.bucket_name("fs-dev", "us-central1", cfg.cluster.name, "hub")
    # The Determined side's task pod specs (master.yaml) mount that very bucket.
    assert f"bucketName: {bucket['name']}" in dev().master_yaml
    assert bucket["publicAccessPrevention"] == "enforced"
    assert bucket["uniformBucketLevelAccess"] is True
    assert bucket["forceDestroy"] is False
    assert options(dev(), "storage/bucket:Bucket", "fs-hub").get("retainOnDelete") is True
    assert options(prod(), "storage/bucket:Bucket", "fs-hub").get("protect") is True
    assert inputs(prod(), "storage/bucket:Bucket", "fs-hub")["versioning"] == {"enabled": True}
    # A named bucket is not created.
    assert not [r for r in of_type(dev(), "storage/bucket:Bucket") if r["name"] == "fs-refs"]


def test_the_task_identity_gets_the_bucket_read_only_where_the_filesystem_is():
    checkpoint_member = inputs(dev(), "bucketIAMMember:BucketIAMMember", "storage-objects")["member"]
    hub = inputs(dev(), "bucketIAMMember:BucketIAMMember", "fs-hub-objects")
    refs = inputs(dev(), "bucketIAMMember:BucketIAMMember", "fs-refs-objects")
    # The checkpoint bucket's account, which the task service accounts already act as.
    assert hub["member"] == refs["member"] == checkpoint_member
    assert (hub["role"], hub["bucket"]) == (
        "roles/storage.objectUser",
        gcs_fuse.bucket_name("fs-dev", "us-central1", "det-dev", "hub"),
    )
    assert (refs["role"], refs["bucket"]) == ("roles/storage.objectViewer", "team-refs")
    # No account of its own: the checkpoint bucket's serves.
    assert "shared-files" not in {r["name"] for r in of_type(dev(), "serviceaccount/account:Account")}


def test_without_a_checkpoint_bucket_the_task_accounts_get_one_of_their_own():
    raw, result = shared_vpc()
    account = inputs(result, "serviceaccount/account:Account", "shared-files")
    email = f"{account['accountId']}@plan-project.iam.gserviceaccount.com"
    assert (
        inputs(result, "bucketIAMMember:BucketIAMMember", "fs-hub-objects")["member"]
        == f"serviceAccount:{email}"
    )
    bindings = [
        r["inputs"]
        for r in of_type(result, "serviceaccount/iAMMember:IAMMember")
        if r["name"].startswith("shared-files-")
    ]
    args = stack_args.gke_cluster_args(load_config(raw))
    namespaces = args.filesystem_namespaces["hub"]
    assert {b["member"] for b in bindings} == {
        f"serviceAccount:plan-project.svc.id.goog[{ns}/determined-task]" for ns in namespaces
    }
    assert {b["role"] for b in bindings} == {"roles/iam.workloadIdentityUser"}
    # Task pods run as determined-task, annotated with that account, in those namespaces.
    accounts = {
        r["inputs"]["metadata"]["namespace"]: r["inputs"]["metadata"].get("annotations", {})
        for r in of_type(result, "core/v1:ServiceAccount")
        if r["inputs"]["metadata"]["name"] == "determined-task"
    }
    for ns in namespaces:
        assert accounts[ns] == {"iam.gke.io/gcp-service-account": email}


def test_the_fuse_volume_the_cluster_hands_over_matches_the_pods():
    cfg = load_config(gke_dev())
    fs = next(f for f in cfg.shared_filesystems if f.name == "refs")
    volume = gke_fs.gcs_fuse_volume(fs, "team-refs", [])
    assert volume.persistent_volume is None
    assert volume.inline == {
        "csi": {
            "driver": "gcsfuse.csi.storage.gke.io",
            "readOnly": True,
            "volumeAttributes": {"bucketName": "team-refs", "mountOptions": "implicit-dirs"},
        }
    }
    assert volume.pod_annotations == {"gke-gcsfuse/volumes": "true"}


# --- Managed Lustre -----------------------------------------------------------------------


def test_lustre_gets_private_services_access_and_a_firewall_from_its_range_only():
    address = inputs(dev(), "globalAddress:GlobalAddress", "lustre-range")
    assert (address["purpose"], address["prefixLength"]) == ("VPC_PEERING", gke_network.LUSTRE_RANGE_PREFIX)
    connection = inputs(dev(), "connection:Connection", "lustre-peering")
    assert connection["reservedPeeringRanges"] == [address["name"]]
    assert connection["deletionPolicy"] == "ABANDON"  # kept with the instance it peers
    rule = inputs(dev(), "firewall:Firewall", "lustre-lnet")
    assert rule["direction"] == "INGRESS"
    assert rule["sourceRanges"] == [f"10.100.0.0/{gke_network.LUSTRE_RANGE_PREFIX}"]  # the mock's range
    assert rule["allows"] == [{"protocol": "tcp", "ports": ["988"]}]


def test_lustre_beside_cloud_sql_shares_the_networks_one_connection():
    # One private services access connection per network and service: Cloud SQL's, over both
    # ranges (a second connection would be refused or replace the first).
    raw = gke_dev(
        sharedFilesystems=[FILESYSTEMS[3]], database={"mode": "managed", "tier": "db-custom-2-8192"}
    )
    result = plan_for(raw, stack="fs-lustre-sql")
    (connection,) = of_type(result, "connection:Connection")
    assert connection["name"] == "sql-peering"
    sql = inputs(result, "globalAddress:GlobalAddress", "sql-range")["name"]
    lustre = inputs(result, "globalAddress:GlobalAddress", "lustre-range")["name"]
    assert connection["inputs"]["reservedPeeringRanges"] == [sql, lustre]
    instance = resource(result, "lustre/instance:Instance", "fs-scratch")
    assert any("sql-peering" in urn for urn in instance.get("dependsOn", [])), instance.get("dependsOn")


def test_lustre_instance_and_its_volume_handle():
    instance = inputs(dev(), "lustre/instance:Instance", "fs-scratch")
    assert instance["location"] == "us-central1-a"
    assert (instance["filesystem"], instance["capacityGib"], instance["perUnitStorageThroughput"]) == (
        "scratch",
        "18000",
        "500",
    )
    assert "gkeSupportEnabled" not in instance  # would need the legacy LNet port on the nodes
    assert options(dev(), "lustre/instance:Instance", "fs-scratch").get("retainOnDelete") is True
    assert options(prod(), "lustre/instance:Instance", "fs-scratch").get("protect") is True
    csi = volume_of(dev(), "det-l4", "scratch")["csi"]
    assert csi["driver"] == "lustre.csi.storage.gke.io"
    assert csi["volumeHandle"] == f"my-gcp-project/us-central1-a/{instance['instanceId']}"
    assert csi["volumeAttributes"]["filesystem"] == "scratch"
    assert csi["volumeAttributes"]["ip"].startswith("10.40.")  # before '@tcp:/scratch'


def test_an_existing_network_brings_its_own_private_services_access():
    _, result = shared_vpc()
    assert of_type(result, "lustre/instance:Instance")
    assert not [r for r in of_type(result, "globalAddress:GlobalAddress") if r["name"] == "lustre-range"]
    assert not of_type(result, "firewall:Firewall")


# --- the cluster's add-ons ----------------------------------------------------------------


def test_addons_follow_the_kinds_in_use():
    cluster = inputs(dev(), "container/cluster:Cluster", "cluster")
    assert cluster["addonsConfig"] == {
        "gcsFuseCsiDriverConfig": {"enabled": True},
        "lustreCsiDriverConfig": {"enabled": True},
    }
    only_filestore = stack_args.gke_cluster_args(load_config(gke_dev(sharedFilesystems=FILESYSTEMS[:1])))
    assert filesystem_addons.addons_config(only_filestore) == {}  # in-tree NFS: no driver
    none = plan_for(gke_dev(sharedFilesystems=[]), stack="fs-none")
    assert "addonsConfig" not in inputs(none, "container/cluster:Cluster", "cluster")


# --- names and config ---------------------------------------------------------------------


def test_derived_names_fit_for_the_longest_cluster_and_filesystem_names():
    namer = names.Namer("a-long-stack-name", "northamerica-northeast1", "c" * 40)
    for resource_type, prop in ((gke_fs.FILESTORE, "name"), (gke_fs.LUSTRE, "instanceId")):
        name = namer.name(resource_type, prop, "f" * 20)
        assert not names.rule(resource_type, prop).problems(name)


def test_a_zone_outside_the_mounting_pools_is_refused():
    raw = gke_dev(
        sharedFilesystems=[
            {"name": "d", "kind": "filestore", "zone": "us-central1-f", "resourcePools": ["l4"]}
        ]
    )
    with pytest.raises(ConfigError, match=r"sharedFilesystems\[0\]\.zone: 'us-central1-f' is not a zone of"):
        load_config(raw)


# --- capacity steps (review 26) -------------------------------------------------------------


@pytest.mark.parametrize(
    ("capacity", "throughput", "ok"),
    [
        (9000, 1000, True),
        (9000, 500, False),  # the reviewer's plan: 500 starts at 18000
        (18000, 500, True),
        (27000, 500, False),
        (72000, 125, True),
        (1530000 + 9000, 1000, False),  # 72000 steps above 1530000
        (1584000, 1000, True),
    ],
)
def test_managed_lustre_capacity_follows_its_throughput_tier(capacity, throughput, ok):
    from components.config.shared_filesystems import lustre_capacity_problem

    assert (lustre_capacity_problem(capacity, throughput) is None) is ok


@pytest.mark.parametrize(
    ("tier", "capacity", "ok"),
    [
        ("ZONAL", 5000, False),
        ("ZONAL", 4864, True),
        ("ZONAL", 10240, True),
        ("REGIONAL", 11000, False),
        ("REGIONAL", 12800, True),
        ("ENTERPRISE", 2000, False),
        ("BASIC_HDD", 5000, True),
    ],
)
def test_filestore_capacity_follows_the_tier_steps(tier, capacity, ok):
    from components.config.shared_filesystems import filestore_capacity_problem

    assert (filestore_capacity_problem(tier, capacity) is None) is ok
