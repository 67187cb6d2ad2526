"""master.yaml as the master receives it, for both version families."""

from __future__ import annotations

import hashlib

import pytest
import yaml
from component_args import make_args

from components.config import master_yaml_schema
from components.determined import database
from components.determined import master_yaml as master_config
from components.determined.master_yaml import MasterSecrets

SECRETS = MasterSecrets(
    db_password="Db-Pass-1", initial_user_password="Init-Pass-1", webhook_signing_key="Sign-Key-1"
)


def build(**overrides):
    cfg = make_args(**overrides)
    return master_config.master_config(cfg, database.endpoint(cfg), SECRETS)


def test_current_family_0_38_uses_workspace_namespaces_and_per_pool_slots():
    config = build(master={"version": "0.38.1"})
    rm = config["resource_manager"]
    assert rm["type"] == "kubernetes"
    assert rm["default_namespace"] == "determined-tasks"
    assert "namespace" not in rm
    assert rm["master_service_name"] == "determined-master-service"
    assert rm["default_compute_resource_pool"] == "a100"
    assert rm["default_aux_resource_pool"] == "aux"
    # Exactly one global max_slots_per_pod: the task_container_defaults one.
    assert "max_slots_per_pod" not in rm
    assert config["task_container_defaults"]["kubernetes"] == {"max_slots_per_pod": 4}
    assert all("kubernetes_namespace" not in p for p in config["resource_pools"])
    assert config["security"] == {"initial_user_password": "Init-Pass-1"}


def test_older_family_0_34_maps_pools_to_namespaces():
    config = build(master={"version": "0.34.0"})
    rm = config["resource_manager"]
    assert rm["namespace"] == "determined"
    assert "default_namespace" not in rm
    assert {p["pool_name"]: p["kubernetes_namespace"] for p in config["resource_pools"]} == {
        "a100": "det-a100",
        "aux": "det-aux",
    }
    assert config["security"] == {"initial_user_password": "Init-Pass-1"}


def test_masters_before_0_26_1_get_one_global_slots_value():
    config = build(master={"version": "0.26.0"})
    assert config["resource_manager"]["max_slots_per_pod"] == 4
    assert "kubernetes" not in config["task_container_defaults"]
    # 0.26 does not know security.initial_user_password and would refuse it.
    assert "security" not in config


# Each version boundary of master.yaml, at the boundary and one release below it: what the
# project writes must follow the master's config structs (components/config/data/master-yaml-keys.json).


@pytest.mark.parametrize(
    ("version", "written"),
    [("0.28.1", False), ("0.29.0", True), ("0.32.1", True), ("0.33.0", True), ("0.38.1", True)],
)
def test_initial_user_password_is_written_wherever_the_master_knows_the_key(version, written):
    config = build(master={"version": version})
    if written:
        assert config["security"] == {"initial_user_password": "Init-Pass-1"}
    else:
        assert "security" not in config


@pytest.mark.parametrize(("version", "per_pool"), [("0.26.0", False), ("0.26.1", True), ("0.27.0", True)])
def test_slots_per_pod_per_pool_from_0_26_1(version, per_pool):
    config = build(master={"version": version})
    rm = config["resource_manager"]
    pools = {p["pool_name"]: p["task_container_defaults"] for p in config["resource_pools"]}
    if per_pool:
        # Exactly one global value, in task_container_defaults; each GPU pool its own.
        assert "max_slots_per_pod" not in rm
        assert config["task_container_defaults"]["kubernetes"] == {"max_slots_per_pod": 4}
        assert pools["a100"]["kubernetes"] == {"max_slots_per_pod": 4}
    else:
        assert rm["max_slots_per_pod"] == 4
        assert all("kubernetes" not in tcd for tcd in pools.values())
        assert "kubernetes" not in config.get("task_container_defaults", {})


@pytest.mark.parametrize(("version", "workspaces"), [("0.34.0", False), ("0.35.0", True)])
def test_pool_namespaces_until_0_35_then_workspace_bindings(version, workspaces):
    config = build(master={"version": version})
    rm = config["resource_manager"]
    namespaces = [p.get("kubernetes_namespace") for p in config["resource_pools"]]
    if workspaces:
        assert rm["default_namespace"] == "determined-tasks" and "namespace" not in rm
        assert namespaces == [None, None]
    else:
        assert rm["namespace"] == "determined" and "default_namespace" not in rm
        assert namespaces == ["det-a100", "det-aux"]


@pytest.mark.parametrize(
    "version", ["0.26.0", "0.26.1", "0.28.1", "0.29.0", "0.32.1", "0.33.0", "0.34.0", "0.35.0", "0.38.1"]
)
def test_written_master_yaml_passes_the_masters_own_checks_at_each_boundary(version):
    config = build(
        master={"version": version},
        taskContainerDefaults={"cpuPodSpec": {"priorityClassName": "determined-medium-priority"}},
    )
    assert master_yaml_schema.check(config, version) == []


def test_checkpoint_gc_pod_spec_is_written_from_0_34():
    config = build(
        master={"version": "0.34.0"},
        taskContainerDefaults={"checkpointGcPodSpec": {"nodeSelector": {"pool": "system"}}},
    )
    assert config["task_container_defaults"]["checkpoint_gc_pod_spec"]["spec"]["nodeSelector"] == {
        "pool": "system"
    }
    assert master_yaml_schema.check(config, "0.34.0") == []


def test_top_level_keys_follow_the_chart_order():
    config = build()
    assert list(config) == [
        "log",
        "checkpoint_storage",
        "db",
        "security",
        "port",
        "resource_manager",
        "resource_pools",
        "task_container_defaults",
        "telemetry",
        "observability",
        "cluster_name",
        "tensorboard_timeout",
        "notebook_timeout",
        "webhooks",
    ]
    assert config["port"] == 8081
    assert config["telemetry"] == {"enabled": False}
    assert config["cluster_name"] == "det-test"


def test_in_cluster_database_connection():
    assert build()["db"] == {
        "user": "determined",
        "password": "Db-Pass-1",
        "host": "determined-db",
        "port": "5432",
        "name": "determined",
    }


def test_external_database_connection_with_tls():
    config = build(
        database={
            "mode": "external",
            "host": "10.0.0.5",
            "port": 6432,
            "name": "det",
            "user": "det_user",
            "password": "ignored-here",
            "sslMode": "verify-full",
            "sslRootCert": "-----BEGIN CERTIFICATE-----\n...",
        }
    )
    assert config["db"] == {
        "user": "det_user",
        "password": "Db-Pass-1",  # the password comes from the resolved secret
        "host": "10.0.0.5",
        "port": "6432",
        "name": "det",
        "ssl_mode": "verify-full",
        "ssl_root_cert": "/etc/determined/db-root-cert.pem",
    }


def test_checkpoint_storage_types():
    shared = build(checkpointStorage={"type": "sharedFs", "hostPath": "/mnt/ckpt"})["checkpoint_storage"]
    assert shared["type"] == "shared_fs" and shared["host_path"] == "/mnt/ckpt"

    s3 = build(
        checkpointStorage={
            "type": "s3",
            "bucket": "ckpt",
            "prefix": "det",
            "endpointUrl": "http://minio:9000",
            "accessKey": "minio",
            "secretKey": "minio-secret",
        }
    )["checkpoint_storage"]
    assert {k: s3[k] for k in ("type", "bucket", "prefix", "endpoint_url", "access_key", "secret_key")} == {
        "type": "s3",
        "bucket": "ckpt",
        "prefix": "det",
        "endpoint_url": "http://minio:9000",
        "access_key": "minio",
        "secret_key": "minio-secret",
    }

    gcs = build(checkpointStorage={"type": "gcs", "bucket": "ckpt"})["checkpoint_storage"]
    assert (gcs["type"], gcs["bucket"], gcs["prefix"]) == ("gcs", "ckpt", "")
    assert "access_key" not in gcs

    azure = build(
        checkpointStorage={
            "type": "azure",
            "container": "ckpt",
            "connectionString": "AccountName=x;AccountKey=y",
        }
    )["checkpoint_storage"]
    assert (azure["container"], azure["connection_string"]) == ("ckpt", "AccountName=x;AccountKey=y")

    for section in (shared, s3, gcs, azure):
        assert (
            section["save_experiment_best"],
            section["save_trial_best"],
            section["save_trial_latest"],
        ) == (0, 1, 1)


def test_cpu_slots():
    config = build(slots={"type": "cpu", "cpuPerSlot": 7.5, "maxSlotsPerPod": 8})
    rm = config["resource_manager"]
    assert rm["slot_type"] == "cpu"
    assert rm["slot_resource_requests"] == {"cpu": 7.5}
    assert config["task_container_defaults"]["kubernetes"] == {"max_slots_per_pod": 8}


def test_configured_pod_specs_become_pods_in_task_container_defaults():
    config = build(taskContainerDefaults={"checkpointGcPodSpec": {"nodeSelector": {"pool": "system"}}})
    # Determined's task container is named, so that the spec is a valid Pod.
    assert config["task_container_defaults"]["checkpoint_gc_pod_spec"] == {
        "apiVersion": "v1",
        "kind": "Pod",
        "spec": {"containers": [{"name": "determined-container"}], "nodeSelector": {"pool": "system"}},
    }


def test_rendered_yaml_reads_back_to_the_same_config():
    config = build()
    assert yaml.safe_load(master_config.render(config)) == config


def test_checksum_changes_with_any_file_content():
    a = master_config.checksum({"master.yaml": "a: 1\n"}, "key")
    assert a == master_config.checksum({"master.yaml": "a: 1\n"}, "key")
    assert a != master_config.checksum({"master.yaml": "a: 2\n"}, "key")
    assert a != master_config.checksum({"master.yaml": "a: 1\n", "db-root-cert.pem": "x"}, "key")
    # Keyed: without the generated key nobody can test guesses of the passwords inside.
    assert a != master_config.checksum({"master.yaml": "a: 1\n"}, "another key")
    assert a != hashlib.sha256(b"master.yaml\0a: 1\n\0").hexdigest()
