"""`database.mode: managed` on EKS: RDS for PostgreSQL in the private subnets.

Reached only from the cluster (a security group admitting 5432 from the cluster's
security group), encrypted at rest, TLS forced by its parameter group, daily backups;
prod adds Multi-AZ, deletion protection and a final snapshot. Kept on `pulumi destroy`
unless `allowDataDeletion` (dev only).
"""

from __future__ import annotations

from typing import Any

import pulumi
import pulumi_aws as aws
import pulumi_random

from components import constants, passwords
from components.cluster import DatabaseServer, namer
from components.cluster.eks.args import EksClusterArgs
from components.cluster.eks.network import Network
from components.config import ManagedDatabase

ENGINE_VERSION = "17"  # PostgreSQL 17: supported by RDS until 2030
PARAMETER_FAMILY = "postgres17"
BACKUP_DAYS = {"dev": 7, "prod": 30}
STORAGE_GROWTH = 4
# RDS for PostgreSQL gp3 storage: "Must be an integer from 20 to 65536" GiB (Amazon RDS API
# reference, CreateDBInstance `AllocatedStorage`; botocore 1.43.11 rds service model; read
# 2026-11-25): storage autoscaling (`max_allocated_storage`) stops there.
STORAGE_MAX_GB = 65536
# Changes to the instance (class, storage, parameter group) are applied when `pulumi up` makes
# them, not in the next maintenance window: "If this parameter is disabled, changes to the DB
# instance are applied during the next maintenance window" (ModifyDBInstance
# `ApplyImmediately`, same source); until then every run would show the same change again.
APPLY_IMMEDIATELY = True
# The final snapshot a prod instance leaves when deleted is named once per instance
# (`<name>-db-final-<hex>`, a RandomId made with it): DeleteDBInstance fails with
# DBSnapshotAlreadyExistsFault when "DBSnapshotIdentifier is already used by an existing
# snapshot" (same source), as a fixed name would be by the previous instance's snapshot.
# The identifier is used only at deletion and changes in place (terraform-provider-aws
# internal/service/rds/instance.go: final_snapshot_identifier is not ForceNew).
FINAL_SNAPSHOT_SUFFIX_BYTES = 4

INSTANCE = "aws:rds/instance:Instance"


def subnet_group_name(args: EksClusterArgs) -> str:
    return namer(args.cluster).name("aws:rds/subnetGroup:SubnetGroup", "name", "db")


def security_group_name(args: EksClusterArgs) -> str:
    return namer(args.cluster).name("aws:ec2/securityGroup:SecurityGroup", "name", "db")


def parameter_group_args(args: EksClusterArgs) -> dict[str, Any]:
    return {
        "name": namer(args.cluster).name("aws:rds/parameterGroup:ParameterGroup", "name", "db"),
        "family": PARAMETER_FAMILY,
        "description": f"Determined database of {args.cluster.name}: TLS required",
        "parameters": [{"name": "rds.force_ssl", "value": "1"}],
    }


def instance_args(
    args: EksClusterArgs,
    subnet_group: pulumi.Input[str],
    security_group: pulumi.Input[str],
    parameter_group: pulumi.Input[str],
    password: pulumi.Input[str],
    final_snapshot_suffix: pulumi.Input[str] | None = None,
) -> dict[str, Any]:
    """`final_snapshot_suffix`: the hex of the instance's RandomId (prod)."""
    db = args.database
    assert isinstance(db, ManagedDatabase)
    prod = args.environment == "prod"
    high_availability = prod if db.high_availability is None else db.high_availability
    result: dict[str, Any] = {
        "identifier": identifier(args),
        "engine": "postgres",
        "engine_version": ENGINE_VERSION,
        "instance_class": db.tier,
        "allocated_storage": db.storage_size_gb,
        # Storage autoscaling up to this bound: a full disk stops the master.
        "max_allocated_storage": max_storage_gb(db.storage_size_gb),
        "storage_type": "gp3",
        "storage_encrypted": True,
        "db_name": constants.DB_DATABASE,
        "username": constants.DB_USER,
        "password": password,
        "port": constants.DB_PORT,
        "db_subnet_group_name": subnet_group,
        "vpc_security_group_ids": [security_group],
        "parameter_group_name": parameter_group,
        "publicly_accessible": False,
        "multi_az": high_availability,
        "backup_retention_period": BACKUP_DAYS[args.environment],
        "copy_tags_to_snapshot": True,
        "auto_minor_version_upgrade": True,
        "deletion_protection": prod,
        "apply_immediately": APPLY_IMMEDIATELY,
        "tags": dict(args.cluster.tags),
    }
    if prod:
        assert final_snapshot_suffix is not None, "prod instances name their final snapshot"
        result["skip_final_snapshot"] = False
        result["final_snapshot_identifier"] = pulumi.Output.concat(
            final_snapshot_base(args), "-", final_snapshot_suffix
        )
    else:
        result["skip_final_snapshot"] = True
    return result


def identifier(args: EksClusterArgs) -> str:
    return namer(args.cluster).name(INSTANCE, "identifier", "db")


def final_snapshot_base(args: EksClusterArgs) -> str:
    """`<name>-db-final`, before the instance's own suffix."""
    return namer(args.cluster).name(INSTANCE, "finalSnapshotIdentifier", "db-final")


def max_storage_gb(storage_gb: int) -> int | None:
    """The storage autoscaling bound: STORAGE_GROWTH times the start, at most STORAGE_MAX_GB;
    None (no autoscaling) when the start is already the most RDS takes."""
    bound = min(storage_gb * STORAGE_GROWTH, STORAGE_MAX_GB)
    return bound if bound > storage_gb else None


def rds(
    args: EksClusterArgs,
    net: Network,
    cluster_security_group: pulumi.Input[str],
    parent: pulumi.Resource,
    opts: pulumi.ResourceOptions,
    data: pulumi.ResourceOptions,
) -> DatabaseServer:
    """The instance in the private subnets, reached from the cluster's security group only
    (`data`: the options of what holds data or what a kept instance uses), and how the
    master reaches it."""
    name = args.cluster.name
    # What a kept instance uses is kept with it (AWS refuses to delete it while in use).
    subnets = aws.rds.SubnetGroup(
        "database",
        name=subnet_group_name(args),
        subnet_ids=net.private_subnet_ids,
        tags=dict(args.cluster.tags),
        opts=data,
    )
    group = aws.ec2.SecurityGroup(
        "database",
        name=security_group_name(args),
        description=f"PostgreSQL of {name}: from the cluster only",
        vpc_id=net.vpc_id,
        tags=dict(args.cluster.tags),
        opts=data,
    )
    aws.vpc.SecurityGroupIngressRule(
        "database-from-cluster",
        security_group_id=group.id,
        referenced_security_group_id=cluster_security_group,
        ip_protocol="tcp",
        from_port=constants.DB_PORT,
        to_port=constants.DB_PORT,
        description="PostgreSQL from the cluster's nodes and pods",
        opts=opts,
    )
    parameters = aws.rds.ParameterGroup("database", opts=data, **parameter_group_args(args))
    password = passwords.configured_or_generated("database-password", None, parent)
    suffix = None
    if args.environment == "prod":
        # One final snapshot name per instance (FINAL_SNAPSHOT_SUFFIX_BYTES): a new instance of
        # the same identifier gets a new one.
        suffix = pulumi_random.RandomId(
            "database-final-snapshot",
            byte_length=FINAL_SNAPSHOT_SUFFIX_BYTES,
            keepers={"identifier": identifier(args)},
            opts=opts,
        ).hex
    instance = aws.rds.Instance(
        "database",
        # Prod: destroy refuses up front instead of failing on deletion protection midway.
        opts=pulumi.ResourceOptions.merge(data, pulumi.ResourceOptions(protect=args.environment == "prod")),
        **instance_args(args, subnets.name, group.id, parameters.name, password, suffix),
    )
    return DatabaseServer(
        host=instance.address,
        port=constants.DB_PORT,
        name=constants.DB_DATABASE,
        user=constants.DB_USER,
        password=password,
        ssl_mode="require",
    )
