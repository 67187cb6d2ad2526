"""Day-two changes never touch the database: a new master version, other resource pools, TLS
in front of the master and other node pools leave every input and option of every database
object (the in-cluster StatefulSet, its claim, Secret, Service and storage class; Cloud SQL
and RDS with what they sit on; the generated password) exactly as they were.

Each shipped stack is planned as written and once more with all four changes at once: any
of them reaching a database object shows up as a difference.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import planning
import pytest
import yaml

from plan import stackfile

# What the database is made of, by resource type (the in-cluster ones by name as well: the
# namespace's other Secrets and Services are not the database's).
DATABASE_TYPES = (
    "gcp:sql/",
    "gcp:compute/globalAddress:GlobalAddress",
    "gcp:servicenetworking/",
    "aws:rds/",
)
DATABASE_OBJECTS = {
    ("kubernetes:apps/v1:StatefulSet", "determined/determined-db"),
    ("kubernetes:core/v1:PersistentVolumeClaim", "determined/determined-db-data"),
    ("kubernetes:core/v1:Secret", "determined/determined-db"),
    ("kubernetes:core/v1:Service", "determined/determined-db"),
    ("kubernetes:storage.k8s.io/v1:StorageClass", "determined-db"),
    ("random:index/randomPassword:RandomPassword", "db-password"),
    ("random:index/randomPassword:RandomPassword", "database-password"),
    ("aws:ec2/securityGroup:SecurityGroup", "database"),
}
STACKS = ("local", "gke-prod", "eks-prod")


def is_database_object(resource: dict[str, Any]) -> bool:
    return (
        resource["type"].startswith(DATABASE_TYPES)
        or (resource["type"], resource["name"]) in DATABASE_OBJECTS
    )


def database_objects(result) -> dict[tuple[str, str], tuple[Any, Any]]:
    """(type, name) -> (inputs, options): secrets as the recorder saw them, so a changed
    password shows too."""
    registered = {(r.type, r.name): r for r in result.recorder.resources}
    return {
        (r["type"], r["name"]): (registered[(r["type"], r["name"])].inputs, r.get("options", {}))
        for r in result.resources
        if is_database_object(r)
    }


def day_two(config: dict[str, Any]) -> dict[str, Any]:
    """The stack with a new master version, an extra resource pool, TLS at a Gateway and
    an extra node pool (with the pool's nodes larger)."""
    changed = copy.deepcopy(config)
    changed["determined:master"] = {**changed["determined:master"], "version": "0.37.0"}
    pools = changed["determined:nodePools"]
    extra_node_pool = {**copy.deepcopy(pools[-1]), "name": "extra"}
    if "maxNodes" in extra_node_pool:
        extra_node_pool["maxNodes"] += 2
    if "nodeSelector" in extra_node_pool:
        extra_node_pool["nodeSelector"] = {"determined.ai/node-pool": "extra"}
    changed["determined:nodePools"] = [*pools, extra_node_pool]
    changed["determined:resourcePools"] = [
        *changed["determined:resourcePools"],
        {"name": "extra", "nodePool": "extra", "namespace": "det-extra"},
    ]
    changed["determined:tls"] = {
        "mode": "ingress",
        "host": "det.example.com",
        "certificate": {"source": "secret", "secretName": "det-tls"},
    }
    return changed


@pytest.mark.parametrize("name", STACKS)
def test_day_two_changes_leave_every_database_object_alone(name, tmp_path):
    path = stackfile.STACKS_DIR / f"Pulumi.{name}.yaml"
    document = yaml.safe_load(path.read_text())
    changed_path = Path(tmp_path / path.name)  # the same stack name: the same derived names
    changed_path.write_text(yaml.safe_dump({**document, "config": day_two(document["config"])}))

    before = database_objects(planning.planned(name))
    after_result = planning.plan_file(changed_path)
    after = database_objects(after_result)

    assert before, f"{name}: no database objects found (the test would prove nothing)"
    # The changes took effect: the comparison is between two really different stacks.
    deployments = [m for m in after_result.manifests if m["kind"] == "Deployment"]
    assert any(
        ":0.37.0" in c["image"] for d in deployments for c in d["spec"]["template"]["spec"]["containers"]
    )
    assert any(m["metadata"].get("namespace") == "det-extra" for m in after_result.manifests)
    assert sorted(after) == sorted(before), f"{name}: database objects added or removed"
    for key, (inputs, options) in before.items():
        assert after[key][0] == inputs, f"{name}: {key} inputs change"
        assert after[key][1] == options, f"{name}: {key} options change"
