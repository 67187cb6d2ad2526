"""A distributed trial on a GPU fabric pool (nodePools[].fabric: efa, tcpxo, rdma) gets what it
needs, on every stack and fixture with such a pool and on variants of each fabric: the master's
task container as Determined 0.38.1 builds it from the stack's master.yaml (the model below and
placement.py), judged against the nodes and cluster objects the same plan creates.

For every fabric pool, a trial of two whole nodes' slots:
- takes two pods of all the node's GPUs (max_slots_per_pod = GPUs per node), on its own network
  (not the host's), admitted where it lands (Pod Security, quotas, queues: placement.judge);
- its task container has DET_INTER_NODE_NETWORK_INTERFACE and NCCL_SOCKET_IFNAME eth0 (the
  pod's primary interface; the torch_distributed launcher reads only the latter);
- efa: asks for every EFA device of the node (vpc.amazonaws.com/efa), which the node group's
  launch template gives it and the EFA device plugin (running on those nodes) advertises; no
  huge pages for forked DataLoader workers (FI_EFA_USE_HUGE_PAGE=0);
- tcpxo / rdma: its annotation attaches Network objects the cluster has, each backed by a
  subnet the node pool's nodes sit in; the host's NCCL plugin (the installer DaemonSet runs on
  those nodes) is mounted and first on the library path; tcpxo runs the tcpxo-daemon as a
  native sidecar before Determined's init container and tells NCCL its data NICs; rdma
  sources gIB's NCCL settings;
- and a CPU task of the pool takes none of the node's fabric devices or networks.
A pool on local NVMe gets its scratch volume, asked for as ephemeral storage, on nodes whose
ephemeral storage is the local disks.
Then the model failing when master.yaml loses what a trial needs.
"""

from __future__ import annotations

import base64
import copy
import dataclasses
import functools
import json

import placement
import pytest
import stack_plans
import yaml
from conftest import EKS, GKE, MEGA_POOL, P5_POOL, ULTRA_POOL, raw_config
from planning import plan_for

from components.config import eks_instances, master_yaml_schema

TASK_CONTAINER = placement.TASK_CONTAINER
INTERFACE = "eth0"
EFA = "vpc.amazonaws.com/efa"
GKE_INTERFACES = "networking.gke.io/interfaces"
# Determined mounts its own /dev/shm in every task container (master/internal/rm/kubernetesrm/
# volumes.go configureShmVolume at v0.38.1): a second mount there makes the pod invalid.
SHM = "/dev/shm"


def _with(base, pools, resource_pools, **top):
    raw = raw_config(**base)
    raw["nodePools"] = [*raw["nodePools"], *pools]
    raw["resourcePools"] = [*raw["resourcePools"], *resource_pools]
    raw.update(top)
    return raw


P5 = {**P5_POOL, "localNvme": {"size": "2Ti"}}
MEGA = {**MEGA_POOL, "localNvme": {}}
ULTRA = ULTRA_POOL
# What no stack of stacks/ or tests/fixtures/stacks shows (yet): each fabric, with the stack's
# own env and startup hook beside the fabric's, and one pool per fabric queued through Kueue.
VARIANTS = {
    "efa": _with(
        EKS,
        [P5],
        [{"name": "p5", "nodePool": "p5"}],
        taskContainerDefaults={"env": {"NCCL_DEBUG": "INFO"}, "startupHook": "echo stack hook"},
    ),
    # Karpenter: the EC2NodeClass gives the nodes their EFA interfaces.
    "efa-karpenter": _with(
        EKS,
        [P5],
        [{"name": "p5", "nodePool": "p5"}],
        cluster={**EKS["cluster"], "autoscaler": "karpenter"},
    ),
    "tcpxo-rdma": _with(
        GKE,
        [MEGA, ULTRA],
        [{"name": "mega", "nodePool": "mega"}, {"name": "ultra", "nodePool": "ultra"}],
        taskContainerDefaults={"startupHook": "echo stack hook"},
    ),
    # Two nodes: the trial's quota.
    "efa-kueue": _with(EKS, [{**P5, "maxNodes": 2}], [{"name": "p5", "nodePool": "p5"}], scheduler="kueue"),
    "tcpxo-kueue": _with(
        GKE, [{**MEGA, "maxNodes": 2}], [{"name": "mega", "nodePool": "mega"}], scheduler="kueue"
    ),
}


@functools.cache
def planned(name):
    if name in VARIANTS:
        result = plan_for(VARIANTS[name])
        return stack_plans.Planned(name, VARIANTS[name], result, yaml.safe_load(result.master_yaml))
    return stack_plans.plan(name)


def fabric_pools(stack):
    """(resource pool, node pool) of every resource pool on a fabric node pool, as written."""
    node_pools = {p["name"]: p for p in stack.raw["nodePools"]}
    return [
        (rp, node_pools[rp["nodePool"]])
        for rp in stack.raw["resourcePools"]
        if node_pools[rp["nodePool"]].get("fabric")
    ]


# --- the master: a pool's task settings and its task container (Determined 0.38.1) -----------


def _runtime_items(value):
    """environment_variables as the master reads them: a list for every device type, or per
    type with `gpu` an alias of `cuda` (master/pkg/model/environment_config.go:121-151)."""
    if value is None:
        return {"cpu": [], "cuda": [], "rocm": []}
    if isinstance(value, list):
        return {kind: list(value) for kind in ("cpu", "cuda", "rocm")}
    return {
        "cpu": list(value.get("cpu") or []),
        "cuda": list(value.get("cuda") or value.get("gpu") or []),
        "rocm": list(value.get("rocm") or []),
    }


def _merge_env(top, pool):
    """mergeEnvVars (master/pkg/model/task_container_defaults.go:337-351): the pool's
    variables, then the top's whose names the pool does not set."""
    names = {item.split("=", 1)[0] for item in pool}
    return [*pool, *(item for item in top if item.split("=", 1)[0] not in names)]


def pool_settings(master, pool):
    """The pool's task_container_defaults as the master resolves them: the pool's section
    merged over the top one (kubernetes_resource_manager.go:545-570 TaskContainerDefaults,
    TaskContainerDefaultsConfig.Merge: a pool's non-empty string wins, env merged per device
    type)."""
    top = master.config.get("task_container_defaults") or {}
    own = master.pools[pool].get("task_container_defaults") or {}
    env_top, env_own = _runtime_items(top.get("environment_variables")), own.get("environment_variables")
    env = (
        env_top
        if env_own is None
        else {kind: _merge_env(env_top[kind], items) for kind, items in _runtime_items(env_own).items()}
    )
    return {
        "dtrain_network_interface": own.get("dtrain_network_interface")
        or top.get("dtrain_network_interface"),
        "startup_hook": own.get("startup_hook") or top.get("startup_hook") or "",
        "network_mode": own.get("network_mode") or top.get("network_mode") or "bridge",
        "environment_variables": env,
        "max_slots_per_pod": (own.get("kubernetes") or {}).get("max_slots_per_pod")
        or master.rm.get("max_slots_per_pod"),
    }


def task_env(settings, source, device):
    """The task container's environment, as the kubelet resolves it (a later duplicate name
    wins): the task's own variables (DET_INTER_NODE_NETWORK_INTERFACE from
    dtrain_network_interface: pkg/tasks/task.go:216-219), then environment_variables for the
    task's device type over them (kubernetesrm/spec.go:107-118, called with taskSpec.EnvVars()
    at :699), then the pod spec's task container env appended (:626)."""
    env = {}
    if settings["dtrain_network_interface"]:
        env["DET_INTER_NODE_NETWORK_INTERFACE"] = settings["dtrain_network_interface"]
    for item in settings["environment_variables"][device]:
        name, _, value = item.partition("=")
        env[name] = value
    for container in (source.get("spec") or {}).get("containers") or []:
        if container.get("name") == TASK_CONTAINER:
            env |= {e["name"]: e.get("value") for e in container.get("env") or []}
    return env


def task_mounts(source):
    """{mountPath: volume} of the task container: the pod spec's own mounts (spec.go:642-643)."""
    volumes = {v["name"]: v for v in (source.get("spec") or {}).get("volumes") or []}
    return {
        m["mountPath"]: volumes.get(m["name"], {"name": m["name"]})
        for c in (source.get("spec") or {}).get("containers") or []
        if c.get("name") == TASK_CONTAINER
        for m in c.get("volumeMounts") or []
    }


@dataclasses.dataclass
class Trial:
    pool: str
    slots: int
    per_pod: int
    pods: int
    pod: dict  # one pod of the Job (placement.job_pod: Determined's containers included)
    source: dict  # the pod spec it came from (gpu_pod_spec)
    env: dict
    settings: dict


def distributed_trial(stack, pool, nodes=2):
    """A trial of `nodes` whole nodes' GPUs on `pool`: numPods = slots / max_slots_per_pod
    (kubernetesrm/resource_pool.go:370-390 at v0.38.1), each pod from the pool's gpu_pod_spec."""
    master = placement.master_of(stack)
    settings = pool_settings(master, pool)
    node_pool = next(n for rp, n in fabric_pools(stack) if rp["name"] == pool)
    per_node = node_pool["gpu"]["count"]
    per_pod = settings["max_slots_per_pod"] or per_node
    slots = nodes * per_node
    workspace = next(w for w in master.workspaces() if pool in master.available_pools(w))
    task = placement.Task(workspace, pool, "experiment", slots)
    source, _ = placement.pod_spec_of(master, task)
    namespace, _ = placement.namespace_of(master, task)
    pod = placement.job_pod(master, task, source, per_pod, namespace)
    env = task_env(settings, source, "cuda")
    return Trial(pool, slots, per_pod, slots // per_pod, pod, source, env, settings)


# --- what the cluster gives the pool's nodes --------------------------------------------------


def _selects_pool(template, node_pool):
    """Whether a DaemonSet's pods go to the node pool's nodes (node selector or affinity on
    the project's pool label)."""
    spec = template["spec"]
    if (spec.get("nodeSelector") or {}).get("determined.ai/node-pool") == node_pool["name"]:
        return True
    terms = (
        ((spec.get("affinity") or {}).get("nodeAffinity") or {}).get(
            "requiredDuringSchedulingIgnoredDuringExecution"
        )
        or {}
    ).get("nodeSelectorTerms") or []
    return any(
        e["key"] == "determined.ai/node-pool" and e["operator"] == "In" and node_pool["name"] in e["values"]
        for t in terms
        for e in t.get("matchExpressions") or []
    )


def daemon_images(stack, node_pool):
    """The images of the DaemonSets that run on the node pool's nodes."""
    return [
        c["image"]
        for ds in stack.manifests("DaemonSet")
        if _selects_pool(ds["spec"]["template"], node_pool)
        for c in stack_plans.containers(ds["spec"]["template"])
    ]


def efa_problems(stack, node_pool, trial):
    problems = []
    container = trial.pod["spec"]["containers"][-1]
    res = container["resources"]
    want = eks_instances.efa_interfaces(node_pool["machineType"])
    asked = {part: res.get(part, {}).get(EFA) for part in ("requests", "limits")}
    if asked != {"requests": str(want), "limits": str(want)}:
        problems.append(f"asks for {asked} {EFA}, the node has {want} EFA devices")
    # The interfaces each node gets: its node group's launch template, or on Karpenter its
    # EC2NodeClass's networkInterfaces.
    layouts = {
        f"launch template {r.name}": r.inputs.get("networkInterfaces") or []
        for r in stack.registrations("ec2/launchTemplate:LaunchTemplate")
        if r.name == node_pool["name"]
    }
    classes = {
        p["spec"]["template"]["spec"]["nodeClassRef"]["name"]
        for p in stack.manifests("NodePool")
        if p["spec"]["template"]["metadata"].get("labels", {}).get("determined.ai/node-pool")
        == node_pool["name"]
    }
    layouts |= {
        f"EC2NodeClass {c['metadata']['name']}": c["spec"].get("networkInterfaces") or []
        for c in stack.manifests("EC2NodeClass")
        if c["metadata"]["name"] in classes
    }
    if not layouts:
        problems.append("no launch template or EC2NodeClass gives the nodes their EFA interfaces")
    for where, interfaces in layouts.items():
        efas = [i for i in interfaces if i.get("interfaceType") in ("efa", "efa-only")]
        if len(efas) != want:
            problems.append(f"{where}: {len(efas)} EFA interfaces, not {want}")
    plugins = [
        r
        for r in stack.registrations("helm.sh/v3:Release")
        if r.inputs.get("chart") == "aws-efa-k8s-device-plugin"
    ]
    if not plugins:
        problems.append("no EFA device plugin: the nodes advertise no vpc.amazonaws.com/efa")
    for plugin in plugins:
        values = plugin.inputs.get("values") or {}
        supported = (values.get("supportedInstanceLabels") or {}).get("values")
        if supported is not None and node_pool["machineType"] not in supported:
            problems.append(f"the EFA device plugin does not run on {node_pool['machineType']}")
        taints = ([{"key": "nvidia.com/gpu", "effect": "NoSchedule"}] if node_pool.get("gpu") else []) + list(
            node_pool.get("taints") or []
        )
        tolerations = values.get("tolerations") or []
        for taint in taints:
            if not any(
                (t.get("operator") == "Exists" and t.get("key") in (None, taint["key"]))
                or (t.get("key") == taint["key"] and t.get("value") == taint.get("value"))
                for t in tolerations
            ):
                problems.append(
                    f"the EFA device plugin does not tolerate {taint['key']}: it never runs there"
                )
    if trial.env.get("FI_EFA_USE_HUGE_PAGE") != "0":
        problems.append("FI_EFA_USE_HUGE_PAGE is not 0: forked DataLoader workers fail on huge pages")
    return problems


def gke_network_problems(stack, node_pool, trial):
    """The pod's fabric interfaces: each a Network the cluster has, whose parameters name a
    subnet the node pool's nodes have an interface in."""
    problems = []
    annotations = (trial.source.get("metadata") or {}).get("annotations") or {}
    if annotations.get("networking.gke.io/default-interface") != INTERFACE:
        problems.append("no networking.gke.io/default-interface eth0")
    nics = json.loads(annotations.get(GKE_INTERFACES) or "[]")
    if {"interfaceName": INTERFACE, "network": "default"} not in nics:
        problems.append("eth0 is not on the default network")
    fabric = [n for n in nics if n["interfaceName"] != INTERFACE]
    if len(fabric) != 8:
        problems.append(f"{len(fabric)} fabric interfaces, not one per GPU NIC (8)")
    networks = {m["metadata"]["name"]: m for m in stack.manifests("Network")}
    params = {m["metadata"]["name"]: m for m in stack.manifests("GKENetworkParamSet")}
    pools = [r for r in stack.registrations("container/nodePool:NodePool") if r.name == node_pool["name"]]
    subnets = {
        c["subnetwork"]
        for r in pools
        for c in (r.inputs.get("networkConfig") or {}).get("additionalNodeNetworkConfigs") or []
    }
    mode = "RDMA" if node_pool["fabric"] == "rdma" else "NetDevice"
    for nic in fabric:
        network = networks.get(nic["network"])
        if network is None or network["spec"]["type"] != "Device":
            problems.append(f"{nic['interfaceName']}: no Device Network {nic['network']!r}")
            continue
        param = params.get(network["spec"]["parametersRef"]["name"], {}).get("spec") or {}
        if param.get("vpcSubnet") not in subnets:
            problems.append(
                f"{nic['interfaceName']}: {nic['network']!r} is not a network of the pool's nodes"
            )
        if param.get("deviceMode") != mode:
            problems.append(
                f"{nic['interfaceName']}: {nic['network']!r} is {param.get('deviceMode')}, not {mode}"
            )
    return problems, [n["interfaceName"] for n in fabric]


def host_mount_problems(trial, wanted):
    """Each (container path, host path) mounted from the host into the task container."""
    mounts = task_mounts(trial.source)
    return [
        f"{path} is not the host's {host}"
        for path, host in wanted
        if (mounts.get(path, {}).get("hostPath") or {}).get("path") != host
    ]


def tcpxo_problems(stack, node_pool, trial):
    problems, names = gke_network_problems(stack, node_pool, trial)
    problems += host_mount_problems(
        trial,
        [("/usr/local/nvidia/lib64", "/home/kubernetes/bin/nvidia/lib64"), ("/dev/aperture_devices",) * 2],
    )
    inits = trial.pod["spec"]["initContainers"]
    daemon = [i for i, c in enumerate(inits) if c["name"] == "tcpxo-daemon"]
    if not daemon:
        problems.append("no tcpxo-daemon")
    else:
        container = inits[daemon[0]]
        # A native sidecar: started before the later init containers, ended with the pod
        # (https://kubernetes.io/docs/concepts/workloads/pods/sidecar-containers/, read 2026-11).
        if container.get("restartPolicy") != "Always":
            problems.append("the tcpxo-daemon is not a native sidecar: the pod never completes")
        if daemon[0] > [c["name"] for c in inits].index(placement.INIT_CONTAINER):
            problems.append("the tcpxo-daemon starts after Determined's init container")
        tag = container["image"].rsplit(":", 1)[-1]
        installers = [i for i in daemon_images(stack, node_pool) if "nccl-plugin-gpudirecttcpx" in i]
        # "The tcpxo-daemon version is coupled with the NCCL plugin installer version"
        # (container-engine-accelerators@992db81 gpudirect-tcpxo/README.md, "Jan 9, 2026").
        coupled = {"v1.0.15": "v1.0.21"}
        if not installers:
            problems.append("no NCCL TCPXO installer runs on the pool's nodes")
        for image in installers:
            if coupled.get(image.rsplit(":", 1)[-1]) != tag:
                problems.append(f"tcpxo-daemon {tag} does not go with the installer {image}")
        annotations = (trial.source.get("metadata") or {}).get("annotations") or {}
        devices = annotations.get("devices.gke.io/container.tcpxo-daemon") or ""
        if not all(f"/dev/nvidia{i}" in devices for i in range(node_pool["gpu"]["count"])):
            problems.append("the tcpxo-daemon is not given every GPU")
    if not any("nri-device-injector" in i for i in daemon_images(stack, node_pool)):
        problems.append("no NRI device injector on the pool's nodes: the tcpxo-daemon gets no GPUs")
    if trial.env.get("NCCL_FASTRAK_IFNAME") != ",".join(names):
        problems.append(
            f"NCCL_FASTRAK_IFNAME {trial.env.get('NCCL_FASTRAK_IFNAME')!r}, the pod's NICs {names}"
        )
    if "/usr/local/nvidia/lib64" not in trial.settings["startup_hook"].split("LD_LIBRARY_PATH=", 1)[-1][:40]:
        problems.append("the host's NCCL is not first on LD_LIBRARY_PATH")
    return problems


def rdma_problems(stack, node_pool, trial):
    problems, _ = gke_network_problems(stack, node_pool, trial)
    problems += host_mount_problems(
        trial,
        [
            ("/usr/local/nvidia", "/home/kubernetes/bin/nvidia"),
            ("/usr/local/gib", "/home/kubernetes/bin/gib"),
        ],
    )
    if not any("nccl-plugin-gib" in i for i in daemon_images(stack, node_pool)):
        problems.append("no gIB installer runs on the pool's nodes")
    if "/usr/local/gib/scripts/set_nccl_env.sh" not in trial.settings["startup_hook"]:
        problems.append("gIB's NCCL settings are not sourced")
    return problems


def cpu_task_problems(stack, pool):
    """A CPU task of the pool (a TensorBoard, a CPU notebook) takes no fabric device or NIC."""
    master = placement.master_of(stack)
    source = master.task_container_defaults(pool, "cpu_pod_spec") or {}
    problems = []
    annotations = (source.get("metadata") or {}).get("annotations") or {}
    if GKE_INTERFACES in annotations:
        problems.append("a CPU task takes the fabric NICs")
    for c in (source.get("spec") or {}).get("containers") or []:
        if EFA in ((c.get("resources") or {}).get("requests") or {}):
            problems.append("a CPU task takes the EFA devices")
    if any(c["name"] == "tcpxo-daemon" for c in (source.get("spec") or {}).get("initContainers") or []):
        problems.append("a CPU task runs the tcpxo-daemon")
    return problems


def trial_problems(stack, rp, node_pool):
    """Everything a distributed trial on `rp` lacks (empty: it has what it needs)."""
    trial = distributed_trial(stack, rp["name"])
    per_node = node_pool["gpu"]["count"]
    problems = []
    if trial.per_pod != per_node or trial.pods != 2:
        problems.append(
            f"{trial.slots} slots make {trial.pods} pods of {trial.per_pod} GPUs, not 2 of {per_node}"
        )
    if trial.settings["network_mode"] == "host":
        problems.append("on the host network: the fabric's interfaces are the pod's own")
    if trial.env.get("DET_INTER_NODE_NETWORK_INTERFACE") != INTERFACE:
        problems.append(f"dtrain_network_interface {trial.env.get('DET_INTER_NODE_NETWORK_INTERFACE')!r}")
    if trial.env.get("NCCL_SOCKET_IFNAME") != INTERFACE:
        problems.append(f"NCCL_SOCKET_IFNAME {trial.env.get('NCCL_SOCKET_IFNAME')!r}: torch_distributed")
    if SHM in task_mounts(trial.source):
        problems.append("a /dev/shm mount beside Determined's own")
    check = {"efa": efa_problems, "tcpxo": tcpxo_problems, "rdma": rdma_problems}[node_pool["fabric"]]
    problems += check(stack, node_pool, trial)
    problems += cpu_task_problems(stack, rp["name"])
    # Admitted where it lands (namespace, Pod Security, quotas, queues, network), both pods.
    master = placement.master_of(stack)
    task = placement.Task(
        trial.pod["metadata"]["labels"]["determined.ai/workspace"], rp["name"], "experiment", trial.slots
    )
    namespace, why = placement.namespace_of(master, task)
    where = placement.Placement(
        task, "Job", namespace, trial.pod["metadata"]["labels"], trial.pod, trial.pods, "gpu_pod_spec", why
    )
    problems += placement.judge(stack, where).problems
    return problems


@pytest.fixture(scope="module", params=[*stack_plans.NAMES, *VARIANTS])
def stack(request):
    return planned(request.param)


def test_a_distributed_trial_on_a_fabric_pool_gets_what_it_needs(stack):
    failed = {
        rp["name"]: problems
        for rp, node_pool in fabric_pools(stack)
        if (problems := trial_problems(stack, rp, node_pool))
    }
    assert failed == {}, stack.name


def test_the_variants_show_every_fabric_in_a_master_yaml_the_master_takes():
    fabrics = {node_pool["fabric"] for name in VARIANTS for _, node_pool in fabric_pools(planned(name))}
    assert fabrics == {"efa", "tcpxo", "rdma"}
    # The pool pod specs strictly valid, the per-device env and the hook of known types
    # (as test_master_yaml_stacks checks every stack's).
    for name in VARIANTS:
        stack = planned(name)
        assert master_yaml_schema.check(stack.master, stack.version) == [], name


def test_local_nvme_scratch_is_on_the_nodes_local_disks(stack):
    for rp in stack.raw["resourcePools"]:
        node_pool = next(n for n in stack.raw["nodePools"] if n["name"] == rp["nodePool"])
        nvme = node_pool.get("localNvme")
        if nvme is None:
            continue
        path, size = nvme.get("mountPath", "/scratch"), nvme.get("size", "100Gi")
        master = placement.master_of(stack)
        for key in ("cpu_pod_spec", "gpu_pod_spec"):
            source = master.task_container_defaults(rp["name"], key) or {}
            volume = task_mounts(source).get(path)
            assert volume == {"name": "scratch", "emptyDir": {"sizeLimit": size}}, (
                stack.name,
                rp["name"],
                key,
            )
            task = next(c for c in source["spec"]["containers"] if c["name"] == TASK_CONTAINER)
            if key == "gpu_pod_spec" or not node_pool.get("gpu"):
                assert task["resources"]["requests"]["ephemeral-storage"] == size
            else:
                # A CPU task on a GPU node pool leaves the scratch space to the trial.
                assert "ephemeral-storage" not in task.get("resources", {}).get("requests", {})
        # The nodes' ephemeral storage (where emptyDirs live) is on their local disks.
        if stack.raw["cloud"] == "gke":
            configs = [
                r.inputs["nodeConfig"].get("ephemeralStorageLocalSsdConfig")
                for r in stack.registrations("container/nodePool:NodePool")
                if r.inputs["nodeConfig"].get("labels", {}).get("determined.ai/node-pool")
                == node_pool["name"]
            ]
            assert configs and all(c is not None for c in configs), (stack.name, node_pool["name"])
        elif stack.raw["cloud"] == "eks":
            # A node group's launch template (nodeadm NodeConfig localStorage RAID0), or
            # Karpenter's EC2NodeClass (instanceStorePolicy RAID0).
            data = [
                base64.b64decode(r.inputs["userData"]).decode()
                for r in stack.registrations("ec2/launchTemplate:LaunchTemplate")
                if r.name == node_pool["name"] and r.inputs.get("userData")
            ]
            classes = {
                p["spec"]["template"]["spec"]["nodeClassRef"]["name"]
                for p in stack.manifests("NodePool")
                if p["spec"]["template"]["metadata"].get("labels", {}).get("determined.ai/node-pool")
                == node_pool["name"]
            }
            policies = [
                c["spec"].get("instanceStorePolicy")
                for c in stack.manifests("EC2NodeClass")
                if c["metadata"]["name"] in classes
            ]
            assert data or policies, (stack.name, node_pool["name"])
            assert all("strategy: RAID0" in d for d in data), (stack.name, node_pool["name"])
            assert all(p == "RAID0" for p in policies), (stack.name, node_pool["name"])


# --- the model failing when a trial lacks something -------------------------------------------


def _broken(stack, change):
    master = copy.deepcopy(stack.master)
    change(master)
    return dataclasses.replace(stack, master=master)


def _pool_tcd(master, pool):
    return next(p for p in master["resource_pools"] if p["pool_name"] == pool)["task_container_defaults"]


def _task_container(pod):
    return next(c for c in pod["spec"]["containers"] if c["name"] == TASK_CONTAINER)


def test_the_model_fails_an_efa_trial_without_its_devices_or_settings():
    stack = planned("efa")
    ((rp, node_pool),) = fabric_pools(stack)
    assert trial_problems(stack, rp, node_pool) == []

    def no_efa(master):
        resources = _task_container(_pool_tcd(master, "p5")["gpu_pod_spec"])["resources"]
        del resources["requests"][EFA], resources["limits"][EFA]

    def no_interface(master):
        del _pool_tcd(master, "p5")["dtrain_network_interface"]
        _pool_tcd(master, "p5")["environment_variables"]["cuda"].remove("NCCL_SOCKET_IFNAME=eth0")

    def half_a_node(master):
        _pool_tcd(master, "p5")["kubernetes"]["max_slots_per_pod"] = 4

    problems = trial_problems(_broken(stack, no_efa), rp, node_pool)
    assert any("asks for" in p for p in problems), problems
    problems = trial_problems(_broken(stack, no_interface), rp, node_pool)
    assert any("dtrain_network_interface" in p for p in problems), problems
    assert any("NCCL_SOCKET_IFNAME" in p for p in problems), problems
    problems = trial_problems(_broken(stack, half_a_node), rp, node_pool)
    assert any("16 slots make 4 pods of 4 GPUs" in p for p in problems), problems


def test_the_model_fails_a_gke_fabric_trial_without_its_networks_daemon_or_libraries():
    stack = planned("tcpxo-rdma")
    pools = dict((rp["name"], (rp, n)) for rp, n in fabric_pools(stack))
    for rp, node_pool in pools.values():
        assert trial_problems(stack, rp, node_pool) == [], rp["name"]

    def unknown_network(master):
        annotations = _pool_tcd(master, "mega")["gpu_pod_spec"]["metadata"]["annotations"]
        annotations[GKE_INTERFACES] = annotations[GKE_INTERFACES].replace('"vpc3"', '"vpc9"')

    def plain_init_container(master):
        for c in _pool_tcd(master, "mega")["gpu_pod_spec"]["spec"]["initContainers"]:
            c.pop("restartPolicy", None)

    def no_gib(master):
        _pool_tcd(master, "ultra")["startup_hook"] = "echo stack hook"

    def shm_mount(master):
        spec = _pool_tcd(master, "ultra")["gpu_pod_spec"]["spec"]
        spec["volumes"].append({"name": "shm", "emptyDir": {"medium": "Memory"}})
        _task_container({"spec": spec})["volumeMounts"].append({"name": "shm", "mountPath": SHM})

    problems = trial_problems(_broken(stack, unknown_network), *pools["mega"])
    assert any("no Device Network 'vpc9'" in p for p in problems), problems
    assert (
        any("NCCL_FASTRAK_IFNAME" in p for p in problems) is False
    )  # the env follows the annotation's names
    problems = trial_problems(_broken(stack, plain_init_container), *pools["mega"])
    assert any("not a native sidecar" in p for p in problems), problems
    problems = trial_problems(_broken(stack, no_gib), *pools["ultra"])
    assert any("gIB" in p for p in problems), problems
    problems = trial_problems(_broken(stack, shm_mount), *pools["ultra"])
    assert any("/dev/shm" in p for p in problems), problems
