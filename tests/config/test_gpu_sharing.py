"""MIG partitions and shared GPUs on GKE: the facts (which GPUs take which partition sizes,
how many fit, what sharing multiplies), the refusals of sizes a GPU does not offer, and the
`nvidia.com/gpu` counts Kueue's quotas and Determined's slots are derived from."""

from __future__ import annotations

import copy
import re

import pytest
from conftest import ROOT

import stack_args
from components.config import ConfigError, decode_raw, gke_gpu_sharing, gke_machines, load_config
from components.config.gke_gpu_sharing import MIG_PARTITIONS
from components.config.node_pools import GkeNodePool
from components.determined import master_yaml, resource_pools
from components.determined.database import DatabaseEndpoint
from components.determined.master_yaml import MasterSecrets
from plan import stackfile

SYSTEM = {"name": "system", "machineType": "e2-standard-8"}
GKE = {
    "cloud": "gke",
    "cluster": {"name": "det", "region": "us-central1", "project": "p"},
    "scheduler": "kueue",
    "nodePools": [SYSTEM],
    "resourcePools": [{"name": "gpu", "nodePool": "gpu"}, {"name": "aux", "nodePool": "system"}],
}
# A3 High: 8 H100 80GB per node.
H100 = {"name": "gpu", "machineType": "a3-highgpu-8g", "gpu": {"type": "nvidia-h100-80gb", "count": 8}}
# G2: 2 L4 per node (g2-standard-24), 1 (g2-standard-8).
L4X2 = {"name": "gpu", "machineType": "g2-standard-24", "gpu": {"type": "nvidia-l4", "count": 2}}
L4X1 = {"name": "gpu", "machineType": "g2-standard-8", "gpu": {"type": "nvidia-l4", "count": 1}}
# A2 Ultra: 1 A100 80GB (a2-ultragpu-1g).
A100_80 = {"name": "gpu", "machineType": "a2-ultragpu-1g", "gpu": {"type": "nvidia-a100-80gb", "count": 1}}


def gke(pool: dict, max_nodes: int = 2, **top) -> dict:
    raw = copy.deepcopy(GKE)
    raw["nodePools"] = [SYSTEM, {**copy.deepcopy(pool), "maxNodes": max_nodes}]
    raw.update(top)
    return raw


def with_gpu(pool: dict, **gpu) -> dict:
    return {**pool, "gpu": {**pool["gpu"], **gpu}}


def problems(raw) -> list[str]:
    with pytest.raises(ConfigError) as info:
        load_config(raw)
    return [str(p) for p in info.value.problems]


def gpu_pool(cfg):
    return cfg.node_pool("gpu")


def queue_gpus(cfg, pool="gpu") -> str | None:
    """The nvidia.com/gpu nominal quota of a pool's ClusterQueue, as planned."""
    (queue,) = [
        o
        for o in resource_pools.queue_objects(stack_args.determined_args(cfg))
        if o["kind"] == "ClusterQueue" and o["metadata"]["name"] == f"determined-{pool}"
    ]
    resources = queue["spec"]["resourceGroups"][0]["flavors"][0]["resources"]
    return next((r["nominalQuota"] for r in resources if r["name"] == "nvidia.com/gpu"), None)


def master(cfg) -> dict:
    secrets = MasterSecrets(db_password="d", initial_user_password="i", webhook_signing_key="w")
    args = stack_args.determined_args(cfg)
    return master_yaml.master_config(args, DatabaseEndpoint("db", 5432, "determined", "determined"), secrets)


def pool_slots(cfg, pool="gpu") -> int | None:
    pools = resource_pools.master_resource_pools(stack_args.determined_args(cfg))
    (entry,) = [p for p in pools if p["pool_name"] == pool]
    return (entry["task_container_defaults"].get("kubernetes") or {}).get("max_slots_per_pod")


# --- the facts ---------------------------------------------------------------------------------

# (accelerator, partition size, partitions per GPU), as GKE's partitioner and NVIDIA's MIG
# profiles give them (sources in components/config/gke_gpu_sharing.py).
PARTITION_FACTS = [
    ("nvidia-tesla-a100", "1g.5gb", 7),
    ("nvidia-tesla-a100", "2g.10gb", 3),
    ("nvidia-tesla-a100", "3g.20gb", 2),
    ("nvidia-tesla-a100", "4g.20gb", 1),
    ("nvidia-tesla-a100", "7g.40gb", 1),
    ("nvidia-a100-80gb", "1g.10gb", 7),
    ("nvidia-a100-80gb", "2g.20gb", 3),
    ("nvidia-a100-80gb", "3g.40gb", 2),
    ("nvidia-a100-80gb", "4g.40gb", 1),
    ("nvidia-a100-80gb", "7g.80gb", 1),
    ("nvidia-h100-80gb", "1g.10gb", 7),
    ("nvidia-h100-80gb", "1g.20gb", 4),
    ("nvidia-h100-80gb", "2g.20gb", 3),
    ("nvidia-h100-80gb", "3g.40gb", 2),
    ("nvidia-h100-80gb", "4g.40gb", 1),
    ("nvidia-h100-80gb", "7g.80gb", 1),
    ("nvidia-h100-mega-80gb", "1g.10gb", 7),
    ("nvidia-h100-mega-80gb", "7g.80gb", 1),
    ("nvidia-h200-141gb", "1g.18gb", 7),
    ("nvidia-h200-141gb", "1g.35gb", 4),
    ("nvidia-h200-141gb", "2g.35gb", 3),
    ("nvidia-h200-141gb", "3g.71gb", 2),
    ("nvidia-h200-141gb", "4g.71gb", 1),
    ("nvidia-h200-141gb", "7g.141gb", 1),
    ("nvidia-b200", "1g.23gb", 7),
    ("nvidia-b200", "1g.45gb", 4),
    ("nvidia-b200", "2g.45gb", 3),
    ("nvidia-b200", "3g.90gb", 2),
    ("nvidia-b200", "4g.90gb", 1),
    ("nvidia-b200", "7g.180gb", 1),
    ("nvidia-gb200", "1g.23gb", 7),
    ("nvidia-gb200", "1g.47gb", 4),
    ("nvidia-gb200", "7g.186gb", 1),
    ("nvidia-rtx-pro-6000", "1g.24gb", 4),
    ("nvidia-rtx-pro-6000", "2g.48gb", 2),
    ("nvidia-rtx-pro-6000", "4g.96gb", 1),
]


@pytest.mark.parametrize(("accelerator", "size", "count"), PARTITION_FACTS)
def test_partitions_per_gpu(accelerator, size, count):
    assert gke_gpu_sharing.partitions_per_gpu(accelerator, size) == count


def test_the_mig_gpus_are_exactly_those_gke_can_partition():
    assert {
        "nvidia-tesla-a100",
        "nvidia-a100-80gb",
        "nvidia-h100-80gb",
        "nvidia-h100-mega-80gb",
        "nvidia-h200-141gb",
        "nvidia-b200",
        "nvidia-gb200",
        "nvidia-rtx-pro-6000",
    } == gke_gpu_sharing.MIG_ACCELERATORS
    # Only GPUs some GKE machine type carries (a name GKE does not use would never match).
    carried = set(gke_machines.SERIES_ACCELERATOR.values()) | set(gke_machines.N1_ACCELERATORS)
    assert carried >= gke_gpu_sharing.MIG_ACCELERATORS
    for accelerator in ("nvidia-l4", "nvidia-tesla-t4", "nvidia-tesla-v100", "nvidia-tesla-p4"):
        assert accelerator not in gke_gpu_sharing.MIG_ACCELERATORS


SIZE = re.compile(r"(?P<compute>[1-7])g\.(?P<memory>[0-9]+)gb")
# A GPU's compute and memory slices: seven and eight on A100/H100/H200/B200/GB200 (GKE's MIG
# page), four and four on the RTX PRO 6000 (NVIDIA: at most 4 instances).
SLICES = {accelerator: (7, 8) for accelerator in MIG_PARTITIONS} | {"nvidia-rtx-pro-6000": (4, 4)}


@pytest.mark.parametrize("accelerator", sorted(MIG_PARTITIONS))
def test_each_count_is_what_fits_in_the_gpus_compute_and_memory_slices(accelerator):
    # Independent of the table: a size of c compute slices and m memory slices fits
    # min(compute // c, memory // m) times, the memory slice being the smallest 1g size's.
    compute, memory = SLICES[accelerator]
    plain = {s: n for s, n in MIG_PARTITIONS[accelerator].items() if SIZE.fullmatch(s)}
    slice_gb = min(int(SIZE.fullmatch(s)["memory"]) for s in plain if s.startswith("1g."))
    for size, count in plain.items():
        parts = SIZE.fullmatch(size)
        memory_slices = round(int(parts["memory"]) / slice_gb)
        assert count == min(compute // int(parts["compute"]), memory // memory_slices), size
    # Variants (+me, +gfx, -me) fit no more often than their plain size.
    for size, count in MIG_PARTITIONS[accelerator].items():
        if size not in plain:
            base = re.match(r"[1-7]g\.[0-9]+gb", size)[0]
            assert count <= plain[base], size


def test_sharing_allows_2_to_48_containers_per_gpu():
    limits = (
        gke_gpu_sharing.MIN_SHARED_CLIENTS_PER_GPU,
        gke_gpu_sharing.MAX_SHARED_CLIENTS_PER_GPU,
    )
    assert limits == (2, 48)
    for clients in limits:
        sharing = {"strategy": "TIME_SHARING", "maxSharedClientsPerGpu": clients}
        load_config(gke(with_gpu(L4X1, sharing=sharing)))
    for clients in (1, 49):
        sharing = {"strategy": "MPS", "maxSharedClientsPerGpu": clients}
        (line,) = problems(gke(with_gpu(L4X1, sharing=sharing)))
        assert line.startswith("determined:nodePools[1].gpu.sharing.maxSharedClientsPerGpu: must be at")


# --- what a node exposes -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("pool", "exposed", "per_container"),
    [
        (H100, 8, 8),
        # A CUDA process enumerates one MIG device, however many the container has.
        (with_gpu(H100, partitionSize="1g.10gb"), 56, 1),
        (with_gpu(H100, partitionSize="1g.20gb"), 32, 1),
        (with_gpu(H100, partitionSize="7g.80gb"), 8, 1),
        (with_gpu(L4X2, sharing={"strategy": "TIME_SHARING", "maxSharedClientsPerGpu": 4}), 8, 1),
        (with_gpu(L4X1, sharing={"strategy": "TIME_SHARING", "maxSharedClientsPerGpu": 4}), 4, 1),
        # MPS gives one container several shares only of a node's single device.
        (with_gpu(L4X1, sharing={"strategy": "MPS", "maxSharedClientsPerGpu": 4}), 4, 4),
        (with_gpu(L4X2, sharing={"strategy": "MPS", "maxSharedClientsPerGpu": 4}), 8, 1),
        # Sharing multiplies each MIG partition.
        (
            with_gpu(
                A100_80,
                partitionSize="1g.10gb",
                sharing={"strategy": "TIME_SHARING", "maxSharedClientsPerGpu": 4},
            ),
            28,
            1,
        ),
        (
            with_gpu(
                A100_80, partitionSize="7g.80gb", sharing={"strategy": "MPS", "maxSharedClientsPerGpu": 3}
            ),
            3,
            1,
        ),
        (
            with_gpu(
                A100_80, partitionSize="3g.40gb", sharing={"strategy": "MPS", "maxSharedClientsPerGpu": 3}
            ),
            6,
            1,
        ),
    ],
)
def test_what_a_node_exposes_and_gives_one_container(pool, exposed, per_container):
    node_pool = gpu_pool(load_config(gke(pool)))
    assert gke_gpu_sharing.exposed_gpus_per_node(node_pool) == exposed
    assert gke_gpu_sharing.gpus_per_container(node_pool) == per_container


def test_pools_without_gpus_expose_none():
    cfg = load_config(gke(H100))
    assert gke_gpu_sharing.exposed_gpus_per_node(cfg.node_pool("system")) == 0


# --- refusals ------------------------------------------------------------------------------------


def test_partitions_are_refused_on_gpus_without_mig_naming_those_with_it():
    (line,) = problems(gke(with_gpu(L4X1, partitionSize="1g.5gb")))
    assert line == (
        "determined:nodePools[1].gpu.partitionSize: MIG needs one of nvidia-a100-80gb, nvidia-b200, "
        "nvidia-gb200, nvidia-h100-80gb, nvidia-h100-mega-80gb, nvidia-h200-141gb, nvidia-rtx-pro-6000, "
        "nvidia-tesla-a100 (nvidia-l4 cannot be partitioned)"
    )


@pytest.mark.parametrize(
    ("pool", "size", "offered"),
    [
        (H100, "1g.5gb", "1g.10gb, 1g.20gb, 2g.20gb, 3g.40gb, 4g.40gb, 7g.80gb"),
        (A100_80, "1g.20gb", "1g.10gb, 2g.20gb, 3g.40gb, 4g.40gb, 7g.80gb"),
        (A100_80, "8", "1g.10gb, 2g.20gb, 3g.40gb, 4g.40gb, 7g.80gb"),
        (A100_80, "1G.10GB", "1g.10gb, 2g.20gb, 3g.40gb, 4g.40gb, 7g.80gb"),
    ],
)
def test_sizes_a_gpu_does_not_offer_are_refused_with_those_it_offers(pool, size, offered):
    (line,) = problems(gke(with_gpu(pool, partitionSize=size)))
    assert line == (
        f"determined:nodePools[1].gpu.partitionSize: {size!r} is not a MIG partition size of "
        f"{pool['gpu']['type']}; it offers {offered}"
    )


def _machine_carrying(accelerator: str) -> tuple[str, int]:
    series = next(s for s, a in gke_machines.SERIES_ACCELERATOR.items() if a == accelerator)
    for size in ("1g", "2g", "4g", "8g", "48", "96"):
        found = gke_machines.gpu_machine(f"{series}-{size}")
        if found is not None:
            return f"{series}-{size}", found.counts[0]
    raise AssertionError(f"no machine type of {series} found")


@pytest.mark.parametrize(
    ("accelerator", "size"), [(a, s) for a, sizes in MIG_PARTITIONS.items() for s in sizes]
)
def test_every_size_of_the_table_is_accepted_on_its_gpu(accelerator, size):
    machine, count = _machine_carrying(accelerator)
    pool = {"name": "gpu", "machineType": machine, "gpu": {"type": accelerator, "count": count}}
    pool = with_gpu(pool, partitionSize=size)
    # Other rules (such as zones for the newest GPUs) may ask for more: none about partitions.
    try:
        load_config(gke(pool))
    except ConfigError as error:
        assert not [str(p) for p in error.problems if "partitionSize" in str(p)]
    node_pool = GkeNodePool.model_validate(pool)
    assert gke_gpu_sharing.exposed_gpus_per_node(node_pool) == count * MIG_PARTITIONS[accelerator][size]


# --- quotas and slots ----------------------------------------------------------------------------


def test_a_mig_pool_is_queued_and_slotted_by_its_partitions():
    # The case: 1g.10gb on a3-highgpu-8g exposes 56 nvidia.com/gpu per node.
    cfg = load_config(gke(with_gpu(H100, partitionSize="1g.10gb"), max_nodes=3))
    assert cfg.queue_quota(cfg.resource_pools[0])["nvidia.com/gpu"] == "168"
    assert queue_gpus(cfg) == "168"
    assert cfg.gpu_counts == [56]
    # One partition per pod: a CUDA process uses one MIG device (gke_gpu_sharing.gpus_per_container).
    assert cfg.max_slots_per_pod == 1
    assert pool_slots(cfg) == 1


def test_a_time_shared_pool_is_queued_by_its_shares_and_gives_a_pod_one_slot():
    sharing = {"strategy": "TIME_SHARING", "maxSharedClientsPerGpu": 4}
    cfg = load_config(gke(with_gpu(L4X2, sharing=sharing), max_nodes=3))
    assert queue_gpus(cfg) == "24"  # 3 nodes x 2 GPUs x 4 containers
    assert cfg.gpu_counts == [8]
    # GKE's device plugin gives a container one time-shared nvidia.com/gpu.
    assert cfg.max_slots_per_pod == 1
    assert pool_slots(cfg) == 1
    assert master(cfg)["task_container_defaults"]["kubernetes"] == {"max_slots_per_pod": 1}


def test_mig_and_time_sharing_multiply():
    sharing = {"strategy": "TIME_SHARING", "maxSharedClientsPerGpu": 4}
    cfg = load_config(gke(with_gpu(A100_80, partitionSize="1g.10gb", sharing=sharing), max_nodes=3))
    assert queue_gpus(cfg) == "84"  # 3 nodes x 1 GPU x 7 partitions x 4 containers
    assert pool_slots(cfg) == 1


def test_a_pools_own_gpu_quota_is_kept_as_written():
    # quota.gpu counts nvidia.com/gpu as tasks ask for them: partitions and shares already.
    raw = gke(with_gpu(H100, partitionSize="1g.10gb"), max_nodes=3)
    raw["resourcePools"][0]["quota"] = {"gpu": 20}
    cfg = load_config(raw)
    assert queue_gpus(cfg) == "20"
    assert resource_pools.quota(cfg.resource_pools[0])["spec"]["hard"] == {"requests.nvidia.com/gpu": "20"}


def test_more_slots_per_pod_than_a_shared_gpu_gives_a_container_are_refused():
    sharing = {"strategy": "TIME_SHARING", "maxSharedClientsPerGpu": 4}
    (line,) = problems(gke(with_gpu(L4X2, sharing=sharing), slots={"maxSlotsPerPod": 2}))
    assert line == (
        "determined:slots.maxSlotsPerPod: 2 slots per pod cannot run on node pool 'gpu': its GPUs are "
        "shared (TIME_SHARING) and a container can use at most 1 of them; set 1, or leave "
        "maxSlotsPerPod out (then derived from the pools)"
    )
    load_config(gke(with_gpu(L4X2, sharing=sharing), slots={"maxSlotsPerPod": 1}))


def test_a_mig_pool_takes_one_slot_per_pod():
    load_config(gke(with_gpu(H100, partitionSize="1g.20gb"), slots={"maxSlotsPerPod": 1}))
    lines = problems(gke(with_gpu(H100, partitionSize="1g.20gb"), slots={"maxSlotsPerPod": 16}))
    assert any("a container can use at most 1 of them" in line for line in lines)


def test_eks_counts_physical_gpus():
    raw = {
        "cloud": "eks",
        "cluster": {"name": "det", "region": "us-east-1"},
        "scheduler": "kueue",
        "nodePools": [
            {"name": "system", "machineType": "m6i.2xlarge"},
            {
                "name": "gpu",
                "machineType": "p4d.24xlarge",
                "gpu": {"type": "nvidia-tesla-a100", "count": 8},
                "maxNodes": 2,
            },
        ],
        "resourcePools": [{"name": "gpu", "nodePool": "gpu"}, {"name": "aux", "nodePool": "system"}],
    }
    cfg = load_config(raw)
    assert queue_gpus(cfg) == "16"
    assert pool_slots(cfg) == 8


# --- existing stacks keep their quotas -----------------------------------------------------------

STACK_FILES = sorted((ROOT / "stacks").glob("Pulumi.*.yaml")) + sorted(
    (ROOT / "tests" / "fixtures" / "stacks").glob("Pulumi.*.yaml")
)


def stack_config(path):
    config, _ = stackfile.load_stack_file(path)
    return load_config(
        decode_raw({k.split(":", 1)[1]: v for k, v in config.items() if k.startswith("determined:")})
    )


@pytest.mark.parametrize("path", STACK_FILES, ids=lambda p: p.name)
def test_pools_without_partitions_or_sharing_count_their_gpus_as_before(path):
    cfg = stack_config(path)
    for node_pool in cfg.node_pools:
        gpu = node_pool.gpu
        if gpu is None or getattr(gpu, "partition_size", None) or getattr(gpu, "sharing", None):
            continue
        assert gke_gpu_sharing.exposed_gpus_per_node(node_pool) == gpu.count
        assert gke_gpu_sharing.gpus_per_container(node_pool) == gpu.count
        for rp in cfg.resource_pools:
            nodes = getattr(node_pool, "max_nodes", None)
            if rp.node_pool == node_pool.name and rp.quota is None and nodes:
                assert cfg.queue_quota(rp)["nvidia.com/gpu"] == str(nodes * gpu.count)


def test_the_kueue_fixture_keeps_its_planned_quotas_and_slots():
    # As planned before MIG and sharing were counted (the fixture uses neither).
    cfg = stack_config(ROOT / "tests" / "fixtures" / "stacks" / "Pulumi.kueue-gke.yaml")
    assert queue_gpus(cfg, "a100") == "16"  # the pool's own quota
    assert queue_gpus(cfg, "l4") == "12"  # 6 nodes x 2 L4
    assert {p: pool_slots(cfg, p) for p in ("a100", "l4", "aux")} == {"a100": 8, "l4": 2, "aux": None}
    assert cfg.max_slots_per_pod == 2


def test_the_operator_fixture_keeps_its_slots():
    cfg = stack_config(ROOT / "tests" / "fixtures" / "stacks" / "Pulumi.gke-operator.yaml")
    assert {p: pool_slots(cfg, p) for p in ("h100", "t4", "aux")} == {"h100": 8, "t4": 2, "aux": None}
    assert cfg.max_slots_per_pod == 2
    assert [cfg.queue_quota(rp).get("nvidia.com/gpu") for rp in cfg.resource_pools] == ["16", "8", None]


def test_the_shared_vpc_fixture_gives_a_pod_one_time_shared_partition():
    cfg = stack_config(ROOT / "tests" / "fixtures" / "stacks" / "Pulumi.gke-shared-vpc.yaml")
    node_pool = cfg.node_pool("a100")
    assert gke_gpu_sharing.exposed_gpus_per_node(node_pool) == 28  # 1 GPU x 7 x 4
    assert pool_slots(cfg, "a100") == 1
    assert cfg.max_slots_per_pod == 1
    assert master(cfg)["task_container_defaults"]["kubernetes"] == {"max_slots_per_pod": 1}


def test_more_slots_per_pod_than_one_mig_partition_are_refused():
    (line,) = problems(gke(with_gpu(H100, partitionSize="1g.10gb"), slots={"maxSlotsPerPod": 2}))
    assert line.startswith(
        "determined:slots.maxSlotsPerPod: 2 slots per pod cannot run on node pool 'gpu': its GPUs are "
        "shared (MIG partitions: a CUDA process uses one) and a container can use at most 1 of them"
    )
