"""The AWS provider: what EKS, EC2 networking, S3, RDS, IAM and KMS compute on create, their
IDs and ARNs as AWS forms them, and the functions the program calls (zones, instance type
offerings, add-on versions, the caller's identity)."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import Any

from plan.mocks.model import CREATED_AT, Request, ResourceModel, digest, ip_address, pem, uid

AWS_ACCOUNT = "123456789012"  # the account number AWS documentation uses


def _aws_region(req: Request) -> str:
    return req.setting("region", "aws", "us-east-1")


def _eks_cluster(req: Request) -> dict[str, Any]:
    name, region = req.inputs["name"], _aws_region(req)
    cluster_id = digest(req.seed, length=32).upper()
    return {
        "arn": f"arn:aws:eks:{region}:{AWS_ACCOUNT}:cluster/{name}",
        "certificateAuthority": {"data": pem(req.seed)},
        "clusterId": uid(req),
        "createdAt": CREATED_AT,
        "endpoint": f"https://{cluster_id}.gr7.{region}.eks.amazonaws.com",
        "identities": [{"oidcs": [{"issuer": f"https://oidc.eks.{region}.amazonaws.com/id/{cluster_id}"}]}],
        "vpcConfig": {
            **(req.inputs.get("vpcConfig") or {}),
            "clusterSecurityGroupId": f"sg-{digest(req.seed, 'cluster', length=17)}",
            "vpcId": f"vpc-{digest(req.seed, 'vpc', length=17)}",
        },
        "platformVersion": "eks.1",
        "status": "ACTIVE",
        "version": req.inputs.get("version") or "1.33",
        "tagsAll": req.inputs.get("tags", {}),
    }


def _aws_id(prefix: str, length: int = 17) -> Callable[[Request], str]:
    """An EC2-style ID: `<prefix>-<hex>`."""
    return lambda req: f"{prefix}-{digest(req.seed, length=length)}"


def _aws_arn(service: str, path: str) -> Callable[[Request], dict[str, Any]]:
    """Outputs holding an ARN whose resource part is `path` with `{id}` (the resource's ID, as
    this module's model of its type gives it)."""

    def create(req: Request) -> dict[str, Any]:
        region = _aws_region(req)
        ident = RESOURCES[req.type].ident(req)
        location = "" if service in ("iam", "s3") else region
        return {
            "arn": f"arn:aws:{service}:{location}:{AWS_ACCOUNT}:{path.format(id=ident)}",
            "tagsAll": req.inputs.get("tags", {}),
        }

    return create


def _kms_key(req: Request) -> dict[str, Any]:
    key_id = uid(req)
    return {
        "arn": f"arn:aws:kms:{_aws_region(req)}:{AWS_ACCOUNT}:key/{key_id}",
        "keyId": key_id,
        "tagsAll": {},
    }


def _eip(req: Request) -> dict[str, Any]:
    allocation = _aws_id("eipalloc")(req)
    return {"allocationId": allocation, "publicIp": ip_address(req.seed, (52, 0)), "tagsAll": {}}


def _nat_gateway(req: Request) -> dict[str, Any]:
    return {
        "publicIp": ip_address(req.seed, (52, 1)),
        "privateIp": ip_address(req.seed, (10, 0)),
        "tagsAll": {},
    }


def _eks_node_group(req: Request) -> dict[str, Any]:
    name, region = req.inputs["nodeGroupName"], _aws_region(req)
    cluster = req.inputs.get("clusterName", "cluster")
    return {
        "arn": f"arn:aws:eks:{region}:{AWS_ACCOUNT}:nodegroup/{cluster}/{name}/{uid(req)}",
        "status": "ACTIVE",
        "resources": [
            {"autoscalingGroups": [{"name": f"eks-{name}-{uid(req)}"}], "remoteAccessSecurityGroupId": ""}
        ],
        "tagsAll": req.inputs.get("tags", {}),
    }


def _s3_bucket(req: Request) -> dict[str, Any]:
    bucket, region = req.inputs["bucket"], _aws_region(req)
    return {
        "arn": f"arn:aws:s3:::{bucket}",
        "bucketDomainName": f"{bucket}.s3.amazonaws.com",
        "bucketRegionalDomainName": f"{bucket}.s3.{region}.amazonaws.com",
        "bucketRegion": region,
        "region": region,
        "hostedZoneId": "Z3AQBSTGFYJSTF",
        "tagsAll": req.inputs.get("tags", {}),
    }


def _rds_instance(req: Request) -> dict[str, Any]:
    identifier, region = req.inputs["identifier"], _aws_region(req)
    port = req.inputs.get("port") or 5432
    address = f"{identifier}.c{digest(req.seed, length=11)}.{region}.rds.amazonaws.com"
    return {
        "address": address,
        "endpoint": f"{address}:{port}",
        "port": port,
        "arn": f"arn:aws:rds:{region}:{AWS_ACCOUNT}:db:{identifier}",
        "hostedZoneId": "Z2R2ITUGPM61AM",
        "resourceId": f"db-{digest(req.seed, length=26).upper()}",
        "status": "available",
        "engineVersionActual": req.inputs.get("engineVersion", ""),
        "listenerEndpoints": [],
        "tagsAll": req.inputs.get("tags", {}),
    }


def _sqs_url(req: Request) -> str:
    return f"https://sqs.{_aws_region(req)}.amazonaws.com/{AWS_ACCOUNT}/{req.inputs['name']}"


def _iam_role(req: Request) -> dict[str, Any]:
    return {
        "arn": f"arn:aws:iam::{AWS_ACCOUNT}:role/{req.inputs['name']}",
        "uniqueId": f"AROA{digest(req.seed, length=17).upper()}",
        "createDate": CREATED_AT,
        "tagsAll": req.inputs.get("tags", {}),
    }


# Resource types by token. Output names are the provider's (see the SDK's output-only
# properties); only what a program could read is modelled.
RESOURCES: dict[str, ResourceModel] = {
    "aws:eks/cluster:Cluster": ResourceModel(create=_eks_cluster, autoname="name"),
    "aws:eks/nodeGroup:NodeGroup": ResourceModel(create=_eks_node_group, autoname="nodeGroupName"),
    # The provider's ID of a bucket is its name (what BucketPolicy & co. take as `bucket`).
    "aws:s3/bucketV2:BucketV2": ResourceModel(
        create=_s3_bucket, autoname="bucket", ident=lambda req: req.inputs["bucket"]
    ),
    "aws:s3/bucket:Bucket": ResourceModel(
        create=_s3_bucket, autoname="bucket", ident=lambda req: req.inputs["bucket"]
    ),
    "aws:rds/instance:Instance": ResourceModel(create=_rds_instance, autoname="identifier"),
    "aws:iam/role:Role": ResourceModel(
        create=_iam_role, autoname="name", ident=lambda req: req.inputs["name"]
    ),
    "aws:iam/rolePolicyAttachment:RolePolicyAttachment": ResourceModel(),
    "aws:iam/rolePolicy:RolePolicy": ResourceModel(create=lambda req: {"name": req.name}),
    "aws:kms/key:Key": ResourceModel(create=_kms_key, ident=uid),
    "aws:ec2/vpc:Vpc": ResourceModel(
        create=lambda req: {
            **_aws_arn("ec2", "vpc/{id}")(req),
            "defaultSecurityGroupId": _aws_id("sg")(req),
            "mainRouteTableId": _aws_id("rtb")(req),
            "ownerId": AWS_ACCOUNT,
        },
        ident=_aws_id("vpc"),
    ),
    "aws:ec2/subnet:Subnet": ResourceModel(create=_aws_arn("ec2", "subnet/{id}"), ident=_aws_id("subnet")),
    "aws:ec2/internetGateway:InternetGateway": ResourceModel(
        create=_aws_arn("ec2", "internet-gateway/{id}"), ident=_aws_id("igw")
    ),
    "aws:ec2/eip:Eip": ResourceModel(create=_eip, ident=_aws_id("eipalloc")),
    "aws:ec2/natGateway:NatGateway": ResourceModel(create=_nat_gateway, ident=_aws_id("nat")),
    "aws:ec2/routeTable:RouteTable": ResourceModel(
        create=_aws_arn("ec2", "route-table/{id}"), ident=_aws_id("rtb")
    ),
    "aws:ec2/routeTableAssociation:RouteTableAssociation": ResourceModel(ident=_aws_id("rtbassoc")),
    "aws:ec2/securityGroup:SecurityGroup": ResourceModel(
        create=lambda req: {**_aws_arn("ec2", "security-group/{id}")(req), "ownerId": AWS_ACCOUNT},
        autoname="name",
        ident=_aws_id("sg"),
    ),
    "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule": ResourceModel(
        create=lambda req: {
            **_aws_arn("ec2", "security-group-rule/{id}")(req),
            "securityGroupRuleId": _aws_id("sgr")(req),
        },
        ident=_aws_id("sgr"),
    ),
    # EFA and launch templates of node groups (components/cluster/eks/efa.py, launch_templates.py).
    "aws:vpc/securityGroupEgressRule:SecurityGroupEgressRule": ResourceModel(
        create=lambda req: {
            **_aws_arn("ec2", "security-group-rule/{id}")(req),
            "securityGroupRuleId": _aws_id("sgr")(req),
        },
        ident=_aws_id("sgr"),
    ),
    "aws:ec2/placementGroup:PlacementGroup": ResourceModel(
        create=lambda req: {
            **_aws_arn("ec2", "placement-group/{id}")(req),
            "placementGroupId": _aws_id("pg")(req),
        },
        ident=lambda req: req.inputs["name"],
    ),
    "aws:ec2/launchTemplate:LaunchTemplate": ResourceModel(
        create=lambda req: {
            **_aws_arn("ec2", "launch-template/{id}")(req),
            "latestVersion": 1,
            "defaultVersion": 1,
        },
        autoname="name",
        ident=_aws_id("lt"),
    ),
    "aws:eks/accessEntry:AccessEntry": ResourceModel(
        create=lambda req: {
            "accessEntryArn": f"arn:aws:eks:{_aws_region(req)}:{AWS_ACCOUNT}:access-entry/{uid(req)}",
            "createdAt": CREATED_AT,
            "modifiedAt": CREATED_AT,
            "kubernetesGroups": [],
            "userName": str(req.inputs.get("principalArn", "")),
        }
    ),
    "aws:eks/accessPolicyAssociation:AccessPolicyAssociation": ResourceModel(
        create=lambda req: {"associatedAt": CREATED_AT, "modifiedAt": CREATED_AT}
    ),
    "aws:eks/addon:Addon": ResourceModel(
        create=lambda req: {
            "arn": f"arn:aws:eks:{_aws_region(req)}:{AWS_ACCOUNT}:addon/"
            f"{req.inputs.get('addonName')}/{uid(req)}",
            "addonVersion": "v1.0.0-eksbuild.1",
            "createdAt": CREATED_AT,
            "modifiedAt": CREATED_AT,
        }
    ),
    "aws:eks/podIdentityAssociation:PodIdentityAssociation": ResourceModel(
        create=lambda req: {
            "associationArn": f"arn:aws:eks:{_aws_region(req)}:{AWS_ACCOUNT}:podidentityassociation/"
            f"{uid(req)}",
            "associationId": f"a-{digest(req.seed, length=17)}",
        }
    ),
    "aws:autoscaling/tag:Tag": ResourceModel(),
    # The provider's id of a queue is its URL (SQS CreateQueue returns QueueUrl).
    "aws:sqs/queue:Queue": ResourceModel(
        create=lambda req: {
            "arn": f"arn:aws:sqs:{_aws_region(req)}:{AWS_ACCOUNT}:{req.inputs['name']}",
            "url": _sqs_url(req),
            "tagsAll": req.inputs.get("tags", {}),
        },
        autoname="name",
        ident=_sqs_url,
    ),
    "aws:sqs/queuePolicy:QueuePolicy": ResourceModel(),
    "aws:cloudwatch/eventRule:EventRule": ResourceModel(
        create=lambda req: {
            "arn": f"arn:aws:events:{_aws_region(req)}:{AWS_ACCOUNT}:rule/{req.inputs['name']}",
            "tagsAll": req.inputs.get("tags", {}),
        },
        autoname="name",
        ident=lambda req: req.inputs["name"],
    ),
    "aws:cloudwatch/eventTarget:EventTarget": ResourceModel(),
    "aws:ec2/tag:Tag": ResourceModel(),
    "aws:s3/bucketPublicAccessBlock:BucketPublicAccessBlock": ResourceModel(),
    "aws:s3/bucketOwnershipControls:BucketOwnershipControls": ResourceModel(),
    "aws:s3/bucketServerSideEncryptionConfiguration:BucketServerSideEncryptionConfiguration": ResourceModel(),
    "aws:s3/bucketPolicy:BucketPolicy": ResourceModel(),
    "aws:s3/bucketVersioning:BucketVersioning": ResourceModel(),
    "aws:s3/bucketLifecycleConfiguration:BucketLifecycleConfiguration": ResourceModel(),
    # Shared filesystems (components/cluster/eks/shared_filesystems.py): IDs as EFS and FSx form them.
    "aws:efs/fileSystem:FileSystem": ResourceModel(
        create=lambda req: {
            **_aws_arn("elasticfilesystem", "file-system/{id}")(req),
            "dnsName": f"{_aws_id('fs')(req)}.efs.{_aws_region(req)}.amazonaws.com",
            "ownerId": AWS_ACCOUNT,
        },
        ident=_aws_id("fs"),
    ),
    "aws:efs/mountTarget:MountTarget": ResourceModel(
        create=lambda req: {"ipAddress": ip_address(req.seed, (10, 0)), "ownerId": AWS_ACCOUNT},
        ident=_aws_id("fsmt"),
    ),
    "aws:efs/accessPoint:AccessPoint": ResourceModel(
        create=_aws_arn("elasticfilesystem", "access-point/{id}"), ident=_aws_id("fsap")
    ),
    "aws:efs/backupPolicy:BackupPolicy": ResourceModel(
        ident=lambda req: str(req.inputs.get("fileSystemId", ""))
    ),
    "aws:fsx/lustreFileSystem:LustreFileSystem": ResourceModel(
        create=lambda req: {
            **_aws_arn("fsx", "file-system/{id}")(req),
            "dnsName": f"{_aws_id('fs')(req)}.fsx.{_aws_region(req)}.amazonaws.com",
            # PERSISTENT_2 file systems get an 8-character mount name.
            "mountName": digest(req.seed, "mount", length=8),
            "ownerId": AWS_ACCOUNT,
        },
        ident=_aws_id("fs"),
    ),
    "aws:fsx/dataRepositoryAssociation:DataRepositoryAssociation": ResourceModel(
        create=_aws_arn("fsx", "association/{id}"), ident=_aws_id("dra")
    ),
    "aws:rds/subnetGroup:SubnetGroup": ResourceModel(
        create=_aws_arn("rds", "subgrp:{id}"), autoname="name", ident=lambda req: req.inputs["name"]
    ),
    "aws:rds/parameterGroup:ParameterGroup": ResourceModel(
        create=_aws_arn("rds", "pg:{id}"), autoname="name", ident=lambda req: req.inputs["name"]
    ),
}


# --- functions (invokes) -------------------------------------------------------------------


def _aws_offerings(req: Request) -> dict[str, Any]:
    region = _aws_region(req)
    # Every zone a config may name (a-f): the plan never refuses a zone EC2 may offer.
    locations = [f"{region}{letter}" for letter in "abcdef"]
    types = [f["values"][0] for f in req.inputs.get("filters", []) if f.get("name") == "instance-type"]
    return {
        "id": region,
        "locations": locations,
        "locationTypes": ["availability-zone"] * len(locations),
        "instanceTypes": types * len(locations) if types else [],
        "locationType": req.inputs.get("locationType"),
        "filters": req.inputs.get("filters", []),
    }


def _aws_subnet(req: Request) -> dict[str, Any]:
    region = _aws_region(req)
    subnet = req.inputs.get("id", "")
    # Existing subnets: a zone per subnet, stable, spread as a VPC's subnets are.
    letter = "abc"[int(hashlib.sha256(subnet.encode()).hexdigest(), 16) % 3]
    return {"id": subnet, "availabilityZone": f"{region}{letter}", "availabilityZoneId": f"{region}-az1"}


def _aws_zones(req: Request) -> dict[str, Any]:
    region = _aws_region(req)
    names = [f"{region}{letter}" for letter in "abc"]
    return {
        "id": region,
        "names": names,
        "zoneIds": [f"{region}-az{i}" for i in (1, 2, 3)],
        "groupNames": [region],
        "state": req.inputs.get("state"),
        "region": region,
    }


def _aws_region_info(req: Request) -> dict[str, Any]:
    region = _aws_region(req)
    return {
        "id": region,
        "name": region,
        "region": region,
        "endpoint": f"ec2.{region}.amazonaws.com",
        "description": region,
    }


def _eks_addon_version(req: Request) -> dict[str, Any]:
    """An add-on version of EKS's form (v<major.minor.patch>-eksbuild.<n>), one per add-on and
    Kubernetes minor: the plan shows that each add-on follows the cluster's version."""
    addon, kubernetes = str(req.inputs.get("addonName", "")), str(req.inputs.get("kubernetesVersion", ""))
    minor = kubernetes.split(".")[1] if kubernetes.count(".") == 1 else "0"
    patch = int(digest(addon, length=2), 16) % 10
    return {
        "id": addon,
        "addonName": addon,
        "kubernetesVersion": kubernetes,
        "mostRecent": bool(req.inputs.get("mostRecent", False)),
        "region": _aws_region(req),
        "version": f"v1.{minor}.{patch}-eksbuild.1",
    }


INVOKES: dict[str, Callable[[Request], dict[str, Any]]] = {
    "aws:index/getCallerIdentity:getCallerIdentity": lambda req: {
        "id": AWS_ACCOUNT,
        "accountId": AWS_ACCOUNT,
        "arn": f"arn:aws:iam::{AWS_ACCOUNT}:user/offline-plan",
        "userId": "AIDAOFFLINEPLAN000000",
    },
    "aws:index/getAvailabilityZones:getAvailabilityZones": _aws_zones,
    # Offline, every type is offered in every zone the mocks know and each existing subnet
    # is in one of them: the real answers come from EC2 at `pulumi up`.
    "aws:ec2/getInstanceTypeOfferings:getInstanceTypeOfferings": _aws_offerings,
    "aws:ec2/getSubnet:getSubnet": _aws_subnet,
    "aws:index/getRegion:getRegion": _aws_region_info,
    "aws:eks/getAddonVersion:getAddonVersion": _eks_addon_version,
    "aws:iam/getSessionContext:getSessionContext": lambda req: {
        "id": req.inputs.get("arn", ""),
        "arn": req.inputs.get("arn", ""),
        "issuerArn": req.inputs.get("arn", ""),
        "issuerId": "AROAOFFLINEPLAN000000",
        "issuerName": "offline-plan",
        "sessionName": "",
    },
}
