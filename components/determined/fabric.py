"""The GPU fabric of a pool's nodes (nodePools[].fabric: efa, tcpxo, rdma) in its task pods:
the devices, networks, libraries and NCCL settings a distributed trial needs.

Only GPU tasks (Determined's gpu_pod_spec: tasks with slots) get the fabric: its devices and
networks are exclusive to one pod per node (an EFA device is "dedicated to one Pod": EKS UG
device-management-efa; a Device-type network interface moves into one pod: GKE "Set up
multi-network support for Pods", read 2026-11), so a TensorBoard or a CPU notebook on the
pool must not take them from the trial. One fabric pod per node: the pool's max_slots_per_pod
is the node's GPUs (resource_pools.pool_max_slots; components/config/fabric_rules.py refuses
less), and multi-node trials use multiples of that many slots.

What reaches the task container from a pool's pod spec (determined-ai/determined@v0.38.1
master/internal/rm/kubernetesrm/spec.go:552-673): pod annotations as given; of the
`determined-container` only env, envFrom, volumeMounts, volumeDevices, securityContext and
the resources Determined did not set (it sets nvidia.com/gpu or cpu only, :57-105); the pod
spec's own init containers before Determined's, and its volumes. Determined mounts its own
/dev/shm (volumes.go configureShmVolume): the fabric layers add none, unlike Google's samples.

Task settings (master.yaml task_container_defaults of the pool), per fabric:
- dtrain_network_interface eth0: the pod's primary interface on both clouds. The master
  only turns it into DET_INTER_NODE_NETWORK_INTERFACE (pkg/tasks/task.go:216-219 at
  v0.38.1), which the horovod and deepspeed launchers read; torch_distributed ignores it
  (harness/determined/launch/torch_distributed.py:83-90), so NCCL_SOCKET_IFNAME=eth0 too.
- environment_variables for CUDA tasks (the `cuda` list: configureEnvVars picks the task's
  device type, spec.go:107-175): NCCL and libfabric settings. An experiment's own
  environment_variables still win (expconf EnvironmentVariablesMapV0.Merge appends the
  defaults first: pkg/schemas/expconf/environment_config.go:159-176 at v0.38.1).
- startup_hook: sourced by every task entrypoint (master/static/srv/entrypoint.sh:13 and the
  command, notebook, shell, tensorboard, generic-task entrypoints at v0.38.1), so its exports
  reach the task; the pool's hook replaces the top one (TaskContainerDefaultsConfig.Merge),
  so the stack's own hook is appended to the fabric's.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from components import constants, versions
from components.config import ResourcePoolConfig, eks_instances, gke_machines
from components.config.node_pools import NodePool
from components.determined.args import DeterminedArgs

# The pod's primary interface (VPC CNI pod ENI on EKS; `networking.gke.io/default-interface`
# on GKE): NCCL's bootstrap and socket traffic, and the address Determined gives the other
# pods of a trial (its container_addrs are pod IPs).
INTERFACE = "eth0"

# --- EFA (EKS) ----------------------------------------------------------------------------

# The EFA device plugin's extended resource (aws/eks-charts stable/aws-efa-k8s-device-plugin,
# EKS UG device-management-efa, read 2026-11).
EFA_RESOURCE = "vpc.amazonaws.com/efa"

# Hugepages: EFA nodes pre-allocate 2 MiB huge pages that libfabric uses, and a forked
# PyTorch DataLoader worker then fails "OSError: Cannot allocate memory"; "Set to 0 when you
# see os.fork() causes ... Disabling huge page causes minor performance hit"
# (aws/aws-ofi-nccl@v1.21.1 doc/efa-env-var.md). Chosen over requesting hugepages-2Mi (EKS UG
# node-efa): a request needs a memory request beside it and a cluster-autoscaler template tag
# per node group, and still breaks DataLoader forks. The legacy FI_PROVIDER / NCCL_PROTO /
# FI_EFA_USE_DEVICE_RDMA settings are for aws-ofi-nccl < 1.7 only (same page): not set.
EFA_ENV = {"FI_EFA_USE_HUGE_PAGE": "0", "NCCL_SOCKET_IFNAME": INTERFACE}


def efa_count(node_pool: NodePool) -> int:
    """The EFA devices a task pod asks for: all a node has (one fabric pod per node), on the
    pool's smallest machine type when it has alternatives, so that the pod fits every one."""
    # EFA devices per machine type: eks_instances.efa_interfaces (MaximumEfaInterfaces, with sources).
    counts = [
        eks_instances.efa_interfaces(m) for m in getattr(node_pool, "machine_types", [node_pool.machine_type])
    ]
    counts = [c for c in counts if c > 0]
    return min(counts) if counts else 0


# --- GKE: GPUDirect-TCPXO (A3 Mega) and GPUDirect RDMA (A3 Ultra, A4) ------------------------

# Where the installers put NCCL, its plugin and their configs on the node, and where task
# containers see them: GoogleCloudPlatform/container-engine-accelerators@992db81
# gpudirect-tcpxo/nccl-test-latest.yaml (hostPath /home/kubernetes/bin/nvidia/lib64 at
# /usr/local/nvidia/lib64) and gpudirect-rdma/nccl-test.yaml (/home/kubernetes/bin/nvidia at
# /usr/local/nvidia, /home/kubernetes/bin/gib at /usr/local/gib).
NVIDIA_LIB_DIR = "/usr/local/nvidia/lib64"
GIB_DIR = "/usr/local/gib"
GIB_ENV_SCRIPT = f"{GIB_DIR}/scripts/set_nccl_env.sh"
APERTURE_DIR = "/dev/aperture_devices"

# The TCPXO receive-datapath daemon, pinned: "The tcpxo-daemon version is coupled with the
# NCCL plugin installer version" (container-engine-accelerators@992db81
# gpudirect-tcpxo/README.md, release "Jan 9, 2026": installer nccl-plugin-gpudirecttcpx-dev
# v1.0.15, daemon tcpgpudmarxd-dev v1.0.21).
TCPXO_DAEMON = constants.TCPXO_DAEMON
TCPXO_DAEMON_IMAGE = constants.TCPXO_DAEMON_IMAGE


def _tcpxo_env(interfaces: list[str]) -> dict[str, str]:
    """The NCCL settings of the TCPXO plugin (container-engine-accelerators@992db81
    gpudirect-tcpxo/README.md "Jan 9, 2026" NCCL configs, the lib directory being where the
    installer's files are mounted), with the data NICs the pod's annotation gives it. Left
    out: CUDA_VISIBLE_DEVICES (Determined's task gets the GPUs it asked for) and NCCL_DEBUG
    (the user's choice). The tuner config expects NCCL_PROTO=Simple,LL128 (same README)."""
    return {
        "NCCL_FASTRAK_CTRL_DEV": INTERFACE,
        "NCCL_FASTRAK_IFNAME": ",".join(interfaces),
        "NCCL_SOCKET_IFNAME": INTERFACE,
        "NCCL_CROSS_NIC": "0",
        "NCCL_PROTO": "Simple,LL128",
        "NCCL_MIN_NCHANNELS": "4",
        "NCCL_TUNER_PLUGIN": "libnccl-tuner.so",
        "NCCL_TUNER_CONFIG_PATH": f"{NVIDIA_LIB_DIR}/a3plus_tuner_config.textproto",
        "NCCL_SHIMNET_GUEST_CONFIG_CHECKER_CONFIG_FILE": f"{NVIDIA_LIB_DIR}/a3plus_guest_config.textproto",
        "NCCL_NVLSTREE_MAX_CHUNKSIZE": "131072",
        "NCCL_P2P_NET_CHUNKSIZE": "524288",
        "NCCL_P2P_PCI_CHUNKSIZE": "524288",
        "NCCL_P2P_NVL_CHUNKSIZE": "1048576",
        "NCCL_FASTRAK_NUM_FLOWS": "2",
        "NCCL_FASTRAK_USE_SNAP": "1",
        "NCCL_FASTRAK_PLUGIN_ACCEPT_TIMEOUT_MS": "600000",
        "NCCL_FASTRAK_ENABLE_CONTROL_CHANNEL": "0",
        "NCCL_BUFFSIZE": "8388608",
        "NCCL_NET_GDR_LEVEL": "PIX",
        "NCCL_FASTRAK_ENABLE_HOTPATH_LOGGING": "0",
        "NCCL_FASTRAK_USE_LLCM": "1",
        "NCCL_NVLS_ENABLE": "1",
        # The LLCM devices the task container mounts (nccl-test-latest.yaml env).
        "NCCL_FASTRAK_LLCM_DEVICE_DIRECTORY": APERTURE_DIR,
    }


# The installers' NCCL (and plugin) first on the library path, the image's own path kept:
# Google's samples set LD_LIBRARY_PATH=/usr/local/nvidia/lib64 outright, which would drop
# whatever path the task image sets itself. A directory that is not there (a CPU task, which
# gets no fabric mounts) is skipped by the loader.
_LIBRARY_PATH = f'export LD_LIBRARY_PATH="{NVIDIA_LIB_DIR}${{LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}}"'

# gIB's settings come from a script the RDMA installer puts on the node (its content lives in
# the nccl-plugin-gib image, not in a repository): sourced at start as the samples do
# (container-engine-accelerators@992db81 gpudirect-rdma/nccl-test.yaml); NCCL_NET=gIB makes NCCL
# fail rather than fall back to sockets (research notes: cluster-toolkit examples). Only where
# the mount is (GPU tasks): a CPU task of the pool has no such file.
_GIB_HOOK = f"if [ -f {GIB_ENV_SCRIPT} ]; then export NCCL_NET=gIB; . {GIB_ENV_SCRIPT}; fi"


@dataclass(frozen=True)
class GkeFabric:
    first_interface: int  # the pod interface the first fabric network becomes (ethN)
    volumes: tuple[tuple[str, str, str], ...]  # (volume name, host path, task container path)


# Interface numbering as Google's samples write it: TCPXO eth1..eth8 on Networks vpc1..vpc8
# (gpudirect-tcpxo/nccl-test-latest.yaml); RDMA eth2..eth9 on rdma-0..rdma-7, eth1 being the
# node's second gVNIC, which pods do not attach (gpudirect-rdma/nccl-test.yaml).
GKE_FABRICS = {
    "tcpxo": GkeFabric(
        first_interface=1,
        volumes=(
            ("fabric-nvidia-lib", "/home/kubernetes/bin/nvidia/lib64", NVIDIA_LIB_DIR),
            ("fabric-aperture-devices", APERTURE_DIR, APERTURE_DIR),
        ),
    ),
    "rdma": GkeFabric(
        first_interface=2,
        volumes=(
            ("fabric-nvidia", "/home/kubernetes/bin/nvidia", "/usr/local/nvidia"),
            ("fabric-gib", "/home/kubernetes/bin/gib", GIB_DIR),
        ),
    ),
}
# The TCPXO daemon's own host mounts (nccl-test-latest.yaml tcpxo-daemon volumeMounts).
_DAEMON_VOLUMES = (("fabric-sys", "/sys", "/hostsysfs"), ("fabric-proc-sys", "/proc/sys", "/hostprocsysfs"))


def interfaces(node_pool: NodePool, fabric: str) -> dict[str, str]:
    """{pod interface name: Network} of the fabric's data NICs."""
    first = GKE_FABRICS[fabric].first_interface
    # The Network objects the cluster makes for the fabric (components/cluster/gke/fabric.py).
    networks = gke_machines.fabric_networks(node_pool.machine_type, fabric)
    return {f"eth{first + i}": net for i, net in enumerate(networks)}


def network_annotations(node_pool: NodePool, fabric: str) -> dict[str, str]:
    """The multi-network annotations of a GKE fabric pod: eth0 on the cluster's default
    network (the pod's own), then one interface per fabric network (GKE "Set up multi-network
    support for Pods": `networking.gke.io/default-interface`, `networking.gke.io/interfaces`)."""
    nics = [{"interfaceName": INTERFACE, "network": "default"}]
    nics += [{"interfaceName": name, "network": net} for name, net in interfaces(node_pool, fabric).items()]
    return {
        "networking.gke.io/default-interface": INTERFACE,
        "networking.gke.io/interfaces": json.dumps(nics, separators=(",", ":")),
    }


def _host_volumes(volumes: tuple[tuple[str, str, str], ...]) -> list[dict[str, Any]]:
    return [{"name": name, "hostPath": {"path": host}} for name, host, _ in volumes]


def _mounts(volumes: tuple[tuple[str, str, str], ...]) -> list[dict[str, Any]]:
    return [{"name": name, "mountPath": path} for name, _, path in volumes]


_DAEMON_RUN = "/fts/entrypoint_rxdm_container.sh --num_hops=2"
# The daemon's shell exits 0 on SIGTERM. The kubelet stops a native sidecar with SIGTERM once
# the trial has ended; a shell without a trap (PID 1 ignores it) would be SIGKILLed after the
# grace period (137), and Determined reports the first init container that terminated non-zero
# as the task's exit, before it reads determined-container's
# (determined-ai/determined@v0.38.1 master/internal/rm/kubernetesrm/job.go:736-756,
# getExitCodeAndMessage; :746 at 0.34.0, :741 at 0.35.0): a finished trial seen after the pod
# completed (a master restart, coalesced status updates) would be failed. The daemon runs as
# the shell's child; its own exit (a real failure) is still the container's exit code (`set +e`
# so the `wait` it interrupts does not exit first: the trap runs right after wait returns).
_DAEMON_SCRIPT = (
    "set -ex\n"
    "chmod 755 /fts/entrypoint_rxdm_container.sh\n"
    "trap 'exit 0' TERM\n"
    f"{_DAEMON_RUN} &\n"
    "set +e\n"
    'wait "$!"\n'
    'exit "$?"'
)


def tcpxo_daemon(node_pool: NodePool) -> tuple[dict[str, Any], dict[str, str]]:
    """(init container, pod annotation) of the TCPXO daemon: a native sidecar (restartPolicy
    Always), so the pod completes when the trial ends ("Automatic Sidecar Termination",
    gpudirect-tcpxo/best-practice.md @992db81), and started before Determined's init
    container and the task. Not privileged: NET_ADMIN and NET_BIND_SERVICE, and the GPUs
    injected by the NRI device injector from the `devices.gke.io/container.<name>` annotation
    (nccl-test-latest.yaml; nri_device_injector/nri-device-injector.yaml)."""
    lib = GKE_FABRICS["tcpxo"].volumes[0]
    container = {
        "name": TCPXO_DAEMON,
        "image": TCPXO_DAEMON_IMAGE,
        "restartPolicy": "Always",
        "command": ["/bin/sh", "-c"],
        "args": [_DAEMON_SCRIPT],
        "securityContext": {"capabilities": {"add": list(constants.TCPXO_DAEMON_CAPABILITIES)}},
        "volumeMounts": _mounts((lib, *_DAEMON_VOLUMES)),
        "env": [{"name": "LD_LIBRARY_PATH", "value": NVIDIA_LIB_DIR}],
    }
    devices = [f"/dev/nvidia{i}" for i in range(node_pool.gpu_count)]
    devices += ["/dev/nvidiactl", "/dev/nvidia-uvm", "/dev/dmabuf_import_helper"]
    annotation = {f"devices.gke.io/container.{TCPXO_DAEMON}": "".join(f"- path: {d}\n" for d in devices)}
    return container, annotation


# --- the pool's layer and settings ----------------------------------------------------------


def fabric_of(cfg: DeterminedArgs, rp: ResourcePoolConfig) -> str | None:
    """The fabric of the pool's node pool (gke tcpxo/rdma, eks efa), or None (also for a pool
    that opts out: resourcePools[].fabric false)."""
    if not rp.fabric:
        return None
    return getattr(cfg.node_pool_of(rp), "fabric", None)


def pool_layer(cfg: DeterminedArgs, rp: ResourcePoolConfig) -> dict[str, Any]:
    """The pod layer of the GPU tasks (gpu_pod_spec) of a pool on a fabric node pool. {} on
    other pools."""
    fabric = fabric_of(cfg, rp)
    if fabric is None:
        return {}
    node_pool = cfg.node_pool_of(rp)
    task: dict[str, Any] = {"name": constants.TASK_CONTAINER}
    if fabric == "efa":
        count = str(efa_count(node_pool))
        task["resources"] = {"requests": {EFA_RESOURCE: count}, "limits": {EFA_RESOURCE: count}}
        return {"spec": {"containers": [task]}}
    gke = GKE_FABRICS[fabric]
    annotations = network_annotations(node_pool, fabric)
    volumes = _host_volumes(gke.volumes)
    task["volumeMounts"] = _mounts(gke.volumes)
    spec: dict[str, Any] = {"containers": [task]}
    if fabric == "tcpxo":
        daemon, devices = tcpxo_daemon(node_pool)
        annotations |= devices
        volumes += _host_volumes(_DAEMON_VOLUMES)
        spec["initContainers"] = [daemon]
    spec["volumes"] = volumes
    return {"metadata": {"annotations": annotations}, "spec": spec}


def fabric_env(cfg: DeterminedArgs, rp: ResourcePoolConfig) -> dict[str, str]:
    """What the fabric sets in a pool's CUDA tasks' environment ({} off fabric pools)."""
    fabric = fabric_of(cfg, rp)
    if fabric == "efa":
        return dict(EFA_ENV)
    if fabric == "tcpxo":
        return _tcpxo_env(list(interfaces(cfg.node_pool_of(rp), fabric)))
    if fabric == "rdma":
        # set_nccl_env.sh may set its own; this is what torch_distributed needs (see above).
        return {"NCCL_SOCKET_IFNAME": INTERFACE}
    return {}


def startup_hook(cfg: DeterminedArgs, rp: ResourcePoolConfig) -> str | None:
    """The fabric's part of the pool's startup hook (None: it needs none)."""
    fabric = fabric_of(cfg, rp)
    if fabric == "tcpxo":
        return _LIBRARY_PATH
    if fabric == "rdma":
        return f"{_LIBRARY_PATH}\n{_GIB_HOOK}"
    return None


def pool_settings(cfg: DeterminedArgs, rp: ResourcePoolConfig) -> dict[str, Any]:
    """task_container_defaults keys (besides pod specs) a pool on a fabric node pool needs
    over the stack's (dtrain_network_interface, environment_variables, startup_hook). {} on
    other pools. The stack's own values are kept: its env wins over the fabric's (a user's
    NCCL setting is deliberate), its hook runs after the fabric's."""
    if fabric_of(cfg, rp) is None:
        return {}
    tcd = cfg.task_container_defaults
    settings: dict[str, Any] = {"dtrain_network_interface": INTERFACE}
    stack_env = [f"{name}={value}" for name, value in tcd.env.items()]
    cuda = [f"{name}={value}" for name, value in fabric_env(cfg, rp).items() if name not in tcd.env]
    # Per device type (RuntimeItems: master/pkg/model/task_container_defaults.go:39): CPU tasks
    # of the pool get the stack's env only.
    # Separate lists: master.yaml holds no shared objects (YAML would write them as aliases).
    env = {"cpu": stack_env, "cuda": cuda + stack_env, "rocm": list(stack_env)}
    settings["environment_variables"] = {kind: items for kind, items in env.items() if items}
    hook = startup_hook(cfg, rp)
    if hook and cfg.master.version_tuple >= versions.STARTUP_HOOK_SINCE:
        settings["startup_hook"] = "\n".join(h for h in (hook, tcd.startup_hook) if h)
    return settings


def privilege_reason(cfg: DeterminedArgs, rp: ResourcePoolConfig) -> str:
    """Who asks for what keeps a pool's GPU task pods from Pod Security baseline (host
    libraries and devices, the TCPXO daemon's NET_ADMIN): the fabric of its node pool, which
    resource_pools.task_privileges names rather than the pool's podSpec."""
    index = next(i for i, pool in enumerate(cfg.node_pools) if pool.name == rp.node_pool)
    return f"nodePools[{index}].fabric {fabric_of(cfg, rp)} (GPU tasks of resource pool {rp.name})"
