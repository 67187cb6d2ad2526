"""sharedFilesystems on EKS under the plan's mocks: EFS (encrypted, a mount target per zone of the
mounting nodes, NFS from the cluster only, an access point closed to others, the EFS CSI add-on
with Pod Identity) and FSx for Lustre (one zone, Lustre ports from the cluster and itself, the S3
link, the FSx CSI chart with values it reads), all kept by a destroy with the network they use."""

from __future__ import annotations

import functools
import sys

import pytest
import yaml
from conftest import ROOT
from planning import by_kind, of_type, plan_for, resource

from components import names
from components.addons import fsx_csi_driver
from components.cluster import namer
from components.cluster.eks import shared_filesystems
from components.config.cluster import EksCluster
from components.config.eks_shared_filesystems import efs_zones, fsx_zone, prefixes_overlap
from components.config.node_pools import EksNodePool
from components.config.shared_filesystems import FsxLustreFs

# The chart key sets' reader (as tests/observability/chart_checks.py imports it).
_INVARIANTS = str(ROOT / "tests" / "invariants")
if _INVARIANTS not in sys.path:
    sys.path.insert(0, _INVARIANTS)

import test_chart_values  # noqa: E402

STACKS = ROOT / "stacks"
CLUSTER_SG = "eks/cluster:Cluster"


def dev_config(**extra):
    raw = yaml.safe_load((STACKS / "Pulumi.eks-dev.yaml").read_text())["config"]
    raw = {key.split(":", 1)[1]: value for key, value in raw.items()}
    raw["sharedFilesystems"] = [
        {"name": "data", "kind": "efs", "owner": {"uid": 1001, "gid": 1002}},
        {
            "name": "scratch",
            "kind": "fsxLustre",
            "resourcePools": ["l4"],
            "capacityGib": 2400,
            "throughput": 500,
            "s3": {"bucket": "team-datasets", "prefix": "/imagenet/"},
        },
    ]
    return {**raw, **extra}


@functools.cache
def dev():
    return plan_for(dev_config(), stack="eks-dev")


@functools.cache
def prod():
    raw = dev_config(environment="prod", cluster={"name": "det-prod", "region": "us-east-1"})
    # Prod refuses a writable file system linked to S3 for import only (nothing backs it up).
    raw["sharedFilesystems"][1] = {**raw["sharedFilesystems"][1], "readOnly": True}
    return plan_for(raw, stack="eks-p")


@functools.cache
def zoned():
    """Two named zones; the GPU pool (the only one mounting the FSx file system) in the second."""
    raw = dev_config(
        cluster={"name": "det-dev", "region": "us-east-1", "zones": ["us-east-1a", "us-east-1b"]}
    )
    raw["nodePools"] = [
        {**pool, "zones": ["us-east-1b"]} if pool["name"] == "l4" else pool for pool in raw["nodePools"]
    ]
    raw["sharedFilesystems"] = [
        {"name": "data", "kind": "efs", "resourcePools": ["l4"]},
        {
            "name": "scratch",
            "kind": "fsxLustre",
            "resourcePools": ["l4"],
            "s3": {"bucket": "raw-datasets", "export": True},
        },
    ]
    return plan_for(raw, stack="eks-dev")


def cluster_security_group(result) -> str:
    # The mocks' EKS cluster security group (plan/mocks/aws.py), as every rule references it.
    rules = of_type(result, "vpc/securityGroupIngressRule:SecurityGroupIngressRule")
    (database_or_efs,) = [r for r in rules if r["name"] == "efs-data-from-cluster"]
    return database_or_efs["inputs"]["referencedSecurityGroupId"]


def rules_of(result, group_id: str) -> set[tuple[int, int, str]]:
    """(from, to, source) of every ingress rule of the security group `group_id`."""
    rules = of_type(result, "vpc/securityGroupIngressRule:SecurityGroupIngressRule")
    found = set()
    for rule in rules:
        inputs = rule["inputs"]
        if inputs["securityGroupId"] == group_id:
            assert inputs["ipProtocol"] == "tcp" and "cidrIpv4" not in inputs, rule
            found.add((inputs["fromPort"], inputs["toPort"], inputs["referencedSecurityGroupId"]))
    return found


def egress_of(result, group_id: str) -> set[tuple[int, int, str]]:
    """(from, to, destination) of every egress rule of the security group `group_id`."""
    found = set()
    for rule in of_type(result, "vpc/securityGroupEgressRule:SecurityGroupEgressRule"):
        inputs = rule["inputs"]
        if inputs["securityGroupId"] == group_id:
            assert inputs["ipProtocol"] == "tcp" and "cidrIpv4" not in inputs, rule
            found.add((inputs["fromPort"], inputs["toPort"], inputs["referencedSecurityGroupId"]))
    return found


def group_id_of(result, name: str) -> str:
    """A security group's id, as the resources using it name it."""
    if name.startswith("efs"):
        return resource(result, "efs/mountTarget:MountTarget", f"{name}-0")["inputs"]["securityGroups"][0]
    return resource(result, "fsx/lustreFileSystem:LustreFileSystem", name)["inputs"]["securityGroupIds"][0]


# --- EFS -----------------------------------------------------------------------------------------


def test_efs_is_encrypted_and_elastic():
    fs = resource(dev(), "efs/fileSystem:FileSystem", "efs-data")["inputs"]
    assert fs["encrypted"] is True
    assert fs["throughputMode"] == "elastic"


def test_efs_has_one_mount_target_per_zone_of_the_vpc():
    targets = of_type(dev(), "efs/mountTarget:MountTarget")
    # eks-dev's VPC spans two zones, a private subnet in each; every pool mounts `data`.
    subnets = [t["inputs"]["subnetId"] for t in targets if t["name"].startswith("efs-data-")]
    assert len(subnets) == 2 and len(set(subnets)) == 2


def test_efs_mount_targets_only_where_the_mounting_pools_run():
    result = zoned()
    targets = [t for t in of_type(result, "efs/mountTarget:MountTarget") if t["name"].startswith("efs-data-")]
    # Only the GPU pool (us-east-1b, the VPC's second subnet) mounts it.
    assert [t["name"] for t in targets] == ["efs-data-1"]
    (l4_subnet,) = resource(result, "eks/nodeGroup:NodeGroup", "l4")["inputs"]["subnetIds"]
    assert targets[0]["inputs"]["subnetId"] == l4_subnet


def test_one_mount_target_per_zone_when_subnets_share_one():
    zones = ["us-east-1a", "us-east-1a", "us-east-1b", "us-east-1c"]
    assert shared_filesystems.one_subnet_per_zone(zones, 4, None) == [0, 2, 3]
    assert shared_filesystems.one_subnet_per_zone(zones, 4, ["us-east-1c", "us-east-1a"]) == [0, 3]
    # No subnet in the wanted zones: every zone rather than no mount target at all.
    assert shared_filesystems.one_subnet_per_zone(zones, 4, ["us-east-1f"]) == [0, 2, 3]
    # Zones not known before deployment (a created VPC): a subnet per zone, each gets one.
    assert shared_filesystems.one_subnet_per_zone(None, 3, ["us-east-1a"]) == [0, 1, 2]


def test_efs_admits_nfs_from_the_cluster_security_group_only():
    result = dev()
    cluster_sg = cluster_security_group(result)
    assert rules_of(result, group_id_of(result, "efs-data")) == {(2049, 2049, cluster_sg)}
    for target in of_type(result, "efs/mountTarget:MountTarget"):
        assert target["inputs"]["securityGroups"] == [group_id_of(result, "efs-data")]


def test_the_access_point_maps_to_the_owner_in_a_directory_closed_to_others():
    point = resource(dev(), "efs/accessPoint:AccessPoint", "efs-data")["inputs"]
    assert point["posixUser"] == {"uid": 1001, "gid": 1002}
    assert point["rootDirectory"] == {
        "path": "/determined/data",
        "creationInfo": {"ownerUid": 1001, "ownerGid": 1002, "permissions": "0770"},
    }


def test_pods_mount_efs_through_the_access_point():
    result = dev()
    fs_id = resource(result, "efs/mountTarget:MountTarget", "efs-data-0")["inputs"]["fileSystemId"]
    volumes = [
        v
        for v in by_kind(result, "PersistentVolume")
        if v["spec"].get("csi", {}).get("driver") == "efs.csi.aws.com"
    ]
    assert volumes, "no PersistentVolume of the EFS file system"
    for volume in volumes:
        handle = volume["spec"]["csi"]["volumeHandle"]
        assert handle.startswith(f"{fs_id}::fsap-"), handle


def test_the_efs_csi_add_on_comes_with_an_efs_file_system_and_its_pod_identity():
    result = dev()
    addon = resource(result, "eks/addon:Addon", "aws-efs-csi-driver")["inputs"]
    (association,) = addon["podIdentityAssociations"]
    assert association["serviceAccount"] == "efs-csi-controller-sa"
    role = resource(result, "iam/role:Role", "efs-csi")["inputs"]["name"]
    assert association["roleArn"].endswith(f":role/{role}")
    attachments = [
        a["inputs"]["policyArn"]
        for a in of_type(result, "iam/rolePolicyAttachment:RolePolicyAttachment")
        if a["inputs"]["role"] == role
    ]
    assert attachments == ["arn:aws:iam::aws:policy/service-role/AmazonEFSCSIDriverPolicy"]


def test_without_an_efs_file_system_there_is_no_efs_add_on_nor_role():
    raw = dev_config()
    raw["sharedFilesystems"] = [fs for fs in raw["sharedFilesystems"] if fs["kind"] != "efs"]
    result = plan_for(raw, stack="eks-dev")
    assert not [a for a in of_type(result, "eks/addon:Addon") if a["name"] == "aws-efs-csi-driver"]
    assert not [r for r in of_type(result, "iam/role:Role") if r["name"] == "efs-csi"]


# --- FSx for Lustre ------------------------------------------------------------------------------


def test_fsx_is_persistent_ssd_lustre_2_15_as_configured():
    fs = resource(dev(), "fsx/lustreFileSystem:LustreFileSystem", "fsx-scratch")["inputs"]
    assert fs["deploymentType"] == "PERSISTENT_2" and fs["storageType"] == "SSD"
    assert fs["fileSystemTypeVersion"] == "2.15" and fs["dataCompressionType"] == "LZ4"
    assert (fs["storageCapacity"], fs["perUnitStorageThroughput"]) == (2400, 500)


def test_fsx_lives_in_the_zone_of_the_pools_that_mount_it():
    result = zoned()
    fs = resource(result, "fsx/lustreFileSystem:LustreFileSystem", "fsx-scratch")["inputs"]
    (l4_subnet,) = resource(result, "eks/nodeGroup:NodeGroup", "l4")["inputs"]["subnetIds"]
    assert fs["subnetIds"] == l4_subnet


def test_fsx_admits_lustre_from_the_cluster_and_itself_and_the_cluster_admits_it_back():
    result = dev()
    cluster_sg, fsx_sg = cluster_security_group(result), group_id_of(result, "fsx-scratch")
    lustre = [(988, 988), (1018, 1023)]
    assert rules_of(result, fsx_sg) == {
        (low, high, src) for low, high in lustre for src in (cluster_sg, fsx_sg)
    }
    back = {rule for rule in rules_of(result, cluster_sg) if rule[2] == fsx_sg}
    assert back == {(low, high, fsx_sg) for low, high in lustre}


def test_fsx_sends_lustre_to_itself_and_to_the_cluster():
    # The provider removes AWS's default allow-all egress: without these the file servers could
    # not reach each other nor their clients (FSx user guide, limit-access-security-groups).
    result = dev()
    cluster_sg, fsx_sg = cluster_security_group(result), group_id_of(result, "fsx-scratch")
    assert egress_of(result, fsx_sg) == {
        (low, high, dst) for low, high in [(988, 988), (1018, 1023)] for dst in (cluster_sg, fsx_sg)
    }
    # FSx checks the group's rules when it creates the file system: all exist before it.
    fs = resource(result, "fsx/lustreFileSystem:LustreFileSystem", "fsx-scratch")
    needed = {
        r["urn"]
        for r in of_type(result, "vpc/securityGroupEgressRule:SecurityGroupEgressRule")
        if r["inputs"]["securityGroupId"] == fsx_sg
    }
    assert len(needed) == 4 and needed <= set(fs["dependsOn"])


def _without_s3(raw):
    raw["sharedFilesystems"] = [{k: v for k, v in fs.items() if k != "s3"} for fs in raw["sharedFilesystems"]]
    return raw


def test_fsx_backs_up_and_leaves_a_final_backup_in_prod_only():
    dev_fs = resource(
        plan_for(_without_s3(dev_config()), stack="eks-dev"),
        "fsx/lustreFileSystem:LustreFileSystem",
        "fsx-scratch",
    )["inputs"]
    prod_fs = resource(
        plan_for(
            _without_s3(dev_config(environment="prod", cluster={"name": "det-prod", "region": "us-east-1"})),
            stack="eks-p",
        ),
        "fsx/lustreFileSystem:LustreFileSystem",
        "fsx-scratch",
    )["inputs"]
    assert dev_fs["skipFinalBackup"] is True and dev_fs["automaticBackupRetentionDays"] == 0
    assert prod_fs["skipFinalBackup"] is False and prod_fs["automaticBackupRetentionDays"] == 30
    assert prod_fs["finalBackupTags"]["Name"] == "det-prod-scratch-final"


def test_fsx_linked_to_s3_takes_no_backups_even_in_prod():
    # FSx does not back up a file system linked to S3; a final backup would fail the deletion.
    prod_fs = resource(prod(), "fsx/lustreFileSystem:LustreFileSystem", "fsx-scratch")["inputs"]
    assert resource(prod(), "fsx/dataRepositoryAssociation:DataRepositoryAssociation", "fsx-scratch")
    assert prod_fs["skipFinalBackup"] is True and prod_fs["automaticBackupRetentionDays"] == 0
    assert "finalBackupTags" not in prod_fs


def test_the_s3_link_imports_and_exports_only_when_asked_and_never_deletes():
    imported = resource(dev(), "fsx/dataRepositoryAssociation:DataRepositoryAssociation", "fsx-scratch")[
        "inputs"
    ]
    assert imported["dataRepositoryPath"] == "s3://team-datasets/imagenet/"
    assert imported["fileSystemPath"] == "/"
    assert imported["deleteDataInFilesystem"] is False
    assert imported["s3"] == {"autoImportPolicy": {"events": ["NEW", "CHANGED", "DELETED"]}}
    exported = resource(zoned(), "fsx/dataRepositoryAssociation:DataRepositoryAssociation", "fsx-scratch")[
        "inputs"
    ]
    assert exported["dataRepositoryPath"] == "s3://raw-datasets/"
    assert exported["s3"]["autoExportPolicy"] == {"events": ["NEW", "CHANGED", "DELETED"]}


def test_pods_mount_fsx_by_its_dns_and_mount_names_with_flock():
    result = dev()
    volumes = [
        v
        for v in by_kind(result, "PersistentVolume")
        if v["spec"].get("csi", {}).get("driver") == "fsx.csi.aws.com"
    ]
    assert volumes, "no PersistentVolume of the FSx file system"
    for volume in volumes:
        csi = volume["spec"]["csi"]
        assert csi["volumeHandle"].startswith("fs-")
        assert csi["volumeAttributes"]["dnsname"] == f"{csi['volumeHandle']}.fsx.us-east-1.amazonaws.com"
        assert csi["volumeAttributes"]["mountname"]
        assert volume["spec"]["mountOptions"] == ["flock"]
        assert volume["spec"]["capacity"] == {"storage": "2400Gi"}


def test_the_fsx_chart_is_pinned_and_passes_only_values_it_reads():
    release = resource(dev(), "helm.sh/v3:Release", "fsx-csi-driver")["inputs"]
    assert (release["chart"], release["version"]) == ("aws-fsx-csi-driver", "1.17.0")
    assert release["namespace"] == "kube-system"
    check = test_chart_values
    keys = check.keys_for(release["chart"], release["version"], check.all_keys())
    assert keys is not None, "no key set for the FSx chart in tests/data/chart-keys"
    assert check.unknown_paths(release["values"], keys) == []
    assert check.unknown_paths({"node": {"regoin": "x"}}, keys) == ["node.regoin: unknown key"]
    assert release["values"] == fsx_csi_driver.values("us-east-1")


def test_no_fsx_chart_without_an_fsx_file_system():
    raw = dev_config()
    raw["sharedFilesystems"] = [fs for fs in raw["sharedFilesystems"] if fs["kind"] != "fsxLustre"]
    assert not [
        r
        for r in of_type(plan_for(raw, stack="eks-dev"), "helm.sh/v3:Release")
        if r["name"] == "fsx-csi-driver"
    ]


# --- retention -------------------------------------------------------------------------------------

DATA = (
    "efs/fileSystem:FileSystem",
    "efs/mountTarget:MountTarget",
    "efs/accessPoint:AccessPoint",
    "fsx/lustreFileSystem:LustreFileSystem",
    "fsx/dataRepositoryAssociation:DataRepositoryAssociation",
)


def _kept(res) -> bool:
    return res.get("options", {}).get("retainOnDelete", False)


def test_file_systems_and_what_they_use_are_kept_by_a_destroy():
    result = dev()
    for suffix in DATA:
        for res in of_type(result, suffix):
            assert _kept(res), f"{res['type']} {res['name']} would be deleted"
    for name in ("efs-data", "fsx-scratch"):
        assert _kept(resource(result, "ec2/securityGroup:SecurityGroup", name))
    # Their network interfaces hold the VPC and its private subnets (eks-dev's database is in
    # the cluster: nothing else keeps them).
    assert _kept(resource(result, "ec2/vpc:Vpc", "vpc"))
    for subnet in of_type(result, "ec2/subnet:Subnet"):
        if subnet["name"].startswith("private-"):
            assert _kept(subnet)


def test_allow_data_deletion_lets_them_go():
    result = plan_for(dev_config(allowDataDeletion=True), stack="eks-dev")
    for suffix in DATA:
        for res in of_type(result, suffix):
            assert not _kept(res), f"{res['type']} {res['name']} kept with allowDataDeletion"
    assert not _kept(resource(result, "ec2/vpc:Vpc", "vpc"))


def test_prod_protects_the_file_systems_and_backs_efs_up():
    result = prod()
    for name, suffix in (
        ("efs-data", "efs/fileSystem:FileSystem"),
        ("fsx-scratch", "fsx/lustreFileSystem:LustreFileSystem"),
    ):
        assert resource(result, suffix, name).get("options", {}).get("protect"), name
    policy = resource(result, "efs/backupPolicy:BackupPolicy", "efs-data")["inputs"]
    assert policy["backupPolicy"] == {"status": "ENABLED"}
    assert not of_type(dev(), "efs/backupPolicy:BackupPolicy")


# --- names and zones -------------------------------------------------------------------------------


def test_security_group_names_fit_for_the_longest_names():
    # The longest cluster name the config takes (40) and the longest filesystem name (20).
    cluster = EksCluster.model_validate({"name": "c" * 40, "region": "us-east-1"})
    rule = names.rule(shared_filesystems.SECURITY_GROUP, "name")
    for purpose in ("efs-" + "n" * 20, "fsx-" + "n" * 20):
        assert rule.problems(namer(cluster).name(shared_filesystems.SECURITY_GROUP, "name", purpose)) == []


POOL = {"machineType": "p5.48xlarge", "gpu": {"type": "h100", "count": 8}}


def _pool(name, zones=None):
    return EksNodePool.model_validate({"name": name, **POOL, **({"zones": zones} if zones else {})})


def test_the_fsx_zone_is_the_first_the_mounting_pools_share():
    fs = FsxLustreFs.model_validate({"name": "s", "kind": "fsxLustre"})
    a, b = _pool("a", ["us-east-1c", "us-east-1b"]), _pool("b", ["us-east-1a", "us-east-1b"])
    assert fsx_zone(fs, [a, b]) == "us-east-1b"
    assert fsx_zone(fs, [a, _pool("any")]) == "us-east-1c"
    assert fsx_zone(fs, [_pool("any")]) is None  # the VPC's first private subnet
    assert fsx_zone(fs.model_copy(update={"zone": "us-east-1a"}), [a]) == "us-east-1a"


def test_efs_zones_cover_every_mounting_pool():
    assert efs_zones([_pool("a", ["us-east-1c"]), _pool("b", ["us-east-1a", "us-east-1c"])]) == [
        "us-east-1c",
        "us-east-1a",
    ]
    assert efs_zones([_pool("a", ["us-east-1c"]), _pool("any")]) is None
    assert efs_zones([]) is None


def test_s3_prefixes_overlap_when_one_holds_the_other():
    assert prefixes_overlap("checkpoints", "/checkpoints/run1/")
    assert prefixes_overlap("", "anything")
    assert not prefixes_overlap("checkpoints", "checkpoints-old")
    assert not prefixes_overlap("data/a", "data/b")


def test_an_existing_vpc_gets_one_mount_target_per_zone_of_its_subnets():
    # The plan's mocks put these subnets in us-east-1b, us-east-1b and us-east-1a (plan/mocks/aws.py
    # _aws_subnet); EC2 is asked while the program runs, as `pulumi up` asks it.
    subnets = ["subnet-0aaa1111bbb222200", "subnet-0aaa1111bbb222202", "subnet-0aaa1111bbb222201"]
    raw = dev_config(
        cluster={
            "name": "det-dev",
            "region": "us-east-1",
            "vpc": {"id": "vpc-0abc1234def567890", "privateSubnetIds": subnets},
        }
    )
    result = plan_for(raw, stack="eks-dev")
    targets = [t for t in of_type(result, "efs/mountTarget:MountTarget") if t["name"].startswith("efs-data-")]
    assert sorted(t["inputs"]["subnetId"] for t in targets) == sorted([subnets[0], subnets[2]])


def test_an_fsx_zone_without_a_subnet_stops_the_deployment_naming_the_zones():
    assert shared_filesystems.subnet_in_zone(None, ["s-a", "s-b"], ["z-a", "z-b"]) == "s-a"
    assert shared_filesystems.subnet_in_zone("z-b", ["s-a", "s-b"], ["z-a", "z-b"]) == "s-b"
    with pytest.raises(
        ValueError,
        match=r"FSx for Lustre zone z-c: the VPC has no private subnet there \(its subnets are in z-a, z-b\)",
    ):
        shared_filesystems.subnet_in_zone("z-c", ["s-a", "s-b"], ["z-a", "z-b"])
