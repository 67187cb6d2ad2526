"""Route 53 for cert-manager's DNS-01 solver: a role that EKS Pod Identity hands cert-manager's
controller, allowed to write the ACME challenge's TXT record in the configured hosted zone and
nothing else (or, with the solver's `role`, only to assume that role).

cert-manager v1.21.1 uses the AWS SDK for Go v2 and, with no keys in the ClusterIssuer, its
default credential chain (pkg/issuer/acme/dns/route53/route53.go), whose container credential
provider is how EKS Pod Identity hands out credentials (Go v2 supports it since
release-2023-11-14: https://docs.aws.amazon.com/eks/latest/userguide/pod-id-minimum-sdk.html;
read 2026-11). ClusterIssuers may use such ambient credentials by default. Nothing else is
needed: no annotation (Pod Identity binds by association) and no token volume of our own.

Pure functions give the policies; `dns01_identity` registers the role and the association.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pulumi
import pulumi_aws as aws

from components.addons import cert_manager
from components.cluster import Dns01Identity
from components.cluster.eks import iam, storage
from components.cluster.eks.args import EksClusterArgs
from components.config.tls import cloud_identity

# What cert-manager's Route 53 solver calls (pkg/issuer/acme/dns/route53/route53.go at v1.21.1,
# read 2026-11): ChangeResourceRecordSets (UPSERT to present the challenge, DELETE to clean up)
# on the zone, then GetChange until the change is INSYNC. ListHostedZonesByName only finds the
# zone when no hostedZoneID is set, and here one always is; ListResourceRecordSets, in
# cert-manager's sample policy, is never called.
# Source: https://cert-manager.io/docs/configuration/acme/dns01/route53/ (read 2026-11): "The
# route53:ListHostedZonesByName statement can be removed if you specify the (optional)
# hostedZoneID", and the policy may be limited to arn:aws:route53:::hostedzone/<ID> and to TXT
# records (route53:ChangeResourceRecordSetsRecordTypes).
CHANGE_ACTION = "route53:ChangeResourceRecordSets"
GET_CHANGE = "route53:GetChange"
CHANGES = "arn:aws:route53:::change/*"
ZONE_ARN = "arn:aws:route53:::hostedzone/{}"
RECORD_TYPES_KEY = "route53:ChangeResourceRecordSetsRecordTypes"
# Record names in this condition key are lower case without the trailing dot.
# Source: https://docs.aws.amazon.com/Route53/latest/DeveloperGuide/specifying-rrset-conditions.html
# (read 2026-11).
RECORD_NAMES_KEY = "route53:ChangeResourceRecordSetsNormalizedRecordNames"
# The record an ACME DNS-01 challenge is answered in (RFC 8555, section 8.4).
CHALLENGE_LABEL = "_acme-challenge"


def challenge_record(host: str) -> str:
    """The challenge's record name for `host`, as Route 53's condition key compares it."""
    return f"{CHALLENGE_LABEL}.{host.lower().rstrip('.')}"


def zone_policy(zone_ids: Sequence[str], record_names: Sequence[str] | None = None) -> dict[str, Any]:
    """Writing TXT records (only `record_names`, when given) in the hosted zones `zone_ids`,
    and reading the status of a change."""
    if not zone_ids:
        raise ValueError("a Route 53 policy needs at least one hosted zone")
    condition: dict[str, list[str]] = {RECORD_TYPES_KEY: ["TXT"]}
    if record_names:
        condition[RECORD_NAMES_KEY] = list(record_names)
    return {
        "Version": "2012-10-17",
        "Statement": [
            {
                "Sid": "ChallengeRecords",
                "Effect": "Allow",
                "Action": [CHANGE_ACTION],
                "Resource": [ZONE_ARN.format(zone) for zone in zone_ids],
                "Condition": {"ForAllValues:StringEquals": condition},
            },
            {"Sid": "ChangeStatus", "Effect": "Allow", "Action": [GET_CHANGE], "Resource": CHANGES},
        ],
    }


# The session EKS Pod Identity gives a pod carries session tags, all of them transitive ("All
# of the session tags that are added by EKS Pod Identity are transitive; the tag keys and
# values are passed to any AssumeRole actions that your workloads use to switch roles into
# another account": EKS user guide, "Grant Pods access to AWS resources based on tags",
# https://docs.aws.amazon.com/eks/latest/userguide/pod-id-abac.html#pod-id-abac-chaining), and
# a session with tags needs sts:TagSession beside sts:AssumeRole (IAM user guide, "Pass session
# tags in AWS STS", Permissions required to add session tags and Chaining roles with session
# tags, https://docs.aws.amazon.com/IAM/latest/UserGuide/id_session-tags.html); read 2026-11-25.
# The solver's role must trust cert-manager's role for both (docs/clouds/eks.md, cluster security).
ROLE_CHAIN_ACTIONS = ["sts:AssumeRole", "sts:TagSession"]


def assume_role_policy(role_arn: str) -> dict[str, Any]:
    """With the solver's `role` (a zone in another account, say): cert-manager assumes that
    role with the Pod Identity credentials, so this role may only assume it (with the Pod
    Identity session's tags: ROLE_CHAIN_ACTIONS). Source:
    https://cert-manager.io/docs/configuration/acme/dns01/route53/ (Cross Account Access;
    read 2026-11)."""
    return {
        "Version": "2012-10-17",
        "Statement": [
            {"Sid": "DnsRole", "Effect": "Allow", "Action": ROLE_CHAIN_ACTIONS, "Resource": role_arn}
        ],
    }


def wanted(args: EksClusterArgs) -> bool:
    """Whether cert-manager's DNS-01 solver is Route 53 with no keys of its own."""
    return cloud_identity("eks", args.tls) is not None


def _settings(args: EksClusterArgs) -> dict[str, Any]:
    found = cloud_identity("eks", args.tls)
    if found is None:
        raise ValueError("the DNS-01 solver brings its own credentials: no role to make")
    return found[1]


def role_policy(args: EksClusterArgs) -> dict[str, Any]:
    """The inline policy of cert-manager's role: the configured hosted zone's challenge
    record (any record the challenge CNAME leads to with cnameStrategy Follow), or assuming
    the configured role."""
    settings = _settings(args)
    if "role" in settings:
        return assume_role_policy(settings["role"])
    follow = args.tls.certificate.dns01.get("cnameStrategy") == "Follow"
    names = None if follow else [challenge_record(args.tls.host)]
    return zone_policy([settings["hostedZoneID"]], names)


def solver_defaults(args: EksClusterArgs) -> dict[str, str]:
    """The route53 solver's region: the cluster's. Route 53 is global; the region only picks the
    credential scope and partition, and the Pod Identity agent's AWS_REGION wins over it
    (ACMEIssuerDNS01ProviderRoute53.region, cert-manager.io/v1 CRD at v1.21.1)."""
    _settings(args)
    return {"region": args.cluster.region}


def association_args(role_arn: Any) -> dict[str, Any]:
    """The Pod Identity association of cert-manager's controller (its chart's namespace and
    service account) with the role (cluster_name is the cluster's)."""
    return {
        "namespace": cert_manager.NAMESPACE,
        "service_account": cert_manager.SERVICE_ACCOUNT,
        "role_arn": role_arn,
    }


def dns01_identity(
    args: EksClusterArgs, cluster_name: pulumi.Input[str], opts: pulumi.ResourceOptions
) -> Dns01Identity | None:
    """cert-manager's Route 53 role (DNS-01), through Pod Identity, when its solver names no keys."""
    if not wanted(args):
        return None
    role = iam.role(
        "cert-manager",
        iam.role_name(args, "cert-manager"),
        iam.POD_IDENTITY_TRUST,
        (),
        opts,
        inline=role_policy(args),
    )
    association = aws.eks.PodIdentityAssociation(
        "cert-manager",
        cluster_name=cluster_name,
        opts=pulumi.ResourceOptions.merge(opts, pulumi.ResourceOptions(depends_on=role.ready)),
        **association_args(role.arn),
    )
    return Dns01Identity(
        solver_defaults=solver_defaults(args),
        account_annotations={storage.ROLE_ANNOTATION: role.arn},
        identity=role.arn,
        ready=[association],
    )
