"""cert-manager's DNS-01 with the cluster's own cloud identity: on EKS a Route 53 role through
Pod Identity limited to the challenge record of the configured hosted zone; on GKE a Google
service account with roles/dns.admin on the DNS project, bound to cert-manager's service
account by workload identity. The ClusterIssuer's solver then names no credentials."""

from __future__ import annotations

import copy
import json

import pytest
import yaml
from conftest import EKS, GKE, ROOT, load_config, raw_config
from crds import crd_problems
from planning import of_type, one, plan_for, planned, resource

import stack_args
from components import names
from components.addons import cert_manager
from components.cluster import Dns01Identity
from components.cluster.eks import dns as eks_dns
from components.cluster.eks import iam
from components.cluster.gke import dns as gke_dns
from components.cluster.gke import node_pools
from components.config import ConfigError
from components.config.tls import cloud_identity
from components.determined import tls
from plan.redaction import UNKNOWN

FIXTURES = ROOT / "tests" / "fixtures" / "stacks"
ZONE = "Z0123456789ABCDEFGHIJ"
ASSOCIATION = "eks/podIdentityAssociation:PodIdentityAssociation"
OWN_KEYS = {
    "accessKeyID",
    "accessKeyIDSecretRef",
    "secretAccessKeySecretRef",
    "auth",
    "serviceAccountSecretRef",
}


def fixture(name):
    raw = yaml.safe_load((FIXTURES / f"Pulumi.{name}.yaml").read_text())["config"]
    return {key.split(":", 1)[1]: value for key, value in raw.items()}


def with_dns01(raw, dns01, **tls):
    raw = copy.deepcopy(raw)
    raw["tls"]["certificate"]["dns01"] = dns01
    raw["tls"].update(tls)
    return raw


def release(result):
    return resource(result, "helm.sh/v3:Release", "cert-manager")


def solver(result):
    (found,) = one(result, "ClusterIssuer", cert_manager.ISSUER)["spec"]["acme"]["solvers"]
    return found["dns01"]


def role_policy(result):
    return json.loads(resource(result, "iam/rolePolicy:RolePolicy", "cert-manager")["inputs"]["policy"])


def problems(base, dns01, **tls):
    settings = {
        "mode": "ingress",
        "host": "det.example.com",
        "certificate": {"email": "ops@mail.example.com", "dns01": dns01},
        "sourceRanges": ["203.0.113.0/24"],
        **tls,
    }
    try:
        load_config(raw_config(**base, tls=settings))
    except ConfigError as exc:
        return [str(p) for p in exc.problems]
    return []


# --- EKS: Route 53 through Pod Identity --------------------------------------------------------


def test_the_route53_role_may_write_the_challenge_record_of_the_zone_and_nothing_else():
    result = planned("tls-dns01-eks")
    assert role_policy(result) == {
        "Version": "2012-10-17",
        "Statement": [
            {
                "Sid": "ChallengeRecords",
                "Effect": "Allow",
                "Action": ["route53:ChangeResourceRecordSets"],
                "Resource": [f"arn:aws:route53:::hostedzone/{ZONE}"],
                "Condition": {
                    "ForAllValues:StringEquals": {
                        "route53:ChangeResourceRecordSetsRecordTypes": ["TXT"],
                        "route53:ChangeResourceRecordSetsNormalizedRecordNames": [
                            "_acme-challenge.det.example.org"
                        ],
                    }
                },
            },
            {
                "Sid": "ChangeStatus",
                "Effect": "Allow",
                "Action": ["route53:GetChange"],
                "Resource": "arn:aws:route53:::change/*",
            },
        ],
    }
    role = resource(result, "iam/role:Role", "cert-manager")["inputs"]
    assert json.loads(role["assumeRolePolicy"]) == iam.POD_IDENTITY_TRUST
    assert role["name"] == names.Namer("tls-dns01-eks", "eu-west-1", "det-edge").name(
        iam.ROLE, "name", "cert-manager"
    )
    # Nothing managed: the inline policy is all it holds.
    role_urn = resource(result, "iam/role:Role", "cert-manager")["urn"]
    attachments = of_type(result, "iam/rolePolicyAttachment:RolePolicyAttachment")
    assert not [a for a in attachments if role_urn in a["dependsOn"]]


def test_the_zone_policy_covers_each_zone_given_and_only_txt_records():
    document = eks_dns.zone_policy(["Z1", "Z2"])
    (records, status) = document["Statement"]
    assert records["Resource"] == ["arn:aws:route53:::hostedzone/Z1", "arn:aws:route53:::hostedzone/Z2"]
    assert records["Condition"] == {
        "ForAllValues:StringEquals": {"route53:ChangeResourceRecordSetsRecordTypes": ["TXT"]}
    }
    assert status == {
        "Sid": "ChangeStatus",
        "Effect": "Allow",
        "Action": ["route53:GetChange"],
        "Resource": "arn:aws:route53:::change/*",
    }
    with pytest.raises(ValueError, match="at least one hosted zone"):
        eks_dns.zone_policy([])


def test_the_challenge_record_is_named_as_route53s_condition_key_compares_it():
    # Lower case, no trailing dot (Route 53's normalized record names).
    assert eks_dns.challenge_record("Det.Example.ORG.") == "_acme-challenge.det.example.org"


def test_cname_follow_drops_the_record_name_and_a_solver_role_is_only_assumed():
    raw = fixture("tls-dns01-eks")
    follow = load_config(with_dns01(raw, {"route53": {"hostedZoneID": ZONE}, "cnameStrategy": "Follow"}))
    (records, _) = eks_dns.role_policy(stack_args.eks_cluster_args(follow))["Statement"]
    assert records["Condition"] == {
        "ForAllValues:StringEquals": {"route53:ChangeResourceRecordSetsRecordTypes": ["TXT"]}
    }
    role = "arn:aws:iam::210987654321:role/dns-manager"
    other_account = load_config(with_dns01(raw, {"route53": {"role": role}}))
    assert eks_dns.role_policy(stack_args.eks_cluster_args(other_account)) == {
        "Version": "2012-10-17",
        "Statement": [
            # Pod Identity's session tags are transitive: chaining needs sts:TagSession too.
            {
                "Sid": "DnsRole",
                "Effect": "Allow",
                "Action": ["sts:AssumeRole", "sts:TagSession"],
                "Resource": role,
            }
        ],
    }


def test_the_association_names_the_account_the_chart_runs_the_controller_as():
    result = planned("tls-dns01-eks")
    association = resource(result, ASSOCIATION, "cert-manager")
    chart = release(result)["inputs"]
    assert (
        association["inputs"]["namespace"] == chart["namespace"] == cert_manager.NAMESPACE == "cert-manager"
    )
    assert (
        association["inputs"]["serviceAccount"] == chart["values"]["serviceAccount"]["name"] == "cert-manager"
    )
    role_name = resource(result, "iam/role:Role", "cert-manager")["inputs"]["name"]
    assert association["inputs"]["roleArn"].endswith(f":role/{role_name}")
    # The chart's default: the fullname, which is the release name when it holds the chart's name.
    assert chart["name"] == cert_manager.RELEASE == cert_manager.SERVICE_ACCOUNT
    assert "cert-manager" in chart["name"]
    for key in ("fullnameOverride", "nameOverride", "namespace"):
        assert key not in chart["values"]
    # The association exists (and the role holds its policy) before the controller starts.
    role = resource(result, "iam/role:Role", "cert-manager")["urn"]
    grant = resource(result, "iam/rolePolicy:RolePolicy", "cert-manager")["urn"]
    assert {role, grant} <= set(association["dependsOn"])
    assert association["urn"] in release(result)["dependsOn"]


def test_the_controller_pods_carry_the_role_so_a_new_one_restarts_them():
    values = release(planned("tls-dns01-eks"))["inputs"]["values"]
    (role,) = values["podAnnotations"].values()
    assert values["podAnnotations"] == {cert_manager.IDENTITY_ANNOTATION: role}
    assert values["serviceAccount"]["annotations"] == {"determined.ai/aws-role": role}
    assert role.startswith("arn:aws:iam::") and ":role/det-edge-cert-manager-" in role


def test_the_route53_solver_names_the_zone_and_the_clusters_region_and_no_keys():
    route53 = solver(planned("tls-dns01-eks"))["route53"]
    assert route53 == {"hostedZoneID": ZONE, "region": "eu-west-1"}
    # A region given stays.
    cfg = load_config(
        with_dns01(fixture("tls-dns01-eks"), {"route53": {"hostedZoneID": ZONE, "region": "us-east-1"}})
    )
    identity = Dns01Identity(eks_dns.solver_defaults(stack_args.eks_cluster_args(cfg)), {}, "arn")
    issuer = tls.cluster_issuer(cfg, identity)
    assert issuer["spec"]["acme"]["solvers"][0]["dns01"]["route53"]["region"] == "us-east-1"


# --- GKE: Cloud DNS through workload identity ---------------------------------------------------


def test_the_cloud_dns_account_holds_dns_admin_on_the_dns_project_and_is_bound_to_cert_manager():
    result = planned("tls-ingress-gke")
    # node_pools.account_id(cfg, "dns") in that stack.
    account_id = names.Namer("tls-ingress-gke", "us-central1", "det-tls").name(
        node_pools.ACCOUNT, "accountId", "dns"
    )
    account = resource(result, "serviceaccount/account:Account", "dns")
    assert account["inputs"]["accountId"] == account_id
    # Besides the aliases that keep the URN of a stack deployed before the cluster component.
    assert {k: v for k, v in account["options"].items() if k != "aliases"} == {"ignoreChanges": ["accountId"]}
    email = f"{account_id}@plan-project.iam.gserviceaccount.com"
    grant = resource(result, "projects/iAMMember:IAMMember", "dns-admin")["inputs"]
    assert grant == {
        "project": "plan-project",
        "role": "roles/dns.admin",
        "member": f"serviceAccount:{email}",
    }
    binding = resource(result, "serviceaccount/iAMMember:IAMMember", "dns-cert-manager")
    assert binding["inputs"] == {
        "serviceAccountId": f"projects/plan-project/serviceAccounts/{email}",
        "role": "roles/iam.workloadIdentityUser",
        "member": "serviceAccount:plan-project.svc.id.goog[cert-manager/cert-manager]",
    }
    cluster = resource(result, "container/cluster:Cluster", "cluster")["urn"]
    assert cluster in binding["dependsOn"]
    chart = release(result)
    assert chart["inputs"]["namespace"] == "cert-manager"
    assert chart["inputs"]["values"]["serviceAccount"] == {
        "name": "cert-manager",
        "annotations": {"iam.gke.io/gcp-service-account": email},
    }
    assert chart["inputs"]["values"]["podAnnotations"] == {cert_manager.IDENTITY_ANNOTATION: email}
    assert {binding["urn"], resource(result, "projects/iAMMember:IAMMember", "dns-admin")["urn"]} <= set(
        chart["dependsOn"]
    )


def test_the_cloud_dns_project_defaults_to_the_clusters_and_may_be_another():
    raw = fixture("tls-ingress-gke")
    result = plan_for(with_dns01(raw, {"cloudDNS": {}}))
    assert solver(result) == {"cloudDNS": {"project": "plan-project"}}
    assert (
        resource(result, "projects/iAMMember:IAMMember", "dns-admin")["inputs"]["project"] == "plan-project"
    )
    other = load_config(with_dns01(raw, {"cloudDNS": {"project": "dns-hub"}}))
    assert gke_dns.dns_project(stack_args.gke_cluster_args(other), "plan-project") == "dns-hub"
    assert gke_dns.grant_args("dns-hub", "serviceAccount:x")["project"] == "dns-hub"
    # The workload identity pool stays the cluster's.
    assert gke_dns.workload_identity_args("plan-project", "n")["member"] == (
        "serviceAccount:plan-project.svc.id.goog[cert-manager/cert-manager]"
    )


def test_a_first_preview_plans_the_identity_it_cannot_name_yet():
    result = planned("tls-dns01-eks", preview=True)
    values = release(result)["inputs"]["values"]
    assert values["podAnnotations"] == {cert_manager.IDENTITY_ANNOTATION: UNKNOWN}


# --- the ClusterIssuer ----------------------------------------------------------------------------


@pytest.mark.parametrize("stack", ["tls-dns01-eks", "tls-ingress-gke"])
def test_the_solver_names_no_credentials_and_conforms_to_the_crd(stack):
    issuer = one(planned(stack), "ClusterIssuer", cert_manager.ISSUER)
    assert crd_problems(issuer) == []
    ((provider, settings),) = [(k, v) for k, v in solver(planned(stack)).items() if k != "cnameStrategy"]
    assert provider in ("route53", "cloudDNS")
    assert not OWN_KEYS & set(settings)


def test_a_solver_with_its_own_credentials_gets_no_identity():
    keys = {"name": "route53", "key": "secret-access-key"}
    own = {"route53": {"hostedZoneID": ZONE, "accessKeyIDSecretRef": keys, "secretAccessKeySecretRef": keys}}
    result = plan_for(with_dns01(fixture("tls-dns01-eks"), own))
    assert not [r for r in of_type(result, ASSOCIATION) if r["name"] == "cert-manager"]
    assert not [r for r in of_type(result, "iam/role:Role") if r["name"] == "cert-manager"]
    assert "serviceAccount" not in release(result)["inputs"]["values"]
    assert solver(result) == own  # no region added: nothing of the platform's
    assert crd_problems(one(result, "ClusterIssuer", cert_manager.ISSUER)) == []
    secret = {
        "cloudDNS": {
            "project": "dns-project",
            "serviceAccountSecretRef": {"name": "clouddns", "key": "key.json"},
        }
    }
    cfg = load_config(with_dns01(fixture("tls-ingress-gke"), secret))
    assert cloud_identity(cfg.cloud, cfg.tls) is None
    # Other providers, and existing clusters, keep what they name.
    assert (
        cloud_identity("eks", load_config(with_dns01(fixture("tls-ingress-gke"), {"cloudflare": {}})).tls)
        is None
    )
    assert cloud_identity("existing", cfg.tls) is None


def test_without_dns01_the_values_and_the_issuer_are_as_before():
    assert cert_manager.values() == {"crds": {"enabled": True}, "config": cert_manager.controller_config()}
    values = release(planned("tls-master"))["inputs"]["values"]
    assert "serviceAccount" not in values and "podAnnotations" not in values


# --- config -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("base", "dns01", "expected"),
    [
        (EKS, {"route53": {"hostedZoneID": ZONE}}, []),
        (GKE, {"cloudDNS": {}}, []),
        ({}, {"route53": {"region": "us-east-1"}}, []),
        (
            EKS,
            {"route53": {"hostedZoneID": f"/hostedzone/{ZONE}"}},
            [f"route53.hostedZoneID: '/hostedzone/{ZONE}': give the ID without '/hostedzone/'"],
        ),
        (
            EKS,
            {"route53": {"hostedZoneID": "Z-1"}},
            ["route53.hostedZoneID: 'Z-1' is not a Route 53 hosted zone ID"],
        ),
        (EKS, {"route53": {"hostedZoneID": "Z" * 33}}, ["route53.hostedZoneID: 'ZZZ"]),
        (EKS, {"route53": {"hostedZoneID": 12}}, ["route53.hostedZoneID: must be a string"]),
        (EKS, {"route53": {"region": "us-east-1"}}, ["route53.hostedZoneID: required on eks"]),
        (GKE, {"route53": {"hostedZoneID": ZONE}}, ["route53: needs credentials of its own on gke"]),
        (EKS, {"cloudDNS": {"project": "dns-hub"}}, ["cloudDNS: needs serviceAccountSecretRef on eks"]),
        ({}, {"cloudDNS": {}}, ["cloudDNS.project: required"]),
        (GKE, {"cloudDNS": {"project": "Hub"}}, ["cloudDNS.project: 'Hub' is not a Google Cloud project ID"]),
    ],
    ids=[
        "eks-zone",
        "gke-default-project",
        "existing-ambient",
        "zone-prefix",
        "zone-characters",
        "zone-length",
        "zone-type",
        "eks-no-zone",
        "route53-on-gke",
        "clouddns-on-eks",
        "clouddns-no-project",
        "clouddns-bad-project",
    ],
)
def test_dns01_settings_the_identity_depends_on_are_checked(base, dns01, expected):
    found = problems(base, dns01)
    assert len(found) == len(expected), found
    for line, start in zip(found, expected, strict=True):
        assert line.startswith(f"determined:tls.certificate.dns01.{start}"), line
