"""Task images pulled onto a node pool's nodes before any task asks for them
(`nodePools[].prePullImages`), and the images tasks use (the stack output `taskImages`).

One DaemonSet per node pool that sets `prePullImages` and runs resource pools: an init
container per task image (it only runs `/bin/true`, so the kubelet has pulled the image once
it ends), then a pause container that keeps the pod, and so the images, on the node. The
kubelet does not garbage-collect an image that a container of a live pod, exited ones
included, was started from (kubernetes pkg/kubelet/images/image_gc_manager.go detectImages
lists the images of `runtime.GetPods(ctx, true)`: all containers, as quoted in
/work/research26/nvme-images.md; not read at a pinned kubelet tag), so the images stay until
the pod goes (or disk pressure evicts the pod).

Why init containers and a pause container: Determined's own CI pre-pulls its task image with
a DaemonSet whose only container runs the image and exits
(determined@v0.38.1:.circleci/scripts/pull_image_daemonset.yaml), which restarts forever;
Google's GPU installers use the same init-then-pause shape as this one
(components/addons/gke_driver_installer.py).

What it gains (docs/local-nvme-and-image-pulls.md): on a GPU node that scales up from zero,
the task pod waits for the GPU driver and device plugin before it is scheduled while this pod
(no GPU request) starts as soon as the node is Ready, so the multi-GB pull overlaps the driver
start; nodes kept up hold the images before anyone asks; after an upgrade the new version's
image lands on idle nodes.

Where: the master's namespace. Its pods meet Pod Security `restricted`, as these do; the
project's registry Secret (registryCredentials) and the user's imagePullSecrets are in it
(`pod_namespaces`); its NetworkPolicies deny traffic these pods never need (the kubelet pulls,
not the pod). Not a task namespace: those exist per pool and may enforce only `privileged`.
"""

from __future__ import annotations

from typing import Any

import pulumi

from components import constants, kube, versions
from components.config import NodePool
from components.determined import registry, resource_pools
from components.determined.args import DeterminedArgs
from components.determined.master import SKIP_AWAIT

COMPONENT = constants.IMAGE_PRE_PULL_COMPONENT
NAME_PREFIX = "determined-pre-pull-"
# A numeric non-root user (nobody on Debian/Ubuntu bases): /bin/true and pause run as anyone.
RUN_AS = 65534
# Tiny on purpose: the pod sits beside a task that may ask for the whole node. Memory is
# limited (policy containers-have-requests-and-limits), CPU only requested (CPU_LIMIT in
# components/kube/scan_exceptions.py says why). 64Mi leaves room for the runtime's own start
# of the container inside its cgroup.
RESOURCES = {"requests": {"cpu": "5m", "memory": "16Mi"}, "limits": {"memory": "64Mi"}}


def task_images(cfg: DeterminedArgs) -> dict[str, str]:
    """{"cpu": ..., "gpu": ...}: the images tasks run when their experiment names none:
    taskContainerDefaults.images, else the master version's defaults (versions.py). The
    master.yaml key is the project's alone (configOverrides may not set it), so this is all."""
    configured = cfg.task_container_defaults.images.model_dump(exclude_none=True)
    return {**versions.default_task_image(cfg.master.version), **configured}


def node_pool_images(cfg: DeterminedArgs, node_pool: NodePool) -> dict[str, list[str]]:
    """image -> the kinds of task ("gpu", "cpu") that run it on `node_pool`'s nodes, GPU
    first. Determined picks a task's image by its device type (determined@v0.38.1:master/
    internal/rm/kubernetesrm/spec.go:718, `env.Image().For(deviceType)`), which is the pool's
    slot type, or CPU for tasks with no slots (spec.go:676-680): GPU tasks run the GPU image on
    GPU nodes when slots are GPUs; zero-slot tasks (notebooks, TensorBoards) and CPU-slot tasks
    run the CPU image, on any node."""
    images = task_images(cfg)
    kinds = ["gpu", "cpu"] if node_pool.gpu and cfg.slot_type == "gpu" else ["cpu"]
    found: dict[str, list[str]] = {}
    for kind in kinds:
        found.setdefault(images[kind], []).append(kind)
    return found


def pre_pulled_node_pools(cfg: DeterminedArgs) -> list[NodePool]:
    """Node pools that set prePullImages (created pools only) and run resource pools."""
    used = {rp.node_pool for rp in cfg.resource_pools}
    return [p for p in cfg.node_pools if getattr(p, "pre_pull_images", False) and p.name in used]


def name(node_pool: NodePool) -> str:
    return kube.dns_label(f"{NAME_PREFIX}{node_pool.name}")


def _container(container_name: str, image: str, command: list[str] | None = None) -> dict[str, Any]:
    container: dict[str, Any] = {
        "name": container_name,
        "image": image,
        # A node that has the image keeps it; tasks pull it so too (unless forcePullImage).
        "imagePullPolicy": "IfNotPresent",
        "resources": RESOURCES,
        "securityContext": kube.restricted_container(RUN_AS),
    }
    if command:
        container["command"] = command
    return container


def daemonset(cfg: DeterminedArgs, node_pool: NodePool) -> dict[str, Any]:
    """The pre-pull DaemonSet of one node pool: on its nodes only (its selector and exactly
    its taints tolerated), restricted, pulling with the deployment's pull Secrets."""
    obj_name = name(node_pool)
    meta = kube.metadata(obj_name, COMPONENT, cfg.namespace)
    # pulumi-kubernetes would otherwise wait for every node to have pulled (minutes per
    # multi-GB image) before `pulumi up` goes on; nothing waits for these pods.
    meta["annotations"] = {SKIP_AWAIT: "true"}
    # The pool in the pod labels keeps each DaemonSet's selector apart from the others'.
    selector = {**kube.selector(COMPONENT), constants.NODE_POOL_LABEL: node_pool.name}
    init = [
        _container(f"pull-{'-'.join(kinds)}-image", image, ["/bin/true"])
        for image, kinds in node_pool_images(cfg, node_pool).items()
    ]
    spec: dict[str, Any] = {
        "nodeSelector": dict(node_pool.selector),
        "initContainers": init,
        "containers": [_container("pause", versions.PAUSE_IMAGE)],
        "securityContext": kube.restricted_pod(RUN_AS),
        "automountServiceAccountToken": False,
        "enableServiceLinks": False,
        "terminationGracePeriodSeconds": 0,
        **registry.pod_field(cfg),
    }
    tolerations = resource_pools.tolerations_for(node_pool)
    if tolerations:
        spec["tolerations"] = tolerations
    template = {"metadata": {"labels": {**kube.labels(COMPONENT), **selector}}, "spec": spec}
    return kube.manifest(
        "apps/v1",
        "DaemonSet",
        meta,
        spec={
            "selector": {"matchLabels": selector},
            # New images (an upgrade, a new mirror) land on every node at once.
            "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "100%"}},
            "template": template,
        },
    )


def daemonsets(cfg: DeterminedArgs) -> list[dict[str, Any]]:
    return [daemonset(cfg, pool) for pool in pre_pulled_node_pools(cfg)]


def register(
    cfg: DeterminedArgs, after: list[pulumi.Resource], opts: pulumi.ResourceOptions
) -> list[pulumi.Resource]:
    """Register the DaemonSets, each after `after` (the master's namespace and the pull
    Secrets in it)."""
    options = pulumi.ResourceOptions.merge(opts, pulumi.ResourceOptions(depends_on=after))
    return [kube.register(obj, options) for obj in daemonsets(cfg)]
