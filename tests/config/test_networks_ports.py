"""Networks, ports and master overrides refused as the clouds, TCP and the master refuse them:
GKE authorized networks and the nodes' subnet, EKS public endpoint ranges and subnets, ports
of URLs and registry hosts, and security.authz in master.configOverrides. Each test has a
case just inside the limit, which must stay accepted."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import EKS, GKE, raw_config

from components.config import ConfigError, config_overrides, load_config
from components.config.cluster import GKE_AUTHORIZED_NETWORKS_MAX
from components.config.eks import EKS_MIN_SUBNET_ZONES
from components.config.gke import GCE_SUBNET_SMALLEST_PREFIX
from components.config.syntax import PORT_MAX, PORT_MIN, port_problem


def problems(raw) -> list[str]:
    with pytest.raises(ConfigError) as info:
        load_config(raw)
    return [str(p) for p in info.value.problems]


def accepted(raw) -> None:
    load_config(raw)


def gke(**cluster):
    return GKE | {"cluster": {**GKE["cluster"], **cluster}}


def eks(**cluster):
    return EKS | {"cluster": {**EKS["cluster"], **cluster}}


# --- GKE ---------------------------------------------------------------------------------------


def cidrs(count: int) -> list[str]:
    return [f"198.51.{i // 256}.{i % 256}/32" for i in range(count)]


def test_gke_takes_fifty_authorized_networks_and_not_one_more():
    assert GKE_AUTHORIZED_NETWORKS_MAX == 50
    accepted(gke(authorizedNetworks=cidrs(50)))
    lines = problems(gke(authorizedNetworks=cidrs(51)))
    assert lines == [
        "determined:cluster.authorizedNetworks: 51 CIDR ranges; GKE takes at most 50 authorized networks on a "
        "cluster with a public control plane endpoint: merge neighbouring ranges"
    ], lines


def test_the_plan_keeps_the_public_endpoint_the_limit_of_fifty_is_for():
    # 50 holds for a public endpoint (100 for a private one): the cluster must keep it.
    import stack_args
    from components.cluster.gke.cluster import cluster_args
    from components.cluster.gke.network import Network

    cfg = stack_args.gke_cluster_args(load_config(gke(privateNodes=True, authorizedNetworks=cidrs(3))))
    args = cluster_args(cfg, "p", Network("net", "subnet", None, None, []), "sa@p.iam.gserviceaccount.com")
    assert args["private_cluster_config"]["enable_private_endpoint"] is False
    assert len(args["master_authorized_networks_config"]["cidr_blocks"]) == 3


@pytest.mark.parametrize("prefix", [30, 31, 32])
def test_a_nodes_range_smaller_than_a_29_is_refused(prefix):
    lines = problems(gke(network={"nodesCidr": f"10.10.0.0/{prefix}"}))
    assert lines == [
        f"determined:cluster.network.nodesCidr: a /{prefix} is smaller than a subnet's primary range may be: "
        "/29 at the smallest, of whose addresses Google Cloud keeps four (one node each for the rest)"
    ], lines


def test_a_nodes_range_of_a_29_is_accepted():
    assert GCE_SUBNET_SMALLEST_PREFIX == 29
    accepted(gke(network={"nodesCidr": "10.10.0.0/29"}))


def test_a_nodes_range_of_ipv6_is_refused():
    lines = problems(gke(network={"nodesCidr": "fd20::/64"}))
    assert (
        "determined:cluster.network.nodesCidr: must be an IPv4 range (a subnet's primary range is IPv4)"
        in lines
    )


def test_the_nodes_range_is_the_subnet_primary_range():
    # The rule is about the primary range: the plan must put nodesCidr there.
    import stack_args
    from components.cluster.gke.network import subnetwork_args

    cfg = stack_args.gke_cluster_args(load_config(gke(network={"nodesCidr": "10.10.0.0/29"})))
    assert subnetwork_args(cfg, "net")["ip_cidr_range"] == "10.10.0.0/29"


# --- EKS ---------------------------------------------------------------------------------------


def test_eks_refuses_an_ipv6_public_access_range_each_at_its_index():
    lines = problems(
        eks(endpoint={"publicAccessCidrs": ["2001:db8::/32", "203.0.113.0/24", "2001:db8:1::/48"]})
    )
    assert lines == [
        "determined:cluster.endpoint.publicAccessCidrs[0]: 2001:db8::/32 is an IPv6 range; the stack's EKS "
        "clusters are IPv4 clusters, whose public endpoint EKS opens to IPv4 ranges only",
        "determined:cluster.endpoint.publicAccessCidrs[2]: 2001:db8:1::/48 is an IPv6 range; the stack's EKS "
        "clusters are IPv4 clusters, whose public endpoint EKS opens to IPv4 ranges only",
    ], lines
    accepted(eks(endpoint={"publicAccessCidrs": ["203.0.113.0/24"]}))


def test_the_eks_cluster_is_an_ipv4_cluster():
    # The IPv6 rule holds for IPv4 clusters: the cluster must not ask for another family.
    from components.cluster.eks import cluster

    source = Path(cluster.__file__).read_text()
    assert "ip_family" not in source and "ipFamily" not in source


def existing_vpc(*subnets):
    return eks(vpc={"id": "vpc-0a1b2c3d4e5f60718", "privateSubnetIds": list(subnets)})


A, B = "subnet-0aaaaaaaaaaaaaaa1", "subnet-0bbbbbbbbbbbbbbb2"


def test_a_subnet_listed_twice_counts_once():
    assert EKS_MIN_SUBNET_ZONES == 2
    lines = problems(existing_vpc(A, A))
    assert lines == [
        f"determined:cluster.vpc.privateSubnetIds[1]: {A} is listed twice (one subnet is in one zone)",
        "determined:cluster.vpc.privateSubnetIds: at least two subnets (in two zones) of the existing VPC, "
        "each listed once: EKS needs subnets in two Availability Zones",
    ], lines
    lines = problems(existing_vpc(A, B, B))
    assert lines == [
        f"determined:cluster.vpc.privateSubnetIds[2]: {B} is listed twice (one subnet is in one zone)"
    ]
    accepted(existing_vpc(A, B))


# --- ports -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("authority", "bad"),
    [
        ("h.example.com", False),
        ("h.example.com:1", False),
        ("h.example.com:65535", False),
        ("[fd00::1]:8443", False),
        ("[fd00::1]", False),
        ("h.example.com:0", True),
        ("h.example.com:65536", True),
        ("[fd00::1]:70000", True),
        ("h.example.com:8o80", True),
        ("h.example.com:٨٠", True),  # Arabic-Indic digits: str.isdigit, not a port
    ],
)
def test_ports_are_one_to_65535(authority, bad):
    assert (PORT_MIN, PORT_MAX) == (1, 2**16 - 1)
    assert (port_problem(authority) is not None) is bad


@pytest.mark.parametrize(
    ("key", "raw", "line"),
    [
        (
            "master.proxy.httpsProxy",
            {"master": {"proxy": {"httpsProxy": "http://proxy.example.com:65536"}}},
            "'http://proxy.example.com:65536' names port '65536'; TCP ports are 1 to 65535",
        ),
        (
            "master.webhooks.baseUrl",
            {"master": {"webhooks": {"baseUrl": "https://det.example.com:0/"}}},
            "'https://det.example.com:0/' names port '0'; TCP ports are 1 to 65535",
        ),
        (
            "checkpointStorage.endpointUrl",
            {"checkpointStorage": {"type": "s3", "bucket": "ckpt", "endpointUrl": "http://minio:100000"}},
            "'http://minio:100000' names port '100000'; TCP ports are 1 to 65535",
        ),
        (
            "registryCredentials.server",
            {"registryCredentials": {"server": "ghcr.io:99999", "username": "robot", "password": "Tok-1"}},
            "'ghcr.io:99999' names port '99999'; TCP ports are 1 to 65535",
        ),
        (
            "master.imageRegistry",
            {"master": {"imageRegistry": "mirror.example.com:65536/determinedai"}},
            "'mirror.example.com:65536/determinedai': its registry names port '65536'; TCP ports are 1 to 65535",
        ),
        (
            "master.image",
            {"master": {"image": "mirror.example.com:0/determinedai/determined-master:0.38.1"}},
            "'mirror.example.com:0/determinedai/determined-master:0.38.1': its registry names port '0'",
        ),
    ],
)
def test_a_port_out_of_range_is_refused_where_it_is_written(key, raw, line):
    lines = problems(raw_config(**raw))
    assert any(got.startswith(f"determined:{key}: {line}") for got in lines), lines


@pytest.mark.parametrize(
    "raw",
    [
        {"master": {"proxy": {"httpsProxy": "http://proxy.example.com:65535"}}},
        {"checkpointStorage": {"type": "s3", "bucket": "ckpt", "endpointUrl": "http://minio:9000"}},
        {
            "registryCredentials": {
                "server": "https://index.docker.io/v1/",
                "username": "u",
                "password": "Tok-1",
            }
        },
        {
            "registryCredentials": {
                "server": "registry.example.com:5000",
                "username": "u",
                "password": "Tok-1",
            }
        },
        {"master": {"imageRegistry": "mirror.example.com:5000/determinedai"}},
        {"master": {"image": "mirror.example.com:5000/determinedai/determined-master:0.38.1"}},
    ],
)
def test_ports_in_range_are_accepted(raw):
    accepted(raw_config(**raw))


# --- master.configOverrides: security.authz --------------------------------------------------


def authz(version: str, open_source: bool = True, **section):
    return config_overrides.problems({"security": {"authz": section}}, version, open_source_image=open_source)


RBAC_LICENSE = (
    "rbac needs an enterprise license before Determined 0.38.0: the open-source master {v} stops at "
    "start-up without one; use 0.38.0 or later, or name your enterprise build in master.image"
)


@pytest.mark.parametrize("version", ["0.32.0", "0.35.1", "0.37.0"])
def test_rbac_on_the_open_source_master_before_0_38_is_refused(version):
    assert authz(version, type="rbac") == [("security.authz.type", RBAC_LICENSE.format(v=version))]


@pytest.mark.parametrize("version", ["0.26.0", "0.31.0"])
def test_rbac_is_no_type_of_the_open_source_master_before_0_32(version):
    assert authz(version, type="basic", fallback="rbac") == [
        (
            "security.authz.fallback",
            f"'rbac' is not an authz type Determined {version} knows (it knows basic; the open-source master "
            "has rbac from 0.32.0): the master refuses to start",
        )
    ]


def test_rbac_is_accepted_from_0_38_and_on_an_enterprise_image():
    # 0.38.0 made license.RequireLicense a no-op: the open-source master runs rbac.
    assert authz("0.38.0", type="rbac") == []
    assert authz("0.38.1", type="rbac", fallback="basic") == []
    assert authz("0.34.0", open_source=False, type="rbac") == []
    assert authz("0.30.0", open_source=False, type="rbac") == []


def test_an_authz_type_no_master_knows_is_refused():
    assert authz("0.38.1", type="ldap") == [
        (
            "security.authz.type",
            "'ldap' is not an authz type Determined 0.38.1 knows (it knows basic, rbac; there is no other): "
            "the master refuses to start",
        )
    ]
    # Keys match as the master reads them, in any case (the spelling is refused besides).
    found = config_overrides.problems({"Security": {"AuthZ": {"Type": "ldap"}}}, "0.38.1")
    assert ("Security.AuthZ.Type", authz("0.38.1", type="ldap")[0][1]) in found, found


@pytest.mark.parametrize("role", [0, -1])
def test_a_workspace_creator_role_id_below_one_is_refused_even_when_disabled(role):
    found = authz("0.38.1", workspace_creator_assign_role={"enabled": False, "role_id": role})
    assert found == [
        (
            "security.authz.workspace_creator_assign_role.role_id",
            f"{role} is not a role ID: the master takes positive ones only (2, WorkspaceAdmin, by default): "
            "the master refuses to start",
        )
    ]
    assert authz("0.38.1", workspace_creator_assign_role={"role_id": 1}) == []


def test_the_stack_passes_whether_master_image_is_set():
    lines = problems(
        raw_config(master={"version": "0.37.0", "configOverrides": {"security": {"authz": {"type": "rbac"}}}})
    )
    assert lines == [
        f"determined:master.configOverrides.security.authz.type: {RBAC_LICENSE.format(v='0.37.0')}"
    ], lines
    accepted(
        raw_config(
            master={
                "version": "0.37.0",
                "image": "registry.example.com/hpe-mlde-master:0.37.0",
                "configOverrides": {"security": {"authz": {"type": "rbac"}}},
            }
        )
    )
