"""The EKS configuration: instance types that carry the GPUs a pool declares (and CPU pools
that carry none), a supported Kubernetes version, a fenced API in prod, the VPC section."""

from __future__ import annotations

import copy

import pytest
from conftest import GKE, raw_config

from components.config import ConfigError, EksStack, eks_instances, load_config

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
        # EC2 DescribeInstanceTypes as the cluster-autoscaler's generated table has it.
        ("p5.4xlarge", "nvidia-h100-80gb", 1),
        ("g7e.2xlarge", "nvidia-rtx-pro-6000", 1),
        ("g7e.8xlarge", "nvidia-rtx-pro-6000", 1),
        ("g7e.12xlarge", "nvidia-rtx-pro-6000", 2),
        ("g7e.24xlarge", "nvidia-rtx-pro-6000", 4),
        ("g7e.48xlarge", "nvidia-rtx-pro-6000", 8),
        ("gr6.8xlarge", "nvidia-l4", 1),
        ("p6-b300.48xlarge", "nvidia-b300", 8),
    ],
)
def test_gpu_instance_types_carry_known_gpus(instance, accelerator, count):
    assert (eks_instances.accelerator(instance), eks_instances.gpu_count(instance)) == (accelerator, count)


@pytest.mark.parametrize(
    "instance", ["m6i.2xlarge", "c7i.4xlarge", "g4ad.xlarge", "g5g.xlarge", "inf2.xlarge"]
)
def test_other_instance_types_carry_no_nvidia_gpu(instance):
    assert eks_instances.accelerator(instance) is None


@pytest.mark.parametrize(
    ("instance", "refused"),
    [
        ("g6f.xlarge", "a fraction of one NVIDIA L4"),
        ("gr6f.4xlarge", "a fraction of one NVIDIA L4"),
        ("p6e-gb200.36xlarge", "NVIDIA Grace superchips, whose CPUs are Arm"),
        ("p2.xlarge", "NVIDIA K80 GPUs"),
        ("p7.48xlarge", "GPUs of a family this release does not know"),
        ("g3.4xlarge", "GPUs of a family this release does not know"),
        ("g4ad.xlarge", "AMD GPUs"),
    ],
)
def test_gpu_named_families_outside_the_table_are_refused_not_taken_for_cpu(instance, refused):
    assert (eks_instances.refused_gpu_family(instance) or "").startswith(refused)
    # As a CPU group (no gpu) too: it would get the standard AMI and no GPU taint.
    (line,) = [
        p for p in problems(eks(nodePools=[SYSTEM, {"name": "x", "machineType": instance}])) if "[1]" in p
    ]
    assert line.startswith(f"determined:nodePools[1].machineType: {instance!r} has {refused}"), line


@pytest.mark.parametrize(
    "instance", ["m6i.2xlarge", "c7i.4xlarge", "inf2.xlarge", "r7i.large", "x2idn.16xlarge"]
)
def test_cpu_families_are_not_gpu_named(instance):
    assert eks_instances.refused_gpu_family(instance) is None


def test_grace_families_are_arm():
    assert eks_instances.arm("p6e-gb200.36xlarge") and not eks_instances.arm("p6-b200.48xlarge")


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
        "determined:cluster.kubernetesVersion: 1.29: EKS does not offer it; choose one of 1.36, 1.35",
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
        "size a gpu family does not have",
        with_gpu_pool(machineType="g7e.xlarge", gpu={"type": "rtx-pro-6000", "count": 1}),
        "determined:nodePools[1].machineType: 'g7e.xlarge' is not a size of g7e; EC2 offers g7e.2xlarge,",
    ),
    (
        "b300 count",
        with_gpu_pool(machineType="p6-b300.48xlarge", gpu={"type": "b300", "count": 4}),
        "determined:nodePools[1].gpu.count: p6-b300.48xlarge has 8 GPU(s), not 4",
    ),
    (
        "govcloud region",
        eks(cluster={**EKS["cluster"], "region": "us-gov-west-1"}),
        "determined:cluster.region: us-gov-west-1 is in the aws-us-gov partition; every ARN this stack writes",
    ),
    (
        "china region",
        eks(cluster={**EKS["cluster"], "region": "cn-north-1"}),
        "determined:cluster.region: cn-north-1 is in the aws-cn partition",
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


# --- node groups that can start -------------------------------------------------------------


def min_nodes(raw) -> dict[str, int]:
    return {pool.name: pool.min_nodes for pool in load_config(raw).node_pools}


PROD = {
    "environment": "prod",
    "cluster": {**EKS["cluster"], "endpoint": {"publicAccessCidrs": ["203.0.113.0/24"]}},
    "database": {"mode": "managed", "tier": "db.m7g.large"},
    "checkpointStorage": {"type": "s3"},
}


def test_the_first_untainted_on_demand_cpu_group_starts_with_one_node_two_in_prod():
    assert min_nodes(eks()) == {"system": 1, "a100": 0}
    assert min_nodes(eks(**PROD, nodePools=[{**SYSTEM, "maxNodes": 3}, A100])) == {"system": 2, "a100": 0}
    # Never above maxNodes (1 by default).
    assert min_nodes(eks(**PROD)) == {"system": 1, "a100": 0}
    # Spot and tainted CPU groups are not system groups; the first on-demand untainted one is.
    spot = {"name": "spot", "machineType": "m6i.2xlarge", "spot": True}
    tainted = {
        "name": "batch",
        "machineType": "m6i.2xlarge",
        "taints": [{"key": "batch", "value": "yes", "effect": "NoSchedule"}],
    }
    assert min_nodes(eks(nodePools=[spot, tainted, SYSTEM, A100])) == {
        "spot": 0,
        "batch": 0,
        "system": 1,
        "a100": 0,
    }


def test_a_written_min_nodes_is_kept():
    assert min_nodes(eks(nodePools=[{**SYSTEM, "minNodes": 3, "maxNodes": 4}, A100]))["system"] == 3
    other = {"name": "cpu", "machineType": "m6i.large", "minNodes": 1}
    assert min_nodes(eks(nodePools=[{**SYSTEM, "minNodes": 0}, other, A100])) == {
        "system": 0,
        "cpu": 1,
        "a100": 0,
    }


def test_gke_pools_keep_min_nodes_0_its_autoscaler_runs_in_the_control_plane():
    # GKE scales node pools from zero itself (cluster autoscaling is a GKE feature, not a pod);
    # and a changed initial node count would replace existing GKE node pools.
    assert load_config(raw_config(**GKE)).node_pools[0].min_nodes == 0


# --- GPU names ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("instance", "written", "accelerator", "count"),
    [
        ("g5.xlarge", "a10g", "nvidia-a10g", 1),
        ("g5.12xlarge", "A10G", "nvidia-a10g", 4),
        ("p4d.24xlarge", "a100", "nvidia-tesla-a100", 8),
        ("p4de.24xlarge", "a100", "nvidia-a100-80gb", 8),
        ("p4de.24xlarge", "a100-80gb", "nvidia-a100-80gb", 8),
        ("p5.48xlarge", "h100", "nvidia-h100-80gb", 8),
        ("p5e.48xlarge", "h200", "nvidia-h200-141gb", 8),
        ("p6-b200.48xlarge", "b200", "nvidia-b200", 8),
        ("p6-b300.48xlarge", "b300", "nvidia-b300", 8),
        ("g7e.12xlarge", "rtx-pro-6000", "nvidia-rtx-pro-6000", 2),
        ("g6.xlarge", "l4", "nvidia-l4", 1),
        ("g6e.xlarge", "l40s", "nvidia-l40s", 1),
        ("g4dn.xlarge", "t4", "nvidia-tesla-t4", 1),
        ("p3.2xlarge", "v100", "nvidia-tesla-v100", 1),
        ("g6.xlarge", "nvidia-l4", "nvidia-l4", 1),
    ],
)
def test_common_gpu_short_names_become_the_instance_types_gpu(instance, written, accelerator, count):
    cfg = load_config(with_gpu_pool(machineType=instance, gpu={"type": written, "count": count}))
    assert cfg.node_pools[1].gpu.type == accelerator


@pytest.mark.parametrize(
    ("machine", "written", "accelerator", "count"),
    [
        ("n1-standard-8", "t4", "nvidia-tesla-t4", 1),
        ("n1-standard-8", "V100", "nvidia-tesla-v100", 2),
        ("a2-highgpu-4g", "a100", "nvidia-tesla-a100", 4),
        ("a2-ultragpu-8g", "a100", "nvidia-a100-80gb", 8),
        ("a3-highgpu-8g", "h100", "nvidia-h100-80gb", 8),
        ("a3-megagpu-8g", "h100", "nvidia-h100-mega-80gb", 8),
        ("a3-ultragpu-8g", "h200", "nvidia-h200-141gb", 8),
        ("g2-standard-8", "l4", "nvidia-l4", 1),
    ],
)
def test_gpu_short_names_on_gke_become_the_accelerator_type(machine, written, accelerator, count):
    raw = {
        **GKE,
        "nodePools": [
            {"name": "system", "machineType": "e2-standard-8"},
            # Spot: a3-ultragpu is not sold on demand (components/config/gke_machines.py NOT_ON_DEMAND).
            {"name": "gpu", "machineType": machine, "gpu": {"type": written, "count": count}, "spot": True},
        ],
        "resourcePools": [{"name": "gpu", "nodePool": "gpu"}],
    }
    assert load_config(raw).node_pools[1].gpu.type == accelerator


# --- labels, taints and tags the APIs take ---------------------------------------------------------

LONG_KEY = "example.com/" + "k" * 52  # 64 characters: a valid Kubernetes label key


def test_a_63_character_label_key_is_accepted():
    load_config(eks(nodePools=[SYSTEM, {**A100, "labels": {LONG_KEY[1:]: "x"}}]))


BAD_NODE_GROUP_CASES = [
    (
        "label key over 63 characters",
        eks(nodePools=[SYSTEM, {**A100, "labels": {LONG_KEY: "x"}}]),
        f"determined:nodePools[1].labels: label key '{LONG_KEY}' has 64 characters; EKS node group labels "
        "take keys of at most 63",
    ),
    (
        "label without value",
        eks(nodePools=[SYSTEM, {**A100, "labels": {"team": ""}}]),
        "determined:nodePools[1].labels: label 'team' has no value",
    ),
    (
        "the accelerator label",
        eks(nodePools=[SYSTEM, {**A100, "labels": {"k8s.amazonaws.com/accelerator": "a100"}}]),
        "determined:nodePools[1].labels: 'k8s.amazonaws.com/accelerator' is set by the project",
    ),
    (
        "taint key over 63 characters",
        eks(
            nodePools=[SYSTEM, {**A100, "taints": [{"key": LONG_KEY, "value": "x", "effect": "NoSchedule"}]}]
        ),
        f"determined:nodePools[1].taints[0].key: '{LONG_KEY}' has 64 characters",
    ),
    (
        "no system group starts",
        eks(nodePools=[{**SYSTEM, "minNodes": 0}, A100]),
        "determined:nodePools[0].minNodes: 0 on every untainted on-demand CPU group leaves the new cluster "
        "without a node",
    ),
    (
        "gpu name of another instance type",
        with_gpu_pool(machineType="p4d.24xlarge", gpu={"type": "h100", "count": 8}),
        "determined:nodePools[1].gpu.type: 'h100' does not fit: p4d.24xlarge carries nvidia-tesla-a100 "
        "(write a100 or a100-40gb or nvidia-tesla-a100)",
    ),
    (
        "tag key over 128 characters",
        eks(cluster={**EKS["cluster"], "tags": {"k" * 129: "x"}}),
        "determined:cluster.tags." + "k" * 129 + ": AWS tag keys take at most 128 characters",
    ),
    (
        "tag value over 256 characters",
        eks(cluster={**EKS["cluster"], "tags": {"team": "v" * 257}}),
        "determined:cluster.tags.team: AWS tag values take at most 256 characters",
    ),
    (
        "tag of aws",
        eks(cluster={**EKS["cluster"], "tags": {"aws:team": "x"}}),
        "determined:cluster.tags: key 'aws:team': the 'aws:' prefix (in any case) is AWS's own",
    ),
    (
        "tag of the autoscaler",
        eks(cluster={**EKS["cluster"], "tags": {"k8s.io/cluster-autoscaler/enabled": "false"}}),
        "determined:cluster.tags.k8s.io/cluster-autoscaler/enabled: keys under 'k8s.io/cluster-autoscaler/'",
    ),
    (
        "tag value with characters AWS tag APIs refuse",
        eks(cluster={**EKS["cluster"], "tags": {"cost-center": "R&D 4711"}}),
        "determined:cluster.tags.cost-center: the value has '&'; AWS tags (RDS, S3, ...) take letters, digits, "
        "spaces and _ . : / = + - @ only",
    ),
    (
        "tag key with characters AWS tag APIs refuse",
        eks(cluster={**EKS["cluster"], "tags": {"project(pilot)": "x"}}),
        "determined:cluster.tags.project(pilot): the key has '(' ')';",
    ),
    (
        "tag of rds with a managed database",
        eks(
            cluster={**EKS["cluster"], "tags": {"rds:owner": "ml"}},
            database={"mode": "managed", "tier": "db.m7g.large"},
        ),
        "determined:cluster.tags: key 'rds:owner': the 'rds:' prefix is RDS's own",
    ),
    (
        "more than 50 tags on an auto scaling group",
        eks(cluster={**EKS["cluster"], "tags": {f"cost{i}": "x" for i in range(44)}}),
        "determined:cluster.tags: node group 'a100' (nodePools[1]) would put 54 tags on its Auto Scaling "
        "group: 44 of cluster.tags, 5 node-template tags of its labels and taints, 5 EKS adds itself; Auto "
        "Scaling takes at most 50 per group: remove 4",
    ),
    (
        "kubernetes version newer than the table",
        eks(cluster={**EKS["cluster"], "kubernetesVersion": "1.99"}),
        "determined:cluster.kubernetesVersion: 1.99: this release does not know it yet",
    ),
]


@pytest.mark.parametrize(
    ("raw", "expected"), [c[1:] for c in BAD_NODE_GROUP_CASES], ids=[c[0] for c in BAD_NODE_GROUP_CASES]
)
def test_node_groups_eks_would_refuse_are_refused_naming_the_key(raw, expected):
    lines = problems(raw)
    assert any(line.startswith(expected) for line in lines), lines


def test_tags_of_unicode_letters_digits_spaces_and_the_allowed_symbols_are_accepted():
    tags = {"équipe": "données 1", "cost:center/2026": "ml_platform=+.-@", "チーム": "研究"}
    assert load_config(eks(cluster={**EKS["cluster"], "tags": tags})).cluster.tags == tags
    # `rds:` only matters where RDS gets the tags (a managed database).
    load_config(eks(cluster={**EKS["cluster"], "tags": {"rds:owner": "ml"}}))


def test_fifty_tags_on_an_auto_scaling_group_are_accepted_51_refused():
    # The system group: 1 node-template tag (its node-pool label) and EKS's 5.
    def lines(n):
        return [
            p
            for p in problems_or_none(
                eks(cluster={**EKS["cluster"], "tags": {f"t{i}": "x" for i in range(n)}})
            )
            if "'system'" in p
        ]

    assert lines(44) == []  # 44 + 1 + 5 = 50
    (line,) = lines(45)
    assert "would put 51 tags" in line


def problems_or_none(raw) -> list[str]:
    try:
        load_config(raw)
    except ConfigError as error:
        return [str(p) for p in error.problems]
    return []


def test_regions_of_the_aws_partition_are_accepted():
    for region in ("us-east-1", "ap-south-2", "il-central-1", "mx-central-1", "eu-central-2"):
        assert not [
            p for p in problems_or_none(eks(cluster={**EKS["cluster"], "region": region})) if "region" in p
        ]


def test_a_version_in_extended_support_is_accepted_and_refused_once_eks_drops_it(monkeypatch):
    from datetime import date

    from components import versions

    pinned = eks(cluster={**EKS["cluster"], "kubernetesVersion": "1.33"})
    monkeypatch.setattr(versions, "today", lambda: date(2026, 11, 25))
    assert load_config(pinned).cluster.kubernetes_version == "1.33"  # extended support: accepted
    monkeypatch.setattr(versions, "today", lambda: date(2027, 7, 29))  # its end of extended support
    (line,) = [p for p in problems(pinned) if "kubernetesVersion" in p]
    assert line.startswith(
        "determined:cluster.kubernetesVersion: 1.33: its EKS extended support ended on 2027-07-29"
    )
