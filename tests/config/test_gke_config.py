"""The GKE configuration: machine types and GPUs that fit, settings only GKE-managed drivers
honour, the network section, and how each refusal reads."""

from __future__ import annotations

import copy

import pytest

from components.config import ConfigError, GkeStack, gke_machines, load_config

SYSTEM = {"name": "system", "machineType": "e2-standard-8"}
A100 = {"name": "a100", "machineType": "a2-highgpu-4g", "gpu": {"type": "nvidia-tesla-a100", "count": 4}}

GKE = {
    "cloud": "gke",
    "cluster": {"name": "det", "region": "us-central1", "project": "p"},
    "nodePools": [SYSTEM, A100],
    "resourcePools": [{"name": "a100", "nodePool": "a100"}, {"name": "aux", "nodePool": "system"}],
}


def gke(**overrides):
    raw = copy.deepcopy(GKE)
    for key, value in overrides.items():
        raw[key] = value
    return raw


def with_gpu_pool(**pool):
    return gke(nodePools=[SYSTEM, {"name": "a100", **pool}])


def problems(raw) -> list[str]:
    with pytest.raises(ConfigError) as info:
        load_config(raw)
    return [str(p) for p in info.value.problems]


def test_a_gke_stack_with_gpu_pools_is_accepted():
    cfg = load_config(gke())
    assert isinstance(cfg, GkeStack)
    pool = cfg.node_pools[1]
    assert (pool.gpu.driver_version, pool.image_type, pool.disk_type) == ("DEFAULT", "COS_CONTAINERD", None)
    assert cfg.cluster.release_channel == "REGULAR"
    assert not cfg.cluster.network.existing


@pytest.mark.parametrize(
    ("machine", "accelerators", "counts", "fixed"),
    [
        ("a2-highgpu-4g", ("nvidia-tesla-a100",), (4,), True),
        ("a2-megagpu-16g", ("nvidia-tesla-a100",), (16,), True),
        ("a3-megagpu-8g", ("nvidia-h100-mega-80gb",), (8,), True),
        ("g2-standard-24", ("nvidia-l4",), (2,), True),
        ("g2-standard-32", ("nvidia-l4",), (1,), True),
        ("g4-standard-384", ("nvidia-rtx-pro-6000",), (8,), True),
    ],
)
def test_accelerator_optimized_machines_fix_their_gpus(machine, accelerators, counts, fixed):
    found = gke_machines.gpu_machine(machine)
    assert (found.accelerators, found.counts, found.fixed) == (accelerators, counts, fixed)


@pytest.mark.parametrize(
    "machine", ["e2-standard-8", "n2-standard-8", "c3-standard-8", "g2-standard-7", "a2-x"]
)
def test_other_machines_take_no_gpus(machine):
    assert gke_machines.gpu_machine(machine) is None


def test_n1_takes_the_gpus_it_can_attach():
    cfg = load_config(
        with_gpu_pool(machineType="n1-standard-16", gpu={"type": "nvidia-tesla-v100", "count": 8})
    )
    assert cfg.node_pools[1].gpu.count == 8


def test_gke_managed_gpu_settings_are_accepted_without_the_operator():
    gpu = {
        "type": "nvidia-a100-80gb",
        "count": 1,
        "driverVersion": "LATEST",
        "partitionSize": "1g.10gb",
        "sharing": {"strategy": "MPS", "maxSharedClientsPerGpu": 4},
    }
    cfg = load_config(with_gpu_pool(machineType="a2-ultragpu-1g", gpu=gpu))
    assert cfg.node_pools[1].gpu.sharing.strategy == "MPS"


BAD_CASES = [
    (
        "e2 gpu pool",
        with_gpu_pool(machineType="e2-standard-8", gpu={"type": "nvidia-l4", "count": 1}),
        "determined:nodePools[1].machineType: 'e2-standard-8' cannot take GPUs; use n1 with an attached GPU, "
        "or an accelerator-optimized series (a2, a3, a4, a4x, g2, g4)",
    ),
    (
        "accelerator of another series",
        with_gpu_pool(machineType="a2-highgpu-4g", gpu={"type": "nvidia-l4", "count": 4}),
        "determined:nodePools[1].gpu.type: 'nvidia-l4' does not fit: a2-highgpu-4g comes with nvidia-tesla-a100",
    ),
    (
        "count of another size",
        with_gpu_pool(machineType="a2-highgpu-4g", gpu={"type": "nvidia-tesla-a100", "count": 8}),
        "determined:nodePools[1].gpu.count: a2-highgpu-4g has 4 GPU(s), not 8",
    ),
    (
        "n1 count",
        with_gpu_pool(machineType="n1-standard-8", gpu={"type": "nvidia-tesla-t4", "count": 3}),
        "determined:nodePools[1].gpu.count: an N1 machine attaches 1, 2, 4 nvidia-tesla-t4 GPU(s), not 3",
    ),
    (
        "n1 accelerator",
        with_gpu_pool(machineType="n1-standard-8", gpu={"type": "nvidia-l4", "count": 1}),
        "determined:nodePools[1].gpu.type: 'nvidia-l4' does not fit: N1 machines take nvidia-tesla-t4",
    ),
    (
        "gpu machine without gpu",
        with_gpu_pool(machineType="g2-standard-8"),
        "determined:nodePools[1].gpu: required: g2-standard-8 comes with 1 nvidia-l4 GPU(s)",
    ),
    (
        "mig without mig",
        with_gpu_pool(
            machineType="g2-standard-8", gpu={"type": "nvidia-l4", "count": 1, "partitionSize": "1g.5gb"}
        ),
        "determined:nodePools[1].gpu.partitionSize: MIG needs one of",
    ),
    (
        "mig profile form",
        with_gpu_pool(
            machineType="a2-highgpu-1g", gpu={"type": "nvidia-tesla-a100", "count": 1, "partitionSize": "8"}
        ),
        "determined:nodePools[1].gpu.partitionSize: '8' is not a MIG partition size of nvidia-tesla-a100; "
        "it offers 1g.5gb, 2g.10gb, 3g.20gb, 4g.20gb, 7g.40gb",
    ),
    (
        "sharing needs both keys",
        with_gpu_pool(**{**A100, "gpu": {**A100["gpu"], "sharing": {"strategy": "TIME_SHARING"}}}),
        "determined:nodePools[1].gpu.sharing.maxSharedClientsPerGpu: required",
    ),
    (
        "sharing strategy",
        with_gpu_pool(
            **{**A100, "gpu": {**A100["gpu"], "sharing": {"strategy": "time", "maxSharedClientsPerGpu": 2}}}
        ),
        "determined:nodePools[1].gpu.sharing.strategy:",
    ),
    (
        "sharing with the operator",
        {
            **with_gpu_pool(
                **{
                    **A100,
                    "gpu": {**A100["gpu"], "sharing": {"strategy": "MPS", "maxSharedClientsPerGpu": 2}},
                }
            ),
            "gpuOperator": {"enabled": True},
        },
        "determined:nodePools[1].gpu.sharing: applies to GKE-managed drivers only; with gpuOperator.enabled",
    ),
    (
        "driver version with the operator",
        {
            **with_gpu_pool(**{**A100, "gpu": {**A100["gpu"], "driverVersion": "LATEST"}}),
            "gpuOperator": {"enabled": True},
        },
        "determined:nodePools[1].gpu.driverVersion: applies to GKE-managed drivers only",
    ),
    (
        "driver version value",
        with_gpu_pool(**{**A100, "gpu": {**A100["gpu"], "driverVersion": "INSTALLATION_DISABLED"}}),
        "determined:nodePools[1].gpu.driverVersion:",
    ),
    (
        "image types with the operator",
        {
            **gke(
                nodePools=[
                    SYSTEM,
                    A100,
                    {
                        "name": "t4",
                        "machineType": "n1-standard-8",
                        "gpu": {"type": "nvidia-tesla-t4", "count": 1},
                        "imageType": "UBUNTU_CONTAINERD",
                    },
                ]
            ),
            "gpuOperator": {"enabled": True},
        },
        "determined:nodePools[2].imageType: with gpuOperator.enabled every GPU pool uses one image type",
    ),
    (
        "hyperdisk only",
        with_gpu_pool(
            machineType="a3-ultragpu-8g",
            gpu={"type": "nvidia-h200-141gb", "count": 8},
            diskType="pd-balanced",
        ),
        "determined:nodePools[1].diskType: a3-ultragpu-8g cannot boot from pd-balanced; its series takes "
        "hyperdisk-balanced",
    ),
    (
        "taint without value",
        gke(nodePools=[SYSTEM, {**A100, "taints": [{"key": "dedicated", "effect": "NoSchedule"}]}]),
        "determined:nodePools[1].taints[0].value: required on GKE",
    ),
    (
        "machine type required",
        gke(nodePools=[SYSTEM, {"name": "a100", "gpu": A100["gpu"]}]),
        "determined:nodePools[1].machineType: required for cloud gke",
    ),
    (
        "node selector is for existing clusters",
        gke(nodePools=[{**SYSTEM, "nodeSelector": {"pool": "system"}}, A100]),
        "determined:nodePools[0].nodeSelector: only for cloud existing",
    ),
    (
        "network name without subnetwork",
        gke(cluster={**GKE["cluster"], "network": {"name": "shared"}}),
        "determined:cluster.network.subnetwork: name and subnetwork go together",
    ),
    (
        "ranges go together",
        gke(cluster={**GKE["cluster"], "network": {"name": "n", "subnetwork": "s", "podsRange": "pods"}}),
        "determined:cluster.network.servicesRange: podsRange and servicesRange go together",
    ),
    (
        "cidr of an existing network",
        gke(
            cluster={
                **GKE["cluster"],
                "network": {"name": "n", "subnetwork": "s", "podsCidr": "10.64.0.0/14"},
            }
        ),
        "determined:cluster.network.podsCidr: only for a created network",
    ),
    (
        "range names of a created network",
        gke(cluster={**GKE["cluster"], "network": {"podsRange": "p", "servicesRange": "s"}}),
        "determined:cluster.network.podsRange: only for an existing network",
    ),
    (
        "overlapping ranges",
        gke(cluster={**GKE["cluster"], "network": {"podsCidr": "10.8.0.0/14"}}),
        "determined:cluster.network.podsCidr: overlaps nodesCidr (10.10.0.0/20)",
    ),
    (
        "cidr form",
        gke(cluster={**GKE["cluster"], "authorizedNetworks": ["203.0.113.7/24"]}),
        "determined:cluster.authorizedNetworks[0]: '203.0.113.7/24' is not a CIDR range",
    ),
    (
        "release channel",
        gke(cluster={**GKE["cluster"], "releaseChannel": "regular"}),
        "determined:cluster.releaseChannel:",
    ),
    (
        "tags are google labels",
        gke(cluster={**GKE["cluster"], "tags": {"Team": "ml"}}),
        "determined:cluster.tags.Team: tag key 'Team' is not a Google Cloud label key",
    ),
    (
        "s3 bucket is not created on gke",
        gke(checkpointStorage={"type": "s3"}),
        "determined:checkpointStorage.bucket: required for s3 storage on cloud gke",
    ),
    (
        "cluster name starts with a letter",
        gke(cluster={**GKE["cluster"], "name": "1det"}),
        "determined:cluster.name: '1det' is not a GKE cluster name: lower-case letters, digits and '-', starting with a letter",
    ),
    (
        "managed database needs a tier",
        gke(database={"mode": "managed"}),
        "determined:database.tier: required for database.mode managed",
    ),
    (
        "managed database on an existing cluster",
        {
            "cloud": "existing",
            "cluster": {"name": "x"},
            "nodePools": [{"name": "system", "nodeSelector": {"pool": "system"}}],
            "resourcePools": [{"name": "aux", "nodePool": "system"}],
            "database": {"mode": "managed", "tier": "db-custom-2-8192"},
        },
        "determined:database.mode: managed databases are created only for cloud gke (Cloud SQL)",
    ),
]


@pytest.mark.parametrize(("raw", "expected"), [c[1:] for c in BAD_CASES], ids=[c[0] for c in BAD_CASES])
def test_bad_gke_config_names_key_path_and_problem(raw, expected):
    lines = problems(raw)
    assert any(line.startswith(expected) for line in lines), lines


def test_every_gke_problem_is_reported_at_once():
    raw = gke(
        nodePools=[
            SYSTEM,
            {"name": "l4", "machineType": "e2-standard-8", "gpu": {"type": "nvidia-l4", "count": 1}},
            {**A100, "taints": [{"key": "dedicated", "effect": "NoSchedule"}]},
        ],
        cluster={**GKE["cluster"], "network": {"name": "shared"}},
    )
    lines = problems(raw)
    assert [line.split(":")[1] for line in lines] == [
        "nodePools[1].machineType",
        "nodePools[2].taints[0].value",
        "cluster.network.subnetwork",
    ], lines
