"""An existing Shared VPC network: GKE cannot add secondary ranges to a subnet of another
project, so the cluster must name the ranges the host project's admin created."""

from __future__ import annotations

import pytest
from conftest import GKE

from components.config import ConfigError, load_config
from components.config.gke import shared_vpc_host

HOST = "projects/acme-net-host"


def with_network(project="p", **network):
    return GKE | {"cluster": {**GKE["cluster"], "project": project, "network": network}}


def problems(raw) -> list[str]:
    with pytest.raises(ConfigError) as info:
        load_config(raw)
    return [str(p) for p in info.value.problems]


SHARED = {
    "name": f"{HOST}/global/networks/shared-vpc",
    "subnetwork": f"{HOST}/regions/us-central1/subnetworks/gke",
}


def test_a_shared_vpc_without_secondary_ranges_is_refused():
    lines = problems(with_network(**SHARED))
    assert (
        "determined:cluster.network.podsRange: required with a Shared VPC network (its project, acme-net-host, "
        "is not cluster.project): GKE cannot create secondary ranges on the host project's subnet; name the "
        "subnet's secondary ranges for pods and Services (podsRange, servicesRange), which the host "
        "project's admin creates"
    ) in lines, lines


def test_a_shared_vpc_with_its_ranges_is_accepted():
    cfg = load_config(with_network(**SHARED, podsRange="gke-pods", servicesRange="gke-services"))
    assert shared_vpc_host(cfg) == "acme-net-host"


@pytest.mark.parametrize(
    "network",
    [
        {"name": "shared-vpc", "subnetwork": "gke"},  # bare names: the cluster's project
        {
            "name": "projects/p/global/networks/vpc",
            "subnetwork": "projects/p/regions/us-central1/subnetworks/gke",
        },
    ],
)
def test_a_network_of_the_clusters_project_may_leave_the_ranges_to_gke(network):
    cfg = load_config(with_network(**network))
    assert shared_vpc_host(cfg) is None


def test_only_the_subnetwork_path_may_name_the_host():
    network = {"name": "shared-vpc", "subnetwork": f"{HOST}/regions/us-central1/subnetworks/gke"}
    assert any(
        line.startswith("determined:cluster.network.podsRange: required with a Shared VPC")
        for line in problems(with_network(**network))
    )
