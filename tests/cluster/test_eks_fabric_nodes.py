"""EKS pools with `fabric: efa`, `localNvme` and `fastImagePulls`: the launch template of their
managed node group (EFA interfaces, placement group, NodeConfig user data), the EFA security
group and device plugin, the autoscaler's node-template tags, and Karpenter's EC2NodeClass for
the same pools (valid against the v1.14.1 CRD schema and its networkInterfaces CEL rules).
Pools asking for none of them keep their group exactly as before."""

from __future__ import annotations

import base64
import copy
import email
import functools

import pytest
import yaml
from conftest import EKS, P5_POOL, ROOT, make_config
from crds import crd_problems
from planning import of_type, plan_for, resource

import stack_args
from components.cluster.eks import efa, karpenter_nodes, launch_templates, node_groups
from components.config import eks as eks_config
from components.config import eks_instances
from plan import mocks

KEYS = ROOT / "tests" / "data" / "chart-keys"

H100 = {
    **P5_POOL,
    "name": "h100",
    "localNvme": {},
    "fastImagePulls": True,
    "maxNodes": 4,
    "taints": [{"key": "team", "value": "llm", "effect": "NoSchedule"}],
}
L4_SCRATCH = {"name": "l4", "machineType": "g6.xlarge", "gpu": {"type": "l4", "count": 1}, "localNvme": {}}


def chart_value_problems(chart, version, values):
    """Values the chart's key set (tests/data/chart-keys) does not have, as
    tests/invariants/test_chart_values.py reads it: `*` takes anything, `S`/`L` a leaf."""
    paths = {}
    for line in (KEYS / f"{chart}-{version}.txt").read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            path, kind = line.split()
            paths[tuple(path.split("."))] = kind
    maps = {p[:i] for p in paths for i in range(1, len(p))}

    def walk(node, prefix):
        found = []
        for key, value in node.items():
            path = (*prefix, key)
            if paths.get(path) in ("*", "S", "L"):
                continue
            if path in maps and isinstance(value, dict):
                found += walk(value, path)
            else:
                found.append(".".join(path))
        return found

    return walk(values, ())


def raw(*extra_pools, autoscaler=None):
    cfg = copy.deepcopy(EKS)
    cfg["nodePools"] = [*cfg["nodePools"], *copy.deepcopy(list(extra_pools))]
    cfg["resourcePools"] = [
        *cfg["resourcePools"],
        *({"name": p["name"], "nodePool": p["name"]} for p in extra_pools),
    ]
    if autoscaler:
        cfg["cluster"] = {**cfg["cluster"], "autoscaler": autoscaler}
    return cfg


@functools.cache
def plain():
    return plan_for(raw(), stack="eks-dev")


@functools.cache
def featured():
    return plan_for(raw(H100, L4_SCRATCH), stack="eks-dev")


def mock_id(prefix, type_, name):
    """The ID the plan's mocks give a resource (plan/mocks/aws.py)."""
    return mocks._aws_id(prefix)(mocks.Request(type_, name, {}, {}))


EFA_SG = mock_id("sg", "aws:ec2/securityGroup:SecurityGroup", "efa")


def inputs(result, type_suffix, name):
    return resource(result, type_suffix, name)["inputs"]


def pool(cfg_raw, name):
    args = stack_args.eks_cluster_args(make_config(**cfg_raw))
    return args, next(p for p in args.node_pools if p.name == name)


def node_config(user_data_b64):
    """The NodeConfig documents of a MIME user data (base64, as the template holds it)."""
    message = email.message_from_string(base64.b64decode(user_data_b64).decode())
    assert message.is_multipart()
    parts = [p for p in message.walk() if p.get_content_type() == launch_templates.NODECONFIG_CONTENT_TYPE]
    assert len(parts) == 1
    return yaml.safe_load(parts[0].get_payload())


# --- pools without the features: unchanged -----------------------------------------------------


def test_pools_without_the_features_keep_their_group_exactly_and_get_no_launch_template():
    # Adding EFA and NVMe pools leaves the existing groups' inputs as they were: no replacement.
    for name in ("system", "a100"):
        assert inputs(featured(), "eks/nodeGroup:NodeGroup", name) == inputs(
            plain(), "eks/nodeGroup:NodeGroup", name
        )
    before = inputs(plain(), "eks/nodeGroup:NodeGroup", "a100")
    assert before["diskSize"] == 100 and "launchTemplate" not in before
    assert of_type(plain(), "ec2/launchTemplate:LaunchTemplate") == []
    assert of_type(plain(), "ec2/placementGroup:PlacementGroup") == []
    assert [r["name"] for r in of_type(plain(), "helm.sh/v3:Release") if r["name"] == efa.RELEASE] == []
    assert {r["name"] for r in of_type(featured(), "ec2/launchTemplate:LaunchTemplate")} == {"h100", "l4"}


# --- the launch template of a managed group ---------------------------------------------------


def test_an_efa_group_uses_its_launch_template_in_one_subnet_without_disk_size():
    group = inputs(featured(), "eks/nodeGroup:NodeGroup", "h100")
    template_id = mock_id("lt", "aws:ec2/launchTemplate:LaunchTemplate", "h100")
    assert group["launchTemplate"] == {"id": template_id, "version": "1"}
    assert "diskSize" not in group
    assert group["instanceTypes"] == ["p5.48xlarge"] and group["amiType"] == "AL2023_x86_64_NVIDIA"
    assert len(group["subnetIds"]) == 1


def test_the_launch_template_leaves_to_the_group_what_eks_refuses_in_it():
    for name in ("h100", "l4"):
        template = inputs(featured(), "ec2/launchTemplate:LaunchTemplate", name)
        for refused in ("instanceType", "imageId", "iamInstanceProfile", "vpcSecurityGroupIds", "keyName"):
            assert refused not in template, (name, refused)
        assert all("subnetId" not in i for i in template.get("networkInterfaces", []))
        assert template["metadataOptions"] == {
            "httpEndpoint": "enabled",
            "httpTokens": "required",
            "httpPutResponseHopLimit": 2,
        }
        (root,) = template["blockDeviceMappings"]
        assert root["deviceName"] == "/dev/xvda"
        assert root["ebs"] == {
            "volumeSize": 100,
            "volumeType": "gp3",
            "encrypted": "true",
            "deleteOnTermination": "true",
        }


def test_efa_interfaces_an_efa_primary_then_an_efa_only_per_other_card_in_the_efa_group():
    template = inputs(featured(), "ec2/launchTemplate:LaunchTemplate", "h100")
    efa_sg = EFA_SG
    interfaces = template["networkInterfaces"]
    primary, *efa_only = interfaces
    # The primary is card 0's EFA (with ENA), so that card 0's second slot stays free for the
    # VPC CNI's second ENI (p5.48xlarge has two interfaces on card 0; launch_templates.py).
    assert (primary["networkCardIndex"], primary["deviceIndex"], primary["interfaceType"]) == (0, 0, "efa")
    assert primary["securityGroups"][1] == efa_sg and len(primary["securityGroups"]) == 2
    # EKS adds no cluster security group beside a template's own: the template names it.
    cluster = featured().recorder.outputs[("aws:eks/cluster:Cluster", "cluster")]
    assert primary["securityGroups"][0] == cluster["vpcConfig"]["clusterSecurityGroupId"]
    assert primary["associatePublicIpAddress"] == "false"
    # One EFA device per card, as many as task pods request.
    assert len(interfaces) == eks_instances.efa_interfaces("p5.48xlarge") == 32
    assert {i["interfaceType"] for i in efa_only} == {"efa-only"}
    assert [i["networkCardIndex"] for i in efa_only] == list(range(1, 32))
    assert {i["deviceIndex"] for i in efa_only} == {0}
    assert all(i["securityGroups"] == [efa_sg] for i in efa_only)
    assert [i for i in interfaces if i["networkCardIndex"] == 0] == [primary]
    placement = inputs(featured(), "ec2/placementGroup:PlacementGroup", "h100-efa")
    assert placement["strategy"] == "cluster"
    assert template["placement"] == {"groupName": placement["name"]} == {"groupName": "det-h100"}


def test_the_fixed_name_placement_group_is_deleted_before_it_is_replaced():
    # Its name is fixed and unique per account and region: created first, the new one would clash.
    placement = resource(featured(), "ec2/placementGroup:PlacementGroup", "h100-efa")
    assert placement["options"].get("deleteBeforeReplace") is True


def test_a_one_card_efa_type_has_its_efa_as_the_primary_only():
    assert launch_templates.efa_layout("p5.4xlarge", efa_primary=True) == [(0, 0, "efa")]
    assert launch_templates.efa_layout("p5.4xlarge") == [(0, 0, "interface"), (0, 1, "efa-only")]


FAST_ON_EBS = {"name": "fast", "machineType": "m6i.2xlarge", "fastImagePulls": True}


def test_fast_image_pulls_onto_the_root_volume_get_600_mib_s_of_gp3_throughput():
    # nodeadm recommends at least 600 MiB/s for FastImagePull; with localNvme images are on the RAID0.
    _, fast = pool(raw(FAST_ON_EBS), "fast")
    (root,) = launch_templates.launch_template_args(fast, {})["block_device_mappings"]
    assert root["ebs"]["throughput"] == 600 and root["ebs"]["volume_type"] == "gp3"
    args, karpenter_fast = pool(raw(FAST_ON_EBS, autoscaler="karpenter"), "fast")
    node_class = karpenter_nodes.node_class(args, karpenter_fast, "det-karpenter-nodes")
    assert node_class["spec"]["blockDeviceMappings"][0]["ebs"]["throughput"] == 600
    assert crd_problems(node_class) == []
    # Images on the instance store (h100: localNvme and fastImagePulls): gp3's baseline.
    for name in ("h100", "l4"):
        (root,) = inputs(featured(), "ec2/launchTemplate:LaunchTemplate", name)["blockDeviceMappings"]
        assert "throughput" not in root["ebs"], name
    args, h100 = pool(raw(H100, autoscaler="karpenter"), "h100")
    spec = karpenter_nodes.node_class(args, h100, "det-karpenter-nodes")["spec"]
    assert "throughput" not in spec["blockDeviceMappings"][0]["ebs"]


def test_user_data_is_a_mime_nodeconfig_with_raid0_and_fast_image_pulls_as_asked():
    h100 = node_config(inputs(featured(), "ec2/launchTemplate:LaunchTemplate", "h100")["userData"])
    assert h100 == {
        "apiVersion": "node.eks.aws/v1alpha1",
        "kind": "NodeConfig",
        "spec": {
            "instance": {"localStorage": {"strategy": "RAID0"}},
            "featureGates": {"FastImagePull": True},
        },
    }
    l4 = node_config(inputs(featured(), "ec2/launchTemplate:LaunchTemplate", "l4")["userData"])
    assert l4["spec"] == {"instance": {"localStorage": {"strategy": "RAID0"}}}
    # fastImagePulls alone: a template with the gate only; nothing asked: no template.
    _, fast = pool(raw({"name": "fast", "machineType": "m6i.2xlarge", "fastImagePulls": True}), "fast")
    assert launch_templates.node_config(fast)["spec"] == {"featureGates": {"FastImagePull": True}}
    assert "networkInterfaces" not in launch_templates.launch_template_args(fast, {})
    _, off = pool(raw({"name": "off", "machineType": "m6i.2xlarge", "fastImagePulls": False}), "off")
    assert not launch_templates.needs_launch_template(off) and launch_templates.user_data(off) is None


# --- EFA security group and device plugin -----------------------------------------------------


def test_the_efa_security_group_allows_all_traffic_with_itself_only():
    group = resource(featured(), "ec2/securityGroup:SecurityGroup", "efa")
    assert not group["inputs"].get("ingress") and not group["inputs"].get("egress")
    for kind in ("SecurityGroupIngressRule", "SecurityGroupEgressRule"):
        (rule,) = of_type(featured(), f"vpc/securityGroup{kind.removeprefix('SecurityGroup')}:{kind}")
        rule = rule["inputs"]
        assert rule["securityGroupId"] == rule["referencedSecurityGroupId"] == EFA_SG
        assert rule["ipProtocol"] == "-1"
        assert not {"cidrIpv4", "cidrIpv6", "prefixListId"} & set(rule)


def test_the_device_plugin_runs_on_the_efa_types_and_tolerates_the_pools_taints():
    release = inputs(featured(), "helm.sh/v3:Release", efa.RELEASE)
    assert (release["chart"], release["version"]) == ("aws-efa-k8s-device-plugin", "v0.5.30")
    assert release["repositoryOpts"] == {"repo": "https://aws.github.io/eks-charts"}
    values = release["values"]
    assert values["supportedInstanceLabels"] == {"values": ["p5.48xlarge"]}
    assert {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"} in values["tolerations"]
    assert {"key": "team", "operator": "Equal", "value": "llm", "effect": "NoSchedule"} in values[
        "tolerations"
    ]
    assert chart_value_problems("aws-efa-k8s-device-plugin", "v0.5.30", values) == []
    assert chart_value_problems("aws-efa-k8s-device-plugin", "v0.5.30", {"toleration": []}) != []
    # The image from the EKS registry of the cluster's region (eks-dev: us-east-1), not us-west-2's.
    assert values["image"] == {
        "repository": "602401143452.dkr.ecr.us-east-1.amazonaws.com/eks/aws-efa-k8s-device-plugin"
    }


@pytest.mark.parametrize(
    ("region", "registry"),
    [
        ("eu-north-1", "602401143452.dkr.ecr.eu-north-1.amazonaws.com"),
        ("ap-southeast-3", "296578399912.dkr.ecr.ap-southeast-3.amazonaws.com"),
        ("me-central-1", "759879836304.dkr.ecr.me-central-1.amazonaws.com"),
        ("cn-north-1", "918309763551.dkr.ecr.cn-north-1.amazonaws.com.cn"),
        ("us-gov-east-1", "151742754352.dkr.ecr.us-gov-east-1.amazonaws.com"),
        # Regions nodeadm does not list: its fallbacks.
        ("cn-south-9", "961992271922.dkr.ecr.cn-northwest-1.amazonaws.com.cn"),
        ("mx-central-1", "602401143452.dkr.ecr.us-west-2.amazonaws.com"),
    ],
)
def test_the_device_plugin_image_comes_from_the_regions_eks_registry(region, registry):
    assert efa.image_repository(region) == f"{registry}/eks/aws-efa-k8s-device-plugin"


# --- autoscaler node-template tags ------------------------------------------------------------


def test_the_autoscaler_learns_the_efa_devices_and_the_instance_store_at_zero_nodes():
    _, h100 = pool(raw(H100), "h100")
    tags = node_groups.node_template_tags(h100)
    assert tags["k8s.io/cluster-autoscaler/node-template/resources/vpc.amazonaws.com/efa"] == "32"
    assert tags["k8s.io/cluster-autoscaler/node-template/resources/ephemeral-storage"] == "30400G"
    assert len(tags) == eks_config.template_tag_count(h100)
    planned = [
        t for t in of_type(featured(), "autoscaling/tag:Tag") if t["name"].startswith("h100-template-")
    ]
    assert len(planned) == eks_config.template_tag_count(h100)
    _, a100 = pool(raw(), "a100")
    assert not any(
        "vpc.amazonaws.com/efa" in k or "ephemeral-storage" in k for k in node_groups.node_template_tags(a100)
    )


# --- Karpenter --------------------------------------------------------------------------------


def network_interface_cel_problems(interfaces):
    """The two x-kubernetes-validations of EC2NodeClass spec.networkInterfaces (v1.14.1)."""
    found = []
    if interfaces and not any(
        (i["networkCardIndex"], i["deviceIndex"], i["interfaceType"]) == (0, 0, "interface")
        for i in interfaces
    ):
        found.append("networkInterfaces must include a primary interface with interfaceType='interface'")
    pairs = [(i["networkCardIndex"], i["deviceIndex"]) for i in interfaces]
    efa_cards = [i["networkCardIndex"] for i in interfaces if i["interfaceType"] == "efa-only"]
    if len(set(pairs)) != len(pairs) or len(set(efa_cards)) != len(efa_cards):
        found.append("duplicate card/device pairs or two efa devices on one card")
    return found


def test_karpenter_node_class_of_an_efa_nvme_fast_pull_pool():
    args, h100 = pool(raw(H100, autoscaler="karpenter"), "h100")
    node_class, *node_pools = karpenter_nodes.objects(args, h100, "det-karpenter-nodes")
    assert crd_problems(node_class) == [] and all(crd_problems(p) == [] for p in node_pools)
    spec = node_class["spec"]
    assert spec["instanceStorePolicy"] == "RAID0"
    assert (
        spec["placementGroupSelector"]
        == {"name": efa.placement_group_name(args, h100)}
        == {"name": "det-h100"}
    )
    interfaces = spec["networkInterfaces"]
    assert network_interface_cel_problems(interfaces) == []
    assert len(interfaces) == 33 and interfaces[0] == {
        "networkCardIndex": 0,
        "deviceIndex": 0,
        "interfaceType": "interface",
    }
    assert {"tags": {efa.SECURITY_GROUP_TAG: "det"}} in spec["securityGroupSelectorTerms"]
    # The NodeConfig carries the gate only: the instance store is instanceStorePolicy's.
    message = email.message_from_string(spec["userData"])
    (part,) = [p for p in message.walk() if p.get_content_type() == launch_templates.NODECONFIG_CONTENT_TYPE]
    assert yaml.safe_load(part.get_payload())["spec"] == {"featureGates": {"FastImagePull": True}}
    # The pool's one zone, where its placement group is.
    for node_pool in node_pools:
        zone = [
            r
            for r in node_pool["spec"]["template"]["spec"]["requirements"]
            if r["key"] == "topology.kubernetes.io/zone"
        ]
        assert zone == [{"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["us-east-1a"]}]


def test_the_cel_check_of_network_interfaces_catches_what_it_stands_for():
    assert network_interface_cel_problems(
        [{"networkCardIndex": 0, "deviceIndex": 0, "interfaceType": "efa-only"}]
    )
    assert network_interface_cel_problems(
        [
            {"networkCardIndex": 0, "deviceIndex": 0, "interfaceType": "interface"},
            {"networkCardIndex": 1, "deviceIndex": 0, "interfaceType": "efa-only"},
            {"networkCardIndex": 1, "deviceIndex": 1, "interfaceType": "efa-only"},
        ]
    )


def test_a_karpenter_pool_without_the_features_has_none_of_their_fields():
    args, a100 = pool(raw(autoscaler="karpenter"), "a100")
    spec = karpenter_nodes.node_class(args, a100, "det-karpenter-nodes")["spec"]
    assert not {"instanceStorePolicy", "userData", "networkInterfaces", "placementGroupSelector"} & set(spec)
    assert len(spec["securityGroupSelectorTerms"]) == 1


def test_a_karpenter_stack_with_an_efa_pool_plans_its_placement_group_before_its_node_class():
    result = plan_for(raw(H100, autoscaler="karpenter"), stack="eks-dev")
    assert of_type(result, "ec2/launchTemplate:LaunchTemplate") == []  # Karpenter makes its own
    assert inputs(result, "ec2/placementGroup:PlacementGroup", "h100-efa")["name"] == "det-h100"
    assert inputs(result, "helm.sh/v3:Release", efa.RELEASE)["values"]["supportedInstanceLabels"]


# --- facts the app uses -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("instance_type", "count"),
    [
        ("p5.48xlarge", 32),
        ("p5en.48xlarge", 16),
        ("p4d.24xlarge", 4),
        ("p6-b200.48xlarge", 8),
        ("m6i.2xlarge", 0),
    ],
)
def test_efa_interfaces_is_what_task_pods_request(instance_type, count):
    assert eks_instances.efa_interfaces(instance_type) == count


def test_every_efa_type_is_a_gpu_type_of_the_table_with_its_gpus():
    for instance_type, facts in eks_instances.EFA_TYPES.items():
        assert eks_instances.gpu_count(instance_type) == facts.gpus, instance_type
        assert facts.efa_interfaces <= facts.network_cards, instance_type
        assert eks_instances.instance_store_gb(instance_type) > 0, instance_type


def test_turning_a_feature_on_for_a_running_pool_replaces_its_group_as_documented():
    # A launch template and no diskSize: inputs EKS cannot change on a group made without a
    # template, so the group is replaced (components/config/eks_node_features.py says so).
    changed = raw()
    changed["nodePools"][1] = {**changed["nodePools"][1], "localNvme": {}}
    after = inputs(plan_for(changed, stack="eks-dev"), "eks/nodeGroup:NodeGroup", "a100")
    before = inputs(plain(), "eks/nodeGroup:NodeGroup", "a100")
    differing = {k for k in set(before) | set(after) if before.get(k) != after.get(k)}
    assert differing == {"launchTemplate", "diskSize"}
    in_place = {
        "".join(w.capitalize() if i else w for i, w in enumerate(n.split("_")))
        for n in node_groups.IN_PLACE_INPUTS
    }
    assert not differing & in_place


def test_an_efa_group_does_not_keep_old_subnets_when_it_is_replaced():
    # ignore_changes would carry a group's old subnets (several zones) into its replacement.
    efa_group = resource(featured(), "eks/nodeGroup:NodeGroup", "h100")
    assert "subnetIds" not in efa_group["options"]["ignoreChanges"]
    assert "subnetIds" in resource(featured(), "eks/nodeGroup:NodeGroup", "a100")["options"]["ignoreChanges"]
