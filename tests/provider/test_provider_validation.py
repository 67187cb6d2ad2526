"""provider/validation.py: the dict the provider host hands a component (snake_case keys, as
the TypedDicts name them) becomes the library's pydantic Args; a bad value is one line per
problem naming its camelCase key path, the names the schema shows."""

from __future__ import annotations

import pytest

from components.cluster.gke import GkeClusterArgs
from components.config import ConfigError, ExternalDatabase, InClusterDatabase
from components.determined.args import DeterminedArgs
from provider.validation import by_alias, validated

CLUSTER = {"name": "det", "region": "us-central1", "project": "p"}


def test_keys_become_the_models_keys_and_user_map_keys_stay():
    args = validated(
        GkeClusterArgs,
        {
            "cluster": CLUSTER,
            "node_pools": [
                {"name": "system", "machine_type": "e2-standard-4", "labels": {"team_name": "ml"}}
            ],
            "allow_data_deletion": True,
        },
    )
    assert args.node_pools[0].machine_type == "e2-standard-4"
    assert args.node_pools[0].labels == {"team_name": "ml"}
    assert args.allow_data_deletion is True


def test_a_union_is_keyed_by_the_variant_its_tag_names_or_its_default():
    external = {"mode": "external", "host": "db.example.com", "name": "det", "user": "det", "password": "pw"}
    assert by_alias(DeterminedArgs, {"database": {**external, "ssl_mode": "require"}})["database"][
        "sslMode"
    ] == ("require")
    pools = [{"name": "system", "machine_type": "e2-standard-4"}]
    base = {
        "cloud": "gke",
        "cluster_name": "det",
        "node_pools": pools,
        "resource_pools": [{"name": "aux", "node_pool": "system"}],
        # CPU slots: a stack must say how many one task pod may take (the Args' rules refuse it).
        "slots": {"max_slots_per_pod": 1},
    }
    assert isinstance(validated(DeterminedArgs, base | {"database": external}).database, ExternalDatabase)
    in_cluster = validated(DeterminedArgs, base | {"database": {"storage_size": "20Gi"}}).database
    assert isinstance(in_cluster, InClusterDatabase) and in_cluster.storage_size == "20Gi"


def test_a_bad_value_is_one_line_naming_its_key_path():
    with pytest.raises(ConfigError) as info:
        validated(
            GkeClusterArgs,
            {
                "cluster": CLUSTER,
                "node_pools": [{"name": "system", "machine_type": "e2-standard-4", "max_nodes": 0}],
                "environment": "staging",
            },
        )
    lines = str(info.value).splitlines()
    assert len(lines) == 2
    assert lines[0].startswith("determined:environment: ")
    assert lines[1].startswith("determined:nodePools[0].maxNodes: ")


def test_a_missing_required_key_is_named():
    with pytest.raises(ConfigError) as info:
        validated(GkeClusterArgs, {"cluster": CLUSTER})
    assert str(info.value) == "determined:nodePools: required"
