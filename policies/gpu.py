"""Policies: GPU node pools and what runs on them: GPU pools tainted, a pool left for system
pods, task pods pinned to their node pool, GPU counts that match the machine type, dev GPU
pools that scale to zero, GPU pools with an upper bound, prod GPU pools not on spot alone,
and a GPU operator configured for its cloud."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from components import constants
from components.config import eks_instances, gke_machines
from policies import facts
from policies.facts import NodePool, Taint
from policies.rule import Context, Report, Rule

ASG_TAG = "aws:autoscaling/tag:Tag"
# The cluster-autoscaler's node-template tag for a group's GPUs (components/cluster/eks/node_groups.py).
GPU_RESOURCE_TAG = "k8s.io/cluster-autoscaler/node-template/resources/nvidia.com/gpu"

# What the project sets up for the GPU operator on GKE (components/addons/gpu_operator.py,
# components/addons/gke_driver_installer.py, components/cluster/gke/node_pools.py; a test keeps
# these equal to the project's, which are not imported to keep the pack light).
GPU_OPERATOR_CHART = "gpu-operator"
GKE_NVIDIA_DIR = "/home/kubernetes/bin/nvidia"
CRITICAL_PRIORITY_CLASSES = ("system-node-critical", "system-cluster-critical")
NO_GKE_DEVICE_PLUGIN = "gke-no-default-nvidia-gpu-device-plugin"
GKE_DRIVER_INSTALLER = "kube-system/nvidia-driver-installer"
DRIVER_INSTALLATION_DISABLED = "INSTALLATION_DISABLED"

TASK_POD_SPECS = ("cpu_pod_spec", "gpu_pod_spec")

# Karpenter's NodePool, registered as a generic CustomResource (components/kube/register.py), and
# the well-known requirement keys it reads (aws/karpenter-provider-aws@v1.14.1:
# website/content/en/docs/concepts/scheduling.md, "Well-Known Labels").
KARPENTER_NODE_POOL = "kubernetes:karpenter.sh/v1:NodePool"
CAPACITY_TYPE = "karpenter.sh/capacity-type"
INSTANCE_TYPE = "node.kubernetes.io/instance-type"
INSTANCE_FAMILY = "karpenter.k8s.aws/instance-family"
INSTANCE_CATEGORY = "karpenter.k8s.aws/instance-category"
INSTANCE_GPU_COUNT = "karpenter.k8s.aws/instance-gpu-count"
# EC2's GPU instance categories and families (p3, g6e, gr6, p6-b200: components/config/eks_instances.py).
GPU_CATEGORIES = frozenset({"g", "p"})
GPU_PRESENT_LABEL = "nvidia.com/gpu.present"
# The extended resource NVIDIA's device plugin offers, which a NodePool's spec.limits caps; without
# limits a NodePool is bounded by nothing but the account's quotas (nodepools.md:418 at v1.14.1).
GPU_RESOURCE = "nvidia.com/gpu"


# --- helpers -------------------------------------------------------------------------------


def _kind(pool: NodePool) -> str:
    return {
        facts.GKE_NODE_POOL: "GKE node pool",
        facts.EKS_NODE_GROUP: "EKS node group",
        KARPENTER_NODE_POOL: "Karpenter NodePool",
    }.get(pool.resource.resource_type, "node pool")


def _taint(taint: Taint) -> str:
    value = f"={taint.value}" if taint.value else ""
    return f"{taint.key}{value}:{taint.effect}"


def _repelling(pool: NodePool) -> list[Taint]:
    return [t for t in pool.taints if t.repels]


def _machines(pool: NodePool) -> str:
    return ", ".join(pool.machine_types) or "(none)"


def _required_node_affinity(spec: Mapping[str, Any]) -> bool:
    terms = facts.get(
        spec,
        "affinity",
        "nodeAffinity",
        "requiredDuringSchedulingIgnoredDuringExecution",
        "nodeSelectorTerms",
    )
    return any(
        facts.items(facts.get(term, "matchExpressions")) or facts.items(facts.get(term, "matchFields"))
        for term in facts.items(terms)
    )


# --- gpu-pools-tainted -----------------------------------------------------------------------


def gpu_pools_tainted(context: Context, resource: Any, report: Report) -> None:
    if resource.resource_type not in (facts.GKE_NODE_POOL, facts.EKS_NODE_GROUP):
        return
    pool = facts.node_pool(resource)
    if pool is None or not pool.gpu:
        return
    if any(t.key == facts.GPU_TAINT_KEY and t.effect == "NoSchedule" for t in pool.taints):
        return
    what = f"{pool.gpus} GPU(s) per node" if pool.gpus else "an NVIDIA image"
    report(
        f"{_kind(pool)} {pool.name!r} has {what} but no taint {facts.GPU_TAINT_KEY}:NoSchedule, "
        "so pods that ask for no GPU (system pods, CPU tasks) land on its nodes and keep them up"
    )


# --- system-pool-untainted -------------------------------------------------------------------


def system_pool_untainted(context: Context, resources: Sequence[Any], report: Report) -> None:
    pools = stack_pools(resources)
    if not pools:
        return  # an existing cluster: the stack creates no node pools
    if any(not pool.gpu and not _repelling(pool) for pool in pools):
        return
    reasons = []
    for pool in pools:
        why = ["has GPUs"] if pool.gpu else []
        why += [f"taint {_taint(t)}" for t in _repelling(pool)]
        reasons.append(f"{pool.name!r} ({', '.join(why)})")
    report(
        "no node pool is left for system pods (CoreDNS, the Determined master and database stay "
        f"pending): every pool has GPUs or a NoSchedule/NoExecute taint: {'; '.join(reasons)}",
        pools[0].resource.urn,
    )


# --- gpu-pool-tasks-pinned -------------------------------------------------------------------


def gpu_pool_tasks_pinned(context: Context, resources: Sequence[Any], report: Report) -> None:
    masters = facts.master_configs(resources)
    if not masters:
        return
    pools = stack_pools(resources)
    for master in masters:
        specs = {
            (task.pool, task.kind): task
            for task in facts.task_pod_specs(master.config)
            if task.pool is not None and task.kind in TASK_POD_SPECS
        }
        for entry in facts.items(master.config.get("resource_pools")):
            name = facts.get(entry, "pool_name", default="?")
            for kind in TASK_POD_SPECS:
                task = specs.get((name, kind))
                where = f"master.yaml resource_pools[{name}].task_container_defaults.{kind}"
                if task is None:
                    report(
                        f"resource pool {name!r}: {where} is missing, so its tasks are pinned to no node "
                        "pool",
                        master.resource.urn,
                    )
                    continue
                for problem in _pinning_problems(task.spec, pools):
                    report(f"resource pool {name!r}: {where} {problem}", master.resource.urn)


def _pinning_problems(spec: Mapping[str, Any], pools: list[NodePool]) -> list[str]:
    selector = facts.mapping(spec.get("nodeSelector"))
    if not pools:
        # An existing cluster: its nodes are not the stack's to know; the spec must select some.
        if selector or _required_node_affinity(spec):
            return []
        return ["has no nodeSelector or required node affinity, so its tasks may run on any node"]
    if not selector:
        return ["has no nodeSelector, so its tasks are pinned to no node pool"]
    shown = ", ".join(f"{k}={v}" for k, v in selector.items())
    selected = [pool for pool in pools if pool.selected_by(selector)]
    if not selected:
        return [f"has nodeSelector {shown}, which selects no node pool of the stack (its tasks stay pending)"]
    # One configured pool may be several cloud pools (one per purchase option and machine type
    # under a ComputeClass), all labelled with its name: selecting them together is selecting it.
    configured = {p.labels.get(constants.NODE_POOL_LABEL) for p in selected}
    if len(selected) > 1 and (len(configured) > 1 or None in configured):
        names = ", ".join(repr(p.name) for p in selected)
        return [f"has nodeSelector {shown}, which selects several node pools ({names}), not one"]
    problems = []
    for pool in selected:
        untolerated = pool.tolerated_by(facts.items(spec.get("tolerations")))
        if untolerated:
            taints = ", ".join(_taint(t) for t in untolerated)
            problems.append(
                f"selects {_kind(pool)} {pool.name!r} but does not tolerate its taint(s) {taints} "
                "(its tasks stay pending)"
            )
    return problems


# --- gpu-count-matches-machine ---------------------------------------------------------------


def gpu_count_matches_machine(context: Context, resources: Sequence[Any], report: Report) -> None:
    for resource in facts.of_type(resources, facts.GKE_NODE_POOL):
        pool = facts.node_pool(resource)
        if pool is not None:
            for problem in _gke_gpu_problems(pool):
                report(f"GKE node pool {pool.name!r}: {problem}", resource.urn)
    _eks_gpu_tags(resources, report)


def _gke_gpu_problems(pool: NodePool) -> list[str]:
    machine = pool.machine_types[0] if pool.machine_types else ""
    expected = pool.machine_gpus()
    if expected is None:
        return []  # N1 (GPUs chosen per pool) or a machine type the data does not know
    if expected == 0 and pool.gpus:
        return [
            f"machine type {machine} cannot carry GPUs, yet nodeConfig.guestAccelerators declares {pool.gpus}"
        ]
    if expected and not pool.gpus:
        return [
            f"machine type {machine} carries {expected} GPU(s), but nodeConfig.guestAccelerators declares "
            "none (GKE refuses the pool, or its GPUs are never offered to pods)"
        ]
    if expected != pool.gpus:
        return [
            f"nodeConfig.guestAccelerators declares {pool.gpus} GPU(s) per node, but machine type {machine} "
            f"carries {expected}"
        ]
    known = gke_machines.gpu_machine(machine)
    accelerators = {
        str(facts.get(a, "type", default=""))
        for a in facts.items(facts.get(pool.resource.props, "nodeConfig", "guestAccelerators"))
    }
    wrong = sorted(accelerators - set(known.accelerators)) if known else []
    if wrong:
        return [
            f"nodeConfig.guestAccelerators declares {', '.join(wrong)}, but machine type {machine} carries "
            f"{', '.join(known.accelerators)}"
        ]
    return []


def _eks_gpu_tags(resources: Sequence[Any], report: Report) -> None:
    """The autoscaler's GPU node-template tag equals the GPUs of its node group's instances,
    and a GPU group scaling from zero has one."""
    groups = {r.urn: r for r in facts.of_type(resources, facts.EKS_NODE_GROUP)}
    if not groups:
        return
    tagged: set[str] = set()
    resolved = True
    for tag in facts.of_type(resources, ASG_TAG):
        if facts.get(tag.props, "tag", "key") != GPU_RESOURCE_TAG:
            continue
        owners = [g for g in facts.depends_on(tag, "autoscalingGroupName") if g.urn in groups]
        if not owners:
            resolved = False  # named by hand: its node group cannot be told
            continue
        value = facts.get(tag.props, "tag", "value")
        for group in owners:
            tagged.add(group.urn)
            pool = facts.node_pool(group)
            assert pool is not None
            count = facts.whole(value)
            if count != pool.gpus:
                report(
                    f"EKS node group {pool.name!r}: its Auto Scaling group tag {GPU_RESOURCE_TAG} says "
                    f"{value!r} GPU(s) per node, but instance type {_machines(pool)} carries {pool.gpus} "
                    "(the cluster-autoscaler plans scale-ups from zero with the tag)",
                    tag.urn,
                )
    if not resolved:
        return
    for urn, group in groups.items():
        pool = facts.node_pool(group)
        if pool is None or not pool.gpus or urn in tagged or pool.min_nodes not in (0, None):
            continue
        report(
            f"EKS node group {pool.name!r} has {pool.gpus} GPU(s) per node and scales from zero, but its "
            f"Auto Scaling group has no tag {GPU_RESOURCE_TAG}: the cluster-autoscaler never adds a node "
            "for a GPU task",
            urn,
        )


# --- dev-gpu-pools-scale-to-zero -------------------------------------------------------------


def dev_gpu_pools_scale_to_zero(context: Context, resource: Any, report: Report) -> None:
    if resource.resource_type not in (facts.GKE_NODE_POOL, facts.EKS_NODE_GROUP):
        return
    pool = facts.node_pool(resource)
    if pool is None or not pool.gpu:
        return
    if pool.min_nodes == 0:
        return
    if pool.min_nodes is None:
        report(f"{_kind(pool)} {pool.name!r} has GPUs and no autoscaling minimum, so its nodes never go away")
        return
    report(
        f"{_kind(pool)} {pool.name!r} keeps {pool.min_nodes} GPU node(s) running when idle (minimum size "
        f"{pool.min_nodes}); a dev GPU pool should scale to zero"
    )


# --- Karpenter NodePools ------------------------------------------------------------------


def _requirements(spec: Mapping[str, Any]) -> list[tuple[str, str, set[str]]]:
    """(key, operator, values) of a NodePool's template requirements."""
    found = []
    for req in facts.items(facts.get(spec, "template", "spec", "requirements")):
        values = {str(v) for v in facts.items(facts.get(req, "values"))}
        found.append(
            (str(facts.get(req, "key", default="")), str(facts.get(req, "operator", default="")), values)
        )
    return found


def _gpu_family(family: str) -> bool:
    return (
        eks_instances.accelerator(f"{family}.x") is not None
        or (family[:1] in GPU_CATEGORIES and family[1:2].isdigit())
        or (family.startswith("gr") and family[2:3].isdigit())
    )


def karpenter_gpu_pool(spec: Mapping[str, Any]) -> bool:
    """Whether a Karpenter NodePool can launch GPU nodes: its template carries the GPU taint or
    label, its requirements allow a GPU instance type, family, category or count, or nothing in
    them restricts the instance types (`requirements: []` allows every instance type:
    aws/karpenter-provider-aws@v1.14.1 website/content/en/docs/concepts/nodepools.md:366)."""
    template = facts.mapping(facts.get(spec, "template"))
    taints = facts.items(facts.get(template, "spec", "taints"))
    if any(facts.get(t, "key") == facts.GPU_TAINT_KEY for t in taints):
        return True
    if facts.get(template, "metadata", "labels", GPU_PRESENT_LABEL) == "true":
        return True
    restricted = False
    for key, operator, values in _requirements(spec):
        if operator != "In" and key != INSTANCE_GPU_COUNT:
            continue
        if key == INSTANCE_TYPE:
            restricted = True
            if any(_gpu_family(eks_instances.family(v)) for v in values):
                return True
        elif key == INSTANCE_FAMILY:
            restricted = True
            if any(_gpu_family(v) for v in values):
                return True
        elif key == INSTANCE_CATEGORY:
            restricted = True
            if values & GPU_CATEGORIES:
                return True
        elif key == INSTANCE_GPU_COUNT:
            if operator in ("Gt", "Exists") or (operator == "In" and values - {"0"}):
                return True
            restricted = restricted or operator in ("DoesNotExist", "In", "Lt")
    return not restricted


def _karpenter_capacity_types(spec: Mapping[str, Any]) -> set[str] | None:
    """The capacity types a NodePool's requirements allow (None: not restricted by `In`)."""
    allowed = [
        values for key, operator, values in _requirements(spec) if key == CAPACITY_TYPE and operator == "In"
    ]
    return set.intersection(*allowed) if allowed else None


def karpenter_pool(resource: Any) -> NodePool | None:
    """A Karpenter NodePool as the rules see node pools: its template's labels and taints
    (spelled as Kubernetes spells them), the instance types it names, whether it can launch
    GPU nodes; no minimum (Karpenter adds nodes for pending pods only)."""
    if resource.resource_type != KARPENTER_NODE_POOL:
        return None
    spec = facts.mapping(facts.get(resource.props, "spec"))
    template = facts.mapping(facts.get(spec, "template"))
    machines = tuple(
        sorted(
            v
            for key, op, values in _requirements(spec)
            if key == INSTANCE_TYPE and op == "In"
            for v in values
        )
    )
    taints = tuple(
        Taint(
            str(facts.get(t, "key", default="")),
            str(facts.get(t, "value", default="")),
            str(facts.get(t, "effect", default="")),
        )
        for t in facts.items(facts.get(template, "spec", "taints"))
    )
    gpus = max((eks_instances.gpu_count(m) for m in machines if eks_instances.accelerator(m)), default=0)
    return NodePool(
        resource=resource,
        name=str(facts.get(resource.props, "metadata", "name", default=resource.name)),
        machine_types=machines,
        gpus=gpus,
        spot=_karpenter_capacity_types(spec) == {"spot"},
        min_nodes=0,
        labels=facts.mapping(facts.get(template, "metadata", "labels")),
        taints=taints,
        gpu_image=karpenter_gpu_pool(spec),
    )


def stack_pools(resources: Sequence[Any]) -> list[NodePool]:
    """The stack's GKE node pools, EKS node groups and Karpenter NodePools."""
    return facts.node_pools(resources) + [
        pool for r in facts.of_type(resources, KARPENTER_NODE_POOL) if (pool := karpenter_pool(r)) is not None
    ]


# --- gpu-pools-bounded -----------------------------------------------------------------------


def _pool_maximum_problem(resource: Any) -> str | None:
    props = resource.props
    if resource.resource_type == facts.GKE_NODE_POOL:
        autoscaling = facts.get(props, "autoscaling")
        if autoscaling is None:
            return None  # a fixed nodeCount: bounded
        if any(
            facts.whole(facts.get(autoscaling, key)) is not None
            for key in ("maxNodeCount", "totalMaxNodeCount")
        ):
            return None
        return "autoscales without autoscaling.maxNodeCount or totalMaxNodeCount"
    if facts.whole(facts.get(props, "scalingConfig", "maxSize")) is not None:
        return None
    return "has no scalingConfig.maxSize"


def gpu_pools_bounded(context: Context, resource: Any, report: Report) -> None:
    if resource.resource_type == KARPENTER_NODE_POOL:
        spec = facts.mapping(facts.get(resource.props, "spec"))
        if not karpenter_gpu_pool(spec):
            return
        limits = facts.mapping(facts.get(spec, "limits"))
        if facts.get(limits, GPU_RESOURCE) is not None:
            return
        name = facts.get(resource.props, "metadata", "name", default=resource.name)
        shown = ", ".join(f"{k}={facts.shown(v)}" for k, v in limits.items()) or "none"
        report(
            f"Karpenter NodePool {name!r} can launch GPU nodes but spec.limits sets no {GPU_RESOURCE} "
            f"(limits: {shown}): Karpenter adds GPU nodes for as long as tasks are pending"
        )
        return
    if resource.resource_type not in (facts.GKE_NODE_POOL, facts.EKS_NODE_GROUP):
        return
    pool = facts.node_pool(resource)
    if pool is None or not pool.gpu:
        return
    problem = _pool_maximum_problem(resource)
    if problem:
        report(f"{_kind(pool)} {pool.name!r} has GPUs and {problem}, so nothing caps its size")


# --- prod-gpu-pools-not-spot-only ------------------------------------------------------------


def _capacity_types(pool: NodePool) -> set[str]:
    if pool.resource.resource_type == KARPENTER_NODE_POOL:
        types = _karpenter_capacity_types(facts.mapping(facts.get(pool.resource.props, "spec")))
        # No capacity-type requirement: not restricted to spot (what Karpenter then picks is not
        # this rule's concern).
        return types if types is not None else {"any"}
    return {"spot" if pool.spot else "other"}


def _capacity_groups(resources: Sequence[Any]) -> dict[str, tuple[list[NodePool], set[str]]]:
    """GPU node pools by the configured pool they serve (the determined.ai/node-pool label: a
    pool may become several cloud pools or NodePools, one per purchase option), with the
    capacity types of them all."""
    groups: dict[str, tuple[list[NodePool], set[str]]] = {}
    for pool in stack_pools(resources):
        if pool.gpu:
            members, types = groups.setdefault(
                str(pool.labels.get(constants.NODE_POOL_LABEL) or pool.name), ([], set())
            )
            members.append(pool)
            types |= _capacity_types(pool)
    return groups


def prod_gpu_pools_not_spot_only(context: Context, resources: Sequence[Any], report: Report) -> None:
    for key, (members, types) in _capacity_groups(resources).items():
        if types == {"spot"}:
            what = ", ".join(f"{_kind(p)} {p.name!r}" for p in members)
            report(
                f"GPU node pool {key!r} ({what}) runs on spot capacity only: every reclamation interrupts "
                "its tasks (a trial restarts from its last checkpoint, counted against max_restarts) and "
                "nothing serves them while spot has no capacity",
                members[0].resource.urn,
            )


# --- gpu-operator-fits-cloud -----------------------------------------------------------------


def _is_gpu_operator(resource: Any) -> bool:
    chart = facts.get(resource.props, "chart")
    return isinstance(chart, str) and chart.rstrip("/").rsplit("/", 1)[-1] == GPU_OPERATOR_CHART


def _admits_critical_pods(quota: Any) -> bool:
    for expression in facts.items(facts.get(quota.props, "spec", "scopeSelector", "matchExpressions")):
        if (
            facts.get(expression, "scopeName") == "PriorityClass"
            and facts.get(expression, "operator") == "In"
            and set(CRITICAL_PRIORITY_CLASSES) <= set(facts.items(facts.get(expression, "values")))
        ):
            return True
    return False


def gpu_operator_fits_cloud(context: Context, resources: Sequence[Any], report: Report) -> None:
    releases = [r for r in facts.of_type(resources, facts.HELM_RELEASE) if _is_gpu_operator(r)]
    if not releases:
        return
    gpu_pools = [pool for pool in stack_pools(resources) if pool.gpu]
    for release in releases:
        values = facts.mapping(facts.get(release.props, "values"))
        namespace = str(facts.get(release.props, "namespace", default="default"))
        name = facts.get(release.props, "name", default=release.name)
        problems: list[tuple[str, str | None]] = []
        if context.cloud in ("gke", "eks") and facts.get(values, "driver", "enabled") is not False:
            source = (
                "GKE's driver installer puts the drivers on the nodes"
                if context.cloud == "gke"
                else "the EKS NVIDIA AMI ships the drivers"
            )
            problems.append(
                (f"values driver.enabled is not false: {source}, the operator's would fight them", None)
            )
        if context.cloud == "eks" and facts.get(values, "toolkit", "enabled") is not False:
            problems.append(
                ("values toolkit.enabled is not false: the EKS NVIDIA AMI ships the container toolkit", None)
            )
        if context.cloud == "gke":
            problems += _gke_operator_problems(resources, values, namespace, gpu_pools)
        for path in ("daemonsets.tolerations", "node-feature-discovery.worker.tolerations"):
            tolerations = facts.items(facts.get(values, *path.split(".")))
            for pool in gpu_pools:
                missing = pool.tolerated_by(tolerations)
                if missing:
                    problems.append(
                        (
                            f"values {path} do not tolerate {_kind(pool)} {pool.name!r}'s taint(s) "
                            f"{', '.join(_taint(t) for t in missing)}, so its GPUs are never offered to pods",
                            None,
                        )
                    )
        for message, urn in problems:
            report(f"GPU operator (Helm release {namespace}/{name}): {message}", urn or release.urn)


def _gke_operator_problems(
    resources: Sequence[Any], values: Mapping[str, Any], namespace: str, gpu_pools: list[NodePool]
) -> list[tuple[str, str | None]]:
    """What GKE needs beside the operator (as NVIDIA documents it for GKE): (message, urn)."""
    problems: list[tuple[str, str | None]] = []
    for path in ("toolkit.installDir", "hostPaths.driverInstallDir"):
        found = facts.get(values, *path.split("."))
        if found != GKE_NVIDIA_DIR:
            shown = "not set" if found is None else repr(found)
            problems.append(
                (
                    f"values {path} is {shown}, not {GKE_NVIDIA_DIR!r}, where GKE nodes keep the NVIDIA "
                    "driver",
                    None,
                )
            )
    quotas = [
        q
        for q in facts.of_type(resources, facts.RESOURCE_QUOTA)
        if facts.metadata(q).get("namespace") == namespace
    ]
    if not any(_admits_critical_pods(q) for q in quotas):
        problems.append(
            (
                f"no ResourceQuota in namespace {namespace!r} admits the PriorityClasses "
                f"{' and '.join(CRITICAL_PRIORITY_CLASSES)}: GKE refuses the operator's pods there",
                None,
            )
        )
    if gpu_pools and not any(
        facts.object_name(d) == GKE_DRIVER_INSTALLER for d in facts.of_type(resources, facts.DAEMON_SET)
    ):
        problems.append(
            (f"there is no DaemonSet {GKE_DRIVER_INSTALLER}: nothing installs the GPU drivers", None)
        )
    for pool in gpu_pools:
        config = facts.mapping(facts.get(pool.resource.props, "nodeConfig"))
        if facts.mapping(config.get("labels")).get(NO_GKE_DEVICE_PLUGIN) != "true":
            problems.append(
                (
                    f"GKE node pool {pool.name!r} lacks the label {NO_GKE_DEVICE_PLUGIN}=true, so GKE's "
                    "device plugin runs beside the operator's",
                    pool.resource.urn,
                )
            )
        driver_versions = {
            facts.get(a, "gpuDriverInstallationConfig", "gpuDriverVersion")
            for a in facts.items(config.get("guestAccelerators"))
        }
        if driver_versions != {DRIVER_INSTALLATION_DISABLED}:
            problems.append(
                (
                    f"GKE node pool {pool.name!r} does not set gpuDriverInstallationConfig.gpuDriverVersion "
                    f"{DRIVER_INSTALLATION_DISABLED}, so GKE installs drivers beside Google's installer",
                    pool.resource.urn,
                )
            )
    return problems


RULES: list[Rule] = [
    Rule(
        name="gpu-pools-tainted",
        description="Every GKE node pool and EKS node group with GPUs carries the taint nvidia.com/gpu "
        "with effect NoSchedule.",
        remediation="declare the pool's GPUs with `gpu:` in determined:nodePools[] (the project then "
        "taints it nvidia.com/gpu=present:NoSchedule); do not remove that taint",
        dev="mandatory",
        prod="mandatory",
        area="gpu",
        resource=gpu_pools_tainted,
        why="Without it any pod can land on a GPU node and keep an expensive node from scaling down.",
    ),
    Rule(
        name="system-pool-untainted",
        description="When the stack creates node pools, at least one has no GPUs and no NoSchedule or "
        "NoExecute taint.",
        remediation="add a CPU pool without taints to determined:nodePools[] (or drop the taints of one in "
        "determined:nodePools[].taints)",
        dev="mandatory",
        prod="mandatory",
        area="gpu",
        stack=system_pool_untainted,
        why="CoreDNS, the Determined master and its database tolerate no taints: they would stay pending.",
    ),
    Rule(
        name="gpu-pool-tasks-pinned",
        description="Every resource pool's cpu_pod_spec and gpu_pod_spec in master.yaml selects exactly one "
        "node pool of the stack with its nodeSelector and tolerates that pool's taints (existing clusters: "
        "selects some nodes).",
        remediation="point determined:resourcePools[].nodePool at the node pool the pool's tasks belong on "
        "(and keep determined:resourcePools[].podSpec from changing its nodeSelector)",
        dev="mandatory",
        prod="mandatory",
        area="gpu",
        stack=gpu_pool_tasks_pinned,
        why="Unpinned tasks land anywhere (CPU tasks on GPU nodes); untolerated taints leave them pending.",
    ),
    Rule(
        name="gpu-count-matches-machine",
        description="A GKE node pool declares the GPUs its machine type carries (count and type); an EKS "
        "node group's cluster-autoscaler GPU tag equals its instance type's GPUs.",
        remediation="set determined:nodePools[].gpu.count (and gpu.type) to what "
        "determined:nodePools[].machineType carries, or choose another machineType",
        dev="mandatory",
        prod="mandatory",
        area="gpu",
        stack=gpu_count_matches_machine,
        why="GKE refuses a mismatched pool; a wrong autoscaler tag makes it add nodes that cannot fit the "
        "task.",
    ),
    Rule(
        name="dev-gpu-pools-scale-to-zero",
        description="In dev, every GPU node pool's minimum size is 0 (prod stacks are not checked: they may "
        "keep GPU nodes warm).",
        remediation="set determined:nodePools[].minNodes to 0 for the GPU pool",
        dev="advisory",
        # The one rule about dev only: prod may keep GPU nodes warm on purpose.
        prod="off",
        area="gpu",
        resource=dev_gpu_pools_scale_to_zero,
        why="Idle GPU nodes cost the most of anything in a dev cluster.",
    ),
    Rule(
        name="gpu-pools-bounded",
        description="Every GKE node pool and EKS node group with GPUs has a maximum size, and every "
        "Karpenter NodePool that can launch GPU nodes sets spec.limits for nvidia.com/gpu.",
        remediation="set determined:nodePools[].maxNodes for the GPU pool (the project derives the "
        "NodePool's GPU limit from it and gpu.count)",
        dev="mandatory",
        prod="mandatory",
        area="gpu",
        resource=gpu_pools_bounded,
        why="An unbounded GPU pool keeps adding the most expensive nodes for as long as tasks are pending.",
    ),
    Rule(
        name="prod-gpu-pools-not-spot-only",
        description="In prod, no GPU node pool runs on spot capacity alone: its capacity types (all its "
        "cloud pools or NodePools together) include something besides spot (dev stacks are not checked).",
        remediation="list a fallback after spot in determined:nodePools[].capacity.types (e.g. [spot, "
        "onDemand]) instead of spot: true",
        dev="off",
        # The one rule about prod only that advises: spot alone is a choice, not a fault, in prod too.
        prod="advisory",
        area="gpu",
        stack=prod_gpu_pools_not_spot_only,
        why="Reclamation interrupts long trials and spot may have no capacity at all; a fallback keeps "
        "prod tasks running.",
    ),
    Rule(
        name="gpu-operator-fits-cloud",
        description="The NVIDIA GPU operator leaves drivers (and on EKS the toolkit) to the cloud, points at "
        "GKE's driver directory with the ResourceQuota, driver installer and node-pool settings GKE needs, "
        "and its DaemonSets tolerate every GPU pool's taints.",
        remediation="keep the project's settings for determined:gpuOperator (driver and toolkit are handled "
        "per cloud by the project); do not override them",
        dev="mandatory",
        prod="mandatory",
        area="gpu",
        stack=gpu_operator_fits_cloud,
        why="A second driver fights the cloud's; on GKE the operator's pods are refused without the quota.",
    ),
]
