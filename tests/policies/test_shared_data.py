"""Policies on shared filesystems and GPU fabric: filesystems encrypted, not open to everyone
and protected in prod; the EFA security group open to its own members only. Props are shaped
as the EKS/GKE helpers register them (components/cluster/eks/shared_filesystems.py, efa.py,
components/cluster/gke/shared_filesystems.py); the last tests judge a whole planned stack."""

from __future__ import annotations

from functools import cache

import pytest
from conftest import EKS, with_pool
from planning import plan_for

from components import constants
from plan import policy_check
from policies import catalog
from policies.rule import Context
from tests.policies.support import args, check, ctx, resource

EFS = "aws:efs/fileSystem:FileSystem"
ACCESS_POINT = "aws:efs/accessPoint:AccessPoint"
FSX = "aws:fsx/lustreFileSystem:LustreFileSystem"
FILESTORE = "gcp:filestore/instance:Instance"
LUSTRE = "gcp:lustre/instance:Instance"
PV = "kubernetes:core/v1:PersistentVolume"
GCS = "gcp:storage/bucket:Bucket"
SG = "aws:ec2/securityGroup:SecurityGroup"
SG_RULE = "aws:ec2/securityGroupRule:SecurityGroupRule"
INGRESS = "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule"
EGRESS = "aws:vpc/securityGroupEgressRule:SecurityGroupEgressRule"

ENCRYPTED = "shared-filesystems-encrypted"
NOT_WORLD = "shared-filesystems-not-world-readable"
EFA_SG = "efa-security-group-self-only"


# --- encrypted -------------------------------------------------------------------------------


def efs(**changes) -> dict:
    return {"encrypted": True, "throughputMode": "elastic", "tags": {"Name": "det-data"}} | changes


def test_an_efs_file_system_must_say_encrypted():
    assert check(ENCRYPTED, args(EFS, efs(), name="efs-data")) == []
    for props in (efs(encrypted=False), {k: v for k, v in efs().items() if k != "encrypted"}):
        assert check(ENCRYPTED, args(EFS, props, name="efs-data")) == [
            "EFS file system 'efs-data': encrypted is not true (its files and backups are stored "
            "unencrypted; only a new file system can change that)"
        ]


@pytest.mark.parametrize(
    ("kind", "props"),
    [
        (FSX, {"deploymentType": "PERSISTENT_2", "storageCapacity": 1200}),
        (FILESTORE, {"tier": "BASIC_HDD", "name": "det-data"}),
        (LUSTRE, {"capacityGib": 18000, "instanceId": "det-data"}),
    ],
    ids=["fsx", "filestore", "managed-lustre"],
)
def test_file_systems_encrypted_by_their_cloud_need_no_setting(kind, props):
    assert check(ENCRYPTED, args(kind, props)) == []


def efs_volume(**attributes) -> dict:
    csi = {"driver": "efs.csi.aws.com", "volumeHandle": "fs-1::fsap-1"}
    if attributes:
        csi["volumeAttributes"] = attributes
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolume",
        "metadata": {"name": "determined-fs-data-det-a100"},
        "spec": {"csi": csi, "capacity": {"storage": "1Ti"}, "accessModes": ["ReadWriteMany"]},
    }


def test_an_efs_volume_mounted_without_tls_is_refused():
    assert check(ENCRYPTED, args(PV, efs_volume())) == []
    assert check(ENCRYPTED, args(PV, efs_volume(encryptInTransit="true"))) == []
    assert check(ENCRYPTED, args(PV, efs_volume(encryptInTransit="false"))) == [
        "PersistentVolume determined-fs-data-det-a100: encryptInTransit is false, so nodes mount the EFS "
        "file system over plain NFS"
    ]


# --- not world-readable --------------------------------------------------------------------


def access_point(permissions: str | None = "0770") -> dict:
    root: dict = {"path": "/determined/data"}
    if permissions is not None:
        root["creationInfo"] = {"ownerUid": 1000, "ownerGid": 1000, "permissions": permissions}
    return {"fileSystemId": "fs-1", "posixUser": {"uid": 1000, "gid": 1000}, "rootDirectory": root}


@pytest.mark.parametrize("mode", ["0770", "0750", "0700", "770"])
def test_an_access_point_giving_others_nothing_passes(mode):
    assert check(NOT_WORLD, args(ACCESS_POINT, access_point(mode), name="efs-data")) == []


@pytest.mark.parametrize("mode", ["0775", "0755", "0777", "0701"])
def test_an_access_point_giving_others_any_bit_is_refused(mode):
    (message,) = check(NOT_WORLD, args(ACCESS_POINT, access_point(mode), name="efs-data"))
    assert message.startswith(
        f"EFS access point 'efs-data': its root directory /determined/data is created with mode {mode}, "
    )


def test_an_access_point_without_creation_info_or_with_a_bad_mode_is_refused():
    assert check(NOT_WORLD, args(ACCESS_POINT, access_point(None), name="efs-data")) == [
        "EFS access point 'efs-data': its root directory /determined/data has no creationInfo, so the "
        "stack does not set its mode"
    ]
    assert check(NOT_WORLD, args(ACCESS_POINT, access_point("rwx"), name="efs-data")) == [
        "EFS access point 'efs-data': creationInfo.permissions 'rwx' is no octal mode"
    ]


def filestore(*ranges: str) -> dict:
    share: dict = {"name": "share", "capacityGb": 1024}
    if ranges:
        share["nfsExportOptions"] = [
            {"ipRanges": list(ranges), "accessMode": "READ_WRITE", "squashMode": "NO_ROOT_SQUASH"}
        ]
    return {"name": "det-data", "tier": "BASIC_HDD", "fileShares": share}


def test_a_filestore_export_open_to_any_address_is_refused():
    # The nodes' range, or no export options (Filestore's default: the VPC's internal addresses).
    assert check(NOT_WORLD, args(FILESTORE, filestore("10.0.0.0/20"), name="fs-data")) == []
    assert check(NOT_WORLD, args(FILESTORE, filestore(), name="fs-data")) == []
    assert check(NOT_WORLD, args(FILESTORE, filestore("10.0.0.0/20", "0.0.0.0/0"), name="fs-data")) == [
        "Filestore instance 'fs-data' (det-data): an NFS export option admits 0.0.0.0/0 (any address may "
        "mount the share)"
    ]


def test_a_gcs_fuse_bucket_is_kept_private_by_the_bucket_rule():
    # The gcsFuse buckets the project creates are GCS buckets like the checkpoint bucket.
    bucket = resource(GCS, {"name": "p-det-data", "uniformBucketLevelAccess": True}, name="fs-data")
    assert check("buckets-private", [bucket]) == [
        "GCS bucket 'fs-data' (p-det-data): publicAccessPrevention is 'not set', not 'enforced'"
    ]


@pytest.mark.parametrize(
    ("kind", "props", "said"),
    [
        (EFS, efs(), "EFS file system 'efs-data'"),
        (FSX, {"deploymentType": "PERSISTENT_2"}, "FSx for Lustre file system 'efs-data'"),
        (FILESTORE, filestore(), "Filestore instance 'efs-data' (det-data)"),
        (LUSTRE, {"instanceId": "det-data"}, "Managed Lustre instance 'efs-data' (det-data)"),
    ],
    ids=["efs", "fsx", "filestore", "managed-lustre"],
)
def test_shared_filesystems_are_protected_in_prod(kind, props, said):
    assert (
        check("data-protected-in-prod", args(kind, props, name="efs-data", protect=True), ctx("prod")) == []
    )
    assert check("data-protected-in-prod", args(kind, props, name="efs-data"), ctx("prod")) == [
        f"{said} is not protected (protect: true), so a destroy or replacement may delete it"
    ]


# --- the EFA security group ----------------------------------------------------------------


def efa_group(**changes):
    props = {
        "name": "det-efa-1a2b3c",
        "description": "EFA of det: all traffic to and from itself only",
        "vpcId": "vpc-1",
        "tags": {constants.EFA_SECURITY_GROUP_TAG: "det"},
    } | changes
    return resource(SG, props, name="efa")


def vpc_rule(kind: str, group, name: str = "efa-self", peer=None, **props):
    """A VPC ingress/egress rule of `group`, to itself unless `peer` (a resource) or props say."""
    depends = {"securityGroupId": [group]}
    if "cidrIpv4" not in props:
        depends["referencedSecurityGroupId"] = [peer or group]
    fields = {"securityGroupId": "sg-1", "ipProtocol": "-1", **props}
    if "cidrIpv4" not in props:
        fields["referencedSecurityGroupId"] = "sg-1"
    return resource(kind, fields, name=name, depends=depends)


def test_an_efa_group_with_only_its_self_rules_passes():
    group = efa_group()
    assert check(EFA_SG, [group, vpc_rule(INGRESS, group), vpc_rule(EGRESS, group)]) == []


def test_an_efa_group_rule_to_an_address_range_or_another_group_is_refused():
    group = efa_group()
    other = resource(SG, {"name": "det-cluster", "tags": {}}, name="cluster")
    found = check(
        EFA_SG,
        [
            group,
            other,
            vpc_rule(INGRESS, group),
            vpc_rule(EGRESS, group, name="efa-out", cidrIpv4="0.0.0.0/0"),
            vpc_rule(INGRESS, group, name="from-cluster", peer=other),
        ],
    )
    assert found == [
        "EFA security group 'efa' (det-efa-1a2b3c): its egress rule 'efa-out' reaches cidrIpv4 0.0.0.0/0, "
        "not only the group itself",
        "EFA security group 'efa' (det-efa-1a2b3c): its ingress rule 'from-cluster' reaches another "
        "security group, not only the group itself",
    ]


def test_inline_and_classic_rules_are_judged_alike():
    self_only = {"protocol": "-1", "fromPort": 0, "toPort": 0, "self": True}
    group = efa_group(ingress=[self_only], egress=[self_only | {"self": False, "cidrBlocks": ["0.0.0.0/0"]}])
    classic = resource(
        SG_RULE,
        {
            "type": "ingress",
            "securityGroupId": "sg-1",
            "protocol": "-1",
            "fromPort": 0,
            "toPort": 0,
            "self": True,
        },
        name="efa-classic",
        depends={"securityGroupId": [group]},
    )
    wide = resource(
        SG_RULE,
        {"type": "ingress", "securityGroupId": "sg-1", "protocol": "tcp", "fromPort": 22, "toPort": 22,
         "cidrBlocks": ["10.0.0.0/8"]},
        name="efa-ssh",
        depends={"securityGroupId": [group]},
    )  # fmt: skip
    assert check(EFA_SG, [group, classic, wide]) == [
        "EFA security group 'efa' (det-efa-1a2b3c): an inline egress rule reaches cidrBlocks 0.0.0.0/0 "
        "instead of the group itself (self: true only)",
        "EFA security group 'efa' (det-efa-1a2b3c): its ingress rule 'efa-ssh' reaches cidrBlocks "
        "10.0.0.0/8, not only the group itself",
    ]


def test_groups_without_the_efa_tag_are_not_judged():
    group = resource(SG, {"name": "det-db", "tags": {"Name": "db"}}, name="database")
    wide = vpc_rule(INGRESS, group, name="db-open", cidrIpv4="0.0.0.0/0")
    assert check(EFA_SG, [group, wide]) == []


def test_the_eks_helper_tags_its_efa_group_with_the_tag_the_rule_reads():
    from components.cluster.eks import efa

    assert efa.SECURITY_GROUP_TAG == constants.EFA_SECURITY_GROUP_TAG


# --- a whole stack ---------------------------------------------------------------------------


@cache
def _eks_prod_efa_efs():
    raw = with_pool(EKS, 1, fabric="efa", zones=["us-east-1a"])
    raw |= {"environment": "prod", "sharedFilesystems": [{"name": "data", "kind": "efs"}]}
    return plan_for(raw)


def test_an_eks_stack_with_efa_and_efs_passes_the_three_rules():
    result = _eks_prod_efa_efs()
    ordered = sorted(result.recorder.resources, key=lambda r: r.urn)
    found = policy_check.evaluate(catalog.policies(Context("prod", "eks")), ordered, result.secrets)
    ours = {ENCRYPTED, NOT_WORLD, EFA_SG}
    assert [v["message"] for v in found if v["policy"] in ours] == []
    # ... and the EFA rule saw the group (it is not passing for want of one).
    groups = [
        r for r in ordered if r.type == SG and constants.EFA_SECURITY_GROUP_TAG in r.inputs.get("tags", {})
    ]
    assert len(groups) == 1
    assert any(r.type == EFS and r.inputs.get("encrypted") is True for r in ordered)
