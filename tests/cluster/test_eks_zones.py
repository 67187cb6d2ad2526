"""EKS node groups go to the zones that offer their instance type (EC2's offerings, read at
`pulumi up`), within `nodePools[].zones` when given."""

from __future__ import annotations

import copy

import pytest
from conftest import EKS, raw_config
from planning import of_type, plan_for

from components.cluster.eks import network, node_groups
from components.config import ConfigError, load_config
from components.config.node_pools import EksNodePool
from plan import mocks

P5 = EksNodePool.model_validate(
    {"name": "h100", "machineType": "p5.48xlarge", "gpu": {"type": "h100", "count": 8}}
)
SUBNETS = ["subnet-a", "subnet-b", "subnet-c"]
ZONES = ["us-east-1a", "us-east-1b", "us-east-1c"]


def test_a_group_goes_only_where_its_type_is_offered():
    assert node_groups.place(P5, SUBNETS, ZONES, ["us-east-1b", "us-east-1f"]) == ["subnet-b"]


def test_pool_zones_narrow_the_offered_ones():
    pool = P5.model_copy(update={"zones": ["us-east-1c"]})
    assert node_groups.place(pool, SUBNETS, ZONES, ZONES) == ["subnet-c"]


def test_a_type_offered_in_none_of_the_zones_stops_with_where_it_is_offered():
    with pytest.raises(
        ValueError,
        match=r"EC2 offers p5.48xlarge in none of the zones us-east-1a, us-east-1b, us-east-1c \(it is offered in us-east-1f\)",
    ):
        node_groups.place(P5, SUBNETS, ZONES, ["us-east-1f"])


def _eks(**cluster):
    raw = raw_config(**copy.deepcopy(EKS))
    raw["cluster"] |= cluster
    return raw


def test_the_plan_asks_ec2_and_keeps_subnets_of_existing_groups(monkeypatch):
    raw = _eks(zones=["us-east-1a", "us-east-1b", "us-east-1c"])
    raw["nodePools"][1]["zones"] = ["us-east-1b", "us-east-1c"]
    offerings = mocks.INVOKES["aws:ec2/getInstanceTypeOfferings:getInstanceTypeOfferings"]

    def only_c_for_p4d(req):
        answer = offerings(req)
        if req.inputs["filters"][0]["values"] == ["p4d.24xlarge"]:
            answer["locations"] = ["us-east-1c", "us-east-1d"]
        return answer

    monkeypatch.setitem(
        mocks.INVOKES, "aws:ec2/getInstanceTypeOfferings:getInstanceTypeOfferings", only_c_for_p4d
    )
    groups = {g["name"]: g for g in of_type(plan_for(raw), "eks/nodeGroup:NodeGroup")}
    assert len(groups["system"]["inputs"]["subnetIds"]) == 3
    # Of its zones b and c, EC2 offers p4d.24xlarge in c only.
    assert len(groups["a100"]["inputs"]["subnetIds"]) == 1
    subnets = {
        s["inputs"]["availabilityZone"]: s
        for s in of_type(plan_for(raw), "ec2/subnet:Subnet")
        if s["name"].startswith("private")
    }
    assert subnets["us-east-1c"]["name"] == "private-2"
    # A group's subnets are set at creation: existing groups keep theirs.
    assert "subnetIds" in groups["a100"]["options"]["ignoreChanges"]


@pytest.mark.parametrize(
    ("zones", "cluster_zones", "expected"),
    [
        (
            ["eu-west-1a"],
            [],
            "determined:nodePools[1].zones[0]: 'eu-west-1a' is not a zone of cluster.region us-east-1",
        ),
        (
            ["us-east-1d"],
            ["us-east-1a", "us-east-1b"],
            "determined:nodePools[1].zones[0]: 'us-east-1d' is not one of cluster.zones",
        ),
        (["us-east-1a", "us-east-1a"], [], "determined:nodePools[1].zones[1]: 'us-east-1a' is listed twice"),
        ([], [], "determined:nodePools[1].zones: at least one zone"),
    ],
)
def test_pool_zones_are_zones_of_the_vpc(zones, cluster_zones, expected):
    raw = _eks(zones=cluster_zones) if cluster_zones else _eks()
    raw["nodePools"][1]["zones"] = zones
    with pytest.raises(ConfigError) as error:
        load_config(raw)
    assert any(str(p).startswith(expected) for p in error.value.problems), [
        str(p) for p in error.value.problems
    ]


# --- the zones a created VPC takes ------------------------------------------------------------


def test_default_zones_leave_out_local_zones_and_the_zone_ids_eks_refuses(monkeypatch):
    asked: list[dict] = []
    zones = mocks.INVOKES["aws:index/getAvailabilityZones:getAvailabilityZones"]

    def record(req):
        asked.append(dict(req.inputs))
        return zones(req)

    monkeypatch.setitem(mocks.INVOKES, "aws:index/getAvailabilityZones:getAvailabilityZones", record)
    plan_for(_eks())
    (args,) = asked
    assert args["state"] == "available"
    # EKS's subnet requirements: no cluster subnets in these zone IDs (us-east-1, us-west-1,
    # ca-central-1); Local and Wavelength Zones are opted in, Availability Zones never need it.
    assert sorted(args["excludeZoneIds"]) == sorted(network.EKS_UNSUPPORTED_ZONE_IDS)
    assert set(network.EKS_UNSUPPORTED_ZONE_IDS) == {"use1-az3", "usw1-az2", "cac1-az3"}
    assert args["filters"] == [{"name": "opt-in-status", "values": ["opt-in-not-required"]}]
    # Named zones are used as given: nothing to ask.
    asked.clear()
    plan_for(_eks(zones=["us-east-1a", "us-east-1b"]))
    assert asked == []


def test_subnet_zones_are_fixed_at_creation_and_groups_follow_the_zone_each_subnet_reports(monkeypatch):
    # A VPC made before the zones were filtered keeps its subnets (ignore_changes), so groups
    # are placed by the zone a subnet reports, not by the zone list asked now.
    subnet = mocks.RESOURCES["aws:ec2/subnet:Subnet"]

    def private_0_elsewhere(req):
        answer = subnet.create(req)
        return {**answer, "availabilityZone": "us-east-1f"} if req.name == "private-0" else answer

    monkeypatch.setitem(
        mocks.RESOURCES,
        "aws:ec2/subnet:Subnet",
        mocks.ResourceModel(create=private_0_elsewhere, ident=subnet.ident),
    )
    offerings = mocks.INVOKES["aws:ec2/getInstanceTypeOfferings:getInstanceTypeOfferings"]

    def p4d_in_f_only(req):
        answer = offerings(req)
        if req.inputs["filters"][0]["values"] == ["p4d.24xlarge"]:
            answer["locations"] = ["us-east-1f"]
        return answer

    monkeypatch.setitem(
        mocks.INVOKES, "aws:ec2/getInstanceTypeOfferings:getInstanceTypeOfferings", p4d_in_f_only
    )
    result = plan_for(_eks())
    subnets = {s["name"]: s for s in of_type(result, "ec2/subnet:Subnet")}
    assert all(s["options"]["ignoreChanges"] == ["availabilityZone"] for s in subnets.values())
    # Only private-0 reports us-east-1f, the one zone offering p4d.24xlarge (placing by the
    # zones asked, a and b, would find none and stop the plan).
    groups = {g["name"]: g for g in of_type(result, "eks/nodeGroup:NodeGroup")}
    (only,) = groups["a100"]["inputs"]["subnetIds"]
    assert only == mocks._aws_id("subnet")(mocks.Request("aws:ec2/subnet:Subnet", "private-0", {}, {}))
