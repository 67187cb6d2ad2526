"""Cloud DNS for cert-manager's DNS-01 solver: a Google service account holding
`roles/dns.admin` on the DNS project, which cert-manager's controller service account acts
as through workload identity; the ClusterIssuer's cloudDNS solver then names no key.

Source: https://cert-manager.io/docs/configuration/acme/dns01/google/ (read 2026-11): a
service account with `dns.admin` (for convenience; a custom role with
`dns.resourceRecordSets.*`, `dns.changes.*` and `dns.managedZones.list` is the least
privilege), bound with `roles/iam.workloadIdentityUser` to
`<project>.svc.id.goog[cert-manager/cert-manager]`, the KSA annotated
`iam.gke.io/gcp-service-account` (chart value `serviceAccount.annotations`), and "the issuer
does not include a serviceAccountSecretRef ... cert-manager [uses] the default credentials
provided by GKE workload identity". With no key cert-manager v1.21.1 builds its Cloud DNS
client from application default credentials, `google.DefaultClient`
(pkg/issuer/acme/dns/clouddns/clouddns.go; read 2026-11), which on GKE_METADATA nodes are the
Google account the pod's service account is bound to.

Pure functions give the arguments; `dns01_identity` registers the account and its grants.
"""

from __future__ import annotations

from typing import Any

import pulumi
import pulumi_gcp as gcp

from components.addons import cert_manager
from components.cluster import Dns01Identity, name_kept
from components.cluster.gke import storage
from components.cluster.gke.args import GkeClusterArgs
from components.cluster.gke.node_pools import ACCOUNT, account_id
from components.config.tls import cloud_identity

DNS_ROLE = "roles/dns.admin"


def wanted(args: GkeClusterArgs) -> bool:
    """Whether cert-manager's DNS-01 solver is Cloud DNS with no key of its own."""
    return cloud_identity("gke", args.tls) is not None


def _settings(args: GkeClusterArgs) -> dict[str, Any]:
    found = cloud_identity("gke", args.tls)
    if found is None:
        raise ValueError("the DNS-01 solver brings its own credentials: no account to make")
    return found[1]


def dns_project(args: GkeClusterArgs, project: str) -> str:
    """The project of the Cloud DNS zone: the solver's `project`, else the cluster's."""
    return _settings(args).get("project") or project


def account_args(args: GkeClusterArgs) -> dict[str, Any]:
    return {
        "account_id": account_id(args, "dns"),
        "display_name": f"cert-manager DNS-01 of {args.cluster.name}",
    }


def grant_args(zone_project: str, member: Any) -> dict[str, Any]:
    """`roles/dns.admin` for the account on the DNS project (an IAMMember: adds, replaces nothing)."""
    return {"project": zone_project, "role": DNS_ROLE, "member": member}


def workload_identity_args(project: str, account_name: Any) -> dict[str, Any]:
    """cert-manager's controller service account may act as the Google account (the pool is
    the cluster project's, wherever the DNS zone lives)."""
    return {
        "service_account_id": account_name,
        "role": storage.WORKLOAD_IDENTITY_ROLE,
        "member": storage.workload_identity_member(
            project, cert_manager.NAMESPACE, cert_manager.SERVICE_ACCOUNT
        ),
    }


def solver_defaults(zone_project: str) -> dict[str, str]:
    """The cloudDNS solver's project (cert-manager requires it)."""
    return {"project": zone_project}


def dns01_identity(
    args: GkeClusterArgs, project: str, cluster: pulumi.Resource, opts: pulumi.ResourceOptions
) -> Dns01Identity | None:
    """cert-manager's Google account for Cloud DNS (DNS-01), when its solver names no key."""
    if not wanted(args):
        return None
    zone_project = dns_project(args, project)
    account = gcp.serviceaccount.Account(
        "dns", opts=name_kept(opts, ACCOUNT, "accountId"), **account_args(args)
    )
    grant = gcp.projects.IAMMember("dns-admin", opts=opts, **grant_args(zone_project, account.member))
    binding = gcp.serviceaccount.IAMMember(
        "dns-cert-manager",
        # The identity pool <project>.svc.id.goog exists once a cluster uses it.
        opts=pulumi.ResourceOptions.merge(opts, pulumi.ResourceOptions(depends_on=[cluster])),
        **workload_identity_args(project, account.name),
    )
    return Dns01Identity(
        solver_defaults=solver_defaults(zone_project),
        account_annotations={storage.ANNOTATION: account.email},
        identity=account.email,
        ready=[grant, binding],
    )
