"""What an upgrade of this project changes in stacks already deployed: compare two offline
plans of the same stacks (resources.json), made with the code before and after a change.

    python scripts/compare_plans.py BEFORE_DIR AFTER_DIR

Each DIR holds one plan directory per stack (`python -m plan --config <file> --out DIR/<stack>`).
For every resource that holds data or is costly to replace (clusters, node pools and groups,
databases, buckets, volumes, keys, identities, networks) it lists the inputs whose planned
value changed, leaving out inputs the resource ignores on update (`ignore_changes`, which
keep the deployed value), and the resources that appear or disappear. Exit status 1 when a
name or a listed immutable input of such a resource changes.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

# Resource types whose replacement loses data or capacity, with the inputs that replace them
# when changed (pulumi-gcp/pulumi-aws: ForceNew in the providers' schemas; a prefix covers
# everything below it).
WATCHED: dict[str, tuple[str, ...]] = {
    "gcp:container/cluster:Cluster": ("name", "location", "network", "subnetwork", "datapathProvider"),
    "gcp:container/nodePool:NodePool": (
        "name",
        "location",
        "cluster",
        # machineType, diskType, diskSizeGb and imageType update in place (terraform-provider-google
        # node_config.go: not ForceNew, read 2026-11).
        "nodeConfig.guestAccelerators",
        "nodeConfig.spot",
        "nodeConfig.serviceAccount",
        "nodeConfig.oauthScopes",
        "nodeConfig.shieldedInstanceConfig",
        "nodeConfig.metadata",
    ),
    "gcp:sql/databaseInstance:DatabaseInstance": ("name", "region", "databaseVersion"),
    "gcp:storage/bucket:Bucket": ("name", "location"),
    "gcp:serviceaccount/account:Account": ("accountId",),
    "gcp:compute/network:Network": ("name",),
    "gcp:compute/subnetwork:Subnetwork": ("name", "network", "region"),
    "aws:eks/cluster:Cluster": (
        "name",
        "roleArn",
        "encryptionConfig",
        "accessConfig.bootstrapClusterCreatorAdminPermissions",
    ),
    "aws:eks/nodeGroup:NodeGroup": (
        "nodeGroupName",
        "clusterName",
        "nodeRoleArn",
        "subnetIds",
        "amiType",
        "instanceTypes",
        "capacityType",
        "diskSize",
        "launchTemplate.id",
        "launchTemplate.name",
    ),
    "aws:rds/instance:Instance": (
        "identifier",
        "engine",
        "storageEncrypted",
        "dbSubnetGroupName",
        "kmsKeyId",
    ),
    "aws:s3/bucket:Bucket": ("bucket",),
    "aws:kms/key:Key": (),
    "aws:iam/role:Role": ("name",),
    "aws:ec2/vpc:Vpc": ("cidrBlock",),
    "kubernetes:core/v1:PersistentVolumeClaim": (
        "metadata.name",
        "spec.storageClassName",
        "spec.accessModes",
    ),
    "kubernetes:storage.k8s.io/v1:StorageClass": (
        "metadata.name",
        "provisioner",
        "parameters",
        "reclaimPolicy",
    ),
    "kubernetes:apps/v1:StatefulSet": ("metadata.name", "spec.volumeClaimTemplates", "spec.selector"),
}


def _flat(value: Any, prefix: str = "") -> dict[str, Any]:
    if isinstance(value, dict) and value:
        out: dict[str, Any] = {}
        for key, item in value.items():
            out |= _flat(item, f"{prefix}.{key}" if prefix else str(key))
        return out
    return {prefix: value}


def _ignored(path: str, ignore: list[str]) -> bool:
    return any(path == i or path.startswith(i + ".") or path.startswith(i + "[") for i in ignore)


def _covered(path: str, watched: tuple[str, ...]) -> bool:
    return any(path == w or path.startswith(w + ".") for w in watched)


def _kept_renames(old: dict[str, Any], new: dict[str, Any]) -> dict[str, str]:
    """Planned name -> deployed name of the names an existing stack keeps (`ignore_changes` on
    the name): what refers to them (an ARN, an email) keeps referring to the deployed one."""
    renames = {}
    for urn in old.keys() & new.keys():
        for prop in (new[urn].get("options") or {}).get("ignoreChanges", []):
            before, after = old[urn]["inputs"].get(prop), new[urn]["inputs"].get(prop)
            if isinstance(before, str) and isinstance(after, str) and before != after:
                renames[after] = before
    return renames


def _as_deployed(value: Any, renames: dict[str, str]) -> Any:
    if isinstance(value, str):
        for planned, deployed in renames.items():
            value = value.replace(planned, deployed)
    return value


def compare(before: list[dict[str, Any]], after: list[dict[str, Any]]) -> tuple[list[str], list[str]]:
    """(lines to read, lines that mean a replacement) for one stack."""
    old = {r["urn"]: r for r in before}
    new = {r["urn"]: r for r in after}
    # A resource planned under a new URN whose alias is a deployed one is that resource (the
    # engine matches it by the alias): compare it under the deployed URN.
    for r in after:
        for alias in (r.get("options") or {}).get("aliases", []):
            if alias in old and alias not in new:
                new[alias] = new.pop(r["urn"], r)
                break
    renames = _kept_renames(old, new)
    report: list[str] = []
    breaking: list[str] = []
    aliases = {a for r in after for a in (r.get("options") or {}).get("aliases", []) if isinstance(a, str)}
    for urn in sorted(old.keys() - new.keys()):
        if old[urn]["type"] in WATCHED and urn not in aliases:
            breaking.append(f"  - deleted: {urn}")
    for urn in sorted(new.keys() - old.keys()):
        if new[urn]["type"] in WATCHED:
            report.append(f"  + created: {urn}")
    for urn in sorted(old.keys() & new.keys()):
        kind = new[urn]["type"]
        if kind not in WATCHED:
            continue
        ignore = (new[urn].get("options") or {}).get("ignoreChanges", [])
        a = _flat(old[urn]["inputs"])
        b = {path: _as_deployed(value, renames) for path, value in _flat(new[urn]["inputs"]).items()}
        for path in sorted(a.keys() | b.keys()):
            if a.get(path) == b.get(path):
                continue
            line = f"  ~ {kind} {new[urn]['name']}: {path}: {a.get(path)!r} -> {b.get(path)!r}"
            if _ignored(path, ignore):
                report.append(line + " (ignored on update: the deployed value stays)")
            elif _covered(path, WATCHED[kind]):
                breaking.append(line + " (replaces)")
            else:
                report.append(line + " (updated in place)")
    return report, breaking


def main(argv: list[str]) -> int:
    before_dir, after_dir = Path(argv[0]), Path(argv[1])
    failed = False
    for stack in sorted(p.name for p in before_dir.iterdir() if (p / "resources.json").exists()):
        after = after_dir / stack / "resources.json"
        if not after.exists():
            print(f"{stack}: no plan after the change")
            failed = True
            continue
        report, breaking = compare(
            json.loads((before_dir / stack / "resources.json").read_text()), json.loads(after.read_text())
        )
        print(f"{stack}: {len(breaking)} replacement(s), {len(report)} other change(s)")
        for line in breaking + report:
            print(line)
        failed |= bool(breaking)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
