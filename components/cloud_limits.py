"""What the GKE, Compute Engine, EKS and AWS APIs accept beyond names: labels, tags, node
labels and taints, and the enum values the project writes; each with its source.

A leaf module (config validation and the plan's own check, plan.cloud_check, read it).
Names are in components.names.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

GCP_LABELS_SOURCE = "https://cloud.google.com/compute/docs/labeling-resources#requirements (read 2026-11)"
K8S_LABELS_SOURCE = (
    "https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/#syntax-and-character-set "
    "(read 2026-11)"
)
EKS_LABELS_SOURCE = (
    "https://docs.aws.amazon.com/eks/latest/APIReference/API_CreateNodegroup.html (labels: keys and values "
    "1-63 characters) and API_Taint.html (key 1-63, value 0-63, at most 50 taints) (read 2026-11)"
)
AWS_TAGS_SOURCE = (
    "https://docs.aws.amazon.com/tag-editor/latest/userguide/tagging.html (keys 1-128, values 0-256, at most "
    "50 user tags, 'aws:' reserved) (read 2026-11)"
)
ASG_TAG_SOURCE = "https://docs.aws.amazon.com/autoscaling/ec2/APIReference/API_Tag.html (read 2026-11)"
EC2_TAG_SOURCE = "https://docs.aws.amazon.com/AWSEC2/latest/APIReference/API_Tag.html (read 2026-11)"
SQS_RETENTION_SOURCE = (
    "https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_SetQueueAttributes.html: "
    "MessageRetentionPeriod 60 to 1,209,600 seconds (read 2026-11)"
)

# Google Cloud labels: at most 64 per resource; keys 1-63 characters starting with a
# lower-case letter or an international character, values 0-63; lower-case letters, numeric
# characters, '_' and '-', and "international characters are allowed" (GCP_LABELS_SOURCE):
# the APIs' own pattern is [\p{Ll}\p{Lo}][\p{Ll}\p{Lo}\p{N}_-]{0,62} for keys and
# [\p{Ll}\p{Lo}\p{N}_-]{0,63} for values (e.g. Backup and DR's LabelKeyValPair,
# https://googleapis.dev/dotnet/Google.Apis.Backupdr.v1/latest/api/Google.Apis.Backupdr.v1.Data.LabelKeyValPair.html,
# read 2026-11). Unicode categories: Ll lower-case letters, Lo letters without case (CJK...),
# N numbers.
GCP_MAX_LABELS = 64
GCP_LABEL_MAX = 63
GCP_LABEL_START = ("Ll", "Lo")
GCP_LABEL_CHARACTERS = ("Ll", "Lo", "Nd", "Nl", "No")


def _gcp_label_text(text: str, key: bool) -> bool:
    if len(text) > GCP_LABEL_MAX or (key and not text):
        return False
    if key and unicodedata.category(text[0]) not in GCP_LABEL_START:
        return False
    return all(c in "_-" or unicodedata.category(c) in GCP_LABEL_CHARACTERS for c in text)


# Kubernetes label keys: an optional DNS-subdomain prefix (at most 253) and '/', then a name of
# at most 63; values at most 63, empty or alphanumeric at both ends.
_K8S_NAME = r"[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?"
_DNS_SUBDOMAIN = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*"

# EKS node groups: label keys and values 1-63, taint keys 1-63 and values 0-63, 50 taints.
EKS_LABEL_MAX = 63
EKS_MAX_TAINTS = 50

# AWS resource tags and Auto Scaling tags.
AWS_TAG_KEY_MAX = 128
AWS_TAG_VALUE_MAX = 256
AWS_MAX_TAGS = 50
AWS_RESERVED_PREFIX = "aws:"  # in any case
# SQS message retention (SQS_RETENTION_SOURCE).
SQS_MIN_RETENTION = 60
SQS_MAX_RETENTION = 1_209_600

# Node label keys in domains Kubernetes and the clouds keep for themselves (a domain covers
# its subdomains: node-role.kubernetes.io is under kubernetes.io).
# - The kubelet refuses to start when --node-labels holds a key under kubernetes.io or k8s.io
#   other than KUBELET_LABELS or those under KUBELET_LABEL_NAMESPACES (ValidateKubeletFlags and
#   isKubernetesLabel, kubernetes cmd/kubelet/app/options/options.go; IsKubeletLabel,
#   k8s.io/kubelet pkg/apis/well_known_labels.go at v0.34.0 with the keys of k8s.io/api
#   core/v1/well_known_labels.go at v0.34.0; read 2026-11): the pool's nodes never join.
KUBELET_SOURCE = (
    "https://github.com/kubernetes/kubelet/blob/v0.34.0/pkg/apis/well_known_labels.go and "
    "kubernetes cmd/kubelet/app/options/options.go ValidateKubeletFlags (read 2026-11)"
)
KUBERNETES_LABEL_DOMAINS = ("kubernetes.io", "k8s.io")
KUBELET_LABELS = frozenset(
    {
        "kubernetes.io/hostname",
        "topology.kubernetes.io/zone",
        "topology.kubernetes.io/region",
        "failure-domain.beta.kubernetes.io/zone",
        "failure-domain.beta.kubernetes.io/region",
        "beta.kubernetes.io/instance-type",
        "node.kubernetes.io/instance-type",
        "kubernetes.io/os",
        "kubernetes.io/arch",
        "beta.kubernetes.io/os",
        "beta.kubernetes.io/arch",
    }
)
KUBELET_LABEL_NAMESPACES = ("kubelet.kubernetes.io", "node.kubernetes.io")
# - GKE refuses node labels under kubernetes.io and k8s.io ("The kubernetes.io/ and k8s.io/
#   prefixes are reserved by Kubernetes Core components and cannot be specified",
#   terraform-provider-google container_cluster node_config.labels; the API's answer to
#   node-role.kubernetes.io/...: "Applying kubernetes label is not allowed",
#   https://github.com/bitpoke/stack/issues/86) and under cloud.google.com ("Node labels with
#   key "cloud.google.com/compute-class" are managed by GKE or Kubernetes and must not be
#   manually specified", https://github.com/hashicorp/terraform-provider-google/pull/19677).
GKE_NODE_LABELS_SOURCE = (
    "https://registry.terraform.io/providers/hashicorp/google/latest/docs/resources/container_cluster "
    "(node_config.labels), hashicorp/terraform-provider-google#19677, bitpoke/stack#86 (read 2026-11)"
)
GKE_RESERVED_LABEL_DOMAINS = ("kubernetes.io", "k8s.io", "cloud.google.com")
# - EKS refuses node group labels under them and eks.amazonaws.com: "Label cannot contain
#   reserved prefixes [kubernetes.io/, k8s.io/, eks.amazonaws.com/]" (InvalidParameterException,
#   https://github.com/eksctl-io/eksctl/issues/4007;
#   https://github.com/kubernetes/cloud-provider-aws/issues/242).
EKS_NODE_LABELS_SOURCE = (
    "https://github.com/eksctl-io/eksctl/issues/4007, "
    "https://github.com/kubernetes/cloud-provider-aws/issues/242 (read 2026-11)"
)
EKS_RESERVED_LABEL_DOMAINS = ("kubernetes.io", "k8s.io", "eks.amazonaws.com")
# - and node group taints the same: "Taint cannot contain reserved prefixes [kubernetes.io/,
#   k8s.io/, eks.amazonaws.com/]" (https://github.com/aws/containers-roadmap/issues/1451, read
#   2026-11-25).
EKS_TAINTS_SOURCE = "https://github.com/aws/containers-roadmap/issues/1451 (read 2026-11-25)"
RESERVED_LABEL_DOMAINS = {"gke": GKE_RESERVED_LABEL_DOMAINS, "eks": EKS_RESERVED_LABEL_DOMAINS}


def _in_domain(prefix: str, domain: str) -> bool:
    return prefix == domain or prefix.endswith("." + domain)


def kubelet_refuses(key: str) -> bool:
    """Whether the kubelet refuses `key` in --node-labels (KUBELET_SOURCE)."""
    prefix = key.partition("/")[0] if "/" in key else ""
    if not any(_in_domain(prefix, d) for d in KUBERNETES_LABEL_DOMAINS):
        return False
    allowed = key in KUBELET_LABELS or any(_in_domain(prefix, d) for d in KUBELET_LABEL_NAMESPACES)
    return not allowed


def reserved_label_domain(key: str, cloud: str) -> str | None:
    """The domain of `cloud`'s reserved ones (RESERVED_LABEL_DOMAINS) that a node label key
    is under, or None."""
    prefix = key.partition("/")[0] if "/" in key else ""
    return next((d for d in RESERVED_LABEL_DOMAINS[cloud] if _in_domain(prefix, d)), None)


def eks_taint_key_problem(key: str) -> str | None:
    """Why EKS would refuse `key` as a node group taint's key (EKS_TAINTS_SOURCE), or None."""
    domain = reserved_label_domain(key, "eks")
    return f"EKS refuses node group taints under {domain}, which it keeps for itself" if domain else None


def node_label_key_problem(key: str, cloud: str) -> str | None:
    """Why `cloud` (gke, eks) or the kubelet would refuse `key` as a node label, or None."""
    domain = reserved_label_domain(key, cloud)
    if domain is not None:
        name = {"gke": "GKE", "eks": "EKS"}[cloud]
        kubelet = " (and the kubelet would not start with it)" if kubelet_refuses(key) else ""
        return f"{name} refuses node labels under {domain}, which it keeps for itself{kubelet}"
    if kubelet_refuses(key):
        return "the kubelet refuses node labels under kubernetes.io and k8s.io but its own"
    return None


# The one cloud.google.com node label a node pool may be given: a custom ComputeClass's, which
# GKE asks for on the node pools the class lists ("--node-labels=cloud.google.com/compute-class=
# COMPUTE_CLASS": https://docs.cloud.google.com/kubernetes-engine/docs/concepts/
# about-custom-compute-classes#manual-node-pools, read 2026-11-26). The API refused it in a
# cluster's own node_config (hashicorp/terraform-provider-google#19677, 2024); node pools take
# it (GoogleCloudPlatform examples of google_container_node_pool with it, read 2026-11-26).
# Users still cannot set it: the project does (components/config/node_pools.py).
GKE_NODE_POOL_LABELS_ALLOWED = ("cloud.google.com/compute-class",)


def _node_labels_problems(cloud: str) -> Callable[[dict[str, str]], list[str]]:
    allowed = GKE_NODE_POOL_LABELS_ALLOWED if cloud == "gke" else ()

    def check(labels: dict[str, str]) -> list[str]:
        return [
            f"label key {key!r}: {p}"
            for key in labels
            if key not in allowed and (p := node_label_key_problem(key, cloud))
        ]

    return check


# Enum values as the provider APIs spell them (pulumi-gcp / pulumi-aws schemas in .venv).
NODE_TAINT_EFFECTS = {"NO_SCHEDULE", "PREFER_NO_SCHEDULE", "NO_EXECUTE"}
GKE_LOCATION_POLICIES = {"BALANCED", "ANY"}
GKE_DRIVER_VERSIONS = {"DEFAULT", "LATEST", "INSTALLATION_DISABLED"}
GKE_SHARING_STRATEGIES = {"TIME_SHARING", "MPS"}
EKS_CAPACITY_TYPES = {"ON_DEMAND", "SPOT", "CAPACITY_BLOCK"}


def k8s_label_key_problem(key: str) -> str | None:
    prefix, _, name = key.rpartition("/")
    if len(name) > 63 or not re.fullmatch(_K8S_NAME, name):
        return f"label key {key!r}: the name part must be 1-63 alphanumerics, '-', '_' or '.'"
    if prefix and (len(prefix) > 253 or not re.fullmatch(_DNS_SUBDOMAIN, prefix)):
        return f"label key {key!r}: the prefix must be a DNS subdomain of at most 253 characters"
    return None


def k8s_label_value_problem(value: str) -> str | None:
    if value and (len(value) > 63 or not re.fullmatch(_K8S_NAME, value)):
        return f"label value {value!r}: at most 63 alphanumerics, '-', '_' or '.', alphanumeric at both ends"
    return None


def gcp_label_problem(key: str, value: str) -> str | None:
    """Why Google Cloud would refuse one label (GCP_LABELS_SOURCE), or None."""
    if not _gcp_label_text(key, key=True):
        return (
            f"label key {key!r} is not a Google Cloud label key (lower-case letters of any script, "
            "digits, '_' and '-', starting with a letter, at most 63 characters)"
        )
    if not _gcp_label_text(value, key=False):
        return (
            f"label value of {key!r} is not a Google Cloud label value (lower-case letters of any "
            "script, digits, '_' and '-', at most 63 characters)"
        )
    return None


def gcp_labels_problems(labels: dict[str, str]) -> list[str]:
    found = [] if len(labels) <= GCP_MAX_LABELS else [f"{len(labels)} labels; at most {GCP_MAX_LABELS}"]
    for key, value in labels.items():
        if problem := gcp_label_problem(key, str(value)):
            found.append(problem)
    return found


def _k8s_labels_problems(labels: dict[str, str]) -> list[str]:
    found = []
    for key, value in labels.items():
        found += [p for p in (k8s_label_key_problem(key), k8s_label_value_problem(str(value))) if p]
    return found


def eks_labels_problems(labels: dict[str, str]) -> list[str]:
    found = _k8s_labels_problems(labels)
    for key, value in labels.items():
        if len(key) > EKS_LABEL_MAX:
            found.append(f"label key {key!r} has {len(key)} characters; EKS takes at most {EKS_LABEL_MAX}")
        if not 1 <= len(str(value)) <= EKS_LABEL_MAX:
            found.append(f"label {key!r}: EKS takes values of 1 to {EKS_LABEL_MAX} characters")
    return found


def _taints_problems(taints: list[dict[str, Any]], eks: bool) -> list[str]:
    found = []
    if eks and len(taints) > EKS_MAX_TAINTS:
        found.append(f"{len(taints)} taints; EKS takes at most {EKS_MAX_TAINTS}")
    for taint in taints:
        key, value, effect = taint.get("key", ""), str(taint.get("value", "")), taint.get("effect")
        found += [p for p in (k8s_label_key_problem(key), k8s_label_value_problem(value)) if p]
        if eks and len(key) > EKS_LABEL_MAX:
            found.append(f"taint key {key!r} has {len(key)} characters; EKS takes at most {EKS_LABEL_MAX}")
        reserved = eks_taint_key_problem(key) if eks else None
        if reserved:
            found.append(f"taint key {key!r}: {reserved}")
        if effect not in NODE_TAINT_EFFECTS:
            found.append(f"taint effect {effect!r} is not one of {sorted(NODE_TAINT_EFFECTS)}")
    return found


def aws_tags_problems(tags: dict[str, str]) -> list[str]:
    found = [] if len(tags) <= AWS_MAX_TAGS else [f"{len(tags)} tags; at most {AWS_MAX_TAGS}"]
    for key, value in tags.items():
        found += aws_tag_problems(key, str(value))
    return found


def aws_tag_problems(key: str, value: str) -> list[str]:
    found = []
    if not 1 <= len(key) <= AWS_TAG_KEY_MAX:
        found.append(f"tag key {key[:40]!r}... has {len(key)} characters; AWS takes 1 to {AWS_TAG_KEY_MAX}")
    if len(value) > AWS_TAG_VALUE_MAX:
        found.append(
            f"tag value of {key!r} has {len(value)} characters; AWS takes at most {AWS_TAG_VALUE_MAX}"
        )
    if key.lower().startswith(AWS_RESERVED_PREFIX):
        found.append(f"tag key {key!r}: the prefix 'aws:' is reserved")
    return found


def _enum(allowed: set[str]) -> Callable[[Any], list[str]]:
    return lambda value: [] if value in allowed else [f"{value!r} is not one of {sorted(allowed)}"]


@dataclass(frozen=True)
class Limit:
    """A check of one input property (dotted path; `[]` walks a list) of a resource type."""

    resource: str  # type token, or a prefix ending in ':' for every type of a provider
    path: str
    check: Callable[[Any], list[str]]
    source: str


LIMITS: tuple[Limit, ...] = (
    Limit("gcp:container/cluster:Cluster", "resourceLabels", gcp_labels_problems, GCP_LABELS_SOURCE),
    Limit(
        "gcp:container/nodePool:NodePool", "nodeConfig.resourceLabels", gcp_labels_problems, GCP_LABELS_SOURCE
    ),
    Limit("gcp:storage/bucket:Bucket", "labels", gcp_labels_problems, GCP_LABELS_SOURCE),
    Limit("gcp:filestore/instance:Instance", "labels", gcp_labels_problems, GCP_LABELS_SOURCE),
    Limit("gcp:lustre/instance:Instance", "labels", gcp_labels_problems, GCP_LABELS_SOURCE),
    Limit(
        "gcp:sql/databaseInstance:DatabaseInstance",
        "settings.userLabels",
        gcp_labels_problems,
        GCP_LABELS_SOURCE,
    ),
    Limit("gcp:container/nodePool:NodePool", "nodeConfig.labels", _k8s_labels_problems, K8S_LABELS_SOURCE),
    Limit(
        "gcp:container/nodePool:NodePool",
        "nodeConfig.labels",
        _node_labels_problems("gke"),
        GKE_NODE_LABELS_SOURCE,
    ),
    Limit(
        "gcp:container/nodePool:NodePool",
        "nodeConfig.taints",
        lambda t: _taints_problems(t, eks=False),
        K8S_LABELS_SOURCE,
    ),
    Limit(
        "gcp:container/nodePool:NodePool",
        "autoscaling.locationPolicy",
        _enum(GKE_LOCATION_POLICIES),
        "pulumi-gcp NodePoolAutoscaling.location_policy",
    ),
    Limit(
        "gcp:container/nodePool:NodePool",
        "nodeConfig.guestAccelerators[].gpuDriverInstallationConfig.gpuDriverVersion",
        _enum(GKE_DRIVER_VERSIONS),
        "pulumi-gcp NodePoolNodeConfigGuestAcceleratorGpuDriverInstallationConfig",
    ),
    Limit(
        "gcp:container/nodePool:NodePool",
        "nodeConfig.guestAccelerators[].gpuSharingConfig.gpuSharingStrategy",
        _enum(GKE_SHARING_STRATEGIES),
        "pulumi-gcp NodePoolNodeConfigGuestAcceleratorGpuSharingConfig",
    ),
    Limit("aws:eks/nodeGroup:NodeGroup", "labels", eks_labels_problems, EKS_LABELS_SOURCE),
    Limit("aws:eks/nodeGroup:NodeGroup", "labels", _node_labels_problems("eks"), EKS_NODE_LABELS_SOURCE),
    Limit(
        "aws:eks/nodeGroup:NodeGroup", "taints", lambda t: _taints_problems(t, eks=True), EKS_LABELS_SOURCE
    ),
    Limit("aws:eks/nodeGroup:NodeGroup", "capacityType", _enum(EKS_CAPACITY_TYPES), EKS_LABELS_SOURCE),
    Limit(
        "aws:autoscaling/tag:Tag",
        "tag",
        lambda t: aws_tag_problems(t["key"], str(t["value"])),
        ASG_TAG_SOURCE,
    ),
    # One tag on a resource the stack did not create (Karpenter's discovery tag on the cluster's
    # security group).
    Limit(
        "aws:ec2/tag:Tag",
        "key",
        lambda key: aws_tag_problems(key, ""),
        EC2_TAG_SOURCE,
    ),
    Limit("aws:ec2/tag:Tag", "value", lambda value: aws_tag_problems("k", str(value)), EC2_TAG_SOURCE),
    Limit(
        "aws:sqs/queue:Queue",
        "messageRetentionSeconds",
        lambda s: [] if SQS_MIN_RETENTION <= s <= SQS_MAX_RETENTION else [f"{s} s is out of range"],
        SQS_RETENTION_SOURCE,
    ),
    Limit("aws:", "tags", aws_tags_problems, AWS_TAGS_SOURCE),
)


def values_at(inputs: Any, path: str) -> Iterator[Any]:
    """The values at `path` in `inputs` (none when a step is missing)."""
    head, _, rest = path.partition(".")
    many = head.endswith("[]")
    key = head[:-2] if many else head
    if not isinstance(inputs, dict) or inputs.get(key) is None:
        return
    value = inputs[key]
    items = value if many and isinstance(value, list) else [value]
    for item in items:
        if rest:
            yield from values_at(item, rest)
        else:
            yield item


def limits_for(resource: str) -> list[Limit]:
    return [
        limit
        for limit in LIMITS
        if limit.resource == resource
        or (limit.resource.endswith(":") and resource.startswith(limit.resource))
    ]
