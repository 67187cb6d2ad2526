"""Rules an EKS stack must meet beyond each section's own checks: instance types that carry
the GPUs a pool declares (and CPU pools that do not), a Kubernetes version the pinned
cluster-autoscaler serves, an API endpoint fenced in prod, and a coherent VPC section."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING

from deploy import versions
from deploy.config import eks_instances
from deploy.config.database import ManagedDatabase
from deploy.config.node_pools import EksNodePool
from deploy.config.syntax import shown

if TYPE_CHECKING:
    from deploy.config.stack import EksStack

Add = Callable[[str, str], None]

_INSTANCE_TYPE = "an EC2 instance type such as m6i.2xlarge or g6.12xlarge"
# family.size (m6i.2xlarge, u-6tb1.metal, p4d.24xlarge)
_INSTANCE_TYPE_FORM = re.compile(r"[a-z][a-z0-9-]*\.[a-z0-9-]+")
RDS_MIN_STORAGE_GB = 20


def _gpu_problems(i: int, pool: EksNodePool, add: Add) -> None:
    at = f"nodePools[{i}]"
    if not _INSTANCE_TYPE_FORM.fullmatch(pool.machine_type):
        add(f"{at}.machineType", f"{shown(pool.machine_type)} is not {_INSTANCE_TYPE}")
        return
    family = eks_instances.family(pool.machine_type)
    accelerator = eks_instances.accelerator(pool.machine_type)
    gpu = pool.gpu
    if eks_instances.arm(pool.machine_type) and not accelerator:
        add(
            f"{at}.machineType",
            f"{pool.machine_type!r} has ARM (Graviton) CPUs; node groups run the x86_64 AL2023 AMIs: "
            "choose an x86 instance type (m6i, m7i, c7i, r7i, ...)",
        )
        return
    if gpu is None:
        if accelerator:
            count = eks_instances.gpu_count(pool.machine_type)
            add(
                f"{at}.gpu",
                f"required: {pool.machine_type} carries {count} {accelerator} GPU(s); set gpu {{type: "
                f"{accelerator}, count: {count}}} (GPU nodes run the NVIDIA AMI and are tainted for GPU "
                "tasks), or choose a CPU instance type",
            )
        return
    if accelerator is None:
        why = eks_instances.NOT_NVIDIA_X86.get(family, "no NVIDIA GPU")
        families = ", ".join(sorted(eks_instances.FAMILY_ACCELERATOR))
        add(f"{at}.machineType", f"{pool.machine_type!r} has {why}; GPU pools need one of: {families}")
        return
    if gpu.type != accelerator:
        add(f"{at}.gpu.type", f"{gpu.type!r} does not fit: {pool.machine_type} carries {accelerator}")
    count = eks_instances.gpu_count(pool.machine_type)
    if gpu.count != count:
        add(f"{at}.gpu.count", f"{pool.machine_type} has {count} GPU(s), not {gpu.count}")


def _version_problems(cfg: EksStack, add: Add) -> None:
    version = cfg.cluster.kubernetes_version
    if version is not None and version not in versions.CLUSTER_AUTOSCALER_IMAGES:
        known = ", ".join(versions.CLUSTER_AUTOSCALER_IMAGES)
        add("cluster.kubernetesVersion", f"{version} is not one this release pins for EKS ({known})")


def _endpoint_problems(cfg: EksStack, add: Add) -> None:
    endpoint = cfg.cluster.endpoint
    at = "cluster.endpoint"
    if not endpoint.private_access and not endpoint.public_access:
        add(f"{at}.publicAccess", "privateAccess and publicAccess cannot both be false")
    if endpoint.public_access_cidrs and not endpoint.public_access:
        add(f"{at}.publicAccessCidrs", "only with publicAccess true")


def _vpc_problems(cfg: EksStack, add: Add) -> None:
    vpc = cfg.cluster.vpc
    at = "cluster.vpc"
    if vpc.existing:
        if cfg.cluster.zones:
            add("cluster.zones", "only for a created VPC: an existing VPC's subnets decide the zones")
        if len(vpc.private_subnet_ids) < 2:
            add(f"{at}.privateSubnetIds", "at least two subnets (in two zones) of the existing VPC")
        if "cidr" in vpc.model_fields_set:
            add(f"{at}.cidr", "only for a created VPC (without vpc.id)")
    else:
        if vpc.private_subnet_ids:
            add(f"{at}.privateSubnetIds", "only for an existing VPC (vpc.id)")
        zones = len(cfg.cluster.zones)
        wanted = 3 if cfg.environment == "prod" else 2
        if zones and zones < wanted:
            add("cluster.zones", f"at least {wanted} availability zones in {cfg.environment}")


def _taint_problems(i: int, pool: EksNodePool, add: Add) -> None:
    for j, taint in enumerate(pool.taints):
        if not taint.value:
            add(
                f"nodePools[{i}].taints[{j}].value", "required on EKS (node group taints always have a value)"
            )


def _database_problems(cfg: EksStack, add: Add) -> None:
    db = cfg.database
    if isinstance(db, ManagedDatabase) and db.storage_size_gb < RDS_MIN_STORAGE_GB:
        add("database.storageSizeGb", f"RDS gp3 storage starts at {RDS_MIN_STORAGE_GB} GB")
    if isinstance(db, ManagedDatabase) and db.tier.startswith("db-"):
        add(
            "database.tier",
            f"{db.tier!r} is a Cloud SQL tier; RDS instance classes start with 'db.' (example: db.m6g.large)",
        )


def _zone_problems(cfg: EksStack, add: Add) -> None:
    region = cfg.cluster.region
    for i, zone in enumerate(cfg.cluster.zones):
        if not zone.startswith(region):
            add(f"cluster.zones[{i}]", f"{zone!r} is not a zone of cluster.region {region}")


def eks_problems(cfg: EksStack, add: Add) -> None:
    for i, pool in enumerate(cfg.node_pools):
        _gpu_problems(i, pool, add)
        _taint_problems(i, pool, add)
    _version_problems(cfg, add)
    _endpoint_problems(cfg, add)
    _vpc_problems(cfg, add)
    _zone_problems(cfg, add)
    _database_problems(cfg, add)
