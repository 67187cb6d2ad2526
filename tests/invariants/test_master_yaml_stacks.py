"""The master.yaml of every stack in stacks/ and of every fixture stack, checked against the
master's own configuration structs for the stack's Determined version; and the fixtures
checked to keep covering what they are there for."""

from __future__ import annotations

import pytest
import stack_plans

from components import versions
from components.config import master_yaml_schema

REDACTED = "[secret]"


@pytest.fixture(scope="module", params=stack_plans.NAMES)
def stack(request):
    return stack_plans.plan(request.param)


def test_master_yaml_is_what_the_master_accepts_for_its_version(stack):
    assert master_yaml_schema.check(stack.master, stack.version) == []


def test_master_yaml_has_no_yaml_aliases(stack):
    # Objects shared between pools would be written as &id/*id aliases: valid YAML, but not
    # the file a reader (or a diff) expects.
    text = stack.result.master_yaml
    assert "&id" not in text and "*id" not in text


def test_initial_user_password_is_set_wherever_the_master_knows_the_key(stack):
    # The chart refuses to install without one; a blank password leaves `admin` open.
    known = master_yaml_schema.accepts("security.initial_user_password", stack.version)
    written = stack.master.get("security", {}).get("initial_user_password")
    assert (written is not None) == known, f"{stack.name}: Determined {stack.version}"
    if known:
        assert written == REDACTED


def test_secret_values_in_master_yaml_are_secrets(stack):
    # The preview of master.yaml shows every secret as the placeholder: had one not been
    # treated as a secret, its value would show here.
    assert stack.master["db"]["password"] == REDACTED
    storage = stack.master["checkpoint_storage"]
    for key in ("access_key", "secret_key", "connection_string", "credential"):
        if key in storage:
            assert storage[key] == REDACTED, key


# --- the fixtures keep covering what they are for ------------------------------------------------


def all_raw():
    return {name: stack_plans.raw_config(path) for name, path in stack_plans.STACK_FILES.items()}


def version_of(raw):
    return master_yaml_schema.parse_version(
        raw.get("master", {}).get("version", versions.DEFAULT_DETERMINED_VERSION)
    )


def test_stacks_sit_on_both_sides_of_every_version_boundary():
    planned = {version_of(raw) for raw in all_raw().values()}
    tags = sorted(master_yaml_schema.parse_version(t) for t in master_yaml_schema.key_data()["tags"])
    for boundary in (
        versions.PER_POOL_MAX_SLOTS_SINCE,
        versions.INITIAL_PASSWORD_SINCE,
        versions.CHECKPOINT_GC_POD_SPEC_SINCE,
        versions.WORKSPACE_NAMESPACES_SINCE,
    ):
        below = tags[tags.index(boundary) - 1]
        assert {boundary, below} <= planned, f"no stack at {boundary} and at {below}"
    assert versions.MIN_DETERMINED_VERSION in planned
    assert master_yaml_schema.parse_version(versions.DEFAULT_DETERMINED_VERSION) in planned


def test_fixtures_exercise_the_configuration_space():
    raws = list(all_raw().values())

    def some(predicate):
        return any(predicate(raw) for raw in raws)

    def gpu_counts(raw):
        return {p["gpu"]["count"] for p in raw["nodePools"] if p.get("gpu")}

    db = lambda raw: raw.get("database", {})  # noqa: E731
    storage = lambda raw: raw.get("checkpointStorage", {})  # noqa: E731
    tcd = lambda raw: raw.get("taskContainerDefaults", {})  # noqa: E731
    assert some(
        lambda r: (
            db(r).get("mode") == "external"
            and db(r).get("sslMode") == "verify-full"
            and db(r).get("sslRootCert")
        )
    )
    assert some(
        lambda r: (
            storage(r).get("type") == "s3" and storage(r).get("endpointUrl") and storage(r).get("secretKey")
        )
    )
    assert some(lambda r: storage(r).get("type") == "gcs")
    assert some(lambda r: storage(r).get("type") == "azure")
    assert some(lambda r: r.get("slots", {}).get("type") == "cpu")
    assert some(lambda r: len(gpu_counts(r)) >= 2)
    assert some(
        lambda r: any(
            {"volumes", "tolerations"} <= set(rp.get("podSpec", {}).get("spec", rp.get("podSpec", {})))
            and "env" in str(rp["podSpec"])
            for rp in r["resourcePools"]
        )
    )
    assert some(lambda r: tcd(r).get("cpuPodSpec") and tcd(r).get("gpuPodSpec"))
    assert some(lambda r: tcd(r).get("checkpointGcPodSpec"))
    assert some(lambda r: any(not t.get("value") for p in r["nodePools"] for t in p.get("taints", [])))
    # checkpointGcPodSpec only where the master accepts it (the config refuses it elsewhere).
    for raw in raws:
        if tcd(raw).get("checkpointGcPodSpec"):
            assert version_of(raw) >= versions.CHECKPOINT_GC_POD_SPEC_SINCE
    # GKE: managed drivers and the GPU operator, created and existing networks, Cloud SQL.
    gke = [raw for raw in raws if raw["cloud"] == "gke"]
    assert any(raw.get("gpuOperator", {}).get("enabled") for raw in gke)
    assert any(not raw.get("gpuOperator", {}).get("enabled") for raw in gke)
    assert any(raw["cluster"].get("network", {}).get("name") for raw in gke)
    assert any(db(raw).get("mode") == "managed" and raw.get("environment") == "prod" for raw in gke)
    assert any(db(raw).get("mode") == "managed" and raw.get("environment", "dev") == "dev" for raw in gke)
    assert any(storage(raw).get("type") == "gcs" and not storage(raw).get("bucket") for raw in gke)
    assert any(storage(raw).get("type") == "gcs" and storage(raw).get("bucket") for raw in gke)
    # EKS: the device plugin and the GPU operator, created and existing VPCs, RDS, buckets.
    eks = [raw for raw in raws if raw["cloud"] == "eks"]
    assert any(raw.get("gpuOperator", {}).get("enabled") for raw in eks)
    assert any(not raw.get("gpuOperator", {}).get("enabled") for raw in eks)
    assert any(raw["cluster"].get("vpc", {}).get("id") for raw in eks)
    assert any(db(raw).get("mode") == "managed" for raw in eks)
    assert any(storage(raw).get("type") == "s3" and not storage(raw).get("bucket") for raw in eks)
    assert any(storage(raw).get("type") == "s3" and storage(raw).get("bucket") for raw in eks)
