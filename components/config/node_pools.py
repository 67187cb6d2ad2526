"""`determined:nodePools`: created on GKE/EKS, described on an existing cluster."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, ValidationInfo, field_validator, model_validator

from components import cloud_limits, constants
from components.config import eks_instances, gke_machines
from components.config.base import ConfigModel
from components.config.checkpoint_storage import ContainerPath
from components.config.cluster import AwsZone, GcpZone
from components.config.pool_capacity import CapacityConfig
from components.config.syntax import (
    DnsLabel,
    Flag,
    LabelKey,
    Labels,
    NonEmpty,
    Quantity,
    each_entry,
    label_value_problem,
    whole_number,
)

# The largest machines carry 16 GPUs (a2-megagpu-16g); no node has more.
MAX_GPUS_PER_NODE = 16
# GKE's per-pool node limit; also far above any EKS node group in practice.
MAX_NODES_PER_POOL = 1000


# Taint effects as the GKE and EKS node-pool APIs name them.
_NODE_POOL_EFFECTS = {
    "NoSchedule": "NO_SCHEDULE",
    "PreferNoSchedule": "PREFER_NO_SCHEDULE",
    "NoExecute": "NO_EXECUTE",
}


class Taint(ConfigModel):
    key: LabelKey = Field(description="The taint's key, a valid Kubernetes label key.")
    value: str = Field(
        "",
        description="The taint's value, a valid label value; gke/eks: required; existing clusters: may be "
        "left empty (the default).",
    )
    effect: Literal["NoSchedule", "PreferNoSchedule", "NoExecute"] = Field(
        description="What the taint does to pods that do not tolerate it: `NoSchedule`, "
        "`PreferNoSchedule` or `NoExecute`."
    )

    @field_validator("value")
    @classmethod
    def _value(cls, value: str, info: ValidationInfo) -> str:
        message = label_value_problem(info.data.get("key", ""), value)
        if message:
            raise ValueError(message)
        return value

    @property
    def node_taint(self) -> dict[str, str]:
        """The taint as the GKE and EKS node-pool APIs take it (effects in upper snake case)."""
        return {"key": self.key, "value": self.value, "effect": _NODE_POOL_EFFECTS[self.effect]}

    @property
    def toleration(self) -> dict[str, str]:
        """The toleration that lets a pod onto nodes with this taint."""
        if self.value:
            return {"key": self.key, "operator": "Equal", "value": self.value, "effect": self.effect}
        return {"key": self.key, "operator": "Exists", "effect": self.effect}


# Every GPU node pool carries this taint so that only pods asking for GPUs land there.
GPU_TAINT = Taint(key="nvidia.com/gpu", value="present", effect="NoSchedule")


class GpuConfig(ConfigModel):
    type: NonEmpty | None = Field(
        None,
        description="The nodes' GPU (e.g. `nvidia-l4`, or its usual name such as `l4`); optional on "
        "existing clusters.",
    )
    count: whole_number(1, MAX_GPUS_PER_NODE) = Field(description="GPUs per node, 1-16; required.")


class CloudGpuConfig(GpuConfig):
    type: NonEmpty = Field(
        description="Required: gke, the accelerator type to attach (e.g. `nvidia-l4`); eks, the instance "
        "type's GPU (e.g. `nvidia-l4` on `g6`). The usual name (`t4`, `a100`, `l4`, `h100`, ...) is read as "
        "the accelerator the machine type carries or, on GKE N1, attaches."
    )


# The short names users write for NVIDIA GPUs (NVIDIA's product names, with the memory size
# where a GPU comes in two), per accelerator name as the clouds spell it: GKE's accelerator
# types (gke_machines) and the names this project gives EC2's GPUs (eks_instances). A name
# fits an accelerator when it is the accelerator's name or one of these, in any case.
GPU_SHORT_NAMES: dict[str, tuple[str, ...]] = {
    "nvidia-tesla-t4": ("t4",),
    "nvidia-tesla-v100": ("v100",),
    "nvidia-tesla-p100": ("p100",),
    "nvidia-tesla-p4": ("p4",),
    "nvidia-tesla-a100": ("a100", "a100-40gb"),
    "nvidia-a100-80gb": ("a100", "a100-80gb"),
    "nvidia-a10g": ("a10g",),
    "nvidia-l4": ("l4",),
    "nvidia-l40s": ("l40s",),
    "nvidia-h100-80gb": ("h100", "h100-80gb"),
    "nvidia-h100-mega-80gb": ("h100", "h100-mega", "h100-mega-80gb"),
    "nvidia-h200-141gb": ("h200", "h200-141gb"),
    "nvidia-b200": ("b200",),
    "nvidia-b300": ("b300",),
    "nvidia-gb200": ("gb200",),
    "nvidia-rtx-pro-6000": ("rtx-pro-6000",),
}


def gpu_names(accelerator: str) -> tuple[str, ...]:
    """Every name that fits `accelerator`: its short names, then its own."""
    return (*GPU_SHORT_NAMES.get(accelerator, ()), accelerator)


def canonical_gpu(written: str, offered: tuple[str, ...]) -> str | None:
    """The one accelerator of `offered` that `written` names; None when none or several do."""
    matches = [a for a in offered if written.lower() in gpu_names(a)]
    return matches[0] if len(matches) == 1 else None


def offered_accelerators(machine_type: str) -> tuple[str, ...]:
    """The GPUs a machine type carries or takes. EC2 instance types are family.size (a dot);
    Compute Engine machine types never hold one."""
    if "." in machine_type:
        accelerator = eks_instances.accelerator(machine_type)
        return (accelerator,) if accelerator else ()
    machine = gke_machines.gpu_machine(machine_type)
    return machine.accelerators if machine else ()


class NodePool(ConfigModel):
    name: DnsLabel = Field(description="The pool's name, required: a DNS label, unique among the pools.")
    machine_type: NonEmpty | None = Field(
        None,
        description="The nodes' machine type (GKE machine type or EC2 instance type); descriptive on "
        "existing clusters.",
    )
    gpu: GpuConfig | None = Field(
        None,
        description="The GPUs of each node, `{type, count}` (default: a CPU pool). GPU pools are tainted "
        "`nvidia.com/gpu=present:NoSchedule`.",
    )
    labels: Labels = Field(
        default_factory=dict, description="Extra node labels (valid label keys and values; default: none)."
    )
    taints: list[Taint] = Field(
        default_factory=list,
        description="Extra taints, `[{key, value, effect}]` (default: none); at least one pool must be "
        "untainted, for system pods.",
    )

    @field_validator("taints")
    @classmethod
    def _one_per_key_and_effect(cls, taints: list[Taint], info: ValidationInfo) -> list[Taint]:
        # Kubernetes allows one taint per key and effect on a node; GPU pools carry GPU_TAINT.
        given = [GPU_TAINT] if info.data.get("gpu") else []
        for taint in taints:
            same = next((t for t in given if (t.key, t.effect) == (taint.key, taint.effect)), None)
            if same is not None and same != taint:
                why = (
                    " (every GPU pool carries nvidia.com/gpu=present:NoSchedule)" if same == GPU_TAINT else ""
                )
                raise ValueError(
                    f"two taints with key {taint.key!r} and effect {taint.effect}{why}; a node takes one "
                    "taint per key and effect"
                )
            given.append(taint)
        return taints

    @property
    def gpu_count(self) -> int:
        return self.gpu.count if self.gpu else 0

    @property
    def all_taints(self) -> list[Taint]:
        """The pool's taints, with the GPU taint first on GPU pools."""
        taints = [GPU_TAINT] if self.gpu else []
        taints += [t for t in self.taints if t not in taints]
        return taints

    @property
    def selector(self) -> dict[str, str]:
        """Labels that select exactly this pool's nodes."""
        raise NotImplementedError


class ExistingNodePool(NodePool):
    """A pool of an existing cluster: its nodes are found by labels they already carry."""

    node_selector: Labels = Field(
        default_factory=dict,
        description="Existing clusters only: labels the pool's nodes already carry; required for pools "
        "used by resource pools (default: falls back to `labels`).",
    )

    @property
    def selector(self) -> dict[str, str]:
        return dict(self.node_selector or self.labels)


class CloudNodePool(NodePool):
    """A pool the project creates; its nodes carry `determined.ai/node-pool=<name>`."""

    @field_validator("labels")
    @classmethod
    def _not_the_pool_label(cls, labels: dict[str, str]) -> dict[str, str]:
        if constants.NODE_POOL_LABEL in labels:
            raise ValueError(
                f"{constants.NODE_POOL_LABEL!r} is set by the project (to the pool's name), and resource "
                "pools select the pool's nodes by it; remove it"
            )
        return labels

    machine_type: NonEmpty = Field(
        description="Required: the GKE machine type or EC2 instance type of the pool's nodes; it must be "
        "able to carry the pool's GPU."
    )
    gpu: CloudGpuConfig | None = Field(
        None,
        description="The GPUs of each node, `{type, count}`, both required (default: a CPU pool). GPU pools "
        "are tainted `nvidia.com/gpu=present:NoSchedule`.",
    )
    min_nodes: whole_number(0, MAX_NODES_PER_POOL) = Field(
        0,
        description="The fewest nodes, at most `maxNodes` (default 0). gke: the autoscaler's lower bound "
        "over all the pool's zones; eks: the node group's minimum size, and the first untainted on-demand "
        "CPU group's defaults to 1 (prod: 2, at most `maxNodes`).",
    )
    max_nodes: whole_number(1, MAX_NODES_PER_POOL) = Field(
        1,
        description="The most nodes, 1-1000 (default 1). gke: the autoscaler's upper bound over all the "
        "pool's zones; eks: the node group's maximum size.",
    )
    spot: Flag = Field(
        False,
        description="Spot capacity (default: off; eks: `SPOT` capacity, else `ON_DEMAND`); the same as "
        "`capacity: {types: [spot]}`, which says more.",
    )
    capacity: CapacityConfig | None = Field(
        None,
        description="Where the nodes come from, in order of preference: `{types, reservation, instanceTypes, "
        "queued}` (default: on-demand, or spot with `spot`, `machineType` only).",
    )

    local_nvme: LocalNvme | None = Field(
        None,
        description="Local NVMe disks as the nodes' ephemeral storage and a scratch volume in task pods, "
        "`{mountPath, size}` (gke: also `count`). Default: none (the boot disk).",
    )
    fast_image_pulls: Flag | None = Field(
        None,
        description="gke: image streaming (Artifact Registry images start before they are fully pulled; "
        "COS_CONTAINERD nodes only; changed in place), which needs the Container File System API "
        "(containerfilesystem.googleapis.com) enabled in the project: the stack enables no APIs; "
        "eks: containerd's parallel pull and unpack (SOCI FastImagePull). Default: on for GKE GPU pools on "
        "COS, off on eks.",
    )
    pre_pull_images: Flag = Field(
        False,
        description="true runs a DaemonSet on the pool's nodes that pulls the task images of the resource "
        "pools on it as soon as a node starts; only on a node pool some resource pool runs on. Default "
        "false.",
    )

    @model_validator(mode="after")
    def _spot_or_capacity(self) -> CloudNodePool:
        if self.spot and self.capacity is not None:
            raise ValueError(
                "`spot` and `capacity` both say where nodes come from: use `capacity.types` alone"
            )
        return self

    @property
    def capacity_types(self) -> list[str]:
        """The purchase options in order: `capacity.types`, else spot or on-demand."""
        if self.capacity is not None:
            return list(self.capacity.types)
        return ["spot"] if self.spot else ["onDemand"]

    @property
    def machine_types(self) -> list[str]:
        """`machineType` and the alternatives `capacity.instanceTypes` names, in order."""
        extra = self.capacity.instance_types if self.capacity is not None else []
        return list(dict.fromkeys([self.machine_type, *extra]))

    @field_validator("gpu")
    @classmethod
    def _accelerator_name(cls, gpu: CloudGpuConfig | None, info: ValidationInfo) -> CloudGpuConfig | None:
        # A short name (`a100`, `l4`) becomes the accelerator the machine type carries (on GKE
        # N1, the one of that name), so that everything after validation sees one name. A name
        # that fits nothing is left for the cloud's rules to refuse with the names that fit.
        machine_type = info.data.get("machine_type")
        if gpu is None or machine_type is None:
            return gpu
        name = canonical_gpu(gpu.type, offered_accelerators(machine_type))
        return gpu if name in (None, gpu.type) else gpu.model_copy(update={"type": name})

    @property
    def node_labels(self) -> dict[str, str]:
        """Labels the project puts on the pool's nodes."""
        return {**self.labels, constants.NODE_POOL_LABEL: self.name}

    @property
    def selector(self) -> dict[str, str]:
        return {constants.NODE_POOL_LABEL: self.name}


# Where task containers see a pool's local NVMe scratch space by default.
DEFAULT_SCRATCH_PATH = "/scratch"
DEFAULT_SCRATCH_SIZE = "100Gi"


class LocalNvme(ConfigModel):
    """The nodes' local NVMe disks as their ephemeral storage (gke: local SSDs; eks: the
    instance store in RAID0), offered to task pods as an emptyDir scratch volume."""

    mount_path: ContainerPath = Field(
        DEFAULT_SCRATCH_PATH,
        description="Where task containers see the scratch space: an absolute path outside the system "
        "directories. Default /scratch.",
    )
    size: Quantity = Field(
        DEFAULT_SCRATCH_SIZE,
        description="The scratch space each task pod asks for (its ephemeral-storage request and the "
        "emptyDir's sizeLimit), a Kubernetes quantity. Default 100Gi.",
    )


class GkeLocalNvme(LocalNvme):
    count: whole_number(0, 32) = Field(
        0,
        description="gke: local SSDs per node; 0 (default) takes the number the machine type comes with "
        "(A2 Ultra, A3, A4 and other bundled series), and is refused on machines where it must be given. "
        "Setting or changing local SSDs replaces the node pool (its nodes and running tasks).",
    )


class EksLocalNvme(LocalNvme):
    """eks: the instance store in RAID0 (nodeadm's localStorage strategy, Karpenter's
    instanceStorePolicy); the instance type decides how many disks."""


class GpuSharing(ConfigModel):
    """Several containers on one GPU (GKE time-sharing or NVIDIA MPS)."""

    strategy: Literal["TIME_SHARING", "MPS"] = Field(
        description="Required: how containers share a GPU, `TIME_SHARING` or `MPS`."
    )
    max_shared_clients_per_gpu: whole_number(2, 48) = Field(description="Required: containers per GPU, 2-48.")


class GkeGpuConfig(CloudGpuConfig):
    driver_version: Literal["DEFAULT", "LATEST"] = Field(
        "DEFAULT",
        description="GKE-managed drivers: `DEFAULT` (the version GKE tests with the node version) or "
        "`LATEST`.",
    )
    partition_size: NonEmpty | None = Field(
        None,
        description="GKE-managed drivers: a MIG partition size the GPU offers (e.g. `1g.10gb` on "
        "`nvidia-h100-80gb`), on A100, H100, H200, B200, GB200 and RTX PRO 6000 GPUs (default: none).",
    )
    sharing: GpuSharing | None = Field(
        None,
        description="GKE-managed drivers: several containers on one GPU, "
        "`{strategy, maxSharedClientsPerGpu}` (default: none).",
    )


# The taint GKE puts on Arm nodes (components/config/gke_machines.py ARM_FAMILIES, with sources).
ARM_TAINT = Taint(key="kubernetes.io/arch", value="arm64", effect="NoSchedule")

# Node pools a custom ComputeClass lists carry this label and a NoSchedule taint of it, both
# valued the class's name; pods select the class with it as a nodeSelector (and GKE adds the
# toleration): https://docs.cloud.google.com/kubernetes-engine/docs/concepts/
# about-custom-compute-classes#manual-node-pools (read 2026-11-26, as quoted by Google's
# gcloud examples `--node-labels=cloud.google.com/compute-class=NAME --node-taints=
# cloud.google.com/compute-class=NAME:NoSchedule`).
COMPUTE_CLASS_LABEL = "cloud.google.com/compute-class"
COMPUTE_CLASS_PREFIX = "determined-"


def _reserved_node_labels(cloud: str):
    """A validator of a created pool's labels: none under a domain the cloud or the kubelet
    keeps for itself (components/cloud_limits.py, with sources), each at its own key."""
    check = each_entry(lambda key, _value: cloud_limits.node_label_key_problem(key, cloud))
    return field_validator("labels")(lambda labels: check(labels))


class GkeNodePool(CloudNodePool):
    _reserved_labels = _reserved_node_labels("gke")

    gpu: GkeGpuConfig | None = Field(
        None,
        description="The GPUs of each node, `{type, count}`, both required, with GKE's driver, MIG and "
        "sharing settings (default: a CPU pool). GPU pools are tainted `nvidia.com/gpu=present:NoSchedule`.",
    )
    image_type: Literal["COS_CONTAINERD", "UBUNTU_CONTAINERD"] = Field(
        "COS_CONTAINERD",
        description="The node image: `COS_CONTAINERD` (default) or `UBUNTU_CONTAINERD` (one for every GPU "
        "pool with the GPU operator).",
    )
    disk_size_gb: whole_number(10, 65536) = Field(
        100, description="The nodes' boot disk size in GB, 10-65536 (default 100)."
    )
    # Default: pd-balanced, or hyperdisk-balanced for series that cannot use it (the boot
    # disk types per series: components/config/gke_machines.py).
    disk_type: Literal["pd-balanced", "pd-ssd", "pd-standard", "hyperdisk-balanced"] | None = Field(
        None,
        description="The nodes' boot disk type, one the machine series can boot from: `pd-balanced`, "
        "`pd-ssd`, `pd-standard`, `hyperdisk-balanced` (default: `pd-balanced`, or `hyperdisk-balanced` on "
        "series without Persistent Disk).",
    )
    local_nvme: GkeLocalNvme | None = Field(
        None,
        description="Local SSDs as the nodes' ephemeral storage and a scratch volume in task pods, "
        "`{count, mountPath, size}`. Default: none (the boot disk).",
    )
    fabric: Literal["tcpxo", "rdma"] | None = Field(
        None,
        description="The GPU fabric for multi-node training: `tcpxo` (GPUDirect-TCPXO, a3-megagpu-8g) or "
        "`rdma` (GPUDirect RDMA, a3-ultragpu-8g, a4-highgpu-8g); extra VPC networks, multi-networking, "
        "compact placement in one zone (name it in `zones`), the NCCL plugin and what task pods need; "
        "COS_CONTAINERD, GKE-managed drivers. Setting or changing it replaces the node pool. Default: none.",
    )
    # Default: GPU pools, the zones that offer their GPU (components/config/gke_gpu_zones.py).
    zones: list[GcpZone] | None = Field(
        None,
        description="Where the pool's nodes go (node locations): zones of `cluster.region`, and of "
        "`cluster.zones` when given. Default: GPU pools, the zones that offer their GPU; CPU pools, "
        "`cluster.zones`.",
    )

    @property
    def arm(self) -> bool:
        """An Arm machine type: GKE taints its nodes ARM_TAINT."""
        return gke_machines.is_arm(self.machine_type)

    @property
    def compute_class(self) -> str | None:
        """The ComputeClass that chooses among the pool's node pools, one per machine type and
        purchase option (components/cluster/gke/compute_classes.py): a pool with a fallback
        (several `capacity.types` or `instanceTypes`), not a queued one (its tasks wait for a
        ProvisioningRequest instead). None: one node pool of the pool's name."""
        capacity = self.capacity
        if capacity is None or not capacity.fallback or capacity.queued:
            return None
        # Prefixed: GKE keeps names of its own classes (`default`, `autopilot`, ...); a pool
        # name (at most 40 characters on GKE) leaves it a valid label value (at most 63).
        return f"{COMPUTE_CLASS_PREFIX}{self.name}"

    @property
    def compute_class_taint(self) -> Taint | None:
        """The taint GKE wants on node pools a ComputeClass lists (COMPUTE_CLASS_LABEL)."""
        name = self.compute_class
        return None if name is None else Taint(key=COMPUTE_CLASS_LABEL, value=name, effect="NoSchedule")

    @property
    def all_taints(self) -> list[Taint]:
        """The pool's taints with, on Arm pools, the one GKE adds (last), so that pods sent
        there tolerate it and such a pool never counts as untainted; on a pool with a
        ComputeClass, its class taint before that."""
        taints = super().all_taints
        class_taint = self.compute_class_taint
        if class_taint is not None:
            taints = [*taints, class_taint]
        return [*taints, ARM_TAINT] if self.arm and ARM_TAINT not in taints else taints

    @property
    def node_labels(self) -> dict[str, str]:
        """The project's labels, with the class label on a ComputeClass pool's nodes."""
        labels = super().node_labels
        if self.compute_class is not None:
            labels[COMPUTE_CLASS_LABEL] = self.compute_class
        return labels

    @property
    def selector(self) -> dict[str, str]:
        """The pool label, and on a ComputeClass pool the class: GKE's autoscaler scales the
        class's node pools up only for pods that select the class by this label."""
        selector = super().selector
        if self.compute_class is not None:
            selector[COMPUTE_CLASS_LABEL] = self.compute_class
        return selector


class EksNodePool(CloudNodePool):
    _reserved_labels = _reserved_node_labels("eks")

    # `machineType` is the EC2 instance type (p4d.24xlarge).
    disk_size_gb: whole_number(20, 16384) = Field(
        100, description="The nodes' root volume size in GB, 20-16384 (default 100)."
    )
    fabric: Literal["efa"] | None = Field(
        None,
        description="The GPU fabric for multi-node training: `efa` (Elastic Fabric Adapter on p4d, p4de, "
        "p5, p5e, p5en, p6-b200): EFA interfaces, a cluster placement group in one zone, the EFA device "
        "plugin and what task pods need. Default: none.",
    )
    local_nvme: EksLocalNvme | None = Field(
        None,
        description="The instance store's NVMe disks in RAID0 as the nodes' ephemeral storage and a "
        "scratch volume in task pods, `{mountPath, size}`; on instance types with an instance store. "
        "Default: none (the root volume).",
    )
    # EC2's instance type offerings are read when the group is created.
    zones: list[AwsZone] | None = Field(
        None,
        description="Availability zones of `cluster.region` the group's nodes go to (the private subnets "
        "there). Default: every zone of the VPC where the instance type is offered.",
    )
