"""Cloud names (components.names): each derived name fits its cloud's rules whatever cluster name
config validation accepts, is unique in its scope, and is stable."""

from __future__ import annotations

import pytest

from components import names

# Every (resource type, property, purpose) the program derives from the cluster name.
DERIVED = [
    ("gcp:serviceaccount/account:Account", "accountId", "nodes"),
    ("gcp:serviceaccount/account:Account", "accountId", "storage"),
    ("gcp:compute/network:Network", "name", "net"),
    ("gcp:compute/globalAddress:GlobalAddress", "name", "sql"),
    ("gcp:compute/subnetwork:Subnetwork", "name", "nodes"),
    ("gcp:compute/router:Router", "name", "router"),
    ("gcp:sql/databaseInstance:DatabaseInstance", "name", "db"),
    ("aws:iam/role:Role", "name", "cluster-autoscaler"),
    ("aws:iam/role:Role", "name", "checkpoints"),
    ("aws:rds/instance:Instance", "identifier", "db"),
    ("aws:rds/instance:Instance", "finalSnapshotIdentifier", "db-final"),
    ("aws:rds/parameterGroup:ParameterGroup", "name", "db"),
    ("aws:rds/subnetGroup:SubnetGroup", "name", "db"),
    ("aws:ec2/securityGroup:SecurityGroup", "name", "db"),
]
# Cluster names config validation accepts (DNS labels of at most 40 characters; GKE's start
# with a letter), including those the issue found refused by RDS.
CLUSTERS = [
    "d",
    "det",
    "2026-gpu-lab",
    "ml--research",
    "sg-lab",
    "a" * 40,
    "determined-gpu-training-dev",
    "x-" * 19 + "yz",
]


@pytest.mark.parametrize(("resource", "prop", "purpose"), DERIVED)
@pytest.mark.parametrize("cluster", CLUSTERS)
def test_every_derived_name_is_one_the_cloud_accepts(resource, prop, purpose, cluster):
    name = names.Namer("prod", "us-central1", cluster).name(resource, prop, purpose)
    assert names.rule(resource, prop).problems(name) == []


def test_long_cluster_names_that_share_a_prefix_get_different_service_accounts():
    """The issue's case: a plain cut gave both stacks determined-gpu-training-nodes."""
    dev = names.Namer("dev", "us-central1", "determined-gpu-training-dev")
    prod = names.Namer("prod", "us-central1", "determined-gpu-training-prod")
    for purpose in ("nodes", "storage"):
        a = dev.name("gcp:serviceaccount/account:Account", "accountId", purpose)
        b = prod.name("gcp:serviceaccount/account:Account", "accountId", purpose)
        assert a != b
        assert len(a) <= 30 and a.startswith("determined-gpu") and purpose in a


@pytest.mark.parametrize(
    ("resource", "prop"),
    [
        ("aws:iam/role:Role", "name"),
        ("gcp:compute/network:Network", "name"),
        ("gcp:sql/databaseInstance:DatabaseInstance", "name"),
    ],
)
def test_account_and_project_wide_names_differ_between_regions_of_one_cluster_name(resource, prop):
    east = names.Namer("ml", "us-east-1", "ml").name(resource, prop, "x")
    west = names.Namer("ml", "us-west-2", "ml").name(resource, prop, "x")
    assert east != west


def test_region_scoped_names_stay_as_they_were_when_valid():
    """The cloud keeps cluster names unique per region: `<cluster>-db` is unique there, and
    existing RDS instances keep their identifiers."""
    namer = names.Namer("prod", "us-west-2", "det-prod")
    assert namer.name("aws:rds/instance:Instance", "identifier", "db") == "det-prod-db"
    assert namer.name("gcp:compute/subnetwork:Subnetwork", "name", "nodes") == "det-prod-nodes"


@pytest.mark.parametrize(
    ("cluster", "expected"),
    [("2026-gpu-lab", "d2026-gpu-lab-db-"), ("ml--research", "ml-research-db-")],
)
def test_names_rds_refuses_are_mended_and_kept_unique(cluster, expected):
    name = names.Namer("s", "eu-west-1", cluster).name("aws:rds/instance:Instance", "identifier", "db")
    assert name.startswith(expected) and len(name) == len(expected) + names.DIGEST_LENGTH


def test_derived_names_are_stable():
    one = names.Namer("s", "r", "c").name("aws:iam/role:Role", "name", "nodes")
    assert (
        one
        == names.Namer("s", "r", "c").name("aws:iam/role:Role", "name", "nodes")
        == "c-nodes-" + names.digest("s", "r", "c")
    )


def test_names_whose_derivation_changed_are_kept_at_creation():
    """Exactly the wide-scoped names that gained a digest: existing stacks keep theirs."""
    kept = {(r.resource, r.prop) for r in names.RULES if r.kept}
    assert kept == {
        ("gcp:serviceaccount/account:Account", "accountId"),
        ("gcp:compute/network:Network", "name"),
        ("gcp:compute/globalAddress:GlobalAddress", "name"),
        ("gcp:sql/databaseInstance:DatabaseInstance", "name"),
        ("aws:iam/role:Role", "name"),
        # Buckets gained the cluster name (components/cluster/checkpoints.py).
        ("aws:s3/bucket:Bucket", "bucket"),
        ("gcp:storage/bucket:Bucket", "name"),
    }
    assert names.kept_at_creation("aws:iam/role:Role", "name") == ["name"]
    assert names.kept_at_creation("aws:rds/instance:Instance", "identifier") == []


@pytest.mark.parametrize(
    ("resource", "prop", "name"),
    [
        ("aws:rds/instance:Instance", "identifier", "2026-gpu-lab-db"),
        ("aws:rds/instance:Instance", "identifier", "ml--research-db"),
        ("aws:rds/parameterGroup:ParameterGroup", "name", "x-db-"),
        ("gcp:serviceaccount/account:Account", "accountId", "determined-gpu-training-storage"),
        ("gcp:serviceaccount/account:Account", "accountId", "short"),
        ("gcp:container/nodePool:NodePool", "name", "a" * 41),
        ("gcp:container/cluster:Cluster", "name", "1cluster"),
        ("aws:iam/role:Role", "name", "r" * 65),
        ("aws:s3/bucket:Bucket", "bucket", "xn--bucket"),
        ("aws:s3/bucket:Bucket", "bucket", "a..b"),
        ("gcp:storage/bucket:Bucket", "name", "my-google-bucket"),
        ("aws:ec2/securityGroup:SecurityGroup", "name", "sg-db"),
        ("aws:rds/subnetGroup:SubnetGroup", "name", "default"),
    ],
)
def test_rules_refuse_what_the_cloud_refuses(resource, prop, name):
    assert names.rule(resource, prop).problems(name)


def test_every_rule_cites_its_source():
    for rule in names.RULES:
        assert rule.source.startswith("https://"), rule
