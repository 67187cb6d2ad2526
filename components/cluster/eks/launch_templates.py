"""The launch template of a managed node group whose pool asks for EFA (`fabric: efa`), local
NVMe (`localNvme`) or fast image pulls (`fastImagePulls`): pure functions from the pool to the
template's arguments. components/cluster/eks/node_groups.py creates it; a pool asking for none
of them keeps the group without a launch template, exactly as before.

Managed node groups and launch templates (EKS user guide, "Customize managed nodes with launch
templates", awsdocs/amazon-eks-user-guide latest/ug/nodes/launch-templates.adoc at 4d52b4d and
https://docs.aws.amazon.com/eks/latest/userguide/launch-templates.html, read 2026-11):
- no AMI in the template: the group keeps its `amiType` and EKS merges its own bootstrap into
  the template's user data, which "must be in the MIME multi-part archive format";
- no subnet in a network interface, no IAM instance profile (the group's subnets and role);
- no instance type (the group's `instanceTypes`), and the disk size moves from the group's
  `diskSize` (refused beside a template) into the template's root block device;
- "If you specify custom security groups in the launch template, Amazon EKS doesn't add the
  cluster security group": the EFA template names it on the primary interface itself;
- the default template's IMDS hop limit is EKS's: a custom template sets its own;
- "existing node groups that don't use a custom launch template can't be updated directly":
  a pool that starts asking for one of the three gets a new group (docs/clouds/eks.md).
"""

from __future__ import annotations

import base64
from typing import Any

import yaml

from components.config import eks_instances
from components.config.node_pools import EksNodePool

# AL2023's root device (as components/cluster/eks/karpenter_nodes.py ROOT_DEVICE, Karpenter's
# pkg/providers/amifamily/al2023.go at v1.14.1 "/dev/xvda").
ROOT_DEVICE = "/dev/xvda"

# IMDSv2 only; hop limit 2 as EKS's own default launch template has it ("the default ... sets
# HttpPutResponseHopLimit to 2", launch-templates.adoc NOTE above), so that a pod that still
# reads the instance metadata (the VPC CNI's own pods run on the host network; workloads use
# Pod Identity) behaves as on the groups without a template.
METADATA_OPTIONS = {
    "http_endpoint": "enabled",
    "http_tokens": "required",
    "http_put_response_hop_limit": 2,
}

# nodeadm's NodeConfig (awslabs/amazon-eks-ami nodeadm/api/v1alpha1/nodeconfig_types.go at
# 81fec2e, tag v20260724, read 2026-11): the part's content type, its apiVersion and kind.
NODECONFIG_CONTENT_TYPE = "application/node.eks.aws"
NODECONFIG_API = "node.eks.aws/v1alpha1"
# instance.localStorage.strategy RAID0: every NVMe instance-store disk in one RAID0 array
# mounted at /mnt/k8s-disks/0, with /var/lib/kubelet, /var/lib/containerd and /var/log/pods
# bind-mounted onto it (setup-local-disks, same tag), so emptyDir scratch volumes and images
# live on the NVMe; without instance-store disks it logs and does nothing.
LOCAL_STORAGE_STRATEGY = "RAID0"
# featureGates.FastImagePull: containerd pulls through the SOCI snapshotter's parallel pull
# and unpack mode (no SOCI index needed); named so since AMI release v20250821 (nodeadm
# "rename feature flag (#2381)"); managed node groups run the newest AMI of their version.
FAST_IMAGE_PULL_GATE = "FastImagePull"
MIME_BOUNDARY = "//DETERMINED-NODECONFIG"

# Launch template network interfaces (pulumi-aws 7.51.1 ec2/_inputs.py
# LaunchTemplateNetworkInterfaceArgsDict; delete_on_termination is a string there).
# "You can't use an EFA-only network interface as the primary network interface": card 0,
# device 0 is an ENA `interface`; one `efa-only` per network card, device 1 on card 0 and 0 on
# the others (EC2 user guide, "Maximize network bandwidth on Amazon EC2 instances with multiple
# network cards", https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/efa-acc-inst-types.html,
# read 2026-11). EFA-only interfaces take no IP address (EC2 user guide create-efa), so they
# cost the subnet nothing; the VPC CNI must be 1.18.5 or newer (EKS user guide node-efa).
PRIMARY_INTERFACE = "interface"
EFA_ONLY_INTERFACE = "efa-only"
# A managed group's primary is instead an EFA with ENA (`efa`: IP traffic and an EFA device,
# the layout of terraform-aws-modules/terraform-aws-eks@bef29c4
# modules/eks-managed-node-group/main.tf:57-64), so that card 0 keeps a free slot for the VPC
# CNI's second ENI. The CNI uses only the default card ("VPC CNI only uses the default network
# interface", aws/karpenter-provider-aws@v1.14.1 pkg/providers/instancetype/types.go:489-491)
# and p5/p5e.48xlarge have two interfaces on it (NetworkCards[0].MaximumNetworkInterfaces 2,
# IPv4PerInterface 50: zz_generated.vpclimits.go at that tag): an efa-only at (0, 1) would leave
# the primary's 49 pod addresses while EKS sizes kubelet's max pods for two ENIs (about 100),
# and pods past 49 would fail with "failed to assign an IP address". Karpenter keeps the ENA
# primary (its CRD's CEL wants card 0 / device 0 `interface`) and lowers max pods itself for an
# efa-only interface on card 0 (same types.go:495-499). The EFA devices are as many either way.
EFA_PRIMARY_INTERFACE = "efa"


def needs_launch_template(pool: EksNodePool) -> bool:
    """A pool whose group needs a launch template of its own."""
    return bool(pool.fabric or pool.local_nvme or pool.fast_image_pulls)


def node_config(pool: EksNodePool) -> dict[str, Any] | None:
    """The NodeConfig the pool's nodes get beside EKS's own, or None when nothing is asked."""
    spec: dict[str, Any] = {}
    if pool.local_nvme:
        spec["instance"] = {"localStorage": {"strategy": LOCAL_STORAGE_STRATEGY}}
    if pool.fast_image_pulls:
        spec["featureGates"] = {FAST_IMAGE_PULL_GATE: True}
    if not spec:
        return None
    return {"apiVersion": NODECONFIG_API, "kind": "NodeConfig", "spec": spec}


def user_data(pool: EksNodePool) -> str | None:
    """The NodeConfig as a MIME multi-part document (what EKS merges its bootstrap into and
    nodeadm reads parts of type application/node.eks.aws from), or None."""
    config = node_config(pool)
    if config is None:
        return None
    document = yaml.safe_dump(config, sort_keys=False)
    return (
        "MIME-Version: 1.0\n"
        f'Content-Type: multipart/mixed; boundary="{MIME_BOUNDARY}"\n'
        "\n"
        f"--{MIME_BOUNDARY}\n"
        f"Content-Type: {NODECONFIG_CONTENT_TYPE}\n"
        "\n"
        "---\n"
        f"{document}\n"
        f"--{MIME_BOUNDARY}--\n"
    )


def efa_layout(instance_type: str, efa_primary: bool = False) -> list[tuple[int, int, str]]:
    """(network card, device index, interface type) of every interface of an EFA node: the
    primary ENA interface, then one EFA-only interface per EFA card; with `efa_primary` (managed
    groups, EFA_PRIMARY_INTERFACE) the primary is card 0's EFA and the EFA-only ones are on the
    other cards."""
    cards = eks_instances.efa_interfaces(instance_type)
    if efa_primary:
        return [(0, 0, EFA_PRIMARY_INTERFACE)] + [(card, 0, EFA_ONLY_INTERFACE) for card in range(1, cards)]
    return [(0, 0, PRIMARY_INTERFACE)] + [
        (card, 1 if card == 0 else 0, EFA_ONLY_INTERFACE) for card in range(cards)
    ]


def network_interfaces(
    instance_type: str, cluster_security_group: Any, efa_security_group: Any
) -> list[dict[str, Any]]:
    """The EFA node's interfaces: the primary (an EFA with ENA) in the cluster security group
    (which EKS would have added) and the EFA one, the EFA-only ones in the EFA group (EFA's OS-bypass traffic
    needs a group allowing all traffic to and from itself: EC2 user guide create-efa.md,
    "Considerations"). No subnet (the group's), no public address."""
    found = []
    for card, device, kind in efa_layout(instance_type, efa_primary=True):
        primary = (card, device) == (0, 0)
        found.append(
            {
                "network_card_index": card,
                "device_index": device,
                "interface_type": kind,
                "security_groups": [cluster_security_group, efa_security_group]
                if primary
                else [efa_security_group],
                "delete_on_termination": "true",
                **({"associate_public_ip_address": "false"} if primary else {}),
            }
        )
    return found


# FastImagePull with images on the root volume: "Ensure you've configured additional EBS
# throughput for your instance root volume. We recommend at least 600MiB/s ... Below that
# value, you may see longer image pull times with this flag" (awslabs/amazon-eks-ami@81fec2e
# nodeadm/doc/examples.md:155-175); gp3's baseline is 125 MiB/s and 3000 IOPS, and 600 MiB/s
# stays within gp3's 0.25 MiB/s per provisioned IOPS at that baseline (EBS user guide, "General
# Purpose SSD volumes", https://docs.aws.amazon.com/ebs/latest/userguide/general-purpose.html,
# read 2026-11). With localNvme containerd lives on the RAID0 instead (setup-local-disks binds
# /var/lib/containerd and soci: nodeadm/internal/system/local_disk.go:36-43 at that commit).
FAST_PULL_ROOT_THROUGHPUT = 600


def root_throughput(pool: EksNodePool) -> int | None:
    """The root gp3's throughput (MiB/s) when images are pulled fast onto it, else None (gp3's
    baseline)."""
    return FAST_PULL_ROOT_THROUGHPUT if pool.fast_image_pulls and not pool.local_nvme else None


def block_device_mappings(pool: EksNodePool) -> list[dict[str, Any]]:
    """The root volume, as the group's diskSize would make it (gp3, encrypted), with more
    throughput for fast image pulls onto it (root_throughput)."""
    ebs: dict[str, Any] = {
        "volume_size": pool.disk_size_gb,
        "volume_type": "gp3",
        "encrypted": "true",
        "delete_on_termination": "true",
    }
    throughput = root_throughput(pool)
    if throughput is not None:
        ebs["throughput"] = throughput
    return [{"device_name": ROOT_DEVICE, "ebs": ebs}]


def launch_template_args(
    pool: EksNodePool,
    tags: dict[str, str],
    cluster_security_group: Any = None,
    efa_security_group: Any = None,
    placement_group: Any = None,
) -> dict[str, Any]:
    """The pool's launch template: root volume, IMDS, NodeConfig user data and, with fabric efa,
    the EFA interfaces and the cluster placement group. `tags` tag the template itself."""
    result: dict[str, Any] = {
        "description": f"Determined node pool {pool.name}",
        "block_device_mappings": block_device_mappings(pool),
        "metadata_options": dict(METADATA_OPTIONS),
        "update_default_version": True,
        "tags": dict(tags),
    }
    data = user_data(pool)
    if data is not None:
        result["user_data"] = base64.b64encode(data.encode()).decode()
    if pool.fabric == "efa":
        result["network_interfaces"] = network_interfaces(
            pool.machine_type, cluster_security_group, efa_security_group
        )
        result["placement"] = {"group_name": placement_group}
    return result
