"""Node groups and add-ons follow the Kubernetes version the EKS cluster runs: EKS refuses to
upgrade a cluster whose managed node groups are on another minor (UpdateClusterVersion), so
each upgrade moves the groups (UpdateNodegroupVersion) and the add-ons (their default version
for the new minor) with it, in place."""

from __future__ import annotations

import copy

import pytest
from conftest import EKS, raw_config
from planning import of_type, plan_for, planned, resource

from components.cluster.eks import cluster, node_groups
from plan import mocks

EKS_STACKS = ["eks-dev", "eks-prod", "eks-existing-vpc", "tls-ingress-eks", "tls-dns01-eks"]


def _follower_values(result) -> dict[str, object]:
    values = {}
    for kind, prop in cluster.CLUSTER_VERSION_FOLLOWERS.items():
        for res in result.resources:
            if res["type"] == kind:
                values[f"{res['name']}#{prop}"] = res["inputs"].get(prop)
    return values


@pytest.mark.parametrize("stack", EKS_STACKS)
def test_every_node_group_and_add_on_follows_the_clusters_version(stack):
    result = planned(stack)
    version = resource(result, "eks/cluster:Cluster", "cluster")["inputs"]["version"]
    groups = of_type(result, "eks/nodeGroup:NodeGroup")
    addons = of_type(result, "eks/addon:Addon")
    assert groups and addons
    assert {g["inputs"]["version"] for g in groups} == {version}
    minor = version.split(".")[1]
    for addon in addons:
        # The mocks answer getAddonVersion with v1.<minor>.<n>: the add-on asked for its version
        # on the cluster's minor.
        assert addon["inputs"]["addonVersion"].startswith(f"v1.{minor}."), addon["inputs"]


def _recording_invokes(monkeypatch) -> list[dict]:
    asked: list[dict] = []
    answer = mocks.INVOKES["aws:eks/getAddonVersion:getAddonVersion"]

    def record(req):
        asked.append(dict(req.inputs))
        return answer(req)

    monkeypatch.setitem(mocks.INVOKES, "aws:eks/getAddonVersion:getAddonVersion", record)
    return asked


def test_they_follow_the_version_the_cluster_reports_not_the_default(monkeypatch):
    # An unpinned cluster keeps the version it was made with (ignore_changes): its groups and
    # add-ons follow that one, not the default a new cluster would get.
    reported = "1.33"

    def older_cluster(req):
        return {**mocks._eks_cluster(req), "version": reported}

    monkeypatch.setitem(
        mocks.RESOURCES, "aws:eks/cluster:Cluster", mocks.ResourceModel(create=older_cluster, autoname="name")
    )
    asked = _recording_invokes(monkeypatch)
    result = plan_for(raw_config(**copy.deepcopy(EKS)), stack="versions")
    assert resource(result, "eks/cluster:Cluster", "cluster")["inputs"]["version"] != reported
    groups = {k: v for k, v in _follower_values(result).items() if k.endswith("#version")}
    assert groups and set(groups.values()) == {reported}
    # Each add-on asked for EKS's default version on the reported minor.
    assert {a["addonName"] for a in asked} == set(cluster.ADDONS)
    assert all(a["kubernetesVersion"] == reported and a["mostRecent"] is False for a in asked), asked
    assert all(a["inputs"]["addonVersion"].startswith("v1.33.") for a in of_type(result, "eks/addon:Addon"))


def test_the_default_add_on_version_is_asked_for_not_the_newest():
    assert cluster.ADDON_MOST_RECENT is False


def test_a_version_change_updates_groups_in_place():
    # UpdateNodegroupVersion: the version is one of the inputs EKS changes without a new group.
    assert "version" in node_groups.IN_PLACE_INPUTS
    assert "version" in cluster.CLUSTER_VERSION_FOLLOWERS.values()
