"""Checkpoint buckets the stack creates are unique per install (the cluster name is part of
the name), and a stack deployed before keeps its bucket: the name is fixed at creation and
everything that names the bucket takes it from the bucket resource."""

from __future__ import annotations

import copy
import json

import pytest
from conftest import EKS, GKE, raw_config
from planning import of_type, plan_for, resource

from components import names
from components.cluster.eks import storage as s3
from components.cluster.gke import storage as gcs
from plan import mocks

DEPLOYED = {"eks": "dev-123456789012-us-east-1-checkpoints", "gke": "p-dev-checkpoints"}


def _raw(base: dict, cluster: str, **extra) -> dict:
    raw = raw_config(**copy.deepcopy(base))
    raw["cluster"] = {**raw["cluster"], "name": cluster}
    raw["checkpointStorage"] = {"type": "s3" if base is EKS else "gcs"}
    return raw | extra


def _bucket(result, cloud: str) -> dict:
    if cloud == "eks":
        return resource(result, "s3/bucket:Bucket", "checkpoints")
    return resource(result, "storage/bucket:Bucket", "checkpoints")


def _name(bucket: dict) -> str:
    return bucket["inputs"].get("bucket") or bucket["inputs"]["name"]


def _backup_destination(result) -> str:
    (job,) = [m for m in result.manifests if m["kind"] == "CronJob"]
    (dump,) = job["spec"]["jobTemplate"]["spec"]["template"]["spec"]["containers"][:1]
    return next(e["value"] for e in dump["env"] if e["name"] == "DEST")


@pytest.mark.parametrize(("base", "cloud"), [(EKS, "eks"), (GKE, "gke")])
def test_two_installs_with_one_stack_name_in_one_account_get_two_buckets(base, cloud):
    # Two Pulumi projects, both with a stack "dev", in one account/project and region.
    team_a = plan_for(_raw(base, "team-a-det"), stack="dev")
    team_b = plan_for(_raw(base, "team-b-det"), stack="dev")
    a, b = _name(_bucket(team_a, cloud)), _name(_bucket(team_b, cloud))
    assert a != b
    assert _backup_destination(team_a) != _backup_destination(team_b)


def test_derived_names_hold_stack_cluster_and_where():
    assert s3.bucket_name("dev", "team-a-det", "123456789012", "us-east-1") == (
        "dev-team-a-det-123456789012-us-east-1-checkpoints"
    )
    assert (
        gcs.bucket_name("p", "dev", "team-a-det", "us-central1") == "p-dev-team-a-det-us-central1-checkpoints"
    )


@pytest.mark.parametrize(("base", "cloud", "prop"), [(EKS, "eks", "bucket"), (GKE, "gke", "name")])
def test_the_name_is_fixed_at_creation(base, cloud, prop):
    bucket = _bucket(plan_for(_raw(base, "det"), stack="dev"), cloud)
    assert prop in names.kept_at_creation(bucket["type"], prop)
    assert bucket["options"]["ignoreChanges"] == [prop]


def _deployed_bucket(monkeypatch, cloud: str) -> None:
    """The provider as it answers for a stack deployed under the old derivation: the bucket
    keeps its name (ignore_changes sends the deployed one), whatever the program derives."""
    deployed = DEPLOYED[cloud]
    if cloud == "eks":
        model = mocks.ResourceModel(
            create=lambda req: {
                **mocks._s3_bucket(req),
                "bucket": deployed,
                "arn": f"arn:aws:s3:::{deployed}",
            },
            autoname="bucket",
        )
        monkeypatch.setitem(mocks.RESOURCES, "aws:s3/bucket:Bucket", model)
    else:
        model = mocks.ResourceModel(
            create=lambda req: {**mocks._gcs_bucket(req), "name": deployed}, autoname="name"
        )
        monkeypatch.setitem(mocks.RESOURCES, "gcp:storage/bucket:Bucket", model)


@pytest.mark.parametrize(("base", "cloud"), [(EKS, "eks"), (GKE, "gke")])
def test_an_existing_stack_keeps_pointing_at_its_own_bucket(monkeypatch, base, cloud):
    _deployed_bucket(monkeypatch, cloud)
    deployed = DEPLOYED[cloud]
    result = plan_for(_raw(base, "det", database={"mode": "inCluster"}), stack="dev")
    derived = _name(_bucket(result, cloud))
    assert derived != deployed
    # master.yaml, the backups, the stack output: the deployed bucket.
    assert f"bucket: {deployed}\n" in result.master_yaml
    assert _backup_destination(result).startswith(f"backup:{deployed}/")
    scheme = "s3" if cloud == "eks" else "gs"
    assert result.outputs["checkpointBucket"] == f"{scheme}://{deployed}"
    if cloud == "eks":
        role = json.loads(resource(result, "iam/rolePolicy:RolePolicy", "storage")["inputs"]["policy"])
        assert {s["Resource"] for s in role["Statement"]} == {
            f"arn:aws:s3:::{deployed}",
            f"arn:aws:s3:::{deployed}/*",
        }
        tls = json.loads(resource(result, "s3/bucketPolicy:BucketPolicy", "checkpoints")["inputs"]["policy"])
        assert tls["Statement"][0]["Resource"] == [f"arn:aws:s3:::{deployed}", f"arn:aws:s3:::{deployed}/*"]
    else:
        (grant,) = of_type(result, "storage/bucketIAMMember:BucketIAMMember")
        assert grant["inputs"]["bucket"] == deployed
    # The derived name is only the bucket's own (ignored) input.
    mentions = [r["name"] for r in result.resources if derived in json.dumps(r["inputs"])]
    assert mentions == ["checkpoints"], mentions
    assert derived not in result.master_yaml
