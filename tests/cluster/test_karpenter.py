"""Karpenter on EKS (cluster.autoscaler karpenter): its controller's identity, the interruption
queue and rules, the node role, the discovery tags and the release, as the karpenter-eks fixture
plans them, against upstream's CloudFormation template at the chart's tag
(tests/data/karpenter/cloudformation-v1.14.1.yaml)."""

from __future__ import annotations

import json
import re

import pytest
import yaml
from conftest import ROOT
from planning import FIXTURE_STACKS, of_type, plan_for, planned, resource

from components import names, versions
from components.addons.nvidia_device_plugin import GPU_PRESENT_LABEL
from components.cluster.eks import iam, karpenter, network
from components.cluster.eks.args import EksClusterArgs
from plan import cloud_check
from plan.mocks import AWS_ACCOUNT

STACK = "karpenter-eks"
UPSTREAM = ROOT / "tests" / "data" / "karpenter" / "cloudformation-v1.14.1.yaml"
CLUSTER, REGION = "det-karpenter", "us-east-1"
# IAM quotas: "Role policy size ... 10,240 characters" for all inline policies of a role, whitespace
# not counted (https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_iam-quotas.html, read 2026-11).
INLINE_POLICY_MAX = 10_240


class _CloudFormation(yaml.SafeLoader):
    """Reads CloudFormation's short-form tags (!Sub, !GetAtt, !Ref) as {tag: value}."""


for _tag in ("!Sub", "!GetAtt", "!Ref"):
    _CloudFormation.add_constructor(_tag, lambda loader, node, tag=_tag: {tag: loader.construct_scalar(node)})


def upstream() -> dict:
    return yaml.load(UPSTREAM.read_text(), Loader=_CloudFormation)["Resources"]


def substituted(text: str, refs: dict[str, str]) -> str:
    """A !Sub string with its ${...} references replaced (every one must be known)."""
    return re.sub(r"\$\{([^}]+)\}", lambda m: refs[m.group(1)], text)


def raw_config() -> dict:
    raw = yaml.safe_load((FIXTURE_STACKS / f"Pulumi.{STACK}.yaml").read_text())["config"]
    return {key.split(":", 1)[1]: value for key, value in raw.items()}


def args_of(raw: dict) -> EksClusterArgs:
    return EksClusterArgs.model_validate(
        {
            "environment": raw.get("environment", "dev"),
            "cluster": raw["cluster"],
            "nodePools": raw["nodePools"],
        }
    )


@pytest.fixture(scope="module")
def result():
    return planned(STACK)


def arn_of(result, kind: str, name: str) -> str:
    res = resource(result, kind, name)
    return res["outputs"]["arn"] if "outputs" in res else res["inputs"]["arn"]


def refs(result) -> dict[str, str]:
    role = resource(result, "iam/role:Role", "karpenter-nodes")["inputs"]["name"]
    queue = resource(result, "sqs/queue:Queue", "karpenter")["inputs"]["name"]
    return {
        "ClusterName": CLUSTER,
        "AWS::Partition": "aws",
        "AWS::Region": REGION,
        "AWS::AccountId": AWS_ACCOUNT,
        "AWS::URLSuffix": "amazonaws.com",
        "KarpenterNodeRole.Arn": f"arn:aws:iam::{AWS_ACCOUNT}:role/{role}",
        "KarpenterInterruptionQueue.Arn": f"arn:aws:sqs:{REGION}:{AWS_ACCOUNT}:{queue}",
    }


# --- the controller's identity -------------------------------------------------------------


def test_the_controller_policy_is_upstreams_six_policies_for_this_cluster(result):
    known = refs(result)
    expected = [
        statement
        for res in upstream().values()
        if res["Type"] == "AWS::IAM::ManagedPolicy"
        for statement in json.loads(substituted(res["Properties"]["PolicyDocument"]["!Sub"], known))[
            "Statement"
        ]
    ]
    planned_policy = json.loads(
        resource(result, "iam/rolePolicy:RolePolicy", "karpenter")["inputs"]["policy"]
    )
    assert planned_policy["Statement"] == expected
    assert len(json.dumps(planned_policy, separators=(",", ":"))) <= INLINE_POLICY_MAX


def test_the_controller_gets_its_role_through_pod_identity_on_the_charts_service_account(result):
    role = resource(result, "iam/role:Role", "karpenter")["inputs"]
    assert json.loads(role["assumeRolePolicy"]) == iam.POD_IDENTITY_TRUST
    association = resource(result, "eks/podIdentityAssociation:PodIdentityAssociation", "karpenter")["inputs"]
    assert association["roleArn"].endswith(f":role/{role['name']}")
    values = resource(result, "helm.sh/v3:Release", "karpenter")["inputs"]["values"]
    assert (association["namespace"], association["serviceAccount"]) == (
        karpenter.NAMESPACE,
        values["serviceAccount"]["name"],
    )
    # Pod Identity needs no IRSA annotation on the account.
    assert "annotations" not in values["serviceAccount"]


# --- interruption queue and rules ----------------------------------------------------------


def test_the_interruption_queue_is_upstreams(result):
    cf = upstream()
    properties = cf["KarpenterInterruptionQueue"]["Properties"]
    queue = resource(result, "sqs/queue:Queue", "karpenter")["inputs"]
    assert queue["messageRetentionSeconds"] == properties["MessageRetentionPeriod"]
    assert queue["sqsManagedSseEnabled"] is properties["SqsManagedSseEnabled"] is True
    policy = json.loads(resource(result, "sqs/queuePolicy:QueuePolicy", "karpenter")["inputs"]["policy"])
    arn = refs(result)["KarpenterInterruptionQueue.Arn"]
    expected = cf["KarpenterInterruptionQueuePolicy"]["Properties"]["PolicyDocument"]
    for statement in expected["Statement"]:
        statement["Resource"] = arn
        if "Condition" in statement:  # YAML's false; IAM compares the string
            statement["Condition"]["Bool"]["aws:SecureTransport"] = "false"
    assert policy["Id"] == expected["Id"]
    assert policy["Statement"] == expected["Statement"]


def test_every_upstream_rule_sends_its_events_to_the_queue(result):
    patterns = [
        res["Properties"]["EventPattern"] for res in upstream().values() if res["Type"] == "AWS::Events::Rule"
    ]
    rules = {
        r["inputs"]["name"]: json.loads(r["inputs"]["eventPattern"]) for r in of_type(result, "EventRule")
    }
    assert sorted(rules.values(), key=json.dumps) == sorted(patterns, key=json.dumps)
    targets = of_type(result, "eventTarget:EventTarget")
    assert sorted(t["inputs"]["rule"] for t in targets) == sorted(rules)
    queue = refs(result)["KarpenterInterruptionQueue.Arn"]
    assert {(t["inputs"]["arn"], t["inputs"]["targetId"]) for t in targets} == {(queue, karpenter.TARGET_ID)}


# --- nodes ---------------------------------------------------------------------------------


def test_karpenters_nodes_join_with_a_role_of_their_own_and_an_ec2_linux_access_entry(result):
    role = resource(result, "iam/role:Role", "karpenter-nodes")["inputs"]
    assert json.loads(role["assumeRolePolicy"]) == iam.trust("ec2.amazonaws.com")
    attached = {
        a["inputs"]["policyArn"]
        for a in of_type(result, "rolePolicyAttachment:RolePolicyAttachment")
        if a["inputs"]["role"] == role["name"]
    }
    assert attached == {iam.AWS_POLICY + p for p in iam.NODE_POLICIES}
    # Not the managed groups' role: EKS made that one's entry, and a principal has one entry.
    groups_role = resource(result, "iam/role:Role", "nodes")["inputs"]["name"]
    assert role["name"] != groups_role
    entry = resource(result, "eks/accessEntry:AccessEntry", "karpenter-nodes")["inputs"]
    assert (entry["type"], entry["principalArn"]) == ("EC2_LINUX", refs(result)["KarpenterNodeRole.Arn"])
    # Karpenter makes the instance profile from EC2NodeClass spec.role: none is planned.
    assert not of_type(result, "iam/instanceProfile:InstanceProfile")


def test_only_the_system_pool_is_a_managed_node_group_and_no_cluster_autoscaler_is_left(result):
    assert [g["inputs"]["nodeGroupName"] for g in of_type(result, "eks/nodeGroup:NodeGroup")] == ["system"]
    releases = [r["inputs"]["name"] for r in of_type(result, "helm.sh/v3:Release")]
    assert "cluster-autoscaler" not in releases and "karpenter" in releases
    # No Auto Scaling group tags for the pools Karpenter serves (they have no group).
    tagged = {t["name"].split("-")[0] for t in of_type(result, "autoscaling/tag:Tag")}
    assert tagged == {"system"}


def test_a_system_group_that_can_grow_keeps_the_cluster_autoscaler_for_itself():
    raw = raw_config()
    raw["nodePools"][0] |= {"minNodes": 1, "maxNodes": 3}
    result = plan_for(raw, stack=STACK)
    assert "cluster-autoscaler" in [r["inputs"]["name"] for r in of_type(result, "helm.sh/v3:Release")]
    # One controller on a one-node group (its replicas refuse to share a node).
    assert resource(result, "helm.sh/v3:Release", "karpenter")["inputs"]["values"]["replicas"] == 1


def test_each_karpenter_pool_gets_its_objects_after_the_release_and_the_node_access(result):
    release = resource(result, "helm.sh/v3:Release", "karpenter")["urn"]
    entry = resource(result, "eks/accessEntry:AccessEntry", "karpenter-nodes")["urn"]
    registered = [r for r in result.resources if release in r.get("dependsOn", [])]
    assert registered
    assert all(entry in r["dependsOn"] for r in registered)
    role = resource(result, "iam/role:Role", "karpenter-nodes")["inputs"]["name"]
    assert role in json.dumps([r["inputs"] for r in registered])


def tolerates(tolerations: list[dict], taint: dict) -> bool:
    return any(
        t.get("key") == taint["key"]
        and t.get("effect", taint["effect"]) == taint["effect"]
        and (t.get("operator") == "Exists" or t.get("value") == taint.get("value"))
        for t in tolerations
    )


@pytest.mark.parametrize(
    ("stack", "release", "path"),
    [
        (STACK, "nvidia-device-plugin", ("tolerations",)),
        ("eks-capacity", "gpu-operator", ("daemonsets", "tolerations")),
    ],
)
def test_the_gpu_software_reaches_karpenters_gpu_nodes(stack, release, path):
    """Karpenter's GPU nodes carry the label the device plugin's default affinity admits and
    taints the device plugin (or the GPU operator's DaemonSets) tolerate, as the GPU groups do."""
    result = planned(stack)
    values = resource(result, "helm.sh/v3:Release", release)["inputs"]["values"]
    for key in path:
        values = values[key]
    templates = [
        m["spec"]["template"]
        for m in result.manifests
        if m["kind"] == "NodePool" and "nvidia.com/gpu" in m["spec"].get("limits", {})
    ]
    assert templates
    for template in templates:
        assert template["metadata"]["labels"][GPU_PRESENT_LABEL] == "true"
        for taint in template["spec"]["taints"]:
            assert tolerates(values, taint), (stack, taint)


# --- discovery -----------------------------------------------------------------------------


def test_the_created_private_subnets_and_the_cluster_security_group_carry_the_discovery_tag(result):
    subnets = {s["name"]: s["inputs"]["tags"] for s in of_type(result, "ec2/subnet:Subnet")}
    assert {n for n, tags in subnets.items() if tags.get(network.DISCOVERY_TAG) == CLUSTER} == {
        n for n in subnets if n.startswith("private-")
    }
    tag = resource(result, "ec2/tag:Tag", "karpenter-discovery")
    assert (tag["inputs"]["key"], tag["inputs"]["value"]) == (network.DISCOVERY_TAG, CLUSTER)
    # The security group EKS made for the cluster (an output of the cluster).
    assert tag["inputs"]["resourceId"].startswith("sg-")
    assert resource(result, "eks/cluster:Cluster", "cluster")["urn"] in tag["dependsOn"]


def test_an_existing_vpcs_subnets_are_selected_by_id_and_not_tagged():
    raw = raw_config()
    raw["cluster"]["vpc"] = {
        "id": "vpc-0abc1234def567890",
        "privateSubnetIds": ["subnet-0aaa1111bbb22223a", "subnet-0aaa1111bbb22223b"],
    }
    args = args_of(raw)
    assert network.subnet_selector_terms(args) == [
        {"id": "subnet-0aaa1111bbb22223a"},
        {"id": "subnet-0aaa1111bbb22223b"},
    ]
    assert network.subnet_selector_terms(args_of(raw_config())) == [
        {"tags": {network.DISCOVERY_TAG: CLUSTER}}
    ]
    result = plan_for(raw, stack=STACK)
    tags = [t["inputs"]["resourceId"] for t in of_type(result, "ec2/tag:Tag")]
    assert not [t for t in tags if t.startswith("subnet-")]


# --- release -------------------------------------------------------------------------------


def test_the_release_is_the_official_chart_on_the_system_group_reading_the_queue(result):
    release = resource(result, "helm.sh/v3:Release", "karpenter")
    inputs = release["inputs"]
    assert (inputs["chart"], inputs["version"], inputs["namespace"]) == (
        "oci://public.ecr.aws/karpenter/karpenter",
        versions.KARPENTER_VERSION,
        "kube-system",
    )
    queue = resource(result, "sqs/queue:Queue", "karpenter")["inputs"]["name"]
    assert inputs["values"]["settings"] == {"clusterName": CLUSTER, "interruptionQueue": queue}
    assert inputs["values"]["nodeSelector"]["determined.ai/node-pool"] == "system"
    assert inputs["values"]["replicas"] == 2
    association = resource(result, "eks/podIdentityAssociation:PodIdentityAssociation", "karpenter")["urn"]
    system = resource(result, "eks/nodeGroup:NodeGroup", "system")["urn"]
    assert {association, system} <= set(release["dependsOn"])


def test_the_default_autoscaler_plans_no_karpenter():
    result = planned("eks-existing-vpc")
    assert not [r for r in result.resources if "karpenter" in r["name"]]
    assert "cluster-autoscaler" in [r["inputs"]["name"] for r in of_type(result, "helm.sh/v3:Release")]
    created = planned("eks-dev")
    assert not [
        s for s in of_type(created, "ec2/subnet:Subnet") if network.DISCOVERY_TAG in s["inputs"]["tags"]
    ]


# --- names ---------------------------------------------------------------------------------


def test_the_plans_names_and_tags_are_within_the_clouds_limits(result):
    assert cloud_check.problems(result.resources) == []


@pytest.mark.parametrize("cluster", ["c", "a" * 100, "A_b-" * 25])
def test_derived_queue_and_rule_names_fit_for_any_cluster_name(cluster):
    namer = names.Namer("stack", REGION, cluster)
    for purpose in ["karpenter", *(f"karpenter-{p}" for p in karpenter.INTERRUPTION_EVENTS)]:
        assert not names.rule(karpenter.RULE, "name").problems(namer.name(karpenter.RULE, "name", purpose))
    assert not names.rule(karpenter.QUEUE, "name").problems(namer.name(karpenter.QUEUE, "name", "karpenter"))


def test_the_name_rules_refuse_what_sqs_and_eventbridge_refuse():
    queue, rule = names.rule(karpenter.QUEUE, "name"), names.rule(karpenter.RULE, "name")
    assert queue.problems("q" * 81) and not queue.problems("q" * 80)
    assert queue.problems("a.b") and not rule.problems("a.b")
    assert rule.problems("r" * 65) and not rule.problems("r" * 64)


def test_the_crds_come_from_their_own_chart_at_the_controllers_version_before_it():
    # Helm never upgrades a chart's crds/ directory: the CRD chart's templates are upgraded
    # with each version (upstream's upgrade guide), the controller chart skips its copies.
    result = planned("karpenter-eks")
    releases = {r["name"]: r for r in of_type(result, "helm.sh/v3:Release")}
    crds, chart = releases[karpenter.CRD_RELEASE], releases[karpenter.RELEASE]
    assert crds["inputs"]["chart"] == versions.KARPENTER_CRD_CHART
    assert crds["inputs"]["version"] == chart["inputs"]["version"] == versions.KARPENTER_VERSION
    assert chart["inputs"]["skipCrds"] is True and not crds["inputs"].get("skipCrds")
    assert crds["urn"] in chart["dependsOn"]
