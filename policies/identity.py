"""Policies: identity. Who the nodes and pods act as in the cloud: no static keys, workload
identity (GKE) or Pod Identity (EKS) for pods, node accounts and scopes that grant little,
bucket grants limited to the checkpoint bucket, and DNS record changes limited to named
hosted zones."""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Mapping, Sequence
from typing import Any

from policies import facts
from policies.rule import Context, Report, Rule

CLOUDS = ("gke", "eks")
KEY_VARIABLES = ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "GOOGLE_APPLICATION_CREDENTIALS")
# Keys of the master's gcs checkpoint storage that are no credentials.
GCS_KEYS = {"type", "bucket", "prefix", "save_experiment_best", "save_trial_best", "save_trial_latest"}

POD_IDENTITY_ASSOCIATION = "aws:eks/podIdentityAssociation:PodIdentityAssociation"
EKS_ADDON = "aws:eks/addon:Addon"
POD_IDENTITY_AGENT = "eks-pod-identity-agent"

DEFAULT_COMPUTE_ACCOUNT = "-compute@developer.gserviceaccount.com"
SCOPE_PREFIX = "https://www.googleapis.com/auth/"
# Scopes that let anything on the node write to the project (with the account's IAM), by
# their names and the provider's aliases.
BROAD_SCOPES = {
    "cloud-platform": "cloud-platform",
    "compute": "compute",
    "compute-rw": "compute",
    "devstorage.full_control": "devstorage.full_control",
    "storage-full": "devstorage.full_control",
    "devstorage.read_write": "devstorage.read_write",
    "storage-rw": "devstorage.read_write",
}
ROLE_POLICY_ATTACHMENT = "aws:iam/rolePolicyAttachment:RolePolicyAttachment"
POLICY_ATTACHMENT = "aws:iam/policyAttachment:PolicyAttachment"
IAM_ROLE = "aws:iam/role:Role"
BROAD_AWS_POLICIES = (
    "AdministratorAccess",
    "PowerUserAccess",
    "IAMFullAccess",
    "AmazonS3FullAccess",
    "AmazonEC2FullAccess",
)

PROJECT_IAM = ("gcp:projects/iAMMember:IAMMember", "gcp:projects/iAMBinding:IAMBinding")
PROJECT_IAM_POLICY = "gcp:projects/iAMPolicy:IAMPolicy"
BUCKET_IAM = ("gcp:storage/bucketIAMMember:BucketIAMMember", "gcp:storage/bucketIAMBinding:BucketIAMBinding")
BUCKET_IAM_POLICY = "gcp:storage/bucketIAMPolicy:BucketIAMPolicy"
AWS_POLICIES = {
    "aws:iam/rolePolicy:RolePolicy": ("IAM role policy", "role"),
    "aws:iam/policy:Policy": ("IAM policy", "name"),
    "aws:iam/userPolicy:UserPolicy": ("IAM user policy", "user"),
    "aws:iam/groupPolicy:GroupPolicy": ("IAM group policy", "group"),
}


# --- no static keys ---------------------------------------------------------------------------


def _literal_key_env(env: Any) -> list[str]:
    """The key variables a container's env sets to a literal value."""
    return [
        str(e.get("name"))
        for e in facts.items(env)
        if isinstance(e, Mapping) and e.get("name") in KEY_VARIABLES and e.get("value") not in (None, "")
    ]


def _task_variables(values: Any) -> list[str]:
    """The key variables task_container_defaults.environment_variables set ("NAME=value",
    as a list or per device type)."""
    lists = values.values() if isinstance(values, Mapping) else [values]
    names = [str(v).split("=", 1)[0].strip() for entries in lists for v in facts.items(entries)]
    return [n for n in names if n in KEY_VARIABLES]


def no_static_cloud_keys(context: Context, resource: Any, report: Report) -> None:
    if context.cloud not in CLOUDS:
        return
    for container in facts.containers(facts.pod_spec_of(resource)):
        for name in _literal_key_env(container.get("env")):
            report(
                f"{facts.object_name(resource)}: container {container.get('name')!r} sets {name} "
                "to a literal value"
            )
    master = facts.master_config_of(resource)
    if master is None:
        return
    storage = facts.mapping(master.config.get("checkpoint_storage"))
    kind = storage.get("type")
    if kind == "s3" and not storage.get("endpoint_url"):
        keys = [k for k in ("access_key", "secret_key") if storage.get(k)]
        if keys:
            report(f"master.yaml checkpoint_storage ({kind}) holds static keys ({', '.join(keys)})")
    elif kind == "gcs":
        keys = sorted(k for k in storage if k not in GCS_KEYS and facts.secret_named(str(k)))
        if keys:
            report(f"master.yaml checkpoint_storage (gcs) holds credentials ({', '.join(keys)})")
    for task in facts.task_pod_specs(master.config):
        for container in facts.containers(task.spec):
            for name in _literal_key_env(container.get("env")):
                report(
                    f"master.yaml {task.where}: container {container.get('name')!r} sets {name} to a literal "
                    f"value (from {task.key})"
                )
    for where, values in facts.task_defaults(master.config, "environment_variables"):
        for name in _task_variables(values):
            report(f"master.yaml {where}.environment_variables sets {name}")


# --- workload identity ------------------------------------------------------------------------


def _pool_name(resource: Any) -> str:
    return facts.describe(resource, "GKE node pool", "name")


def _cluster_name(resource: Any) -> str:
    return facts.describe(resource, "GKE cluster", "name")


def workload_identity(context: Context, resources: Sequence[Any], report: Report) -> None:
    for cluster in facts.of_type(resources, facts.GKE_CLUSTER):
        config = facts.mapping(facts.get(cluster.props, "workloadIdentityConfig"))
        # A pool from another resource's output is unknown in a first preview, but set.
        if not (facts.is_unknown(config, "workloadPool") or config.get("workloadPool")):
            report(f"{_cluster_name(cluster)}: workloadIdentityConfig.workloadPool is not set", cluster.urn)
        if facts.get(cluster.props, "removeDefaultNodePool") is not True:
            mode = facts.get(cluster.props, "nodeConfig", "workloadMetadataConfig", "mode")
            if mode != "GKE_METADATA":
                report(
                    f"{_cluster_name(cluster)}: its default node pool's workloadMetadataConfig.mode is "
                    f"{mode or 'not set'!r}, not GKE_METADATA (pods reach the node's identity)",
                    cluster.urn,
                )
    for pool in facts.of_type(resources, facts.GKE_NODE_POOL):
        mode = facts.get(pool.props, "nodeConfig", "workloadMetadataConfig", "mode")
        if mode != "GKE_METADATA":
            report(
                f"{_pool_name(pool)}: nodeConfig.workloadMetadataConfig.mode is {mode or 'not set'!r}, not "
                "GKE_METADATA (pods reach the node's identity)",
                pool.urn,
            )
    associations = facts.of_type(resources, POD_IDENTITY_ASSOCIATION)
    addons = facts.of_type(resources, EKS_ADDON)
    associations += [a for a in addons if facts.known_items(a.props, "podIdentityAssociations")]
    if associations and not any(facts.known(a.props, "addonName") == POD_IDENTITY_AGENT for a in addons):
        names = ", ".join(repr(a.name) for a in associations)
        report(
            f"Pod Identity associations ({names}) exist but no {POD_IDENTITY_AGENT} add-on: pods get no "
            "credentials from them",
            associations[0].urn,
        )


# --- nodes ------------------------------------------------------------------------------------


def _node_config(resource: Any) -> tuple[str, Any] | None:
    if resource.resource_type == facts.GKE_NODE_POOL:
        return _pool_name(resource), facts.get(resource.props, "nodeConfig")
    if resource.resource_type == facts.GKE_CLUSTER:
        return _cluster_name(resource), facts.get(resource.props, "nodeConfig")
    return None


def node_service_account(context: Context, resource: Any, report: Report) -> None:
    found = _node_config(resource)
    if found is None:
        return
    name, config = found
    # An account from another resource (the one the project creates) is unknown in a first
    # preview; the default account is always written out.
    if facts.is_unknown(config, "serviceAccount"):
        return
    account = facts.get(config, "serviceAccount")
    if not account:
        report(
            f"{name}: nodeConfig.serviceAccount is not set, so nodes run as the Compute Engine default "
            "account"
        )
    elif account == "default" or str(account).endswith(DEFAULT_COMPUTE_ACCOUNT):
        report(f"{name}: nodes run as the Compute Engine default account ({account})")


def node_scopes(context: Context, resource: Any, report: Report) -> None:
    found = _node_config(resource)
    if found is not None:
        name, config = found
        for scope in facts.items(facts.get(config, "oauthScopes")):
            short = str(scope).removeprefix(SCOPE_PREFIX)
            if short in BROAD_SCOPES:
                report(f"{name}: nodeConfig.oauthScopes includes {scope!r} ({BROAD_SCOPES[short]})")
        return
    arns: list[Any] = []
    what = resource.name
    if resource.resource_type in (ROLE_POLICY_ATTACHMENT, POLICY_ATTACHMENT):
        arns = [facts.known(resource.props, "policyArn")]
        what = f"IAM policy attachment {resource.name!r}"
    elif resource.resource_type == IAM_ROLE:
        arns = facts.known_items(resource.props, "managedPolicyArns")
        what = facts.describe(resource, "IAM role", "name")
    for arn in arns:
        if isinstance(arn, str) and arn.rsplit("/", 1)[-1] in BROAD_AWS_POLICIES:
            report(f"{what} grants {arn.rsplit('/', 1)[-1]} ({arn})")


# --- bucket grants ----------------------------------------------------------------------------


def _bindings(resource: Any) -> list[tuple[str, Any]]:
    """(role, where) of a GCP IAM resource: its role, or the bindings of its policy data."""
    props = resource.props
    if "role" in props:
        return [(str(facts.known(props, "role")), resource.name)]
    if facts.is_unknown(props, "policyData"):
        return []
    document = facts.policy_document(facts.get(props, "policyData"))
    return [(str(facts.get(b, "role")), resource.name) for b in facts.items(document.get("bindings"))]


def _s3_action(action: str) -> bool:
    return action == "*" or action.lower().startswith("s3:")


def _unscoped(resource_arn: str) -> bool:
    """A resource pattern that is not one named bucket (or objects of it)."""
    if resource_arn == "*":
        return True
    if not resource_arn.startswith("arn:") or ":s3:::" not in resource_arn:
        return False
    bucket = resource_arn.split(":::", 1)[1].split("/", 1)[0]
    return not bucket or "*" in bucket or "?" in bucket


def _statement_findings(statement: Mapping[str, Any]) -> list[str]:
    if statement.get("Effect") == "Deny":
        return []
    found = []
    actions = [str(a) for a in facts.as_list(statement.get("Action"))]
    broad = [a for a in actions if a == "*" or a.lower() == "s3:*"]
    if broad:
        found.append(f"allows {', '.join(repr(a) for a in broad)}")
    if "NotAction" in statement and not any(
        _s3_action(str(a)) for a in facts.as_list(statement["NotAction"])
    ):
        found.append("allows every action but its NotAction, S3 included")
    if any(_s3_action(a) for a in actions) or "NotAction" in statement:
        if "NotResource" in statement:
            found.append("grants S3 actions with NotResource (every bucket but those listed)")
        unscoped = [r for r in (str(r) for r in facts.as_list(statement.get("Resource"))) if _unscoped(r)]
        if unscoped:
            found.append(f"grants S3 actions on {', '.join(repr(r) for r in unscoped)}, not named buckets")
    return found


def bucket_grants_scoped(context: Context, resource: Any, report: Report) -> None:
    kind = resource.resource_type
    if kind in (*PROJECT_IAM, PROJECT_IAM_POLICY):
        for role, name in _bindings(resource):
            if role.startswith("roles/storage."):
                report(f"project IAM grant {name!r} gives {role} on every bucket of the project")
        return
    if kind in (*BUCKET_IAM, BUCKET_IAM_POLICY):
        for role, name in _bindings(resource):
            if role == "roles/storage.admin":
                report(
                    f"GCS bucket IAM grant {name!r} gives roles/storage.admin (the bucket's IAM and deletion)"
                )
        return
    if kind not in AWS_POLICIES:
        return
    # A policy holding another resource's ARN is unknown in a first preview; `pulumi up`
    # checks it, known, before creating it.
    if facts.is_unknown(resource.props, "policy"):
        return
    label, owner_key = AWS_POLICIES[kind]
    owner = facts.known(resource.props, owner_key)
    what = f"{label} {resource.name!r}" + (f" ({owner})" if isinstance(owner, str) and owner else "")
    document = facts.policy_document(facts.get(resource.props, "policy"))
    statements = facts.as_list(document.get("Statement"))
    if isinstance(document.get("Statement"), Mapping):
        statements = [document["Statement"]]
    for i, statement in enumerate(statements):
        if not isinstance(statement, Mapping):
            continue
        sid = statement.get("Sid")
        where = f"statement {sid!r}" if sid else f"statement {i}"
        findings = _statement_findings(statement)
        if findings:
            report(f"{what}: {where} {'; '.join(findings)}")


# --- DNS grants -------------------------------------------------------------------------------

ROUTE53_CHANGE = "route53:changeresourcerecordsets"
# One hosted zone, named by its ID (upper-case letters and digits, at most 32).
HOSTED_ZONE_ARN = re.compile(r"arn:aws[a-z-]*:route53:::hostedzone/[A-Z0-9]{1,32}")


def _allows_record_changes(statement: Mapping[str, Any]) -> bool:
    """Whether the statement allows ChangeResourceRecordSets (IAM matches actions without case,
    with wildcards)."""
    actions = [str(a).lower() for a in facts.as_list(statement.get("Action"))]
    if any(fnmatch.fnmatchcase(ROUTE53_CHANGE, a) for a in actions):
        return True
    excluded = [str(a).lower() for a in facts.as_list(statement.get("NotAction"))]
    return "NotAction" in statement and not any(fnmatch.fnmatchcase(ROUTE53_CHANGE, a) for a in excluded)


def dns_grants_scoped(context: Context, resource: Any, report: Report) -> None:
    if resource.resource_type not in AWS_POLICIES or facts.is_unknown(resource.props, "policy"):
        return
    label, owner_key = AWS_POLICIES[resource.resource_type]
    owner = facts.known(resource.props, owner_key)
    what = f"{label} {resource.name!r}" + (f" ({owner})" if isinstance(owner, str) and owner else "")
    document = facts.policy_document(facts.get(resource.props, "policy"))
    statements = document.get("Statement")
    statements = [statements] if isinstance(statements, Mapping) else facts.as_list(statements)
    for i, statement in enumerate(statements):
        if not isinstance(statement, Mapping) or statement.get("Effect") == "Deny":
            continue
        if not _allows_record_changes(statement):
            continue
        where = f"statement {statement['Sid']!r}" if statement.get("Sid") else f"statement {i}"
        if "NotResource" in statement:
            report(
                f"{what}: {where} allows Route 53 record changes with NotResource (every zone but those "
                "listed)"
            )
            continue
        wide = [
            str(r) for r in facts.as_list(statement.get("Resource")) if not HOSTED_ZONE_ARN.fullmatch(str(r))
        ]
        if wide:
            report(
                f"{what}: {where} allows Route 53 record changes on {', '.join(repr(r) for r in wide)}, "
                "not named hosted zones"
            )


_NO_KEYS = (
    "drop determined:checkpointStorage.accessKey/secretKey (and key variables in "
    "determined:taskContainerDefaults.env, determined:master.env or pod specs): on gke/eks the project "
    "grants the bucket to the master and task pods by workload identity / EKS Pod Identity"
)

RULES: list[Rule] = [
    Rule(
        name="no-static-cloud-keys",
        description="On gke/eks, no static cloud keys: master.yaml checkpoint_storage has no S3 "
        "access/secret key (unless an S3-compatible endpoint_url) nor GCS credentials, and no container "
        "of the project's workloads or master.yaml's task pod specs and task environment sets "
        "AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY or GOOGLE_APPLICATION_CREDENTIALS to a literal.",
        remediation=_NO_KEYS,
        dev="advisory",
        prod="mandatory",
        area="identity",
        resource=no_static_cloud_keys,
        why="Static keys leak, never expire and are readable by every task; the clusters the project "
        "creates hand out short-lived credentials per pod.",
    ),
    Rule(
        name="workload-identity",
        description="Pods get cloud identities of their own: GKE clusters set a workload pool and every "
        "node pool runs GKE_METADATA; on EKS, Pod Identity associations come with the eks-pod-identity-agent "
        "add-on.",
        remediation="nothing to set: on determined:cloud gke/eks the project turns workload identity "
        "(GKE_METADATA on determined:nodePools[]) and the Pod Identity agent on; do not remove them",
        dev="mandatory",
        prod="mandatory",
        area="identity",
        stack=workload_identity,
        why="Without it, pods act as the node: every task gets the node's cloud permissions, and the "
        "checkpoint grants the project makes never reach them.",
    ),
    Rule(
        name="node-service-account-not-default",
        description="GKE clusters and node pools run their nodes as a named service account, not the "
        "Compute Engine default (`default`, `*-compute@developer.gserviceaccount.com`).",
        remediation="nothing to set: the project runs determined:nodePools[] as a dedicated node account; "
        "do not point them at the Compute Engine default account",
        dev="mandatory",
        prod="mandatory",
        area="identity",
        resource=node_service_account,
        why="The default account holds Editor on the project in many organisations: every node (and pod "
        "without workload identity) would too.",
    ),
    Rule(
        name="node-scopes-narrow",
        description="GKE node OAuth scopes exclude cloud-platform, compute, devstorage.full_control and "
        "devstorage.read_write; no EKS role gets AdministratorAccess, PowerUserAccess, IAMFullAccess, "
        "AmazonS3FullAccess or AmazonEC2FullAccess.",
        remediation="nothing to set: the project gives determined:nodePools[] GKE's default scopes and each "
        "AWS role only the managed policy of its job; do not widen them",
        dev="mandatory",
        prod="mandatory",
        area="identity",
        resource=node_scopes,
        why="Nodes and add-ons need little; broad scopes and policies turn any compromised pod into a "
        "compromised account.",
    ),
    Rule(
        name="bucket-grants-scoped",
        description="Storage access is granted on the checkpoint bucket only: no project-level "
        "roles/storage.* grant, no roles/storage.admin on a bucket, and AWS policies allow S3 actions on "
        "named bucket ARNs only, never `s3:*` or `*`.",
        remediation="nothing to set: the project grants determined:checkpointStorage.bucket (and .prefix) "
        "to its storage identity alone; grant other buckets outside the stack",
        dev="mandatory",
        prod="mandatory",
        area="identity",
        resource=bucket_grants_scoped,
        why="Tasks run user code; a grant wider than the checkpoint bucket lets any experiment read or "
        "delete every bucket of the account.",
    ),
    Rule(
        name="dns-grants-scoped",
        description="AWS policies allow Route 53 record changes (route53:ChangeResourceRecordSets, by name "
        "or wildcard) on named hosted zones only (arn:aws:route53:::hostedzone/<ID>), never on `*`, "
        "`hostedzone/*` or with NotResource.",
        remediation="nothing to set: the project grants cert-manager's DNS-01 role the hosted zone of "
        "determined:tls.certificate.dns01.route53.hostedZoneID only; grant other zones outside the stack",
        dev="mandatory",
        prod="mandatory",
        area="identity",
        resource=dns_grants_scoped,
        why="Whoever may change any record of an account's zones can point its domains elsewhere and "
        "obtain certificates for them; cert-manager needs one challenge record of one zone.",
    ),
]
