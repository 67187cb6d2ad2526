"""EKS stacks under the plan's mocks: what AWS is asked to create, and what the Determined
objects make of it (service accounts, bucket, database)."""

from __future__ import annotations

import functools
import json

import pytest
import yaml
from conftest import ROOT
from planning import by_kind, of_type, one, plan_for, planned, resource

from components.cluster.eks import network, storage
from plan.mocks import AWS_ACCOUNT
from plan.redaction import SECRET, UNKNOWN

STACKS = ROOT / "stacks"
FIXTURES = ROOT / "tests" / "fixtures" / "stacks"


def group(result, name):
    return resource(result, "eks/nodeGroup:NodeGroup", name)["inputs"]


def policy(res):
    return json.loads(res["inputs"]["policy"])


def master_yaml(result):
    return yaml.safe_load(result.master_yaml)


def prod_groups_config():
    """eks-prod with every pool a managed node group (cluster.autoscaler clusterAutoscaler, the L4
    group on spot), as it was before Karpenter served its GPU pools: the node group tests' stack."""
    raw = yaml.safe_load((STACKS / "Pulumi.eks-prod.yaml").read_text())["config"]
    raw = {key.split(":", 1)[1]: value for key, value in raw.items()}
    raw["cluster"] = {**raw["cluster"], "autoscaler": "clusterAutoscaler"}
    pools = []
    for pool in raw["nodePools"]:
        capacity = pool.get("capacity")
        pool = {k: v for k, v in pool.items() if k != "capacity"}
        if capacity and "spot" in capacity["types"]:
            pool["spot"] = True
        pools.append(pool)
    raw["nodePools"] = pools
    return raw


@functools.cache
def prod_groups():
    return plan_for(prod_groups_config(), stack="eks-prod")


def dev_config():
    raw = yaml.safe_load((STACKS / "Pulumi.eks-dev.yaml").read_text())["config"]
    return {key.split(":", 1)[1]: value for key, value in raw.items()}


# --- node groups ----------------------------------------------------------------------------


def test_cpu_groups_run_the_standard_ami_untainted_and_gpu_groups_the_nvidia_ami_tainted():
    result = prod_groups()
    system = group(result, "system")
    assert (system["amiType"], system["taints"]) == ("AL2023_x86_64_STANDARD", [])
    assert "nvidia.com/gpu.present" not in system["labels"]
    a100 = group(result, "a100")
    assert a100["amiType"] == "AL2023_x86_64_NVIDIA"
    assert a100["instanceTypes"] == ["p4d.24xlarge"]
    assert a100["taints"] == [{"key": "nvidia.com/gpu", "value": "present", "effect": "NO_SCHEDULE"}]
    assert a100["labels"] == {
        "team": "research",
        "determined.ai/node-pool": "a100",
        "nvidia.com/gpu.present": "true",
        "k8s.amazonaws.com/accelerator": "nvidia-tesla-a100",
    }


def test_extra_taints_follow_the_gpu_taint():
    g5 = group(planned("eks-existing-vpc"), "g5")
    assert g5["taints"] == [
        {"key": "nvidia.com/gpu", "value": "present", "effect": "NO_SCHEDULE"},
        {"key": "team", "value": "vision", "effect": "NO_SCHEDULE"},
    ]


def test_spot_and_scaling_from_zero_with_the_size_left_to_the_autoscaler():
    result = planned("eks-dev")
    l4 = resource(result, "eks/nodeGroup:NodeGroup", "l4")
    assert l4["inputs"]["capacityType"] == "SPOT"
    assert l4["inputs"]["scalingConfig"] == {"minSize": 0, "maxSize": 2, "desiredSize": 0}
    # Subnets are set at creation (tests/cluster/test_eks_zones.py).
    assert l4["options"]["ignoreChanges"] == ["scalingConfig.desiredSize", "subnetIds"]
    assert group(result, "system")["capacityType"] == "ON_DEMAND"


def test_each_asg_carries_the_node_template_a_group_at_zero_is_planned_with():
    result = prod_groups()
    tags = {}
    for tag in of_type(result, "autoscaling/tag:Tag"):
        if tag["name"].startswith("a100-template-"):
            tags[tag["inputs"]["tag"]["key"]] = tag["inputs"]["tag"]
    template = "k8s.io/cluster-autoscaler/node-template"
    assert tags[f"{template}/resources/nvidia.com/gpu"]["value"] == "8"
    assert tags[f"{template}/taint/nvidia.com/gpu"]["value"] == "present:NoSchedule"
    assert tags[f"{template}/label/determined.ai/node-pool"]["value"] == "a100"
    assert tags[f"{template}/label/team"]["value"] == "research"
    assert all(t["propagateAtLaunch"] is False for t in tags.values())
    # On the group's Auto Scaling group, as EKS reports it.
    outputs = result.recorder.outputs[("aws:eks/nodeGroup:NodeGroup", "a100")]
    asg = outputs["resources"][0]["autoscalingGroups"][0]["name"]
    a100_tags = [t for t in of_type(result, "autoscaling/tag:Tag") if t["name"].startswith("a100-")]
    assert {t["inputs"]["autoscalingGroupName"] for t in a100_tags} == {asg}


def test_the_autoscaler_runs_from_its_chart_with_its_own_role_for_this_cluster_only():
    result = planned("eks-prod")
    release = resource(result, "helm.sh/v3:Release", "cluster-autoscaler")["inputs"]
    assert (release["chart"], release["version"], release["namespace"]) == (
        "cluster-autoscaler",
        "9.59.0",
        "kube-system",
    )
    values = release["values"]
    assert values["autoDiscovery"] == {"clusterName": "det-prod"}
    assert (values["cloudProvider"], values["awsRegion"]) == ("aws", "us-west-2")
    assert values["image"] == {"tag": "v1.35.2"}
    association = resource(result, "eks/podIdentityAssociation:PodIdentityAssociation", "cluster-autoscaler")
    assert (association["inputs"]["namespace"], association["inputs"]["serviceAccount"]) == (
        "kube-system",
        values["rbac"]["serviceAccount"]["name"],
    )
    statements = policy(resource(result, "iam/rolePolicy:RolePolicy", "cluster-autoscaler"))["Statement"]
    (scaling,) = [s for s in statements if "autoscaling:SetDesiredCapacity" in s["Action"]]
    assert scaling["Condition"] == {
        "StringEquals": {"aws:ResourceTag/k8s.io/cluster-autoscaler/det-prod": "owned"}
    }
    # Only the groups of this region and account: the tag alone also matches a cluster of the
    # same name in another region (the autoscaler README's minimal policy names the ARN).
    assert scaling["Resource"] == (
        f"arn:aws:autoscaling:us-west-2:{AWS_ACCOUNT}:autoScalingGroup:*:autoScalingGroupName/*"
    )
    (describe,) = [s for s in statements if "autoscaling:DescribeAutoScalingGroups" in s["Action"]]
    assert describe["Resource"] == "*"  # as in the README's policies


# --- cluster ------------------------------------------------------------------------------------


def test_access_entries_are_explicit_and_the_bootstrap_admin_is_off():
    result = planned("eks-prod")
    cluster = resource(result, "eks/cluster:Cluster", "cluster")["inputs"]
    assert cluster["accessConfig"] == {
        "authenticationMode": "API",
        "bootstrapClusterCreatorAdminPermissions": False,
    }
    principals = sorted(
        e["inputs"]["principalArn"]
        for e in of_type(result, "eks/accessEntry:AccessEntry")
        if e["inputs"]["type"] == "STANDARD"  # not the nodes' (tests/cluster/test_karpenter.py)
    )
    assert principals == [
        f"arn:aws:iam::{AWS_ACCOUNT}:role/platform-admins",
        f"arn:aws:iam::{AWS_ACCOUNT}:user/offline-plan",  # the deploying identity
    ]
    for association in of_type(result, "eks/accessPolicyAssociation:AccessPolicyAssociation"):
        assert association["inputs"]["policyArn"].endswith("AmazonEKSClusterAdminPolicy")
        assert association["inputs"]["accessScope"] == {"type": "cluster"}


def test_the_cluster_logs_encrypts_secrets_and_fences_its_endpoint():
    result = planned("eks-prod")
    cluster = resource(result, "eks/cluster:Cluster", "cluster")["inputs"]
    assert cluster["version"] == "1.35"
    assert set(cluster["enabledClusterLogTypes"]) >= {"api", "audit", "authenticator"}
    key = resource(result, "kms/key:Key", "secrets")
    assert key["inputs"]["enableKeyRotation"] is True
    assert cluster["encryptionConfig"]["resources"] == ["secrets"]
    assert cluster["encryptionConfig"]["provider"]["keyArn"].startswith("arn:aws:kms:")
    (key_policy,) = policy(resource(result, "iam/rolePolicy:RolePolicy", "cluster"))["Statement"]
    assert key_policy["Resource"] == cluster["encryptionConfig"]["provider"]["keyArn"]
    assert "kms:Decrypt" in key_policy["Action"]
    assert cluster["vpcConfig"]["publicAccessCidrs"] == ["203.0.113.0/24"]
    assert cluster["vpcConfig"]["endpointPrivateAccess"] is True
    private = resource(planned("eks-existing-vpc"), "eks/cluster:Cluster", "cluster")["inputs"]["vpcConfig"]
    assert private["endpointPublicAccess"] is False and "publicAccessCidrs" not in private


def test_least_privilege_roles_cni_and_ebs_policies_are_not_on_the_node_role():
    result = planned("eks-dev")
    role = {r["inputs"]["name"]: r["name"] for r in of_type(result, "iam/role:Role")}
    attached = {}
    for attachment in of_type(result, "iam/rolePolicyAttachment:RolePolicyAttachment"):
        attached.setdefault(role[attachment["inputs"]["role"]], set()).add(
            attachment["inputs"]["policyArn"].rsplit("/", 1)[-1]
        )
    assert attached["nodes"] == {"AmazonEKSWorkerNodePolicy", "AmazonEC2ContainerRegistryPullOnly"}
    assert attached["cluster"] == {"AmazonEKSClusterPolicy"}
    assert attached["vpc-cni"] == {"AmazonEKS_CNI_Policy"}
    assert attached["ebs-csi"] == {"AmazonEBSCSIDriverPolicy"}
    addons = {a["inputs"]["addonName"]: a["inputs"] for a in of_type(result, "eks/addon:Addon")}
    assert set(addons) == {
        "vpc-cni",
        "kube-proxy",
        "eks-pod-identity-agent",
        "coredns",
        "aws-ebs-csi-driver",
        "eks-node-monitoring-agent",
    }
    assert addons["vpc-cni"]["podIdentityAssociations"][0]["serviceAccount"] == "aws-node"
    assert (
        addons["aws-ebs-csi-driver"]["podIdentityAssociations"][0]["serviceAccount"]
        == "ebs-csi-controller-sa"
    )


def test_the_vpc_spans_two_zones_in_dev_and_three_with_a_nat_each_in_prod():
    for stack, zones, nats in (("eks-dev", 2, 1), ("eks-prod", 3, 3)):
        result = planned(stack)
        subnets = of_type(result, "ec2/subnet:Subnet")
        public = [s for s in subnets if s["name"].startswith("public-")]
        private = [s for s in subnets if s["name"].startswith("private-")]
        assert (len(public), len(private), len(of_type(result, "ec2/natGateway:NatGateway"))) == (
            zones,
            zones,
            nats,
        )
        name = resource(result, "eks/cluster:Cluster", "cluster")["inputs"]["name"]
        for subnet in public:
            assert subnet["inputs"]["tags"]["kubernetes.io/role/elb"] == "1"
            assert f"kubernetes.io/cluster/{name}" in subnet["inputs"]["tags"]
        for subnet in private:
            assert subnet["inputs"]["tags"]["kubernetes.io/role/internal-elb"] == "1"
        assert len({s["inputs"]["availabilityZone"] for s in private}) == zones


def test_subnet_ranges_do_not_overlap():
    import ipaddress

    private, public = network.subnet_cidrs("10.0.0.0/16", 3)
    ranges = [ipaddress.ip_network(c) for c in private + public]
    assert all(not a.overlaps(b) for i, a in enumerate(ranges) for b in ranges[i + 1 :])
    assert all(r.subnet_of(ipaddress.ip_network("10.0.0.0/16")) for r in ranges)


def test_an_existing_vpc_is_used_not_created():
    result = planned("eks-existing-vpc")
    assert not of_type(result, "ec2/vpc:Vpc") and not of_type(result, "ec2/subnet:Subnet")
    cluster = resource(result, "eks/cluster:Cluster", "cluster")["inputs"]
    assert cluster["vpcConfig"]["subnetIds"] == ["subnet-0aaa1111bbb22223a", "subnet-0aaa1111bbb22223b"]


def test_exports_name_the_cluster_and_the_way_in():
    outputs = planned("eks-prod").outputs
    assert outputs["clusterName"] == "det-prod"
    assert outputs["kubeconfig"] == SECRET
    assert outputs["updateKubeconfig"] == "aws eks update-kubeconfig --name det-prod --region us-west-2"
    assert outputs["checkpointBucket"] == f"s3://eks-prod-det-prod-{AWS_ACCOUNT}-us-west-2-checkpoints"
    assert outputs["databaseEndpoint"].endswith(".rds.amazonaws.com:5432")
    assert planned("eks-prod", preview=True).outputs["databaseEndpoint"] == UNKNOWN


def test_kubernetes_objects_go_through_a_provider_made_from_the_new_cluster():
    result = planned("eks-dev")
    (provider,) = [r for r in result.resources if r["type"] == "pulumi:providers:kubernetes"]
    assert provider["inputs"]["kubeconfig"] == SECRET
    for reg in result.recorder.resources:
        if reg.custom and reg.type.startswith("kubernetes:"):
            assert reg.provider.split("::")[-2] == "eks", reg.name


# --- GPU software ---------------------------------------------------------------------------------


def test_without_the_operator_the_device_plugin_tolerates_every_gpu_taint():
    result = planned("eks-existing-vpc")
    assert not of_type(result, "components:GpuOperator")
    release = resource(result, "helm.sh/v3:Release", "nvidia-device-plugin")["inputs"]
    assert (release["chart"], release["version"]) == ("nvidia-device-plugin", "0.20.0")
    tolerations = release["values"]["tolerations"]
    assert {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"} in tolerations
    assert {"key": "CriticalAddonsOnly", "operator": "Exists"} in tolerations
    assert {"key": "team", "operator": "Equal", "value": "vision", "effect": "NoSchedule"} in tolerations


def test_the_gpu_operator_keeps_the_amis_driver_and_toolkit():
    result = planned("eks-prod")
    assert not [r for r in of_type(result, "helm.sh/v3:Release") if r["name"] == "nvidia-device-plugin"]
    release = resource(result, "helm.sh/v3:Release", "gpu-operator")["inputs"]
    values = release["values"]
    assert values["driver"] == {"enabled": False} and values["toolkit"] == {"enabled": False}
    assert {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"} in values["daemonsets"][
        "tolerations"
    ]
    assert "hostPaths" not in values
    assert not by_kind(result, "DaemonSet")  # no GKE driver installer on EKS


# --- checkpoint bucket and Pod Identity -------------------------------------------------------


def test_the_created_bucket_is_locked_down_and_kept():
    for stack in ("eks-dev", "eks-prod"):
        result = planned(stack)
        bucket = resource(result, "s3/bucket:Bucket", "checkpoints")
        assert bucket["inputs"]["forceDestroy"] is False
        assert bucket["options"].get("retainOnDelete") is True
        block = resource(result, "s3/bucketPublicAccessBlock:BucketPublicAccessBlock", "checkpoints")[
            "inputs"
        ]
        assert all(
            block[k]
            for k in ("blockPublicAcls", "blockPublicPolicy", "ignorePublicAcls", "restrictPublicBuckets")
        )
        owner = resource(result, "s3/bucketOwnershipControls:BucketOwnershipControls", "checkpoints")[
            "inputs"
        ]
        assert owner["rule"] == {"objectOwnership": "BucketOwnerEnforced"}
        encryption = resource(
            result,
            "s3/bucketServerSideEncryptionConfiguration:BucketServerSideEncryptionConfiguration",
            "checkpoints",
        )
        assert (
            encryption["inputs"]["rules"][0]["applyServerSideEncryptionByDefault"]["sseAlgorithm"]
            == "aws:kms"
        )
        (deny,) = policy(resource(result, "s3/bucketPolicy:BucketPolicy", "checkpoints"))["Statement"]
        assert deny["Effect"] == "Deny" and deny["Condition"] == {"Bool": {"aws:SecureTransport": "false"}}
        versioned = of_type(result, "s3/bucketVersioning:BucketVersioning")
        assert bool(versioned) == (stack == "eks-prod")
    assert master_yaml(planned("eks-dev"))["checkpoint_storage"]["bucket"] == (
        f"eks-dev-det-dev-{AWS_ACCOUNT}-us-east-1-checkpoints"
    )


def test_allow_data_deletion_lets_destroy_delete_the_bucket():
    result = plan_for({**dev_config(), "allowDataDeletion": True}, stack="eks-dev")
    assert not resource(result, "s3/bucket:Bucket", "checkpoints")["options"].get("retainOnDelete")


def test_pod_identity_binds_exactly_the_accounts_that_touch_checkpoints():
    result = planned("eks-dev")
    pairs = sorted(
        (a["inputs"]["namespace"], a["inputs"]["serviceAccount"])
        for a in of_type(result, "eks/podIdentityAssociation:PodIdentityAssociation")
        if a["name"].startswith("storage-")
    )
    assert pairs == [
        ("det-aux", "determined-task"),
        ("det-l4", "determined-task"),
        ("determined", "determined-db-backup"),
        ("determined", "determined-master"),
        ("determined-tasks", "determined-task"),
    ]
    accounts = {
        (a["metadata"]["namespace"], a["metadata"]["name"]) for a in by_kind(result, "ServiceAccount")
    }
    assert set(pairs) <= accounts
    role = resource(result, "iam/role:Role", "storage")
    trust = json.loads(role["inputs"]["assumeRolePolicy"])["Statement"][0]
    assert trust["Principal"] == {"Service": "pods.eks.amazonaws.com"}
    assert sorted(trust["Action"]) == ["sts:AssumeRole", "sts:TagSession"]
    config = master_yaml(result)
    for pool in config["resource_pools"]:
        assert (
            pool["task_container_defaults"]["gpu_pod_spec"]["spec"]["serviceAccountName"] == "determined-task"
        )


def test_the_storage_policy_covers_the_bucket_and_prefix_only():
    result = planned("eks-existing-vpc")
    assert not of_type(result, "s3/bucket:Bucket")  # named by the user: not created
    statements = policy(resource(result, "iam/rolePolicy:RolePolicy", "storage"))["Statement"]
    resources = {
        r for s in statements for r in ([s["Resource"]] if isinstance(s["Resource"], str) else s["Resource"])
    }
    assert resources == {"arn:aws:s3:::vision-checkpoints", "arn:aws:s3:::vision-checkpoints/determined/*"}
    (listing,) = [s for s in statements if s["Action"] == ["s3:ListBucket"]]
    assert listing["Condition"] == {"StringLike": {"s3:prefix": ["determined", "determined/*"]}}


@pytest.mark.parametrize(
    ("account", "region", "stack", "cluster"),
    [("123456789012", "us-east-1", "dev", "det"), ("1" * 12, "ap-southeast-2", "x" * 60, "c" * 40)],
)
def test_derived_bucket_names_are_valid_s3_names(account, region, stack, cluster):
    import re

    name = storage.bucket_name(stack, cluster, account, region)
    assert re.fullmatch(r"[a-z0-9][a-z0-9-]{1,61}[a-z0-9]", name), name


# --- RDS ------------------------------------------------------------------------------------------


def test_rds_is_private_encrypted_tls_only_and_protected_in_prod():
    result = planned("eks-prod")
    db = resource(result, "rds/instance:Instance", "database")
    inputs = db["inputs"]
    assert inputs["publiclyAccessible"] is False
    assert inputs["storageEncrypted"] is True and inputs["storageType"] == "gp3"
    assert (inputs["engine"], inputs["engineVersion"]) == ("postgres", "17")
    assert inputs["deletionProtection"] is True and inputs["skipFinalSnapshot"] is False
    assert inputs["finalSnapshotIdentifier"] and inputs["backupRetentionPeriod"] >= 7 and inputs["multiAz"]
    assert inputs["password"] == SECRET
    assert db["options"].get("retainOnDelete") is True
    group = resource(result, "rds/parameterGroup:ParameterGroup", "database")["inputs"]
    assert {"name": "rds.force_ssl", "value": "1"} in group["parameters"]
    rule = resource(result, "vpc/securityGroupIngressRule:SecurityGroupIngressRule", "database-from-cluster")[
        "inputs"
    ]
    assert (rule["fromPort"], rule["toPort"], rule["ipProtocol"]) == (5432, 5432, "tcp")
    assert rule["referencedSecurityGroupId"].startswith("sg-") and "cidrIpv4" not in rule
    assert master_yaml(result)["db"]["ssl_mode"] == "require"
    dev = resource(planned("eks-existing-vpc"), "rds/instance:Instance", "database")["inputs"]
    assert dev["deletionProtection"] is False and dev["skipFinalSnapshot"] is True


def test_the_in_cluster_database_volume_is_encrypted_gp3_and_retained():
    result = planned("eks-dev")
    volume_class = one(result, "StorageClass", "determined-db")
    assert volume_class["provisioner"] == "ebs.csi.aws.com"
    assert volume_class["parameters"] == {"type": "gp3", "encrypted": "true"}
    assert volume_class["reclaimPolicy"] == "Retain"
    assert (
        one(result, "PersistentVolumeClaim", "determined-db-data")["spec"]["storageClassName"]
        == "determined-db"
    )


def test_a_kept_rds_instance_keeps_the_network_it_lives_in():
    result = planned("eks-prod")
    kept = [
        resource(result, "ec2/vpc:Vpc", "vpc"),
        *[r for r in of_type(result, "ec2/subnet:Subnet") if r["name"].startswith("private-")],
        resource(result, "rds/subnetGroup:SubnetGroup", "database"),
        resource(result, "ec2/securityGroup:SecurityGroup", "database"),
        resource(result, "rds/parameterGroup:ParameterGroup", "database"),
    ]
    assert all(r["options"].get("retainOnDelete") is True for r in kept), [r["name"] for r in kept]
    # Without a managed database the network goes with the stack.
    assert not resource(planned("eks-dev"), "ec2/vpc:Vpc", "vpc")["options"].get("retainOnDelete")


def test_allow_data_deletion_lets_the_database_disk_go_with_its_claim():
    result = plan_for({**dev_config(), "allowDataDeletion": True}, stack="eks-dev")
    assert one(result, "StorageClass", "determined-db")["reclaimPolicy"] == "Delete"


def test_the_deploying_identity_listed_as_admin_gets_one_access_entry():
    raw = dev_config()
    raw["cluster"] = {**raw["cluster"], "adminArns": [f"arn:aws:iam::{AWS_ACCOUNT}:user/offline-plan"]}
    result = plan_for(raw, stack="eks-dev")
    principals = [e["inputs"]["principalArn"] for e in of_type(result, "eks/accessEntry:AccessEntry")]
    assert principals == [f"arn:aws:iam::{AWS_ACCOUNT}:user/offline-plan"]


# --- what a real apply and destroy need -----------------------------------------------------


def test_users_of_a_role_wait_for_its_permissions():
    result = planned("eks-prod")
    roles = of_type(result, "iam/role:Role")
    logical = {r["inputs"]["name"]: r["name"] for r in roles}
    grants = {}
    for kind in ("iam/rolePolicyAttachment:RolePolicyAttachment", "iam/rolePolicy:RolePolicy"):
        for grant in of_type(result, kind):
            grants.setdefault(logical.get(grant["inputs"]["role"], grant["inputs"]["role"]), set()).add(
                grant["urn"]
            )
    by_role = {r["name"]: r for r in roles}
    cluster = resource(result, "eks/cluster:Cluster", "cluster")
    cluster_role = by_role["cluster"]
    assert {g for g in grants["cluster"]} <= set(cluster["dependsOn"]) | {cluster_role["urn"]}
    for node_group in of_type(result, "eks/nodeGroup:NodeGroup"):
        assert grants["nodes"] <= set(node_group["dependsOn"]), node_group["name"]
        assert node_group["options"]["deleteBeforeReplace"] is True


def test_add_ons_take_over_what_the_cluster_bootstrapped():
    for addon in of_type(planned("eks-dev"), "eks/addon:Addon"):
        assert addon["inputs"]["resolveConflictsOnCreate"] == "OVERWRITE"


def test_access_entries_are_named_by_their_principal():
    names = {
        e["inputs"]["principalArn"]: e["name"]
        for e in of_type(planned("eks-prod"), "eks/accessEntry:AccessEntry")
    }
    raw = yaml.safe_load((STACKS / "Pulumi.eks-prod.yaml").read_text())["config"]
    raw = {key.split(":", 1)[1]: value for key, value in raw.items()}
    raw["cluster"] = {
        **raw["cluster"],
        "adminArns": [f"arn:aws:iam::{AWS_ACCOUNT}:role/other", *raw["cluster"]["adminArns"]],
    }
    again = {
        e["inputs"]["principalArn"]: e["name"]
        for e in of_type(plan_for(raw, stack="eks-prod"), "eks/accessEntry:AccessEntry")
    }
    assert all(again[principal] == name for principal, name in names.items())


def test_prod_cluster_and_database_are_protected_and_the_ingress_rule_is_not_kept():
    result = planned("eks-prod")
    assert resource(result, "eks/cluster:Cluster", "cluster")["options"].get("protect") is True
    assert resource(result, "rds/instance:Instance", "database")["options"].get("protect") is True
    rule = resource(result, "vpc/securityGroupIngressRule:SecurityGroupIngressRule", "database-from-cluster")
    assert not rule["options"].get("retainOnDelete")  # it references the cluster's own group


def test_the_gpu_operators_objects_wait_for_the_node_groups():
    result = planned("eks-prod")
    groups = {r["urn"] for r in of_type(result, "eks/nodeGroup:NodeGroup")}
    for reg in result.resources:
        if "GpuOperator$" in (reg["parent"] or "") or (
            reg["parent"] and reg["parent"].endswith("::gpu-operator")
        ):
            assert groups <= set(reg["dependsOn"]), reg["name"]


def test_the_vpc_cni_enforces_network_policies_and_the_other_add_ons_keep_their_defaults():
    # The VPC CNI's network policy agent is off unless its configuration turns it on; without
    # it the stack's NetworkPolicies would be accepted and ignored.
    for stack in ("eks-dev", "eks-prod"):
        addons = {a["inputs"]["addonName"]: a["inputs"] for a in of_type(planned(stack), "eks/addon:Addon")}
        assert json.loads(addons["vpc-cni"]["configurationValues"]) == {"enableNetworkPolicy": "true"}
        # The node monitoring agent's: tests/cluster/test_node_repair.py.
        configured = {"vpc-cni", "eks-node-monitoring-agent"}
        assert all("configurationValues" not in a for name, a in addons.items() if name not in configured)


# --- node groups that start, GPU labels, tags named by key -----------------------------------

EKS_PLANS = ("eks-dev", "eks-prod", "eks-existing-vpc", "tls-ingress-eks")


def test_the_system_group_starts_with_a_node_when_min_nodes_is_not_written():
    # eks-existing-vpc and tls-ingress-eks leave the system group's minNodes out.
    for stack in ("eks-existing-vpc", "tls-ingress-eks"):
        result = planned(stack)
        assert group(result, "system")["scalingConfig"]["minSize"] == 1, stack
        gpu_groups = [g for g in of_type(result, "eks/nodeGroup:NodeGroup") if g["name"] != "system"]
        assert all(g["inputs"]["scalingConfig"]["minSize"] == 0 for g in gpu_groups), stack


@pytest.mark.parametrize("stack", EKS_PLANS)
def test_gpu_groups_carry_the_accelerator_label_and_its_template_tag(stack):
    # cluster-autoscaler AWS README, "Special note on GPU instances": k8s.amazonaws.com/accelerator.
    from components.config import eks_instances

    result = planned(stack)
    template = {}
    for tag in of_type(result, "autoscaling/tag:Tag"):
        template[(tag["name"].split("-template-")[0], tag["inputs"]["tag"]["key"])] = tag["inputs"]["tag"]
    for node_group in of_type(result, "eks/nodeGroup:NodeGroup"):
        inputs = node_group["inputs"]
        accelerator = eks_instances.accelerator(inputs["instanceTypes"][0])
        label = inputs["labels"].get("k8s.amazonaws.com/accelerator")
        assert label == accelerator, node_group["name"]
        key = "k8s.io/cluster-autoscaler/node-template/label/k8s.amazonaws.com/accelerator"
        tag = template.get((node_group["name"], key))
        assert (tag or {}).get("value") == accelerator, node_group["name"]


@pytest.mark.parametrize("stack", EKS_PLANS)
def test_labels_taints_and_asg_tags_fit_the_eks_and_auto_scaling_apis(stack):
    from components.config import eks

    result = planned(stack)
    for node_group in of_type(result, "eks/nodeGroup:NodeGroup"):
        inputs = node_group["inputs"]
        for key, value in inputs["labels"].items():
            assert 1 <= len(key) <= eks.EKS_LABEL_KEY_MAX and 1 <= len(value) <= eks.EKS_LABEL_VALUE_MAX, key
        for taint in inputs["taints"]:
            assert 1 <= len(taint["key"]) <= eks.EKS_TAINT_KEY_MAX, taint
    for tag in of_type(result, "autoscaling/tag:Tag"):
        body = tag["inputs"]["tag"]
        assert len(body["key"]) <= eks.ASG_TAG_KEY_MAX and len(body["value"]) <= eks.ASG_TAG_VALUE_MAX, body


def test_template_tags_are_named_by_key_so_a_new_label_renames_none():
    raw = dev_config()
    before = {
        t["inputs"]["tag"]["key"]: t["name"]
        for t in of_type(plan_for(raw, stack="eks-dev"), "autoscaling/tag:Tag")
        if t["name"].startswith("l4-")
    }
    pools = [dict(p) for p in raw["nodePools"]]
    pools[1]["labels"] = {"aaa.example.com/first": "x"}  # sorts before every other label tag
    after = {
        t["inputs"]["tag"]["key"]: t["name"]
        for t in of_type(plan_for({**raw, "nodePools": pools}, stack="eks-dev"), "autoscaling/tag:Tag")
        if t["name"].startswith("l4-")
    }
    assert len(after) == len(before) + 1
    assert all(after[key] == name for key, name in before.items())


def _tag_registrations(monkeypatch, stack):
    """(name, tag key, alias names) of every Auto Scaling tag the program registers."""
    import pulumi_aws

    seen = []
    original = pulumi_aws.autoscaling.Tag

    def recording(name, *args, **kwargs):
        opts = kwargs.get("opts")
        aliases = [a.name for a in (opts.aliases or [])] if opts else []
        seen.append((name, kwargs["tag"]["key"], aliases))
        return original(name, *args, **kwargs)

    monkeypatch.setattr(pulumi_aws.autoscaling, "Tag", recording)
    _planned_uncached(stack)
    return seen


def _planned_uncached(stack):
    from planning import FIXTURE_STACKS, plan_file

    if stack == "eks-prod":  # its GPU pools, groups when the tags were named by position
        return plan_for(prod_groups_config(), stack=stack)
    path = STACKS / f"Pulumi.{stack}.yaml"
    return plan_file(path if path.exists() else FIXTURE_STACKS / f"Pulumi.{stack}.yaml")


@pytest.mark.parametrize("stack", EKS_PLANS)
def test_existing_template_tags_keep_their_urns_through_aliases(monkeypatch, stack):
    # The names the tags had when they were named by position (baseline plans before the
    # change): each must be the alias of the tag with the same key, so that Pulumi takes the
    # existing tag over instead of deleting and creating it.
    old = json.loads((ROOT / "tests" / "data" / "eks-template-tags-by-position.json").read_text())["stacks"][
        stack
    ]
    registered = _tag_registrations(monkeypatch, stack)
    alias_of = {alias: (name, key) for name, key, aliases in registered for alias in aliases}
    assert set(alias_of) == set(old)
    for old_name, key in old.items():
        new_name, new_key = alias_of[old_name]
        assert new_key == key and new_name != old_name, old_name
    new_names = [name for name, _, _ in registered]
    assert not set(old) & set(new_names)  # no new tag takes an old name


def test_cluster_tags_reach_the_instances_of_every_group_through_its_auto_scaling_group():
    result = planned("eks-prod")
    groups = {g["name"] for g in of_type(result, "eks/nodeGroup:NodeGroup")}
    propagated = {}
    for tag in of_type(result, "autoscaling/tag:Tag"):
        if tag["inputs"]["tag"]["propagateAtLaunch"]:
            propagated.setdefault(tag["name"].split("-tag-")[0], {})[tag["inputs"]["tag"]["key"]] = tag[
                "inputs"
            ]["tag"]["value"]
    assert set(propagated) == groups
    assert all(tags == {"team": "ml-platform", "environment": "prod"} for tags in propagated.values())
    # No launch template: adding one to an existing managed node group replaces it.
    assert all("launchTemplate" not in g["inputs"] for g in of_type(result, "eks/nodeGroup:NodeGroup"))


def test_an_unpinned_cluster_keeps_its_version_and_a_pinned_one_follows_the_pin():
    unpinned = resource(planned("tls-ingress-eks"), "eks/cluster:Cluster", "cluster")
    assert unpinned["inputs"]["version"] == "1.36"  # what a new cluster gets
    assert unpinned["options"]["ignoreChanges"] == ["version"]
    pinned = resource(planned("eks-existing-vpc"), "eks/cluster:Cluster", "cluster")
    assert pinned["inputs"]["version"] == "1.33" and "ignoreChanges" not in pinned["options"]
    # The autoscaler follows the version the cluster reports, pinned or not.
    release = resource(planned("eks-existing-vpc"), "helm.sh/v3:Release", "cluster-autoscaler")
    assert release["inputs"]["values"]["image"] == {"tag": "v1.33.6"}


def test_a_pinned_version_in_extended_support_is_warned_about():
    from datetime import date

    from components.cluster.eks import cluster
    from components.config import load_config

    raw = {**dev_config(), "cluster": {**dev_config()["cluster"], "kubernetesVersion": "1.33"}}
    message = cluster.extended_support_warning(load_config(raw), date(2026, 11, 25))
    assert message and "left EKS standard support on 2026-07-29" in message and "2027-07-29" in message
    assert cluster.extended_support_warning(load_config(dev_config()), date(2026, 11, 25)) is None


def test_labels_taints_and_tags_change_a_group_in_place():
    # A new label, taint or tag touches only inputs EKS updates in place
    # (UpdateNodegroupConfig, TagResource): the group is not replaced.
    from components.cluster.eks import node_groups

    def camel(name):
        first, *rest = name.split("_")
        return first + "".join(part.capitalize() for part in rest)

    in_place = {camel(name) for name in node_groups.IN_PLACE_INPUTS}
    raw = dev_config()
    pools = [dict(p) for p in raw["nodePools"]]
    pools[1]["labels"] = {"team": "vision"}
    pools[1]["taints"] = [{"key": "team", "value": "vision", "effect": "NoSchedule"}]
    changed = {**raw, "nodePools": pools, "cluster": {**raw["cluster"], "tags": {"team": "vision"}}}
    before = group(plan_for(raw, stack="eks-dev"), "l4")
    after = group(plan_for(changed, stack="eks-dev"), "l4")
    differing = {k for k in set(before) | set(after) if before.get(k) != after.get(k)}
    assert differing == {"labels", "taints", "tags"} and differing <= in_place, differing
