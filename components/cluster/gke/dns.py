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

Pure functions: the platform registers the account and its grants.
"""

from __future__ import annotations

from typing import Any

from components.addons import cert_manager
from components.cluster.gke import storage
from components.cluster.gke.node_pools import account_id
from components.config import GkeStack
from components.config.tls import cloud_identity

DNS_ROLE = "roles/dns.admin"


def _settings(cfg: GkeStack) -> dict[str, Any]:
    found = cloud_identity(cfg.cloud, cfg.tls)
    if found is None:
        raise ValueError("the DNS-01 solver brings its own credentials: no account to make")
    return found[1]


def dns_project(cfg: GkeStack, project: str) -> str:
    """The project of the Cloud DNS zone: the solver's `project`, else the cluster's."""
    return _settings(cfg).get("project") or project


def account_args(cfg: GkeStack) -> dict[str, Any]:
    return {
        "account_id": account_id(cfg, "dns"),
        "display_name": f"cert-manager DNS-01 of {cfg.cluster.name}",
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
