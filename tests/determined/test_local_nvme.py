"""Local NVMe scratch space in task pods (components/determined/local_nvme.py): every task of a
pool on a node pool with localNvme gets an emptyDir at localNvme.mountPath, bounded by and asking
for localNvme.size of the node's (NVMe-backed) ephemeral storage; nothing else does; a user's pod
spec cannot take its name or path."""

from __future__ import annotations

from conftest import EKS, GKE, config_problems, make_config

from components import constants
from components.determined import local_nvme, resource_pools

S3 = {"type": "s3", "bucket": "my-checkpoints"}


def with_nvme(nvme, **top):
    """EKS with local NVMe on its 8-GPU pool (p4d has 8 x 1000 GB of instance store)."""
    node_pools = [EKS["nodePools"][0], {**EKS["nodePools"][1], "localNvme": nvme}]
    return {**EKS, "nodePools": node_pools, "checkpointStorage": S3, **top}


def pod_specs(raw, pool="a100"):
    cfg = make_config(**raw)
    rp = next(rp for rp in cfg.resource_pools if rp.name == pool)
    return resource_pools.pool_pod_specs(cfg, rp)


def task_container(pod):
    return next(c for c in pod["spec"]["containers"] if c["name"] == constants.TASK_CONTAINER)


def test_every_task_of_the_pool_gets_the_scratch_space_it_asks_for():
    for nvme, path, size in (
        ({}, "/scratch", "100Gi"),
        ({"mountPath": "/data/cache", "size": "2Ti"}, "/data/cache", "2Ti"),
    ):
        for key, pod in pod_specs(with_nvme(nvme)).items():
            assert {"name": "scratch", "emptyDir": {"sizeLimit": size}} in pod["spec"]["volumes"], key
            container = task_container(pod)
            assert {"name": "scratch", "mountPath": path} in container["volumeMounts"], key
            # The request places the pod where the space is; the limit is the emptyDir's. On a
            # GPU node pool only GPU tasks ask: a CPU notebook must not hold the trial's space.
            if key == "gpu_pod_spec":
                assert container["resources"]["requests"]["ephemeral-storage"] == size, key
            else:
                assert "ephemeral-storage" not in container.get("resources", {}).get("requests", {}), key


def test_cpu_tasks_ask_for_the_scratch_space_on_a_cpu_node_pool():
    cpu_pool = {"name": "cpu", "machineType": "n2-standard-16", "localNvme": {"count": 2, "size": "500Gi"}}
    raw = {
        **GKE,
        "nodePools": [*GKE["nodePools"], cpu_pool],
        "resourcePools": [*GKE["resourcePools"], {"name": "cpu", "nodePool": "cpu"}],
        "checkpointStorage": {"type": "gcs", "bucket": "my-checkpoints"},
    }
    for key, pod in pod_specs(raw, "cpu").items():
        assert task_container(pod)["resources"]["requests"]["ephemeral-storage"] == "500Gi", key


def test_pools_without_local_nvme_and_checkpoint_gc_get_none():
    cfg = make_config(**with_nvme({}))
    aux = next(rp for rp in cfg.resource_pools if rp.name == "aux")
    assert local_nvme.pool_layer(cfg, aux) == {}
    for pod in resource_pools.pool_pod_specs(cfg, aux).values():
        assert "volumes" not in pod["spec"]
    gc = resource_pools.checkpoint_gc_pod_spec(cfg, None)
    assert gc is None or "scratch" not in str(gc)


def test_the_pools_own_pod_spec_keeps_its_volumes_beside_the_scratch_space():
    data = {"name": "data", "emptyDir": {}}
    raw = with_nvme(
        {},
        resourcePools=[
            {
                "name": "a100",
                "nodePool": "a100",
                "podSpec": {
                    "volumes": [data],
                    "containers": [
                        {
                            "name": "determined-container",
                            "volumeMounts": [{"name": "data", "mountPath": "/data"}],
                        }
                    ],
                },
            },
            {"name": "aux", "nodePool": "system"},
        ],
    )
    pod = pod_specs(raw)["gpu_pod_spec"]
    assert data in pod["spec"]["volumes"]
    assert {m["mountPath"] for m in task_container(pod)["volumeMounts"]} == {"/scratch", "/data"}


def test_a_pod_spec_may_not_take_the_scratch_volumes_name_or_path():
    clash = {"volumes": [{"name": "scratch", "emptyDir": {}}]}
    pools = [
        {"name": "a100", "nodePool": "a100", "podSpec": clash},
        {"name": "aux", "nodePool": "system"},
    ]
    assert config_problems(with_nvme({}, resourcePools=pools)) == [
        "resourcePools[0].podSpec.volumes[0].name: the volume name 'scratch' is the local NVMe scratch "
        "space's (nodePools[].localNvme); choose another"
    ]
    over = {
        "containers": [
            {"name": "determined-container", "volumeMounts": [{"name": "c", "mountPath": "/cache"}]}
        ],
        "volumes": [{"name": "c", "emptyDir": {}}],
    }
    assert config_problems(
        with_nvme({"mountPath": "/cache"}, taskContainerDefaults={"cpuPodSpec": over})
    ) == [
        "taskContainerDefaults.cpuPodSpec.containers[0].volumeMounts[0].mountPath: /cache is where the local "
        "NVMe scratch space is mounted (nodePools[].localNvme.mountPath); choose another path"
    ]
    # Elsewhere, or on a stack without local NVMe, the same pod specs are fine.
    assert (
        config_problems(with_nvme({"mountPath": "/nvme"}, taskContainerDefaults={"cpuPodSpec": over})) == []
    )
    assert config_problems({**EKS, "checkpointStorage": S3, "resourcePools": pools}) == []


def test_a_queued_pools_queue_covers_the_scratch_space():
    cfg = make_config(**with_nvme({}, scheduler="kueue"))
    rp = next(rp for rp in cfg.resource_pools if rp.name == "a100")
    # Kueue never admits a Job asking for a resource its ClusterQueue does not cover.
    assert "ephemeral-storage" in cfg.queue_quota(rp)
    aux = next(rp for rp in cfg.resource_pools if rp.name == "aux")
    assert "ephemeral-storage" not in cfg.queue_quota(aux)
