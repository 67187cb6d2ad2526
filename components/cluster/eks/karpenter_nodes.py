"""Karpenter's NodePools and EC2NodeClass for one node pool (EKS, `cluster.autoscaler: karpenter`).

Pure: `objects(args, pool, node_role_name)` returns the manifests; components/cluster/eks/
karpenter.py registers them once the chart (and its CRDs) is installed. Every fact about
Karpenter below is from aws/karpenter-provider-aws at v1.14.1 (bde0065, the chart the stack
installs: versions.KARPENTER_VERSION), `docs/` meaning website/content/en/docs/ there, or from
the Karpenter core it builds with (kubernetes-sigs/karpenter 6e7eab7, its go.mod).

One EC2NodeClass per pool (AMI, subnets, security groups, root volume, metadata options, tags,
capacity reservations) and, usually, one NodePool: Karpenter itself prefers `reserved`, then
`spot`, then `on-demand` among the capacity types a NodePool allows, falling back to the next
when EC2 has none ("If a NodePool is compatible with multiple capacity types, Karpenter will
prioritize `reserved` capacity, followed by `spot`, then finally `on-demand`": docs/concepts/
nodepools.md:276-279). Its order cannot be changed within a NodePool, so a `capacity.types`
order that differs (onDemand before spot, say) becomes several NodePools, each a run of the
user's order that Karpenter's own order agrees with, weighted in the user's order: the
scheduler tries NodePools by weight and takes the first that can launch a node (core
pkg/controllers/provisioning/provisioner.go:293 OrderByWeight; scheduling/scheduler.go:695-760
addToNewNodeClaim, which also moves on when a NodePool's limits are spent). Each keeps the
pool's whole limit, so that the next option can take the whole pool when the one before has
nothing (as GKE's sub-pools do: components/cluster/gke/compute_classes.py); what tasks ask for
together stays bounded by the resource pool's quota.

Running tasks are never moved by Karpenter's own choices: task pods carry
`karpenter.sh/do-not-disrupt: "true"` (components/determined/resource_pools.py NO_DISRUPTION),
which keeps their node out of consolidation and drift, and which the drain of an expired node
waits for (docs/concepts/disruption.md:386-392). Hence no `terminationGracePeriod`: with one, drift
would disrupt such nodes anyway and an expired node's task pods would be deleted when it ends
(disruption.md:277-279, 282-283). Nodes never expire (EXPIRE_AFTER). Spot reclaims and
Capacity Block ends are involuntary and not held back (disruption.md:422).
"""

from __future__ import annotations

from typing import Any

from components import kube
from components.addons.nvidia_device_plugin import GPU_PRESENT_LABEL
from components.cluster.eks import efa, launch_templates, network
from components.cluster.eks.args import EksClusterArgs
from components.config import capacity_rules
from components.config.node_pools import EksNodePool

NODE_POOL_API = "karpenter.sh/v1"
NODE_CLASS_GROUP = "karpenter.k8s.aws"
NODE_CLASS_API = f"{NODE_CLASS_GROUP}/v1"
COMPONENT = "karpenter"

# Well-known labels a NodePool's requirements use (core pkg/apis/v1/labels.go WellKnownLabels;
# Kubernetes' node.kubernetes.io/instance-type and topology.kubernetes.io/zone).
CAPACITY_TYPE_LABEL = "karpenter.sh/capacity-type"
INSTANCE_TYPE_LABEL = "node.kubernetes.io/instance-type"
ZONE_LABEL = "topology.kubernetes.io/zone"

# `capacity.types` -> karpenter.sh/capacity-type values, and Karpenter's own order among them
# (both with their sources in components/config/capacity_rules.py, which also names the NodePools).
CAPACITY_TYPES = capacity_rules.KARPENTER_CAPACITY_TYPES
node_pool_names = capacity_rules.karpenter_node_pool_names
# Weights of the NodePools of a split order, first to last (spec.weight: 1-100, higher first;
# the NodePool schema). A pool's NodePools take pods of that pool only (its label), so the
# weights only order a pool's own NodePools.
WEIGHTS = (30, 20, 10)

# The AMI: the EKS-optimized AL2023 alias. Karpenter resolves `al2023@<version>` through SSM to
# the standard, NVIDIA and Neuron variants of that release for the cluster's Kubernetes version,
# and launches an instance type with GPUs on the NVIDIA one (driver and container toolkit built
# in), others on the standard one (pkg/providers/amifamily/al2023.go:39-80, types.go:86-99:
# VariantNvidia requires karpenter.k8s.aws/instance-gpu-count): one EC2NodeClass serves CPU and
# GPU pools alike. Pinned, as upstream urges for production ("we strongly recommend using
# version pins in production environments when using an alias": docs/tasks/managing-amis.md:9,
# 44); `@latest` would roll every new AMI release onto idle nodes through drift unreviewed.
# v20260714: the newest awslabs/amazon-eks-ami release whose notes the stored sources hold
# (CHANGELOG.md at v20260724, 81fec2e, "AMI Release v20260714"), with AL2023 x86_64 standard and
# NVIDIA AMIs for Kubernetes 1.30-1.36 (amazon-eks-node-al2023-x86_64-nvidia-1.36-v20260714, ...).
# A Kubernetes minor newer than the release has no such AMI: bump it with versions.EKS_VERSIONS
# (a test checks that every offered minor is covered).
AMI_ALIAS_VERSION = "v20260714"
AMI_KUBERNETES_MINORS = ("1.30", "1.31", "1.32", "1.33", "1.34", "1.35", "1.36")
AMI_ALIAS = f"al2023@{AMI_ALIAS_VERSION}"

# AL2023's root device (pkg/providers/amifamily/al2023.go:99-108, EphemeralBlockDevice
# "/dev/xvda"; Karpenter's default there is 20Gi gp3 encrypted: docs/concepts/nodeclasses.md).
# The size in GiB, as a managed node group's diskSize (node_groups.py: disk_size).
ROOT_DEVICE = "/dev/xvda"

# IMDSv2 only, reachable from the node itself but not from pods (hop limit 1): Karpenter's
# defaults (the EC2NodeClass schema's metadataOptions default), written out so that a chart
# upgrade that changed them would not change the nodes. Pods reach AWS through EKS Pod Identity,
# whose agent runs on the host network.
METADATA_OPTIONS = {
    "httpEndpoint": "enabled",
    "httpProtocolIPv6": "disabled",
    "httpPutResponseHopLimit": 1,
    "httpTokens": "required",
}

# How long a node stays empty or underutilized before Karpenter removes or replaces it: as long
# as the cluster-autoscaler waits for node groups here (components/addons/cluster_autoscaler.py,
# scale-down-unneeded-time 10m), so that a trial ending keeps its (scarce) GPU node for the
# next one. Nodes with running tasks are never consolidated (do-not-disrupt, above).
CONSOLIDATE_AFTER = "10m"
# The most nodes of a NodePool disrupted at once (drift, emptiness, consolidation): Karpenter's
# default (one budget of 10%: docs/concepts/disruption.md:295), written out.
BUDGETS = [{"nodes": "10%"}]
# Nodes do not expire. Expiry is forceful and outside the disruption budgets: every busy node
# launched about the same time is cordoned at once and stays so until its tasks end (they
# carry do-not-disrupt), while a node being deleted no longer counts against the NodePool's
# limits, so Karpenter may launch up to its limits again beside them (disruption.md:190-191,
# 295, 422-425; kubernetes-sigs/karpenter pkg/controllers/state/cluster.go:797-803 at the
# release). Nodes are refreshed by drift instead (a new AMI pin), which waits for idle nodes.
EXPIRE_AFTER = "Never"


def node_labels(pool: EksNodePool) -> dict[str, str]:
    """The labels of the pool's nodes: the pool's own and its node-pool label (task pods select
    it), and on GPU pools what NVIDIA's device plugin looks for (as node_groups.node_labels)."""
    labels = dict(pool.node_labels)
    if pool.gpu:
        labels[GPU_PRESENT_LABEL] = "true"
    return labels


def taints(pool: EksNodePool) -> list[dict[str, str]]:
    """The pool's taints (GPU pools: the GPU taint first) as Kubernetes writes them; an empty
    value is left out (the schema's value pattern takes none)."""
    return [
        {"key": t.key, **({"value": t.value} if t.value else {}), "effect": t.effect} for t in pool.all_taints
    ]


def limits(pool: EksNodePool) -> dict[str, str]:
    """What one NodePool of the pool may hold at most: `maxNodes` nodes (core scheduler.go:708-713
    enforces `nodes` before launching), and on GPU pools their GPUs (every instance type of the
    pool carries `gpu.count`: config rules). Strings, as the API server stores quantities
    (docs/concepts/nodepools.md, spec.limits). CPU and memory would add nothing that `nodes`
    does not already bound."""
    found = {"nodes": str(pool.max_nodes)}
    if pool.gpu:
        found["nvidia.com/gpu"] = str(pool.max_nodes * pool.gpu.count)
    return found


def requirements(pool: EksNodePool, run: list[str]) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = [
        {"key": INSTANCE_TYPE_LABEL, "operator": "In", "values": pool.machine_types},
        {"key": CAPACITY_TYPE_LABEL, "operator": "In", "values": [CAPACITY_TYPES[t] for t in run]},
    ]
    if pool.zones:
        found.append({"key": ZONE_LABEL, "operator": "In", "values": list(pool.zones)})
    return found


def node_pool(pool: EksNodePool, name: str, run: list[str], weight: int | None) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "template": {
            "metadata": {"labels": node_labels(pool)},
            "spec": {
                "nodeClassRef": {"group": NODE_CLASS_GROUP, "kind": "EC2NodeClass", "name": pool.name},
                "requirements": requirements(pool, run),
                "expireAfter": EXPIRE_AFTER,
            },
        },
        "disruption": {
            "consolidationPolicy": "WhenEmptyOrUnderutilized",
            "consolidateAfter": CONSOLIDATE_AFTER,
            "budgets": BUDGETS,
        },
        "limits": limits(pool),
    }
    pool_taints = taints(pool)
    if pool_taints:
        spec["template"]["spec"]["taints"] = pool_taints
    if weight is not None:
        spec["weight"] = weight
    return kube.manifest(NODE_POOL_API, "NodePool", kube.metadata(name, COMPONENT), spec=spec)


def node_pools(pool: EksNodePool) -> list[dict[str, Any]]:
    """The pool's NodePools, most preferred first; weighted only when there are several."""
    runs = capacity_rules.karpenter_runs(pool.capacity_types)
    names = node_pool_names(pool)
    if len(runs) == 1:
        return [node_pool(pool, names[0], runs[0], None)]
    return [
        node_pool(pool, name, run, WEIGHTS[i]) for i, (name, run) in enumerate(zip(names, runs, strict=True))
    ]


def reservation_terms(pool: EksNodePool) -> list[dict[str, Any]]:
    """capacityReservationSelectorTerms: each id a term, the tags one term (terms are ORed,
    a term's tags ANDed: docs/tasks/odcrs.md "Selecting Capacity Reservations"). Capacity Blocks
    are selected the same way ("Capacity blocks are modeled as on-demand capacity reservations in
    EC2": odcrs.md), so `capacityBlock` changes nothing here; Karpenter reads each reservation's
    type from EC2 and drains a Capacity Block's nodes 10 minutes before EC2 ends it."""
    capacity = pool.capacity
    reservation = capacity.reservation if capacity is not None else None
    if reservation is None or "reservation" not in pool.capacity_types:
        return []
    terms: list[dict[str, Any]] = [{"id": reservation_id} for reservation_id in reservation.ids]
    if reservation.tags:
        terms.append({"tags": dict(reservation.tags)})
    return terms


# What a pool's localNvme, fastImagePulls and fabric efa make of its EC2NodeClass (the CRD of
# v1.14.1: spec.instanceStorePolicy enum [RAID0], spec.userData, spec.networkInterfaces from
# v1.11.0 with items {networkCardIndex, deviceIndex, interfaceType: interface | efa-only},
# spec.placementGroupSelector {name | id}; docs/concepts/nodeclasses.md):
# - instanceStorePolicy RAID0: Karpenter writes `localStorage.strategy: RAID0` into the
#   NodeConfig it generates (pkg/providers/amifamily/bootstrap/nodeadm.go:87-89) and counts the
#   instance store as the node's ephemeral-storage when choosing instances
#   (pkg/providers/instancetype/types.go:368-375);
# - userData: a NodeConfig of our own, with the FastImagePull feature gate; Karpenter adds its
#   own NodeConfig after it and its fields win ("Any values configured by the Karpenter
#   generated NodeConfig object will take precedent", nodeclasses.md ~1393-1397), but it sets
#   no featureGates;
# - networkInterfaces: launch_templates.efa_layout with an ENA primary and an efa-only beside it
#   on card 0 (the CRD's CEL wants card 0 / device 0 `interface` and at most one efa-only per
#   card; a managed group's template makes card 0's EFA the primary instead); every interface
#   gets the node class's security groups, here the cluster's and the EFA group
#   (efa.SECURITY_GROUP_TAG);
# - placementGroupSelector: the pool's cluster placement group, by name (one per node class;
#   the controller needs ec2:DescribePlacementGroups, karpenter.py). The pool's one zone (config
#   rules) is already a NodePool requirement (`requirements`).
INSTANCE_STORE_POLICY = "RAID0"


def network_interfaces(pool: EksNodePool) -> list[dict[str, Any]]:
    return [
        {"networkCardIndex": card, "deviceIndex": device, "interfaceType": kind}
        for card, device, kind in launch_templates.efa_layout(pool.machine_type)
    ]


def user_data(pool: EksNodePool) -> str | None:
    """The NodeConfig of a fastImagePulls pool (MIME, as for a managed group); the instance
    store is instanceStorePolicy's, not this NodeConfig's."""
    if not pool.fast_image_pulls:
        return None
    return launch_templates.user_data(pool.model_copy(update={"local_nvme": None}))


def node_class(args: EksClusterArgs, pool: EksNodePool, node_role_name: str) -> dict[str, Any]:
    """The pool's EC2NodeClass, named as the pool. `node_role_name`: the IAM role of Karpenter's
    nodes (Karpenter makes their instance profile from it)."""
    security_groups = network.security_group_selector_terms(args)
    if pool.fabric == "efa":
        security_groups = [*security_groups, {"tags": {efa.SECURITY_GROUP_TAG: args.cluster.name}}]
    spec: dict[str, Any] = {
        "amiSelectorTerms": [{"alias": AMI_ALIAS}],
        "role": node_role_name,
        "subnetSelectorTerms": network.subnet_selector_terms(args),
        "securityGroupSelectorTerms": security_groups,
        "blockDeviceMappings": [
            {
                "deviceName": ROOT_DEVICE,
                "rootVolume": True,
                "ebs": {
                    "volumeSize": f"{pool.disk_size_gb}Gi",
                    "volumeType": "gp3",
                    "encrypted": True,
                    "deleteOnTermination": True,
                },
            }
        ],
        "metadataOptions": dict(METADATA_OPTIONS),
    }
    throughput = launch_templates.root_throughput(pool)
    if throughput is not None:
        spec["blockDeviceMappings"][0]["ebs"]["throughput"] = throughput
    if args.cluster.tags:
        spec["tags"] = dict(args.cluster.tags)
    terms = reservation_terms(pool)
    if terms:
        spec["capacityReservationSelectorTerms"] = terms
    if pool.local_nvme:
        spec["instanceStorePolicy"] = INSTANCE_STORE_POLICY
    data = user_data(pool)
    if data is not None:
        spec["userData"] = data
    if pool.fabric == "efa":
        spec["networkInterfaces"] = network_interfaces(pool)
        spec["placementGroupSelector"] = {"name": efa.placement_group_name(args, pool)}
    return kube.manifest(NODE_CLASS_API, "EC2NodeClass", kube.metadata(pool.name, COMPONENT), spec=spec)


def objects(args: EksClusterArgs, pool: EksNodePool, node_role_name: str) -> list[dict[str, Any]]:
    """The EC2NodeClass of `pool`, then its NodePools (most preferred first)."""
    return [node_class(args, pool, node_role_name), *node_pools(pool)]
