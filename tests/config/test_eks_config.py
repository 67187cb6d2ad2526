"""The EKS configuration: instance types that carry the GPUs a pool declares (and CPU pools
that carry none), a supported Kubernetes version, a fenced API in prod, the VPC section."""

from __future__ import annotations

import copy

import pytest

from deploy.config import ConfigError, EksStack, eks_instances, load_config

SYSTEM = {"name": "system", "machineType": "m6i.2xlarge"}
A100 = {"name": "a100", "machineType": "p4d.24xlarge", "gpu": {"type": "nvidia-tesla-a100", "count": 8}}

EKS = {
    "cloud": "eks",
    "cluster": {"name": "det", "region": "us-east-1"},
    "nodePools": [SYSTEM, A100],
    "resourcePools": [{"name": "a100", "nodePool": "a100"}, {"name": "aux", "nodePool": "system"}],
}


def eks(**overrides):
    raw = copy.deepcopy(EKS)
    raw.update(overrides)
    return raw


def with_gpu_pool(**pool):
    return eks(nodePools=[SYSTEM, {"name": "a100", **pool}])


def problems(raw) -> list[str]:
    with pytest.raises(ConfigError) as info:
        load_config(raw)
    return [str(p) for p in info.value.problems]


def test_an_eks_stack_with_gpu_pools_is_accepted():
    cfg = load_config(eks())
    assert isinstance(cfg, EksStack)
    assert cfg.node_pools[1].disk_size_gb == 100
    assert not cfg.cluster.vpc.existing
    assert cfg.cluster.endpoint.public_access and cfg.cluster.endpoint.private_access


@pytest.mark.parametrize(
    ("instance", "accelerator", "count"),
    [
        ("p4d.24xlarge", "nvidia-tesla-a100", 8),
        ("p5.48xlarge", "nvidia-h100-80gb", 8),
        ("g5.xlarge", "nvidia-a10g", 1),
        ("g5.12xlarge", "nvidia-a10g", 4),
        ("g6.48xlarge", "nvidia-l4", 8),
        ("g6e.2xlarge", "nvidia-l40s", 1),
        ("g4dn.metal", "nvidia-tesla-t4", 8),
        ("p6-b200.48xlarge", "nvidia-b200", 8),
    ],
)
def test_gpu_instance_types_carry_known_gpus(instance, accelerator, count):
    assert (eks_instances.accelerator(instance), eks_instances.gpu_count(instance)) == (accelerator, count)


@pytest.mark.parametrize(
    "instance", ["m6i.2xlarge", "c7i.4xlarge", "g4ad.xlarge", "g5g.xlarge", "inf2.xlarge"]
)
def test_other_instance_types_carry_no_nvidia_gpu(instance):
    assert eks_instances.accelerator(instance) is None


BAD_CASES = [
    (
        "gpu pool on a cpu family",
        with_gpu_pool(machineType="m6i.2xlarge", gpu={"type": "nvidia-l4", "count": 1}),
        "determined:nodePools[1].machineType: 'm6i.2xlarge' has no NVIDIA GPU; GPU pools need one of:",
    ),
    (
        "gpu pool on amd gpus",
        with_gpu_pool(machineType="g4ad.xlarge", gpu={"type": "nvidia-tesla-t4", "count": 1}),
        "determined:nodePools[1].machineType: 'g4ad.xlarge' has AMD GPUs",
    ),
    (
        "cpu pool on a gpu family",
        with_gpu_pool(machineType="g6.xlarge"),
        "determined:nodePools[1].gpu: required: g6.xlarge carries 1 nvidia-l4 GPU(s)",
    ),
    (
        "accelerator of another family",
        with_gpu_pool(machineType="p4d.24xlarge", gpu={"type": "nvidia-h100-80gb", "count": 8}),
        "determined:nodePools[1].gpu.type: 'nvidia-h100-80gb' does not fit: p4d.24xlarge carries nvidia-tesla-a100",
    ),
    (
        "count of another size",
        with_gpu_pool(machineType="g5.12xlarge", gpu={"type": "nvidia-a10g", "count": 8}),
        "determined:nodePools[1].gpu.count: g5.12xlarge has 4 GPU(s), not 8",
    ),
    (
        "instance type form",
        with_gpu_pool(machineType="a2-highgpu-4g", gpu={"type": "nvidia-tesla-a100", "count": 4}),
        "determined:nodePools[1].machineType: 'a2-highgpu-4g' is not an EC2 instance type",
    ),
    (
        "taint without value",
        eks(nodePools=[SYSTEM, {**A100, "taints": [{"key": "dedicated", "effect": "NoSchedule"}]}]),
        "determined:nodePools[1].taints[0].value: required on EKS",
    ),
    (
        "kubernetes version",
        eks(cluster={**EKS["cluster"], "kubernetesVersion": "1.29"}),
        "determined:cluster.kubernetesVersion: 1.29 is not one this release pins for EKS (1.33, 1.34)",
    ),
    (
        "no endpoint at all",
        eks(cluster={**EKS["cluster"], "endpoint": {"publicAccess": False, "privateAccess": False}}),
        "determined:cluster.endpoint.publicAccess: privateAccess and publicAccess cannot both be false",
    ),
    (
        "cidrs without public access",
        eks(
            cluster={
                **EKS["cluster"],
                "endpoint": {"publicAccess": False, "publicAccessCidrs": ["10.0.0.0/8"]},
            }
        ),
        "determined:cluster.endpoint.publicAccessCidrs: only with publicAccess true",
    ),
    (
        "existing vpc needs two subnets",
        eks(cluster={**EKS["cluster"], "vpc": {"id": "vpc-0123456789abcdef0"}}),
        "determined:cluster.vpc.privateSubnetIds: at least two subnets",
    ),
    (
        "subnets of a created vpc",
        eks(cluster={**EKS["cluster"], "vpc": {"privateSubnetIds": ["subnet-0123456789abcdef0"]}}),
        "determined:cluster.vpc.privateSubnetIds: only for an existing VPC",
    ),
    (
        "cidr of an existing vpc",
        eks(
            cluster={
                **EKS["cluster"],
                "vpc": {
                    "id": "vpc-0123456789abcdef0",
                    "privateSubnetIds": ["subnet-0123456789abcdef0", "subnet-0123456789abcdef1"],
                    "cidr": "10.1.0.0/16",
                },
            }
        ),
        "determined:cluster.vpc.cidr: only for a created VPC",
    ),
    (
        "vpc id form",
        eks(cluster={**EKS["cluster"], "vpc": {"id": "my-vpc"}}),
        "determined:cluster.vpc.id: 'my-vpc' is not a VPC ID (vpc-...)",
    ),
    (
        "zones in prod",
        eks(
            environment="prod",
            cluster={
                **EKS["cluster"],
                "zones": ["us-east-1a", "us-east-1b"],
                "endpoint": {"publicAccessCidrs": ["203.0.113.0/24"]},
            },
        ),
        "determined:cluster.zones: at least 3 availability zones in prod",
    ),
    (
        "admin arn form",
        eks(cluster={**EKS["cluster"], "adminArns": ["admins"]}),
        "determined:cluster.adminArns[0]: 'admins' is not an IAM role or user ARN",
    ),
    (
        "gcs bucket is not created on eks",
        eks(checkpointStorage={"type": "gcs"}),
        "determined:checkpointStorage.bucket: required for gcs storage on cloud eks",
    ),
    (
        "graviton cpu pool",
        eks(nodePools=[{"name": "system", "machineType": "m7g.2xlarge"}, A100]),
        "determined:nodePools[0].machineType: 'm7g.2xlarge' has ARM (Graviton) CPUs",
    ),
    (
        "rds storage minimum",
        eks(database={"mode": "managed", "tier": "db.t4g.medium", "storageSizeGb": 10}),
        "determined:database.storageSizeGb: RDS gp3 storage starts at 20 GB",
    ),
    (
        "zones with an existing vpc",
        eks(
            cluster={
                **EKS["cluster"],
                "zones": ["us-east-1a", "us-east-1b"],
                "vpc": {
                    "id": "vpc-0123456789abcdef0",
                    "privateSubnetIds": ["subnet-0123456789abcdef0", "subnet-0123456789abcdef1"],
                },
            }
        ),
        "determined:cluster.zones: only for a created VPC",
    ),
    (
        "s3-compatible store without a bucket",
        eks(checkpointStorage={"type": "s3", "endpointUrl": "http://minio:9000"}),
        "determined:checkpointStorage.bucket: required with endpointUrl or static keys",
    ),
    (
        "gke keys on eks",
        eks(cluster={**EKS["cluster"], "releaseChannel": "STABLE"}),
        "determined:cluster.releaseChannel: only for cloud gke",
    ),
]


@pytest.mark.parametrize(("raw", "expected"), [c[1:] for c in BAD_CASES], ids=[c[0] for c in BAD_CASES])
def test_bad_eks_config_names_key_path_and_problem(raw, expected):
    lines = problems(raw)
    assert any(line.startswith(expected) for line in lines), lines
