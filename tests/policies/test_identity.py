"""Policies on identity: static keys, workload identity / Pod Identity, node accounts and
scopes, bucket grants. Props are copied from the plans of the gke/eks stacks."""

from __future__ import annotations

import json
from typing import Any

import pytest
from pulumi_policy.proxy import UNKNOWN_STRING_VALUE

from components.cluster.eks import dns
from tests.policies.support import args, check, ctx, master_config, resource, rule

CLUSTER = "gcp:container/cluster:Cluster"
POOL = "gcp:container/nodePool:NodePool"
ADDON = "aws:eks/addon:Addon"
ASSOCIATION = "aws:eks/podIdentityAssociation:PodIdentityAssociation"
ATTACHMENT = "aws:iam/rolePolicyAttachment:RolePolicyAttachment"
ROLE = "aws:iam/role:Role"
ROLE_POLICY = "aws:iam/rolePolicy:RolePolicy"
POLICY = "aws:iam/policy:Policy"
PROJECT_MEMBER = "gcp:projects/iAMMember:IAMMember"
PROJECT_POLICY = "gcp:projects/iAMPolicy:IAMPolicy"
BUCKET_MEMBER = "gcp:storage/bucketIAMMember:BucketIAMMember"
SECRET = "kubernetes:core/v1:Secret"
DEPLOYMENT = "kubernetes:apps/v1:Deployment"

GKE, EKS, EXISTING = ctx("dev", "gke"), ctx("prod", "eks"), ctx("prod", "existing")
NODE_ACCOUNT = "det-prod-nodes@my-gcp-project.iam.gserviceaccount.com"
SCOPES = [
    "https://www.googleapis.com/auth/devstorage.read_only",
    "https://www.googleapis.com/auth/logging.write",
    "https://www.googleapis.com/auth/monitoring",
    "https://www.googleapis.com/auth/service.management.readonly",
    "https://www.googleapis.com/auth/servicecontrol",
    "https://www.googleapis.com/auth/trace.append",
]


def gke_cluster(**changes: Any) -> dict:
    props = {
        "deletionProtection": True,
        "initialNodeCount": 1,
        "location": "us-central1",
        "name": "det-prod",
        "nodeConfig": {"oauthScopes": list(SCOPES), "serviceAccount": NODE_ACCOUNT},
        "removeDefaultNodePool": True,
        "workloadIdentityConfig": {"workloadPool": "my-gcp-project.svc.id.goog"},
    }
    return {k: v for k, v in (props | changes).items() if v is not None}


def gke_pool(name: str = "a100", **node_config: Any) -> dict:
    config = {
        "guestAccelerators": [{"count": 4, "type": "nvidia-tesla-a100"}],
        "machineType": "a2-highgpu-4g",
        "metadata": {"disable-legacy-endpoints": "true"},
        "oauthScopes": list(SCOPES),
        "serviceAccount": NODE_ACCOUNT,
        "taints": [{"effect": "NO_SCHEDULE", "key": "nvidia.com/gpu", "value": "present"}],
        "workloadMetadataConfig": {"mode": "GKE_METADATA"},
    }
    config = {k: v for k, v in (config | node_config).items() if v is not None}
    return {"name": name, "location": "us-central1", "nodeConfig": config}


def s3_storage(**keys: str) -> dict:
    return {"checkpoint_storage": {"type": "s3", "bucket": "det-checkpoints", "prefix": "prod", **keys}}


def deployment(env: list[dict]) -> dict:
    return {
        "metadata": {"name": "determined-master", "namespace": "determined"},
        "spec": {
            "template": {"spec": {"containers": [{"name": "determined-master", "image": "m:1", "env": env}]}}
        },
    }


# --- no-static-cloud-keys -----------------------------------------------------------------------


def test_no_static_cloud_keys_levels():
    assert rule("no-static-cloud-keys").level(ctx("dev", "gke")) == "advisory"
    assert rule("no-static-cloud-keys").level(EKS) == "mandatory"


def test_no_static_cloud_keys_refuses_s3_keys_on_eks_without_naming_them():
    keys = s3_storage(access_key="AKIAFIXTUREKEY", secret_key="Fixture-Secret-Key-0")
    found = check("no-static-cloud-keys", args(SECRET, master_config(keys)), EKS)
    assert found == ["master.yaml checkpoint_storage (s3) holds static keys (access_key, secret_key)"]
    assert not any("AKIAFIXTUREKEY" in m or "Fixture-Secret-Key-0" in m for m in found)


def test_no_static_cloud_keys_allows_keys_for_s3_compatible_stores_and_existing_clusters():
    minio = s3_storage(endpoint_url="https://minio:9000", access_key="a", secret_key="b")
    assert check("no-static-cloud-keys", args(SECRET, master_config(minio)), EKS) == []
    keys = s3_storage(access_key="a", secret_key="b")
    assert check("no-static-cloud-keys", args(SECRET, master_config(keys)), EXISTING) == []
    assert check("no-static-cloud-keys", args(SECRET, master_config(s3_storage())), EKS) == []


def test_no_static_cloud_keys_refuses_gcs_credentials():
    config = {
        "checkpoint_storage": {"type": "gcs", "bucket": "b", "prefix": "", "credentials_file": "/k.json"}
    }
    assert check("no-static-cloud-keys", args(SECRET, master_config(config)), GKE) == [
        "master.yaml checkpoint_storage (gcs) holds credentials (credentials_file)"
    ]
    plain = {"checkpoint_storage": {"type": "gcs", "bucket": "b", "prefix": "", "save_trial_best": 1}}
    assert check("no-static-cloud-keys", args(SECRET, master_config(plain)), GKE) == []


def test_no_static_cloud_keys_refuses_literal_key_variables_in_workloads():
    env = [
        {"name": "AWS_ACCESS_KEY_ID", "value": "AKIAFIXTUREKEY"},
        {"name": "AWS_SECRET_ACCESS_KEY", "valueFrom": {"secretKeyRef": {"name": "s", "key": "k"}}},
        {"name": "DET_LOG_LEVEL", "value": "info"},
    ]
    assert check("no-static-cloud-keys", args(DEPLOYMENT, deployment(env)), EKS) == [
        "determined/determined-master: container 'determined-master' sets AWS_ACCESS_KEY_ID to a literal value"
    ]
    assert check("no-static-cloud-keys", args(DEPLOYMENT, deployment(env)), EXISTING) == []


def test_no_static_cloud_keys_reads_task_pod_specs_and_task_environment():
    container = {
        "name": "determined-container",
        "env": [{"name": "GOOGLE_APPLICATION_CREDENTIALS", "value": "/k"}],
    }
    config = {
        "checkpoint_storage": {"type": "gcs", "bucket": "b"},
        "task_container_defaults": {"environment_variables": ["NCCL_DEBUG=INFO", "AWS_SECRET_ACCESS_KEY=x"]},
        "resource_pools": [
            {
                "pool_name": "a100",
                "task_container_defaults": {
                    "gpu_pod_spec": {"spec": {"containers": [container]}},
                    "environment_variables": {"cpu": [], "gpu": ["AWS_ACCESS_KEY_ID=y"]},
                },
            }
        ],
    }
    assert check("no-static-cloud-keys", args(SECRET, master_config(config)), GKE) == [
        "master.yaml resource_pools[a100].task_container_defaults.gpu_pod_spec: container 'determined-container' "
        "sets GOOGLE_APPLICATION_CREDENTIALS to a literal value (from determined:resourcePools[a100].podSpec)",
        "master.yaml task_container_defaults.environment_variables sets AWS_SECRET_ACCESS_KEY",
        "master.yaml resource_pools[a100].task_container_defaults.environment_variables sets AWS_ACCESS_KEY_ID",
    ]


# --- workload-identity --------------------------------------------------------------------------


def test_workload_identity_passes_what_the_project_creates_on_gke():
    stack = [resource(CLUSTER, gke_cluster(), name="cluster"), resource(POOL, gke_pool(), name="a100")]
    assert check("workload-identity", stack, GKE) == []


def test_workload_identity_refuses_a_cluster_without_a_pool_and_pools_without_gke_metadata():
    stack = [
        resource(CLUSTER, gke_cluster(workloadIdentityConfig=None), name="cluster"),
        resource(POOL, gke_pool("a100", workloadMetadataConfig={"mode": "GCE_METADATA"}), name="a100"),
        resource(POOL, gke_pool("system", workloadMetadataConfig=None), name="system"),
    ]
    assert check("workload-identity", stack, GKE) == [
        "GKE cluster 'cluster' (det-prod): workloadIdentityConfig.workloadPool is not set",
        "GKE node pool 'a100': nodeConfig.workloadMetadataConfig.mode is 'GCE_METADATA', not GKE_METADATA (pods "
        "reach the node's identity)",
        "GKE node pool 'system': nodeConfig.workloadMetadataConfig.mode is 'not set', not GKE_METADATA (pods "
        "reach the node's identity)",
    ]


def test_workload_identity_checks_a_default_pool_that_stays():
    kept = gke_cluster(removeDefaultNodePool=False)
    found = check("workload-identity", [resource(CLUSTER, kept, name="cluster")], GKE)
    assert found == [
        "GKE cluster 'cluster' (det-prod): its default node pool's workloadMetadataConfig.mode is 'not set', "
        "not GKE_METADATA (pods reach the node's identity)"
    ]


def test_workload_identity_takes_a_pool_not_known_yet_as_set():
    cluster = gke_cluster(workloadIdentityConfig={"workloadPool": UNKNOWN_STRING_VALUE})
    assert check("workload-identity", [resource(CLUSTER, cluster, name="cluster")], GKE) == []


def eks_addon(name: str, role: str | None = None) -> Any:
    props: dict[str, Any] = {
        "addonName": name,
        "clusterName": "det-prod",
        "resolveConflictsOnCreate": "OVERWRITE",
    }
    if role:
        props["podIdentityAssociations"] = [{"roleArn": role, "serviceAccount": "aws-node"}]
    return resource(ADDON, props, name=name)


def association() -> Any:
    props = {
        "clusterName": "det-prod",
        "namespace": "det-a100",
        "roleArn": UNKNOWN_STRING_VALUE,
        "serviceAccount": "determined-task",
    }
    return resource(ASSOCIATION, props, name="storage-det-a100-determined-task")


def test_workload_identity_passes_pod_identity_with_its_agent():
    stack = [association(), eks_addon("vpc-cni", UNKNOWN_STRING_VALUE), eks_addon("eks-pod-identity-agent")]
    assert check("workload-identity", stack, EKS) == []
    assert check("workload-identity", [eks_addon("kube-proxy")], EKS) == []


def test_workload_identity_refuses_pod_identity_without_its_agent():
    assert check("workload-identity", [association(), eks_addon("kube-proxy")], EKS) == [
        "Pod Identity associations ('storage-det-a100-determined-task') exist but no eks-pod-identity-agent "
        "add-on: pods get no credentials from them"
    ]
    found = check("workload-identity", [eks_addon("vpc-cni", "arn:aws:iam::123456789012:role/cni")], EKS)
    assert len(found) == 1 and found[0].startswith("Pod Identity associations ('vpc-cni') exist")


# --- node-service-account-not-default -----------------------------------------------------------


def test_node_service_account_passes_the_projects_node_account():
    assert check("node-service-account-not-default", args(CLUSTER, gke_cluster(), name="cluster")) == []
    assert check("node-service-account-not-default", args(POOL, gke_pool())) == []


def test_node_service_account_passes_an_account_a_first_preview_does_not_know():
    pool = gke_pool(serviceAccount=UNKNOWN_STRING_VALUE)
    assert check("node-service-account-not-default", args(POOL, pool)) == []


@pytest.mark.parametrize("account", ["default", "123456789012-compute@developer.gserviceaccount.com"])
def test_node_service_account_refuses_the_compute_default(account):
    found = check(
        "node-service-account-not-default", args(POOL, gke_pool(serviceAccount=account), name="a100")
    )
    assert found == [f"GKE node pool 'a100': nodes run as the Compute Engine default account ({account})"]


def test_node_service_account_refuses_none_set():
    cluster = gke_cluster(nodeConfig={"oauthScopes": list(SCOPES)})
    assert check("node-service-account-not-default", args(CLUSTER, cluster, name="cluster")) == [
        "GKE cluster 'cluster' (det-prod): nodeConfig.serviceAccount is not set, so nodes run as the Compute "
        "Engine default account"
    ]
    found = check("node-service-account-not-default", args(POOL, gke_pool(serviceAccount=None), name="a100"))
    assert found and found[0].startswith("GKE node pool 'a100': nodeConfig.serviceAccount is not set")


# --- node-scopes-narrow -------------------------------------------------------------------------


def test_node_scopes_pass_gkes_defaults():
    assert check("node-scopes-narrow", args(POOL, gke_pool())) == []
    assert check("node-scopes-narrow", args(CLUSTER, gke_cluster())) == []


def test_node_scopes_refuse_broad_scopes_by_url_or_alias():
    pool = gke_pool(oauthScopes=[*SCOPES, "https://www.googleapis.com/auth/cloud-platform", "storage-rw"])
    assert check("node-scopes-narrow", args(POOL, pool, name="a100")) == [
        "GKE node pool 'a100': nodeConfig.oauthScopes includes 'https://www.googleapis.com/auth/cloud-platform' "
        "(cloud-platform)",
        "GKE node pool 'a100': nodeConfig.oauthScopes includes 'storage-rw' (devstorage.read_write)",
    ]
    cluster = gke_cluster(nodeConfig={"serviceAccount": NODE_ACCOUNT, "oauthScopes": ["compute-rw"]})
    assert check("node-scopes-narrow", args(CLUSTER, cluster, name="cluster")) == [
        "GKE cluster 'cluster' (det-prod): nodeConfig.oauthScopes includes 'compute-rw' (compute)"
    ]


def test_node_scopes_pass_the_eks_roles_managed_policies():
    for policy in ("AmazonEKSWorkerNodePolicy", "AmazonEC2ContainerRegistryPullOnly", "AmazonEKS_CNI_Policy"):
        props = {"policyArn": f"arn:aws:iam::aws:policy/{policy}", "role": "det-prod-nodes"}
        assert check("node-scopes-narrow", args(ATTACHMENT, props), EKS) == []


def test_node_scopes_refuse_broad_aws_policies():
    props = {"policyArn": "arn:aws:iam::aws:policy/AdministratorAccess", "role": "det-prod-nodes"}
    assert check("node-scopes-narrow", args(ATTACHMENT, props, name="nodes-admin"), EKS) == [
        "IAM policy attachment 'nodes-admin' grants AdministratorAccess (arn:aws:iam::aws:policy/AdministratorAccess)"
    ]
    role = {"name": "det-prod-nodes", "managedPolicyArns": ["arn:aws:iam::aws:policy/AmazonS3FullAccess"]}
    assert check("node-scopes-narrow", args(ROLE, role, name="nodes"), EKS) == [
        "IAM role 'nodes' (det-prod-nodes) grants AmazonS3FullAccess (arn:aws:iam::aws:policy/AmazonS3FullAccess)"
    ]


# --- bucket-grants-scoped -----------------------------------------------------------------------

BUCKET = "arn:aws:s3:::eks-prod-123456789012-us-west-2-checkpoints"
STORAGE_POLICY = {
    "Version": "2012-10-17",
    "Statement": [
        {"Effect": "Allow", "Action": ["s3:ListBucket"], "Resource": BUCKET},
        {
            "Effect": "Allow",
            "Action": ["s3:GetObject", "s3:PutObject", "s3:DeleteObject", "s3:AbortMultipartUpload"],
            "Resource": f"{BUCKET}/*",
        },
    ],
}
AUTOSCALER_POLICY = {
    "Version": "2012-10-17",
    "Statement": [
        {"Effect": "Allow", "Action": ["autoscaling:DescribeTags", "ec2:DescribeImages"], "Resource": "*"}
    ],
}


def role_policy(document: dict | str, name: str = "storage") -> Any:
    policy = document if isinstance(document, str) else json.dumps(document)
    return args(ROLE_POLICY, {"policy": policy, "role": "det-prod-checkpoints"}, name=name)


def test_bucket_grants_pass_what_the_project_grants():
    assert check("bucket-grants-scoped", role_policy(STORAGE_POLICY), EKS) == []
    assert check("bucket-grants-scoped", role_policy(AUTOSCALER_POLICY, "cluster-autoscaler"), EKS) == []
    member = {
        "member": "serviceAccount:x",
        "project": "my-gcp-project",
        "role": "roles/artifactregistry.reader",
    }
    assert check("bucket-grants-scoped", args(PROJECT_MEMBER, member), GKE) == []
    bucket = {"bucket": "b", "member": "serviceAccount:x", "role": "roles/storage.objectUser"}
    assert check("bucket-grants-scoped", args(BUCKET_MEMBER, bucket), GKE) == []


def test_bucket_grants_refuse_project_wide_storage_roles_and_bucket_admin():
    member = {"member": "serviceAccount:x", "project": "p", "role": "roles/storage.objectViewer"}
    assert check("bucket-grants-scoped", args(PROJECT_MEMBER, member, name="storage-viewer"), GKE) == [
        "project IAM grant 'storage-viewer' gives roles/storage.objectViewer on every bucket of the project"
    ]
    policy = {
        "project": "p",
        "policyData": json.dumps({"bindings": [{"role": "roles/storage.admin", "members": []}]}),
    }
    assert check("bucket-grants-scoped", args(PROJECT_POLICY, policy, name="iam"), GKE) == [
        "project IAM grant 'iam' gives roles/storage.admin on every bucket of the project"
    ]
    bucket = {"bucket": "b", "member": "serviceAccount:x", "role": "roles/storage.admin"}
    assert check("bucket-grants-scoped", args(BUCKET_MEMBER, bucket, name="admin"), GKE) == [
        "GCS bucket IAM grant 'admin' gives roles/storage.admin (the bucket's IAM and deletion)"
    ]


@pytest.mark.parametrize(
    ("statement", "finding"),
    [
        ({"Action": "s3:*", "Resource": BUCKET}, "allows 's3:*'"),
        ({"Action": "*", "Resource": BUCKET}, "allows '*'"),
        ({"Action": "s3:GetObject", "Resource": "*"}, "grants S3 actions on '*', not named buckets"),
        (
            {"Action": ["s3:GetObject"], "Resource": "arn:aws:s3:::*/*"},
            "grants S3 actions on 'arn:aws:s3:::*/*'",
        ),
        ({"Action": "s3:ListBucket", "Resource": ["arn:aws:s3:::det-*"]}, "on 'arn:aws:s3:::det-*'"),
        ({"Action": "s3:GetObject", "NotResource": BUCKET}, "with NotResource"),
        ({"NotAction": "iam:*", "Resource": BUCKET}, "allows every action but its NotAction, S3 included"),
    ],
)
def test_bucket_grants_refuse_wide_s3_statements(statement, finding):
    document = {"Version": "2012-10-17", "Statement": [{"Sid": "Wide", "Effect": "Allow", **statement}]}
    found = check("bucket-grants-scoped", role_policy(document), EKS)
    assert len(found) == 1
    assert found[0].startswith("IAM role policy 'storage' (det-prod-checkpoints): statement 'Wide' ")
    assert finding in found[0]


def test_bucket_grants_read_single_statements_and_managed_policies_but_not_denials():
    document = {"Version": "2012-10-17", "Statement": {"Effect": "Allow", "Action": "s3:*", "Resource": "*"}}
    found = check(
        "bucket-grants-scoped", args(POLICY, {"name": "wide", "policy": json.dumps(document)}, name="p")
    )
    assert found == [
        "IAM policy 'p' (wide): statement 0 allows 's3:*'; grants S3 actions on '*', not named buckets"
    ]
    deny = {"Statement": [{"Effect": "Deny", "Principal": "*", "Action": "s3:*", "Resource": "*"}]}
    assert check("bucket-grants-scoped", role_policy(deny)) == []


def test_bucket_grants_pass_over_a_policy_a_first_preview_does_not_know():
    assert check("bucket-grants-scoped", role_policy(UNKNOWN_STRING_VALUE, "cluster"), EKS) == []


# --- dns-grants-scoped --------------------------------------------------------------------------

ZONE_ARN = "arn:aws:route53:::hostedzone/Z0123456789ABCDEFGHIJ"
# What the program gives cert-manager's role (components/cluster/eks/dns.py): the pack must pass it.
DNS_POLICY = dns.zone_policy(["Z0123456789ABCDEFGHIJ"], [dns.challenge_record("det.example.org")])


def test_dns_grants_pass_the_cert_manager_role_and_policies_without_route53_changes():
    assert check("dns-grants-scoped", role_policy(DNS_POLICY, "cert-manager"), EKS) == []
    assert check("dns-grants-scoped", role_policy(STORAGE_POLICY), EKS) == []
    assert check("dns-grants-scoped", role_policy(AUTOSCALER_POLICY, "cluster-autoscaler"), EKS) == []
    deny = {"Statement": [{"Effect": "Deny", "Action": "route53:*", "Resource": "*"}]}
    assert check("dns-grants-scoped", role_policy(deny, "deny"), EKS) == []


@pytest.mark.parametrize(
    ("statement", "finding"),
    [
        (
            {"Action": "route53:ChangeResourceRecordSets", "Resource": "arn:aws:route53:::hostedzone/*"},
            "on 'arn:aws:route53:::hostedzone/*', not named hosted zones",
        ),
        ({"Action": "route53:*", "Resource": ZONE_ARN.replace("Z0", "z0")}, "not named hosted zones"),
        ({"Action": "Route53:Change*", "Resource": "*"}, "on '*', not named hosted zones"),
        ({"Action": "*", "Resource": ["*", ZONE_ARN]}, "on '*', not named hosted zones"),
        ({"NotAction": "s3:*", "Resource": "*"}, "on '*', not named hosted zones"),
        ({"Action": "route53:ChangeResourceRecordSets", "NotResource": ZONE_ARN}, "with NotResource"),
    ],
    ids=["zone-wildcard", "bad-zone-id", "action-wildcard", "star", "not-action", "not-resource"],
)
def test_dns_grants_refuse_record_changes_beyond_named_zones(statement, finding):
    document = {"Version": "2012-10-17", "Statement": [{"Sid": "Dns", "Effect": "Allow", **statement}]}
    (message,) = check("dns-grants-scoped", role_policy(document, "cert-manager"), EKS)
    assert message.startswith(
        "IAM role policy 'cert-manager' (det-prod-checkpoints): statement 'Dns' allows Route 53"
    )
    assert finding in message
