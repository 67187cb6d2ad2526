"""Every cloud name the stack creates: for each resource type, the input property that holds
the name, the scope it must be unique in, and the length and characters the cloud's API takes
(its source beside each row); and how names derived from the cluster name are made so that
they fit and never collide between stacks.

Derived names (`derived`):
- `<cluster>-<purpose>` when the name's scope is no wider than what makes the cluster name
  unique: GKE cluster names are unique per project and location, EKS ones per account and
  region, so a region-scoped name built from them is unique too.
- `<cluster>-<purpose>-<digest>` when the scope is a whole project or account, or every
  customer's: the digest (6 hex characters of SHA-256 over stack, region and cluster name)
  tells apart the same cluster name in two regions, or two stacks.
- Too long for the cloud, or changed to meet its rules (a digit first, `--`): the cluster part
  is cut and the digest added; a plain cut would let two names collide.

Names of resources that existed before the digest was added (service accounts, networks,
IAM roles, Cloud SQL instances) are fixed at creation: `kept_at_creation` gives the
`ignore_changes` that lets an existing stack keep the name it was created with, while new
stacks get the unique one. This module is a leaf: config validation, the program and the
plan's own check (plan.cloud_check) read it.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from typing import Literal

# Wider scopes first: a name must be unique among every name of its scope.
Scope = Literal["global", "account", "project", "region", "network", "cluster", "resource"]
WIDE_SCOPES = ("global", "account", "project")
DIGEST_LENGTH = 6

_RFC1035 = r"[a-z]([-a-z0-9]*[a-z0-9])?"


@dataclass(frozen=True)
class NameRule:
    """What a cloud API accepts as one resource type's name."""

    resource: str  # Pulumi type token
    prop: str  # the input property holding the name (as resources.json shows it)
    scope: Scope
    min_length: int
    max_length: int
    pattern: str  # the whole name must match
    what: str  # the rule in words, for messages
    source: str
    # Patterns the name must not contain (searched), with why.
    forbidden: tuple[tuple[str, str], ...] = ()
    # Lower-case only (names are sanitized to it).
    lower: bool = True
    # The first character must be a letter (else a digit may lead).
    letter_first: bool = True
    # Two hyphens in a row are refused.
    no_double_hyphen: bool = False
    # Stacks made before the name's scope was taken into account keep their name
    # (`ignore_changes` on `prop`; see kept_at_creation).
    kept: bool = False

    def problems(self, name: str) -> list[str]:
        """What the cloud would refuse in `name` (empty: accepted)."""
        found = []
        if not self.min_length <= len(name) <= self.max_length:
            found.append(
                f"{name!r} has {len(name)} characters; {self.resource} {self.prop} takes "
                f"{self.min_length} to {self.max_length}"
            )
        if not re.fullmatch(self.pattern, name):
            found.append(f"{name!r} is not {self.what}")
        if self.no_double_hyphen and "--" in name:
            found.append(f"{name!r} has two hyphens in a row, which {self.resource} {self.prop} refuses")
        for pattern, why in self.forbidden:
            if re.search(pattern, name):
                found.append(f"{name!r}: {why}")
        return found


def _rule(*args, **kwargs) -> NameRule:
    return NameRule(*args, **kwargs)


GCP_SA = "https://cloud.google.com/iam/docs/reference/rest/v1/projects.serviceAccounts/create (read 2026-11)"
GCE_NAMES = "https://cloud.google.com/compute/docs/naming-resources#resource-name-format (read 2026-11)"
GKE_CLUSTER = (
    "https://cloud.google.com/kubernetes-engine/docs/reference/rest/v1/projects.locations.clusters#Cluster "
    "(read 2026-11)"
)
GKE_NODE_POOL = (
    "https://cloud.google.com/sdk/gcloud/reference/container/node-pools/create: a node pool name is at "
    "most 40 characters, RFC 1035 (read 2026-11)"
)
CLOUD_SQL = "https://cloud.google.com/sql/docs/postgres/create-instance (instance ID; read 2026-11)"
GCS_BUCKET = "https://cloud.google.com/storage/docs/buckets#naming (read 2026-11)"
LUSTRE_INSTANCE = (
    "https://github.com/pulumi/pulumi-gcp v10.2.0 sdk/python/pulumi_gcp/lustre/instance.py "
    "InstanceArgs.instance_id: lower-case letters, digits and hyphens, a letter first, a letter or digit "
    "last, 1-63 characters (read 2026-11)"
)
EKS_CLUSTER = "https://docs.aws.amazon.com/eks/latest/APIReference/API_CreateCluster.html (read 2026-11)"
EKS_NODEGROUP = "https://docs.aws.amazon.com/eks/latest/APIReference/API_CreateNodegroup.html (read 2026-11)"
IAM_ROLE = "https://docs.aws.amazon.com/IAM/latest/APIReference/API_CreateRole.html (read 2026-11)"
IAM_ROLE_POLICY = "https://docs.aws.amazon.com/IAM/latest/APIReference/API_PutRolePolicy.html (read 2026-11)"
RDS_INSTANCE = (
    "https://docs.aws.amazon.com/AmazonRDS/latest/APIReference/API_CreateDBInstance.html (read 2026-11)"
)
RDS_PARAMETERS = (
    "https://docs.aws.amazon.com/AmazonRDS/latest/APIReference/API_CreateDBParameterGroup.html (read 2026-11)"
)
RDS_SUBNETS = (
    "https://docs.aws.amazon.com/AmazonRDS/latest/APIReference/API_CreateDBSubnetGroup.html (read 2026-11)"
)
EC2_SECURITY_GROUP = (
    "https://docs.aws.amazon.com/AWSEC2/latest/APIReference/API_CreateSecurityGroup.html (read 2026-11)"
)
S3_BUCKET = "https://docs.aws.amazon.com/AmazonS3/latest/userguide/bucketnamingrules.html (read 2026-11)"
SQS_QUEUE = (
    "https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_CreateQueue.html: QueueName "
    "up to 80 characters, alphanumerics, '-' and '_' (read 2026-11)"
)
EVENTBRIDGE_RULE = (
    "https://docs.aws.amazon.com/eventbridge/latest/APIReference/API_PutRule.html: Name 1-64 characters, "
    "[\\.\\-_A-Za-z0-9]+, unique per event bus (read 2026-11)"
)
# Prefixes and suffixes S3 keeps for itself (demo names, access point and Object Lambda
# aliases, Multi-Region Access Points, directory and table buckets): "General purpose
# buckets naming rules", https://docs.aws.amazon.com/AmazonS3/latest/userguide/bucketnamingrules.html
# (read 2026-11). One list for the names the project makes and the buckets users name.
S3_RESERVED_PREFIXES = ("xn--", "sthree-", "amzn-s3-demo-")
S3_RESERVED_SUFFIXES = ("-s3alias", "--ol-s3", ".mrap", "--x-s3", "--table-s3")


def _listed(items: tuple[str, ...]) -> str:
    return f"{', '.join(items[:-1])} and {items[-1]}"


_RDS_WHAT = "letters, digits and '-', starting with a letter and not ending with '-'"
_GCE_WHAT = "lower-case letters, digits and '-', starting with a letter and ending with a letter or digit"

RULES: tuple[NameRule, ...] = (
    # --- Google Cloud ---
    _rule(
        "gcp:serviceaccount/account:Account",
        "accountId",
        "project",
        6,
        30,
        r"[a-z]([-a-z0-9]*[a-z0-9])",
        _GCE_WHAT,
        GCP_SA,
        kept=True,
    ),
    _rule("gcp:compute/network:Network", "name", "project", 1, 63, _RFC1035, _GCE_WHAT, GCE_NAMES, kept=True),
    _rule(
        "gcp:compute/globalAddress:GlobalAddress",
        "name",
        "project",
        1,
        63,
        _RFC1035,
        _GCE_WHAT,
        GCE_NAMES,
        kept=True,
    ),
    _rule("gcp:compute/firewall:Firewall", "name", "project", 1, 63, _RFC1035, _GCE_WHAT, GCE_NAMES),
    _rule("gcp:compute/subnetwork:Subnetwork", "name", "region", 1, 63, _RFC1035, _GCE_WHAT, GCE_NAMES),
    _rule("gcp:compute/router:Router", "name", "region", 1, 63, _RFC1035, _GCE_WHAT, GCE_NAMES),
    _rule("gcp:compute/routerNat:RouterNat", "name", "resource", 1, 63, _RFC1035, _GCE_WHAT, GCE_NAMES),
    _rule("gcp:container/cluster:Cluster", "name", "region", 1, 40, _RFC1035, _GCE_WHAT, GKE_CLUSTER),
    _rule("gcp:container/nodePool:NodePool", "name", "cluster", 1, 40, _RFC1035, _GCE_WHAT, GKE_NODE_POOL),
    _rule(
        # Project ID and instance ID together at most 98 characters; the project ID takes
        # up to 30 (a domain-scoped one more), so instance IDs are kept to 63 here.
        "gcp:sql/databaseInstance:DatabaseInstance",
        "name",
        "project",
        1,
        63,
        _RFC1035,
        _GCE_WHAT,
        CLOUD_SQL,
        kept=True,
    ),
    _rule(
        # Instance IDs are unique per project and location; "project" scope adds the digest.
        # The Filestore API's own ID rules were not retrieved: the Compute Engine convention
        # (GCE_NAMES), which the IDs the stack derives meet.
        "gcp:filestore/instance:Instance",
        "name",
        "project",
        1,
        63,
        _RFC1035,
        _GCE_WHAT,
        GCE_NAMES,
    ),
    _rule(
        "gcp:lustre/instance:Instance",
        "instanceId",
        "project",
        1,
        63,
        _RFC1035,
        _GCE_WHAT,
        LUSTRE_INSTANCE,
    ),
    _rule(
        "gcp:storage/bucket:Bucket",
        "name",
        "global",
        3,
        63,
        r"[a-z0-9][-a-z0-9_]*[a-z0-9]",
        "lower-case letters, digits, '-' and '_', starting and ending with a letter or digit",
        GCS_BUCKET,
        forbidden=(
            (r"^goog", "names may not start with 'goog'"),
            (r"google|g00gle", "names may not contain 'google'"),
        ),
        letter_first=False,
        # Made unique per install (the cluster name, components/cluster/checkpoints.py) after
        # stacks were deployed without it: those keep their bucket.
        kept=True,
    ),
    # --- AWS ---
    _rule(
        "aws:eks/cluster:Cluster",
        "name",
        "region",
        1,
        100,
        r"[0-9A-Za-z][A-Za-z0-9_-]*",
        "letters, digits, '-' and '_', starting with a letter or digit",
        EKS_CLUSTER,
        lower=False,
        letter_first=False,
    ),
    _rule(
        "aws:eks/nodeGroup:NodeGroup",
        "nodeGroupName",
        "cluster",
        1,
        63,
        r"[0-9A-Za-z][A-Za-z0-9_-]*",
        "letters, digits, '-' and '_', starting with a letter or digit",
        EKS_NODEGROUP,
        lower=False,
        letter_first=False,
    ),
    _rule(
        # Unique in the account whatever the case.
        "aws:iam/role:Role",
        "name",
        "account",
        1,
        64,
        r"[\w+=,.@-]+",
        "letters, digits and +=,.@_-",
        IAM_ROLE,
        lower=False,
        letter_first=False,
        kept=True,
    ),
    _rule(
        "aws:iam/rolePolicy:RolePolicy",
        "name",
        "resource",
        1,
        128,
        r"[\w+=,.@-]+",
        "letters, digits and +=,.@_-",
        IAM_ROLE_POLICY,
        lower=False,
        letter_first=False,
    ),
    _rule(
        # Unique per account and region (the Karpenter interruption queue).
        "aws:sqs/queue:Queue",
        "name",
        "region",
        1,
        80,
        r"[A-Za-z0-9_-]+",
        "letters, digits, '-' and '_'",
        SQS_QUEUE,
        lower=False,
        letter_first=False,
    ),
    _rule(
        # Unique on the region's default event bus (Karpenter's interruption rules).
        "aws:cloudwatch/eventRule:EventRule",
        "name",
        "region",
        1,
        64,
        r"[.A-Za-z0-9_-]+",
        "letters, digits, '.', '-' and '_'",
        EVENTBRIDGE_RULE,
        lower=False,
        letter_first=False,
    ),
    _rule(
        "aws:rds/instance:Instance",
        "identifier",
        "region",
        1,
        63,
        r"[a-z]([a-z0-9-]*[a-z0-9])?",
        _RDS_WHAT,
        RDS_INSTANCE,
        no_double_hyphen=True,
    ),
    _rule(
        "aws:rds/instance:Instance",
        "finalSnapshotIdentifier",
        "region",
        1,
        255,
        r"[a-z]([a-z0-9-]*[a-z0-9])?",
        _RDS_WHAT,
        RDS_INSTANCE,
        no_double_hyphen=True,
    ),
    _rule(
        "aws:rds/parameterGroup:ParameterGroup",
        "name",
        "region",
        1,
        255,
        r"[a-z]([a-z0-9-]*[a-z0-9])?",
        _RDS_WHAT,
        RDS_PARAMETERS,
        no_double_hyphen=True,
    ),
    _rule(
        "aws:rds/subnetGroup:SubnetGroup",
        "name",
        "region",
        1,
        255,
        r"[a-z0-9][a-z0-9. _-]*",
        "lower-case letters, digits, '.', '_', ' ' and '-'",
        RDS_SUBNETS,
        forbidden=((r"^default$", "'default' is reserved"),),
        letter_first=False,
    ),
    _rule(
        "aws:ec2/securityGroup:SecurityGroup",
        "name",
        "network",
        1,
        255,
        r"[a-zA-Z0-9 ._\-:/()#,@\[\]+=&;{}!$*]+",
        "letters, digits, spaces and ._-:/()#,@[]+=&;{}!$*",
        EC2_SECURITY_GROUP,
        forbidden=((r"^sg-", "names may not start with 'sg-'"),),
        lower=False,
        letter_first=False,
    ),
    _rule(
        "aws:s3/bucket:Bucket",
        "bucket",
        "global",
        3,
        63,
        r"[a-z0-9][a-z0-9.-]*[a-z0-9]",
        "lower-case letters, digits, '.' and '-', starting and ending with a letter or digit",
        S3_BUCKET,
        forbidden=(
            (r"\.\.", "two periods in a row are refused"),
            (r"^\d+\.\d+\.\d+\.\d+$", "a name may not look like an IP address"),
            (
                "^(" + "|".join(map(re.escape, S3_RESERVED_PREFIXES)) + ")",
                f"the prefixes {_listed(S3_RESERVED_PREFIXES)} are reserved",
            ),
            (
                "(" + "|".join(map(re.escape, S3_RESERVED_SUFFIXES)) + ")$",
                f"the suffixes {_listed(S3_RESERVED_SUFFIXES)} are reserved",
            ),
        ),
        letter_first=False,
        kept=True,  # as the GCS bucket's
    ),
)


def rules_for(resource: str) -> list[NameRule]:
    return [rule for rule in RULES if rule.resource == resource]


def rule(resource: str, prop: str) -> NameRule:
    return next(r for r in RULES if r.resource == resource and r.prop == prop)


def digest(stack: str, region: str, cluster: str) -> str:
    """What tells one stack's names apart from every other's in a project or account."""
    return hashlib.sha256(f"{stack}\0{region}\0{cluster}".encode()).hexdigest()[:DIGEST_LENGTH]


def _sanitized(name: str, rule: NameRule) -> str:
    if rule.lower:
        name = name.lower()
    if rule.no_double_hyphen:
        name = re.sub(r"-{2,}", "-", name)
    if rule.letter_first and not name[:1].isalpha():
        name = "d" + name
    return name


@dataclass(frozen=True)
class Namer:
    """Derives one stack's cloud names (see the module's docstring)."""

    stack: str
    region: str
    cluster: str

    def name(self, resource: str, prop: str, purpose: str) -> str:
        rule_ = rule(resource, prop)
        wanted = f"{self.cluster}-{purpose}"
        name = _sanitized(wanted, rule_)
        if rule_.scope in WIDE_SCOPES or name != wanted or rule_.problems(name):
            suffix = f"-{purpose}-{digest(self.stack, self.region, self.cluster)}"
            room = rule_.max_length - len(suffix)
            base = _sanitized(self.cluster, rule_)
            name = base[:room].rstrip("-") + suffix
            if rule_.problems(name):  # a reserved prefix (sg-, goog): lead with a letter of ours
                name = ("d" + base)[:room].rstrip("-") + suffix
        problems = rule_.problems(name)
        if problems:  # the derivation fits every name config validation accepts
            raise ValueError(f"derived name breaks {resource} rules: {problems[0]}")
        return name


def kept_at_creation(resource: str, prop: str) -> list[str]:
    """`ignore_changes` for a name fixed at creation whose derivation changed: an existing
    stack keeps the name it was created with (Pulumi compares the old value), a new stack is
    created with the derived one."""
    return [prop] if rule(resource, prop).kept else []
