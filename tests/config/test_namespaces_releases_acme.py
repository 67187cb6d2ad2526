"""What the real services refuse, refused at config time.

Each test guards one sourced fact (the source is beside the rule in components/config): the
add-ons' namespaces, the releases the project knows, PostgreSQL's startup checks of settings
together, RDS's instance classes, Helm's release names, a writable checkpoint share, DNS label
lengths and Let's Encrypt's names and contacts.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import EKS, raw_config

from components.addons import cert_manager, envoy_gateway, gpu_operator, kueue, reloader
from components.config import load_config, master_yaml_schema
from components.config import postgres_settings as pg
from components.config.database import HELM_RELEASE_NAME_MAX, rds_instance_class_problem
from components.config.errors import ConfigError
from components.config.tls import FORBIDDEN_CONTACT_DOMAINS, NON_PUBLIC_SUFFIXES, non_public_suffix


def problems(**overrides) -> list[str]:
    try:
        load_config(raw_config(**overrides))
    except ConfigError as exc:
        return [str(p) for p in exc.problems]
    return []


def pools(namespace: str | None, name: str = "a100") -> list[dict]:
    first = {"name": name, "nodePool": "a100"} | ({"namespace": namespace} if namespace else {})
    return [first, {"name": "aux", "nodePool": "system", "namespace": "det-aux"}]


# --- add-on namespaces --------------------------------------------------------------------------

ADDON_NAMESPACES = [
    cert_manager.NAMESPACE,
    envoy_gateway.NAMESPACE,
    gpu_operator.NAMESPACE,
    kueue.NAMESPACE,
]


def test_the_addon_namespaces_are_the_ones_the_addons_install_into():
    assert ADDON_NAMESPACES == ["cert-manager", "envoy-gateway-system", "gpu-operator", "kueue-system"]
    assert cert_manager.release_args()["namespace"] == cert_manager.NAMESPACE
    assert kueue.release_args(kueue.VERSION, 300)["namespace"] == kueue.NAMESPACE
    assert reloader.release_args("det")["namespace"] == reloader.namespace("det") == "det-reloader"


@pytest.mark.parametrize("name", ADDON_NAMESPACES)
def test_no_namespace_of_the_stack_is_an_addons(name):
    assert [p for p in problems(namespace=name) if p.startswith("determined:namespace:")]
    assert [p for p in problems(taskNamespace=name) if p.startswith("determined:taskNamespace:")]
    found = problems(resourcePools=pools(name))
    assert [p for p in found if p.startswith(f"determined:resourcePools[0].namespace: {name!r} is where")]


def test_a_derived_pool_namespace_equal_to_reloaders_is_refused_at_the_pool_name():
    found = problems(namespace="det", resourcePools=pools(None, name="reloader"))
    assert any(
        p.startswith("determined:resourcePools[0].name: the derived namespace 'det-reloader'") for p in found
    )
    assert problems(namespace="det", resourcePools=pools(None, name="research")) == []


# --- master.version ---------------------------------------------------------------------------


def test_a_master_minor_beyond_the_known_releases_is_refused_a_later_patch_is_not():
    newest = master_yaml_schema.format_version(master_yaml_schema.known_range()[1])
    assert problems(master={"version": newest}) == []
    major, minor, patch = master_yaml_schema.known_range()[1]
    # A patch keeps its minor's keys: planned, with the plan's warning that it is unchecked.
    assert problems(master={"version": f"{major}.{minor}.{patch + 1}"}) == []
    for later in (f"{major}.{minor + 1}.0", f"{major}.{minor + 1}.{patch + 1}", "0.99.0"):
        assert problems(master={"version": later}) == [
            f"determined:master.version: Determined {later} is newer than the newest release the project "
            f"knows ({newest}): its master.yaml keys cannot be checked (the master refuses to start on one "
            f"it does not know); pin a known release (the newest is {newest})"
        ]


# --- PostgreSQL's startup checks -----------------------------------------------------------------


def test_the_startup_defaults_are_postgresql_17s():
    # runtime-config-connection.html: max_connections 100, superuser_reserved_connections 3,
    # reserved_connections 0; runtime-config-wal.html: wal_level replica, archive_mode off,
    # summarize_wal off; runtime-config-replication.html: max_wal_senders 10.
    assert pg.STARTUP_DEFAULTS == {
        "max_connections": "100",
        "superuser_reserved_connections": "3",
        "reserved_connections": "0",
        "wal_level": "replica",
        "archive_mode": "off",
        "max_wal_senders": "10",
        "summarize_wal": "off",
    }
    assert set(pg.STARTUP_DEFAULTS) <= set(pg.table(17))


@pytest.mark.parametrize(
    ("parameters", "key", "refused"),
    [
        ({"max_connections": 3}, "max_connections", True),  # 3 + 0 >= 3
        ({"max_connections": 4}, "max_connections", False),
        ({"max_connections": 10, "reserved_connections": 7}, "max_connections", True),
        ({"max_connections": 11, "reserved_connections": 7}, "max_connections", False),
        ({"superuser_reserved_connections": 96}, "superuser_reserved_connections", True),  # the default 96
        ({"superuser_reserved_connections": 95}, "superuser_reserved_connections", False),
        ({"wal_level": "minimal"}, "wal_level", True),  # max_wal_senders defaults to 10
        ({"wal_level": "minimal", "max_wal_senders": 0}, "wal_level", False),
        ({"wal_level": "MINIMAL", "max_wal_senders": 0, "archive_mode": "on"}, "wal_level", True),
        ({"wal_level": "minimal", "max_wal_senders": 0, "summarize_wal": "yes"}, "wal_level", True),
        ({"wal_level": "replica", "archive_mode": "on"}, "wal_level", False),
    ],
)
def test_settings_postgresql_refuses_together_are_refused(parameters, key, refused):
    found = problems(database={"mode": "inCluster", "parameters": parameters})
    mine = [p for p in found if p.startswith(f"determined:database.parameters.{key}: ")]
    assert bool(mine) == refused, found
    assert len(found) == len(mine)


# --- RDS instance classes, Helm release names --------------------------------------------------------


@pytest.mark.parametrize(
    ("tier", "refused"),
    [
        ("db.serverless", True),
        ("db.m6g", True),
        ("db.m6g.large", False),
        ("db.r6i.2xlarge", False),
        ("db.t4g.medium", False),
        ("db.x2iedn.xlarge", False),
    ],
)
def test_rds_takes_db_family_size_classes_and_not_aurora_serverless(tier, refused):
    assert (rds_instance_class_problem(tier) is not None) == refused
    found = problems(**EKS, database={"mode": "managed", "tier": tier})
    assert bool([p for p in found if p.startswith("determined:database.tier: ")]) == refused, found


def test_the_aurora_class_is_left_to_cloud_sql_rules_on_gke_and_to_the_form_on_existing():
    # On eks only: an existing cluster's managed database is refused by mode.
    assert not [p for p in problems(database={"mode": "managed", "tier": "db.serverless"}) if "Aurora" in p]


def test_a_helm_release_name_has_at_most_53_characters():
    assert HELM_RELEASE_NAME_MAX == 53

    def chart(name: str) -> list[str]:
        return problems(
            database={"mode": "inCluster", "fromHelmChart": {"namespace": "legacy", "releaseName": name}}
        )

    assert chart("d" * 53) == []
    assert chart("d" * 54) == [
        "determined:database.fromHelmChart.releaseName: is 54 characters; Helm release names have at most 53, "
        "so no chart release of this name can exist: give the name the chart was installed with"
    ]


# --- a writable checkpoint share ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("options", "refused"),
    [
        (["ro"], True),
        (["nfsvers=4.1,hard,ro"], True),
        (["rw", "ro"], True),
        (["ro", "rw"], False),
        (["nfsvers=4.1", "rw"], False),
        (["nfsvers=4.1", "noatime"], False),
        (["rootcontext=ro"], False),
    ],
)
def test_an_nfs_checkpoint_share_is_mounted_writable(options, refused):
    storage = {"type": "directory", "nfs": {"server": "10.0.0.2", "path": "/ckpt", "mountOptions": options}}
    found = problems(checkpointStorage=storage)
    assert (
        bool([p for p in found if p.startswith("determined:checkpointStorage.nfs.mountOptions: ")]) == refused
    )


# --- TLS: label lengths, Let's Encrypt's names and contacts -------------------------------------------


def tls(host: str, certificate: dict) -> list[str]:
    return problems(tls={"mode": "ingress", "host": host, "certificate": certificate})


SECRET = {"source": "secret", "secretName": "det-tls"}
ACME = {"email": "ops@det-ml.net"}


def test_a_dns_label_has_at_most_63_characters():
    assert tls(f"{'a' * 63}.det-ml.net", SECRET) == []
    assert [
        p
        for p in tls(f"{'a' * 64}.det-ml.net", SECRET)
        if p.startswith("determined:tls.host: has a label of 64")
    ]
    found = tls("det.det-ml.net", {"email": f"ops@{'b' * 64}.net"})
    assert [p for p in found if p.startswith("determined:tls.certificate.email: has a label of 64")]


@pytest.mark.parametrize("suffix", NON_PUBLIC_SUFFIXES)
def test_lets_encrypt_names_and_contacts_are_under_a_public_suffix(suffix):
    found = tls(f"det.cluster.{suffix}", ACME)
    assert [
        p for p in found if p.startswith(f"determined:tls.host: ends in .{suffix}, which is not a public")
    ]
    # A certificate of the user's own CA may name it.
    assert tls(f"det.cluster.{suffix}", SECRET) == []
    found = tls("det.det-ml.net", {"email": f"ops@svc.{suffix}"})
    assert [
        p for p in found if p.startswith(f"determined:tls.certificate.email: its domain ends in .{suffix}")
    ]


@pytest.mark.parametrize("domain", FORBIDDEN_CONTACT_DOMAINS)
def test_lets_encrypt_refuses_contacts_at_the_documentation_domains_exactly(domain):
    found = tls("det.det-ml.net", {"email": f"ops@{domain}"})
    assert found == [
        f"determined:tls.certificate.email: Let's Encrypt refuses contacts at {domain}"
        " (a documentation domain) and the issuer would never register: give an address of your own"
    ]
    # Boulder's forbiddenMailDomains matches the whole domain only.
    assert tls("det.det-ml.net", {"email": f"ops@mail.{domain}"}) == []


PSL = Path("/usr/share/publicsuffix/public_suffix_list.dat")


@pytest.mark.skipif(not PSL.is_file(), reason="needs a copy of the Public Suffix List")
def test_no_listed_suffix_is_in_the_icann_section_of_the_public_suffix_list():
    text = PSL.read_text(encoding="utf-8")
    icann = text.split("===BEGIN ICANN DOMAINS===", 1)[1].split("===END ICANN DOMAINS===", 1)[0]
    rules = {
        line.strip().lstrip("!*.")
        for line in icann.splitlines()
        if line.strip() and not line.startswith("//")
    }
    assert "com" in rules and "net" in rules
    assert [s for s in NON_PUBLIC_SUFFIXES if s in rules] == []
    assert non_public_suffix("det.svc.cluster.local") == "local"
    assert non_public_suffix("det.example.com") is None
