"""The master.yaml checker itself: documents it must pass and documents it must refuse."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest

from components import versions
from components.config import master_yaml_schema as schema
from components.config.master_yaml_schema import check

TASK_POD = {"apiVersion": "v1", "kind": "Pod", "spec": {"containers": [{"name": "determined-container"}]}}


def document(version: str = "0.38.1") -> dict:
    """A master.yaml like the project writes, valid for `version`."""
    v = schema.parse_version(version)
    namespace_key = "default_namespace" if v >= (0, 35, 0) else "namespace"
    doc = {
        "log": {"level": "info", "color": False},
        "checkpoint_storage": {
            "type": "s3",
            "bucket": "ckpt",
            "prefix": "",
            "endpoint_url": "http://minio:9000",
            "save_experiment_best": 0,
            "save_trial_best": 1,
            "save_trial_latest": 1,
        },
        "db": {"user": "det", "password": "x", "host": "db", "port": "5432", "name": "det"},
        "port": 8081,
        "resource_manager": {
            "type": "kubernetes",
            namespace_key: "determined",
            "master_service_name": "determined-master-service",
            "default_compute_resource_pool": "gpu",
            "default_aux_resource_pool": "aux",
        },
        "resource_pools": [
            {
                "pool_name": "gpu",
                "description": "",
                "task_container_defaults": {"cpu_pod_spec": TASK_POD, "gpu_pod_spec": TASK_POD},
            }
        ],
        "telemetry": {"enabled": False},
        "cluster_name": "det",
    }
    if v >= (0, 29, 0):
        doc["security"] = {"initial_user_password": "x"}
    if v >= (0, 26, 1):
        doc["task_container_defaults"] = {"kubernetes": {"max_slots_per_pod": 4}}
        doc["resource_pools"][0]["task_container_defaults"]["kubernetes"] = {"max_slots_per_pod": 4}
    else:
        doc["resource_manager"]["max_slots_per_pod"] = 4
    if v < (0, 35, 0):
        doc["resource_pools"][0]["kubernetes_namespace"] = "det-gpu"
    return doc


def changed(version: str = "0.38.1", **paths) -> dict:
    """document(version) with keys set; `a__b__0__c` is the path a.b[0].c; DELETE removes a key."""
    doc = copy.deepcopy(document(version))
    for dotted, value in paths.items():
        *parents, last = dotted.split("__")
        target = doc
        for part in parents:
            target = target[int(part)] if part.isdigit() else target.setdefault(part, {})
        if value is DELETE:
            target.pop(last, None)
        else:
            target[last] = value
    return doc


DELETE = object()


def test_data_file_is_the_masters_key_list():
    data = schema.key_data()
    assert data["root"] == "config.Config"
    assert schema.known_range() == ((0, 26, 0), (0, 38, 1))
    assert schema.key_data() is data  # loaded once


@pytest.mark.parametrize(
    "version", ["0.26.0", "0.26.1", "0.28.1", "0.29.0", "0.32.1", "0.33.0", "0.34.0", "0.35.0", "0.38.1"]
)
def test_a_document_like_the_projects_passes(version):
    assert check(document(version), version) == []


def test_unknown_key_at_the_top_is_refused():
    assert check(changed(clustr_name="x"), "0.38.1") == [
        "clustr_name: unknown key: the master refuses to start"
    ]


def test_unknown_key_inside_db_is_refused():
    assert check(changed(db__sslmode="require"), "0.38.1") == [
        "db.sslmode: unknown key: the master refuses to start"
    ]


def test_unknown_key_in_a_pools_task_container_defaults_is_a_setting_with_no_effect():
    doc = changed(resource_pools__0__task_container_defaults__cpu_podspec={})
    assert check(doc, "0.38.1") == [
        "resource_pools[0].task_container_defaults.cpu_podspec: unknown key: "
        "the master ignores it (a setting with no effect)"
    ]


def test_unknown_key_below_a_leniently_decoded_type_is_ignored_but_still_reported():
    doc = changed(task_container_defaults__kubernetes={"max_slots_per_pod": 4, "max_slot_per_pod": 2})
    assert check(doc, "0.38.1") == [
        "task_container_defaults.kubernetes.max_slot_per_pod: unknown key: "
        "the master ignores it (a setting with no effect)"
    ]


def test_a_key_differing_only_in_case_is_reported_and_still_checked():
    assert check(changed(Port=8081, port=DELETE), "0.38.1") == [
        "Port: write it as 'port', the master's spelling"
    ]
    problems = check(changed(Cluster_Name=5, cluster_name=DELETE), "0.38.1")
    assert problems[0] == "Cluster_Name: write it as 'cluster_name', the master's spelling"
    assert problems[1].startswith("Cluster_Name: expected a string")


@pytest.mark.parametrize(
    ("paths", "problem"),
    [
        ({"cluster_name": 5}, "cluster_name: expected a string, got an integer (5)"),
        (
            {"resource_manager__max_slots_per_pod": "4", "task_container_defaults": DELETE},
            "resource_manager.max_slots_per_pod: expected an integer, got a string",
        ),
        (
            {"checkpoint_storage__save_trial_best": True},
            "checkpoint_storage.save_trial_best: expected an integer",
        ),
        ({"resource_pools": {"gpu": {}}}, "resource_pools: expected a list, got a mapping"),
        ({"db": ["x"]}, "db: expected a mapping (config.DBConfig), got a list"),
        # Registered keys pass through the master's flag parser, which casts to the flag's type.
        ({"port": "http"}, "port: expected an integer, got a string (the master's flag parser makes it 0)"),
        ({"telemetry__enabled": "yes"}, "telemetry.enabled: expected true or false, got a string"),
        ({"db__port": {"n": 5432}}, "db.port: expected a string, got a mapping"),
        ({"cluster_name": None}, "cluster_name: null sets nothing"),
    ],
)
def test_wrong_types_are_reported(paths, problem):
    problems = check(changed(**paths), "0.38.1")
    assert len(problems) == 1 and problems[0].startswith(problem), problems


@pytest.mark.parametrize(
    "paths",
    [
        # The master's flag parser casts registered keys: db.port is declared a string in the
        # master's struct, but `db.port: 5432` reaches it as "5432".
        {"db__port": 5432},
        {"port": "8081"},
        {"log__color": "false"},
        # The file is re-encoded to JSON before decoding: 4.0 is written as 4.
        {"resource_pools__0__task_container_defaults__kubernetes": {"max_slots_per_pod": 4.0}},
        {"resource_manager__slot_type": "cpu", "resource_manager__slot_resource_requests": {"cpu": 2}},
    ],
)
def test_values_the_master_converts_are_accepted(paths):
    assert check(changed(**paths), "0.38.1") == []


def test_keys_outside_their_version_range():
    doc = document("0.34.0")
    doc["resource_manager"]["default_namespace"] = "determined"
    assert check(doc, "0.34.0") == [
        "resource_manager.default_namespace: not a key of Determined 0.34.0 (it exists from 0.35.0 on): "
        "the master refuses to start"
    ]

    doc = document("0.35.0")
    doc["resource_pools"][0]["kubernetes_namespace"] = "det-gpu"
    assert check(doc, "0.35.0") == [
        "resource_pools[0].kubernetes_namespace: not a key of Determined 0.35.0 (it exists before 0.35.0): "
        "the master ignores it (a setting with no effect)"
    ]

    doc = document("0.28.1")
    doc["security"] = {"initial_user_password": "x"}
    assert check(doc, "0.28.1") == [
        "security.initial_user_password: not a key of Determined 0.28.1 (it exists from 0.29.0 on): "
        "the master refuses to start"
    ]

    doc = document("0.33.0")
    doc["task_container_defaults"]["checkpoint_gc_pod_spec"] = TASK_POD
    assert check(doc, "0.33.0") == [
        "task_container_defaults.checkpoint_gc_pod_spec: not a key of Determined 0.33.0 "
        "(it exists from 0.34.0 on): the master ignores it (a setting with no effect)"
    ]
    assert (
        check(
            document("0.34.0")
            | {
                "task_container_defaults": {
                    "kubernetes": {"max_slots_per_pod": 4},
                    "checkpoint_gc_pod_spec": TASK_POD,
                }
            },
            "0.34.0",
        )
        == []
    )


def test_version_ranges_with_gaps_and_ends():
    assert schema.in_range("0.26.5", "0.26.5-0.26.7,0.32.0-")
    assert not schema.in_range("0.26.7", "0.26.5-0.26.7,0.32.0-")
    assert not schema.in_range("0.31.0", "0.26.5-0.26.7,0.32.0-")
    assert schema.in_range("0.32.0", "0.26.5-0.26.7,0.32.0-")
    assert schema.in_range("0.29.0", "-0.29.1") and not schema.in_range("0.29.1", "-0.29.1")
    assert schema.in_range("0.26.0", "") and schema.in_range("0.26.0", None)
    doc = changed(oidc={"enabled": False})
    assert check(doc, "0.38.1") == []
    assert check(changed("0.31.0", oidc={"enabled": False}), "0.31.0")[0].startswith(
        "oidc: not a key of Determined 0.31.0 (it exists from 0.26.5, before 0.26.7; from 0.32.0 on)"
    )


def test_a_field_of_another_union_variant_is_refused():
    doc = changed(checkpoint_storage__host_path="/mnt")
    assert check(doc, "0.38.1") == [
        "checkpoint_storage.host_path: belongs to type shared_fs, not s3: the master refuses to start"
    ]
    doc = changed(resource_manager__scheduler={"type": "priority"})
    assert check(doc, "0.38.1") == [
        "resource_manager.scheduler: belongs to type agent, not kubernetes: the master refuses to start"
    ]
    doc = changed(checkpoint_storage__access_keys="x")
    assert check(doc, "0.38.1") == [
        "checkpoint_storage.access_keys: unknown key for type s3: the master refuses to start"
    ]


def test_union_discriminator_is_required_and_versioned():
    assert check(changed(checkpoint_storage__type=DELETE), "0.38.1")[0].startswith(
        "checkpoint_storage.type: required: one of azure, directory, gcs, s3, shared_fs"
    )
    assert check(changed(checkpoint_storage__type="nfs"), "0.38.1")[0].startswith(
        "checkpoint_storage.type: 'nfs' is not one of"
    )
    directory = {"type": "directory", "container_path": "/ckpt"}
    assert check(changed("0.26.3", checkpoint_storage=directory), "0.26.3") == []
    assert check(changed("0.26.2", checkpoint_storage=directory), "0.26.2")[0].startswith(
        "checkpoint_storage.type: 'directory' is not accepted by Determined 0.26.2"
    )


def test_task_pod_specs_are_strict_kubernetes_pods():
    bad = copy.deepcopy(TASK_POD)
    bad["spec"]["containers"][0]["volumeMount"] = []
    (problem,) = check(changed(resource_pools__0__task_container_defaults__gpu_pod_spec=bad), "0.38.1")
    assert problem.startswith(
        "resource_pools[0].task_container_defaults.gpu_pod_spec.spec.containers[0]: "
        "not a valid Kubernetes 1.33.0 Pod: unknown field 'volumeMount'"
    )
    bare = {"spec": {"containers": [{"name": "determined-container"}], "nodeSelector": {"a": "b"}}}
    assert check(changed(task_container_defaults__cpu_pod_spec=bare), "0.38.1") == []
    (problem,) = check(changed(task_container_defaults__cpu_pod_spec={"kind": "Deployment"}), "0.38.1")
    assert "must be a v1 Pod" in problem


def test_task_pod_specs_follow_the_masters_own_pod_rules():
    pod = copy.deepcopy(TASK_POD)
    pod["metadata"] = {"namespace": "det-gpu", "labels": {"a": "b"}}
    pod["spec"]["containers"][0]["image"] = "pytorch:2"
    pod["spec"]["containers"].append({"name": "sidecar", "image": "busybox:1.36"})
    pod["spec"]["hostNetwork"] = True
    problems = check(changed(resource_pools__0__task_container_defaults__cpu_pod_spec=pod), "0.38.1")
    prefix = "resource_pools[0].task_container_defaults.cpu_pod_spec."
    assert problems == [
        prefix + "metadata.namespace: not configurable: the master puts each task pod in its pool's "
        "namespace (or its workspace's); the master refuses to start",
        prefix + "spec.hostNetwork: not configurable: Determined does not run Kubernetes tasks on the host "
        "network; the master refuses to start",
        prefix
        + "spec.containers[0].image: not configurable: Determined sets the image of its task container "
        "(determined-container); the master refuses to start",
    ]


def test_special_scalar_types():
    ok = changed(
        task_container_defaults={
            "kubernetes": {"max_slots_per_pod": 4},
            "image": {"cpu": "a:1", "gpu": "b:1"},
            "environment_variables": {"cpu": ["A=1"], "cuda": ["B=2"]},
            "log_policies": [{"pattern": "OOM", "action": {"type": "cancel_retries"}}],
        },
        resource_pools__0__agent_reconnect_wait="1m30s",
    )
    assert check(ok, "0.38.1") == []
    assert check(changed(resource_pools__0__agent_reconnect_wait="90"), "0.38.1")[0].startswith(
        "resource_pools[0].agent_reconnect_wait: expected a duration string"
    )
    assert check(changed(task_container_defaults__image={"tpu": "x"}), "0.38.1")[0].startswith(
        "task_container_defaults.image: expected a string or a mapping of cpu/cuda/gpu/rocm"
    )
    bare_action = [{"pattern": "OOM", "action": "cancel_retries"}]
    assert check(changed(task_container_defaults__log_policies=bare_action), "0.38.0") == []
    old = changed("0.37.0", task_container_defaults__log_policies=bare_action)
    assert check(old, "0.37.0")[0].startswith(
        "task_container_defaults.log_policies[0].action: expected {type: cancel_retries|exclude_node}, got a string"
    )


def test_master_value_rules():
    both = changed(resource_manager__max_slots_per_pod=4)
    assert check(both, "0.38.1") == [
        "resource_manager.max_slots_per_pod: exactly one of it and task_container_defaults.kubernetes."
        "max_slots_per_pod must be set (both are): the master refuses to start"
    ]
    neither = changed(task_container_defaults=DELETE)
    assert "(neither is)" in check(neither, "0.38.1")[0]

    preemption = changed(resource_manager__default_scheduler="preemption")
    assert check(preemption, "0.38.1")[0].startswith("resource_manager.default_scheduler: 'preemption'")
    assert check(changed("0.35.0", resource_manager__default_scheduler="preemption"), "0.35.0") == []
    assert check(changed(resource_manager__default_scheduler="coscheduler"), "0.38.1") == []

    assert check(changed(resource_manager__slot_type="rocm"), "0.36.0") == []
    assert check(changed("0.35.0", resource_manager__slot_type="rocm"), "0.35.0")[0].startswith(
        "resource_manager.slot_type: 'rocm' is not one of cpu, cuda, gpu"
    )
    assert check(changed(resource_manager__slot_type="cpu"), "0.38.1") == [
        "resource_manager.slot_resource_requests.cpu: must be > 0 for cpu slots: the master refuses to start"
    ]
    assert check(both, "0.38.1", rules=False) == []


def test_versions_outside_the_data_are_refused():
    with pytest.raises(ValueError, match="outside the releases"):
        check(document(), "0.39.0")
    with pytest.raises(ValueError, match="not a Determined version"):
        check(document(), "latest")
    assert check(document(), "v0.38.1") == []


def test_key_lookup_by_path_and_version():
    assert schema.accepts("security.initial_user_password", "0.29.0")
    assert not schema.accepts("security.initial_user_password", "0.28.1")
    assert schema.accepts("resource_manager.default_namespace", "0.35.0")
    assert schema.accepts("resource_pools.task_container_defaults.cpu_pod_spec", "0.26.0")
    assert schema.first_version("resource_pools.kubernetes_namespace") == "0.26.0"
    assert schema.last_version("resource_pools.kubernetes_namespace") == "0.34.0"
    with pytest.raises(KeyError):
        schema.accepts("db.sslmode", "0.38.1")


# --- the project's version boundaries are the master's ------------------------------------------


def as_text(version: tuple[int, int, int]) -> str:
    return ".".join(map(str, version))


def test_initial_password_boundary_is_where_the_master_gains_the_key():
    assert as_text(versions.INITIAL_PASSWORD_SINCE) == schema.first_version("security.initial_user_password")


def test_per_pool_slots_boundary_is_where_the_master_gains_the_key():
    since = as_text(versions.PER_POOL_MAX_SLOTS_SINCE)
    assert since == schema.first_version("task_container_defaults.kubernetes.max_slots_per_pod")
    assert since == schema.first_version(
        "resource_pools.task_container_defaults.kubernetes.max_slots_per_pod"
    )


def test_checkpoint_gc_boundary_is_where_the_master_gains_the_key():
    assert as_text(versions.CHECKPOINT_GC_POD_SPEC_SINCE) == schema.first_version(
        "task_container_defaults.checkpoint_gc_pod_spec"
    )


def test_workspace_namespaces_boundary_is_where_the_master_swaps_the_keys():
    since = as_text(versions.WORKSPACE_NAMESPACES_SINCE)
    assert since == schema.first_version("resource_manager.default_namespace")
    last_old = schema.last_version("resource_pools.kubernetes_namespace")
    assert last_old == schema.last_version("resource_manager.namespace")
    tags = sorted(schema.key_data()["tags"], key=schema.parse_version)
    assert tags[tags.index(last_old) + 1] == since


def test_oldest_supported_master_is_described_by_the_key_data():
    assert schema.known_range()[0] <= versions.MIN_DETERMINED_VERSION
    assert schema.parse_version(versions.DEFAULT_DETERMINED_VERSION) <= schema.known_range()[1]


def test_the_key_data_is_the_shared_reference_unchanged():
    from components.config.master_yaml_schema import DATA_FILE

    shared = Path(__file__).resolve().parents[3] / "shared" / "reference" / "master-yaml-keys.json"
    if not shared.exists():
        pytest.skip("shared/ is not beside the repository")
    assert DATA_FILE.read_bytes() == shared.read_bytes()
