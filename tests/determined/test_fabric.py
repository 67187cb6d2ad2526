"""GPU fabric in task pods (components/determined/fabric.py): what a GPU task on an EFA, TCPXO or
RDMA pool gets (devices, networks, host libraries, NCCL settings, the network interface), what
a CPU task of the same pool does not take, and the rules that keep the rest of the
configuration from undoing it."""

from __future__ import annotations

import json

import pytest
from conftest import EKS, GKE, MEGA_POOL, ULTRA_POOL, config_problems, make_config

from components import constants
from components.config import eks_instances, gke_machines
from components.determined import fabric, resource_pools

EFA = "vpc.amazonaws.com/efa"


def efa_pool(machine="p5.48xlarge", **extra):
    return {
        "name": "fabric",
        "machineType": machine,
        "gpu": {"type": eks_instances.accelerator(machine), "count": 8},
        "fabric": "efa",
        "zones": ["us-east-1a"],
        **extra,
    }


MEGA = {**MEGA_POOL, "name": "fabric"}
ULTRA = {**ULTRA_POOL, "name": "fabric"}


def stack(base, node_pool, **top):
    """`base` (GKE or EKS) with a `fabric` node pool and resource pool beside its own."""
    return {
        **base,
        "nodePools": [*base["nodePools"], node_pool],
        "resourcePools": [*base["resourcePools"], {"name": "fabric", "nodePool": "fabric"}],
        **top,
    }


def specs(raw):
    cfg = make_config(**raw)
    rp = next(rp for rp in cfg.resource_pools if rp.name == "fabric")
    entry = next(p for p in resource_pools.master_resource_pools(cfg) if p["pool_name"] == "fabric")
    return cfg, rp, entry["task_container_defaults"]


def task_container(pod):
    return next(c for c in pod["spec"]["containers"] if c["name"] == constants.TASK_CONTAINER)


def env_of(items):
    return dict(item.split("=", 1) for item in items)


# --- EFA --------------------------------------------------------------------------------------


@pytest.mark.parametrize("machine", ["p5.48xlarge", "p5en.48xlarge", "p4d.24xlarge"])
def test_an_efa_trial_asks_for_every_efa_device_of_its_node(machine):
    _, _, tcd = specs(stack(EKS, efa_pool(machine)))
    wanted = str(eks_instances.efa_interfaces(machine))
    assert int(wanted) > 0
    resources = task_container(tcd["gpu_pod_spec"])["resources"]
    # Extended resources: request and limit equal (the device plugin's devices are whole).
    assert resources == {"requests": {EFA: wanted}, "limits": {EFA: wanted}}
    # A CPU task of the pool leaves the devices to the trial.
    assert "resources" not in task_container(tcd["cpu_pod_spec"])


def test_efa_tasks_use_eth0_and_no_huge_pages_and_the_stacks_env_wins():
    raw = stack(
        EKS, efa_pool(), taskContainerDefaults={"env": {"NCCL_DEBUG": "INFO", "FI_EFA_USE_HUGE_PAGE": "1"}}
    )
    _, _, tcd = specs(raw)
    assert tcd["dtrain_network_interface"] == "eth0"
    env = tcd["environment_variables"]
    # One value per name: the stack's, not the fabric's beside it.
    assert len(env["cuda"]) == len(env_of(env["cuda"]))
    assert env_of(env["cuda"]) == {
        "NCCL_SOCKET_IFNAME": "eth0",
        "NCCL_DEBUG": "INFO",
        "FI_EFA_USE_HUGE_PAGE": "1",
    }
    # CPU tasks get the stack's env only.
    assert env_of(env["cpu"]) == {"NCCL_DEBUG": "INFO", "FI_EFA_USE_HUGE_PAGE": "1"}
    _, _, tcd = specs(stack(EKS, efa_pool()))
    assert env_of(tcd["environment_variables"]["cuda"]) == {
        "NCCL_SOCKET_IFNAME": "eth0",
        "FI_EFA_USE_HUGE_PAGE": "0",
    }
    assert "cpu" not in tcd["environment_variables"]


# Checkpoints elsewhere than on a hostPath (sharedFs, which makes every task privileged).
S3 = {"type": "s3", "bucket": "my-checkpoints"}


def test_an_efa_pool_stays_at_pod_security_baseline():
    cfg = make_config(**stack(EKS, efa_pool(), checkpointStorage=S3))
    assert resource_pools.task_privileges(cfg) == []


def test_an_efa_pools_queue_covers_its_devices():
    raw = stack(EKS, efa_pool(maxNodes=3), scheduler="kueue")
    cfg = make_config(**raw)
    rp = next(rp for rp in cfg.resource_pools if rp.name == "fabric")
    assert cfg.queue_quota(rp)[EFA] == str(3 * 32)


# --- GKE: TCPXO and RDMA ----------------------------------------------------------------------


def annotations(tcd):
    return tcd["gpu_pod_spec"]["metadata"]["annotations"]


def test_a_tcpxo_trial_attaches_the_clusters_networks_and_tells_nccl_their_interfaces():
    _, _, tcd = specs(stack(GKE, MEGA))
    notes = annotations(tcd)
    assert notes["networking.gke.io/default-interface"] == "eth0"
    nics = json.loads(notes["networking.gke.io/interfaces"])
    networks = gke_machines.fabric_networks("a3-megagpu-8g", "tcpxo")
    assert nics == [{"interfaceName": "eth0", "network": "default"}] + [
        {"interfaceName": f"eth{i + 1}", "network": net} for i, net in enumerate(networks)
    ]
    env = env_of(tcd["environment_variables"]["cuda"])
    assert env["NCCL_FASTRAK_IFNAME"] == ",".join(f"eth{i}" for i in range(1, 9))
    assert env["NCCL_FASTRAK_CTRL_DEV"] == env["NCCL_SOCKET_IFNAME"] == "eth0"
    assert env["NCCL_TUNER_CONFIG_PATH"].startswith(fabric.NVIDIA_LIB_DIR + "/")
    assert "CUDA_VISIBLE_DEVICES" not in env  # Determined's GPUs, not all eight
    assert tcd["dtrain_network_interface"] == "eth0"


def test_the_tcpxo_daemon_is_a_pinned_native_sidecar_given_every_gpu():
    _, _, tcd = specs(stack(GKE, MEGA))
    (daemon,) = tcd["gpu_pod_spec"]["spec"]["initContainers"]
    assert daemon["name"] == "tcpxo-daemon" and daemon["restartPolicy"] == "Always"
    image, tag = daemon["image"].rsplit(":", 1)
    assert image.endswith("/tcpgpudmarxd-dev") and tag.startswith("v")
    assert not daemon["securityContext"].get("privileged")
    devices = annotations(tcd)["devices.gke.io/container.tcpxo-daemon"]
    assert [line for line in devices.splitlines() if "nvidia" in line][:8] == [
        f"- path: /dev/nvidia{i}" for i in range(8)
    ]
    assert "initContainers" not in tcd["cpu_pod_spec"]["spec"]


def test_the_daemon_goes_with_the_installer_the_cluster_runs():
    from components.cluster.gke import fabric as cluster_fabric

    # "The tcpxo-daemon version is coupled with the NCCL plugin installer version"
    # (container-engine-accelerators@992db81 gpudirect-tcpxo/README.md, release "Jan 9, 2026").
    release = {"v1.0.15": "v1.0.21"}
    installer = cluster_fabric.TCPXO_INSTALLER_IMAGE.rsplit(":", 1)[1]
    assert fabric.TCPXO_DAEMON_IMAGE.rsplit(":", 1)[1] == release[installer]


def test_gke_fabric_tasks_mount_the_hosts_libraries_but_not_dev_shm():
    for node_pool, wanted in (
        (
            MEGA,
            {
                "/usr/local/nvidia/lib64": "/home/kubernetes/bin/nvidia/lib64",
                "/dev/aperture_devices": "/dev/aperture_devices",
            },
        ),
        (
            ULTRA,
            {
                "/usr/local/nvidia": "/home/kubernetes/bin/nvidia",
                "/usr/local/gib": "/home/kubernetes/bin/gib",
            },
        ),
    ):
        _, _, tcd = specs(stack(GKE, node_pool))
        spec = tcd["gpu_pod_spec"]["spec"]
        volumes = {v["name"]: v for v in spec["volumes"]}
        mounts = {
            m["mountPath"]: volumes[m["name"]]["hostPath"]["path"]
            for m in task_container(tcd["gpu_pod_spec"])["volumeMounts"]
        }
        assert mounts == wanted
        # Determined mounts its own /dev/shm; a second mount there makes the pod invalid.
        assert "/dev/shm" not in mounts
        assert "volumes" not in tcd["cpu_pod_spec"]["spec"]
        assert "networking.gke.io/interfaces" not in tcd["cpu_pod_spec"]["metadata"]["annotations"]


def test_an_rdma_trial_attaches_the_rdma_networks_and_sources_gibs_settings_before_the_stacks_hook():
    _, _, tcd = specs(stack(GKE, ULTRA, taskContainerDefaults={"startupHook": "echo mine"}))
    nics = json.loads(annotations(tcd)["networking.gke.io/interfaces"])
    assert [n["interfaceName"] for n in nics] == ["eth0", *(f"eth{i}" for i in range(2, 10))]
    assert [n["network"] for n in nics[1:]] == gke_machines.fabric_networks("a3-ultragpu-8g", "rdma")
    hook = tcd["startup_hook"].splitlines()
    assert hook[0].startswith('export LD_LIBRARY_PATH="/usr/local/nvidia/lib64${LD_LIBRARY_PATH:+')
    # Only where the mount is (a CPU task has none): the entrypoints source the hook.
    assert hook[1] == (
        "if [ -f /usr/local/gib/scripts/set_nccl_env.sh ]; then export NCCL_NET=gIB; "
        ". /usr/local/gib/scripts/set_nccl_env.sh; fi"
    )
    assert hook[-1] == "echo mine"
    assert env_of(tcd["environment_variables"]["cuda"]) == {"NCCL_SOCKET_IFNAME": "eth0"}


def test_gke_fabric_pods_are_privileged_and_the_reason_names_the_fabric():
    cfg = make_config(**stack(GKE, MEGA, checkpointStorage=S3))
    reasons = resource_pools.task_privileges(cfg)
    assert reasons and all(
        r.startswith("nodePools[2].fabric tcpxo (GPU tasks of resource pool fabric): ") for r in reasons
    )
    assert any("NET_ADMIN" in r for r in reasons) and any("hostPath" in r for r in reasons)
    assert resource_pools.task_pod_security(cfg) == "privileged"


# --- every fabric -----------------------------------------------------------------------------


@pytest.mark.parametrize("base,node_pool", [(EKS, efa_pool()), (GKE, MEGA), (GKE, ULTRA)])
def test_a_fabric_pool_runs_one_pod_per_node(base, node_pool):
    # max_slots_per_pod: the node's GPUs (pool_max_slots' default), so a 16-slot trial is two
    # pods of eight, one per node, each with all the node's fabric.
    _, _, tcd = specs(stack(base, node_pool))
    assert tcd["kubernetes"] == {"max_slots_per_pod": 8}
    problems = config_problems(stack(base, node_pool, slots={"maxSlotsPerPod": 4}))
    assert problems == [
        "slots.maxSlotsPerPod: 4: resource pool 'fabric' runs on node pool 'fabric' (fabric "
        f"{node_pool['fabric']}), whose fabric devices and networks one task pod per node takes, so its pods "
        "take the node's 8 GPUs (multi-node trials: multiples of 8 slots); set 8 or leave it unset"
    ]
    # (The GKE base's 4-GPU pool refuses 8 for itself: slots_problems.)
    assert not [
        p for p in config_problems(stack(base, node_pool, slots={"maxSlotsPerPod": 8})) if "fabric" in p
    ]


@pytest.mark.parametrize("base,node_pool", [(EKS, efa_pool()), (GKE, MEGA)])
def test_host_network_is_refused_on_fabric_stacks(base, node_pool):
    problems = config_problems(stack(base, node_pool, taskContainerDefaults={"networkMode": "host"}))
    assert len(problems) == 1 and problems[0].startswith(
        "taskContainerDefaults.networkMode: host puts task pods on the node's network, but GPU fabric pools "
        "(nodePools[2].fabric)"
    )


def test_fabrics_need_a_master_that_keeps_what_they_add():
    assert config_problems(stack(GKE, MEGA, master={"version": "0.33.0"})) == [
        "nodePools[2].fabric: tcpxo needs master.version 0.34.0 or newer (older masters drop the "
        "restartPolicy of the tcpxo-daemon sidecar, which then never lets the task start)"
    ]
    assert config_problems(stack(GKE, MEGA, master={"version": "0.34.0"})) == []
    assert config_problems(stack(GKE, ULTRA, master={"version": "0.30.0"}))[-1].startswith(
        "nodePools[2].fabric: rdma needs master.version 0.31.0 or newer"
    )


def test_pools_without_a_fabric_are_unchanged():
    cfg = make_config(**stack(GKE, {**MEGA, "fabric": None}))
    for rp in cfg.resource_pools:
        assert fabric.pool_layer(cfg, rp) == {} and fabric.pool_settings(cfg, rp) == {}


# --- review26: small GPU tasks, the daemon's exit, reserved paths ------------------------------


def with_small_pool(base, node_pool, **top):
    """A fabric pool and, on the same node pool, a pool without the fabric for small GPU tasks."""
    raw = stack(base, node_pool, **top)
    raw["resourcePools"] = [*raw["resourcePools"], {"name": "small", "nodePool": "fabric", "fabric": False}]
    return raw


@pytest.mark.parametrize("base,node_pool", [(EKS, efa_pool(maxNodes=2)), (GKE, MEGA), (GKE, ULTRA)])
def test_a_pool_may_opt_out_of_its_node_pools_fabric(base, node_pool):
    raw = with_small_pool(base, node_pool)
    assert config_problems(raw) == []
    cfg = make_config(**raw)
    small = next(rp for rp in cfg.resource_pools if rp.name == "small")
    big = next(rp for rp in cfg.resource_pools if rp.name == "fabric")
    assert fabric.pool_layer(cfg, small) == {} and fabric.pool_settings(cfg, small) == {}
    assert fabric.pool_layer(cfg, big) != {}
    entry = next(p for p in resource_pools.master_resource_pools(cfg) if p["pool_name"] == "small")
    gpu = entry["task_container_defaults"]["gpu_pod_spec"]
    # No fabric devices, networks or sidecar: a 1-GPU notebook leaves the node's fabric alone.
    assert EFA not in json.dumps(gpu) and "networking.gke.io" not in json.dumps(gpu)
    assert "initContainers" not in gpu["spec"]
    # Still pinned to the fabric node pool's nodes.
    assert (
        gpu["spec"]["nodeSelector"]
        == entry["task_container_defaults"]["cpu_pod_spec"]["spec"]["nodeSelector"]
    )


def test_the_small_pools_queue_does_not_ask_for_efa_devices():
    cfg = make_config(**with_small_pool(EKS, efa_pool(maxNodes=2), scheduler="kueue"))
    small = next(rp for rp in cfg.resource_pools if rp.name == "small")
    big = next(rp for rp in cfg.resource_pools if rp.name == "fabric")
    assert EFA not in cfg.queue_quota(small) and cfg.queue_quota(big)[EFA] == str(2 * 32)


def test_a_small_pool_may_take_fewer_slots_per_pod_than_the_fabric_nodes_gpus():
    # The one-pod-per-node rule is the fabric pools', not the opted-out pool's.
    problems = config_problems(with_small_pool(EKS, efa_pool(), slots={"maxSlotsPerPod": 4}))
    assert [p for p in problems if "'small'" in p] == []
    assert [p for p in problems if "'fabric'" in p]


def daemon_script(run: str) -> str:
    (daemon,) = specs(stack(GKE, MEGA))[2]["gpu_pod_spec"]["spec"]["initContainers"]
    assert daemon["command"] == ["/bin/sh", "-c"]
    script = daemon["args"][0]
    return script.replace("chmod 755 /fts/entrypoint_rxdm_container.sh", "true").replace(
        "/fts/entrypoint_rxdm_container.sh --num_hops=2", run
    )


@pytest.mark.parametrize("shell", ["/bin/sh", "/bin/bash", "/bin/dash"])
def test_the_tcpxo_daemon_exits_0_when_stopped_and_keeps_a_failures_code(shell):
    # Determined reports a non-zero init container exit as the task's (job.go:736-756 at v0.38.1).
    import os
    import signal
    import subprocess
    import time

    if not os.path.exists(shell):
        pytest.skip(f"no {shell}")
    proc = subprocess.Popen([shell, "-c", daemon_script("sleep 30")], stderr=subprocess.DEVNULL)
    time.sleep(0.5)
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=10) == 0
    failed = subprocess.run([shell, "-c", daemon_script("sh -c 'exit 3'")], stderr=subprocess.DEVNULL)
    assert failed.returncode == 3


def test_the_daemon_still_meets_the_policy_exemption():
    from policies import workloads

    (daemon,) = specs(stack(GKE, MEGA))[2]["gpu_pod_spec"]["spec"]["initContainers"]
    assert workloads._tcpxo_daemon(daemon)


@pytest.mark.parametrize(
    "node_pool,path,taken",
    [
        (MEGA, "/usr/local/nvidia/lib64/extra", "/usr/local/nvidia/lib64"),
        (ULTRA, "/usr/local/gib", "/usr/local/gib"),
        (ULTRA, "/usr/local", "/usr/local/nvidia"),
    ],
)
def test_the_fabrics_and_drivers_paths_are_not_for_a_scratch_space(node_pool, path, taken):
    raw = stack(GKE, {**node_pool, "localNvme": {"mountPath": path}})
    problems = [p for p in config_problems(raw) if "localNvme.mountPath" in p]
    assert problems and problems[0].startswith(f"nodePools[2].localNvme.mountPath: {path} overlaps {taken} (")
    assert not [
        p
        for p in config_problems(stack(GKE, {**node_pool, "localNvme": {"mountPath": "/scratch"}}))
        if "localNvme.mountPath" in p
    ]
