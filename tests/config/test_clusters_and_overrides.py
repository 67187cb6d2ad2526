"""Clusters, images and master overrides refused as GKE, EKS, container runtimes and the
master's Validate methods refuse them: GKE Kubernetes versions, EKS
zones and public endpoint ranges, upper-case registry names in image references, and
security.ssh / security.token in master.configOverrides. Each rule has a case just inside
it, which must stay accepted."""

from __future__ import annotations

from datetime import date

import pytest
from conftest import EKS, GKE, raw_config

from components import versions
from components.config import ConfigError, config_overrides, load_config
from components.config.eks import EKS_PUBLIC_ACCESS_CIDRS_MAX, reserved_public_range


def problems(raw) -> list[str]:
    with pytest.raises(ConfigError) as info:
        load_config(raw)
    return [str(p) for p in info.value.problems]


def gke(**cluster):
    return GKE | {"cluster": {**GKE["cluster"], **cluster}}


def eks(**cluster):
    return EKS | {"cluster": {**EKS["cluster"], **cluster}}


# --- GKE versions --------------------------------------------------------------------------


def test_gke_supports_a_minor_24_months_from_regular_and_the_table_is_current():
    assert versions.GKE_SUPPORT_MONTHS == 24
    today = versions.today()
    for minor, row in versions.GKE_VERSIONS.items():
        assert row.end_of_extended_support == row.regular_available.replace(
            year=row.regular_available.year + 2
        )
        assert row.regular_available < row.end_of_standard_support < row.end_of_extended_support, minor
        for when in (row.end_of_standard_support, row.end_of_extended_support):
            # A date passed since the table was read: read the release schedule again.
            assert not versions.GKE_VERSIONS_READ < when <= today, (minor, when)
    # The newest minor of the table is the RAPID channel's default minor.
    newest = max(versions.GKE_VERSIONS, key=versions.minor_tuple)
    assert versions.GKE_CHANNELS["RAPID"].default_version.startswith(f"{newest}.")


@pytest.mark.parametrize(
    ("version", "today", "support"),
    [
        ("1.35", date(2026, 11, 25), "standard"),
        ("1.33", date(2026, 8, 2), "standard"),
        ("1.33", date(2026, 8, 3), "extended"),
        ("1.33", date(2027, 6, 2), "extended"),
        ("1.33", date(2027, 6, 3), None),
        ("1.31", date(2026, 11, 25), None),
        ("1.20", date(2026, 11, 25), None),
        ("1.99", date(2026, 11, 25), None),
    ],
)
def test_gke_support_follows_the_dates(version, today, support):
    assert versions.gke_support(version, today) == support


@pytest.mark.parametrize("version", ["1.20", "1.31", "1.99"])
def test_a_gke_version_no_channel_creates_is_refused(version):
    lines = problems(gke(kubernetesVersion=version))
    assert [line.split(":", 2)[1] for line in lines] == ["cluster.kubernetesVersion"], lines
    assert f"{version}: " in lines[0]


@pytest.mark.parametrize("version", sorted(versions.GKE_VERSIONS))
def test_every_gke_version_of_the_table_is_accepted(version):
    load_config(gke(kubernetesVersion=version))


# --- EKS zones and public endpoint --------------------------------------------------------


def test_an_eks_zone_listed_twice_is_refused_and_distinct_zones_accepted():
    load_config(eks(zones=["us-east-1a", "us-east-1b"]))
    lines = problems(eks(zones=["us-east-1a", "us-east-1a"]))
    assert lines == [
        "determined:cluster.zones[1]: 'us-east-1a' is listed twice: each zone gets one subnet, and EKS "
        "needs subnets in 2 different zones"
    ], lines


def _cidrs(count: int) -> list[str]:
    return [f"198.51.100.{i}/32" for i in range(count)]


def test_eks_takes_forty_public_access_cidrs_and_not_one_more():
    assert EKS_PUBLIC_ACCESS_CIDRS_MAX == 40
    load_config(eks(endpoint={"publicAccessCidrs": _cidrs(40)}))
    lines = problems(eks(endpoint={"publicAccessCidrs": _cidrs(41)}))
    assert lines == [
        "determined:cluster.endpoint.publicAccessCidrs: 41 CIDR ranges; EKS takes at most 40 per cluster "
        "(a quota AWS does not raise): merge neighbouring ranges"
    ], lines


@pytest.mark.parametrize(
    "cidr", ["10.0.0.0/8", "10.20.0.0/16", "172.16.5.0/24", "192.168.1.1/32", "127.0.0.0/8", "169.254.0.0/16",
             "100.64.0.0/10", "224.0.0.0/4", "250.1.0.0/16", "0.0.0.0/8"],
)  # fmt: skip
def test_eks_refuses_reserved_ranges_for_the_public_endpoint(cidr):
    assert reserved_public_range(cidr)
    lines = problems(eks(endpoint={"publicAccessCidrs": ["203.0.113.0/24", cidr]}))
    assert len(lines) == 1 and lines[0].startswith(
        f"determined:cluster.endpoint.publicAccessCidrs[1]: {cidr} is a reserved range"
    ), lines


@pytest.mark.parametrize(
    "cidr", ["0.0.0.0/0", "203.0.113.5/32", "198.51.100.0/24", "192.0.2.0/24", "8.8.8.0/24", "172.32.0.0/16"]
)
def test_eks_takes_public_and_documentation_ranges(cidr):
    # 203.0.113.5/32 is EKS's own example; 0.0.0.0/0 is its default (refused in prod by policy).
    assert reserved_public_range(cidr) is None
    load_config(eks(endpoint={"publicAccessCidrs": [cidr]}))


# --- image references ---------------------------------------------------------------------


@pytest.mark.parametrize("image", ["Determinedai/pytorch:2.3", "MyTeam/sub/cuda:12.4"])
def test_an_upper_case_first_component_is_refused_in_task_images(image):
    lines = problems(raw_config(taskContainerDefaults={"images": {"cpu": image}}))
    assert len(lines) == 1 and lines[0].startswith(
        f"determined:taskContainerDefaults.images.cpu: {image!r}: "
    )
    assert "upper-case letters" in lines[0]


@pytest.mark.parametrize(
    "image",
    [
        "determinedai/pytorch:2.3",
        "Registry.Example.com/determinedai/pytorch:2.3",  # a host name: DNS ignores case
        "MIRROR:5000/determinedai/pytorch:2.3",
        "localhost/pytorch:2.3",
        "pytorch:2.3",
    ],
)
def test_registry_hosts_and_lower_case_paths_are_accepted(image):
    load_config(raw_config(taskContainerDefaults={"images": {"gpu": image}}))


def test_the_master_image_registry_follows_the_same_rule():
    lines = problems(raw_config(master={"imageRegistry": "Mirror/determinedai"}))
    assert len(lines) == 1 and lines[0].startswith("determined:master.imageRegistry: 'Mirror/determinedai': ")
    load_config(raw_config(master={"imageRegistry": "mirror.example.com/determinedai"}))


# --- master.configOverrides security.ssh and security.token -------------------------------


def overrides(security, version="0.38.1"):
    return config_overrides.problems({"security": security}, version)


@pytest.mark.parametrize(
    "ssh", [{}, {"key_type": "ED25519"}, {"key_type": "ECDSA"}, {"key_type": "RSA", "rsa_key_size": 4096},
            {"key_type": "RSA", "rsa_key_size": 16384}, {"key_type": "ED25519", "rsa_key_size": 0}],
)  # fmt: skip
def test_ssh_settings_the_master_takes(ssh):
    assert overrides({"ssh": ssh}) == []


@pytest.mark.parametrize(
    ("ssh", "at", "start"),
    [
        ({"key_type": "DSA"}, "security.ssh.key_type", "'DSA' is not a key type"),
        ({"key_type": "rsa"}, "security.ssh.key_type", "'rsa' is not a key type"),
        ({"key_type": "RSA"}, "security.ssh.rsa_key_size", "required with key_type RSA"),
        ({"key_type": "RSA", "rsa_key_size": 0}, "security.ssh.rsa_key_size", "0 is not an RSA key size"),
        (
            {"key_type": "RSA", "rsa_key_size": 16385},
            "security.ssh.rsa_key_size",
            "16385 is not an RSA key size",
        ),
    ],
)
def test_ssh_settings_the_master_refuses(ssh, at, start):
    found = overrides({"ssh": ssh})
    assert [path for path, _ in found] == [at], found
    assert found[0][1].startswith(start) and found[0][1].endswith("the master refuses to start"), found


def test_before_0_38_only_the_rsa_key_size_is_checked():
    assert overrides({"ssh": {"rsa_key_size": 2048}}, "0.37.0") == []
    found = overrides({"ssh": {"rsa_key_size": 0}}, "0.37.0")
    assert [path for path, _ in found] == ["security.ssh.rsa_key_size"], found


@pytest.mark.parametrize(
    "token",
    [
        {},
        {"max_lifespan_days": 30, "default_lifespan_days": 30},
        {"max_lifespan_days": -1, "default_lifespan_days": -1},
        {"max_lifespan_days": -1},
        {"max_lifespan_days": 365, "default_lifespan_days": 0},
        {"max_lifespan_days": 106751},
    ],
)
def test_token_lifespans_the_master_takes(token):
    assert overrides({"token": token}) == []


@pytest.mark.parametrize(
    ("token", "at"),
    [
        ({"max_lifespan_days": 10}, "security.token"),  # the default stays 30
        ({"default_lifespan_days": -1, "max_lifespan_days": 90}, "security.token"),
        ({"max_lifespan_days": -2}, "security.token.max_lifespan_days"),
        ({"default_lifespan_days": 106752}, "security.token.default_lifespan_days"),
    ],
)
def test_token_lifespans_the_master_refuses(token, at):
    found = overrides({"token": token})
    assert [path for path, _ in found] == [at], found


def test_the_versions_page_shows_the_gke_version_table():
    from conftest import ROOT

    readme = (ROOT / "docs/clouds/versions.md").read_text()
    for minor, row in versions.GKE_VERSIONS.items():
        line = next(x for x in readme.splitlines() if x.startswith(f"| `{minor}` | {row.regular_available}"))
        assert f"| {row.end_of_standard_support} | {row.end_of_extended_support} |" in line, minor
