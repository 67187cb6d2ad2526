"""`database.mode: managed` on EKS: RDS for PostgreSQL in the private subnets.

Reached only from the cluster (a security group admitting 5432 from the cluster's
security group), encrypted at rest, TLS forced by its parameter group, daily backups;
prod adds Multi-AZ, deletion protection and a final snapshot. Kept on `pulumi destroy`
unless `allowDataDeletion` (dev only).
"""

from __future__ import annotations

from typing import Any

import pulumi

from deploy import defaults
from deploy.config import EksStack, ManagedDatabase
from deploy.platform import namer

ENGINE_VERSION = "17"  # PostgreSQL 17: supported by RDS until 2030
PARAMETER_FAMILY = "postgres17"
BACKUP_DAYS = {"dev": 7, "prod": 30}
STORAGE_GROWTH = 4

INSTANCE = "aws:rds/instance:Instance"


def subnet_group_name(cfg: EksStack) -> str:
    return namer(cfg).name("aws:rds/subnetGroup:SubnetGroup", "name", "db")


def security_group_name(cfg: EksStack) -> str:
    return namer(cfg).name("aws:ec2/securityGroup:SecurityGroup", "name", "db")


def parameter_group_args(cfg: EksStack) -> dict[str, Any]:
    return {
        "name": namer(cfg).name("aws:rds/parameterGroup:ParameterGroup", "name", "db"),
        "family": PARAMETER_FAMILY,
        "description": f"Determined database of {cfg.cluster.name}: TLS required",
        "parameters": [{"name": "rds.force_ssl", "value": "1"}],
    }


def instance_args(
    cfg: EksStack,
    subnet_group: pulumi.Input[str],
    security_group: pulumi.Input[str],
    parameter_group: pulumi.Input[str],
    password: pulumi.Input[str],
) -> dict[str, Any]:
    db = cfg.database
    assert isinstance(db, ManagedDatabase)
    prod = cfg.environment == "prod"
    high_availability = prod if db.high_availability is None else db.high_availability
    args: dict[str, Any] = {
        "identifier": namer(cfg).name(INSTANCE, "identifier", "db"),
        "engine": "postgres",
        "engine_version": ENGINE_VERSION,
        "instance_class": db.tier,
        "allocated_storage": db.storage_size_gb,
        # Storage autoscaling up to this bound: a full disk stops the master.
        "max_allocated_storage": db.storage_size_gb * STORAGE_GROWTH,
        "storage_type": "gp3",
        "storage_encrypted": True,
        "db_name": defaults.DB_DATABASE,
        "username": defaults.DB_USER,
        "password": password,
        "port": defaults.DB_PORT,
        "db_subnet_group_name": subnet_group,
        "vpc_security_group_ids": [security_group],
        "parameter_group_name": parameter_group,
        "publicly_accessible": False,
        "multi_az": high_availability,
        "backup_retention_period": BACKUP_DAYS[cfg.environment],
        "copy_tags_to_snapshot": True,
        "auto_minor_version_upgrade": True,
        "deletion_protection": prod,
        "tags": dict(cfg.cluster.tags),
    }
    if prod:
        args["skip_final_snapshot"] = False
        args["final_snapshot_identifier"] = namer(cfg).name(INSTANCE, "finalSnapshotIdentifier", "db-final")
    else:
        args["skip_final_snapshot"] = True
    return args
