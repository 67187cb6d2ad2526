"""master.yaml as the master receives it, for both version families."""

from __future__ import annotations

import yaml
from conftest import make_config

from deploy.app import database
from deploy.app import master_yaml as master_config
from deploy.app.master_yaml import MasterSecrets

SECRETS = MasterSecrets(db_password="Db-Pass-1", initial_user_password="Init-Pass-1")


def build(**overrides):
    cfg = make_config(**overrides)
    return master_config.master_config(cfg, database.endpoint(cfg), SECRETS)


def test_current_family_0_38_uses_workspace_namespaces_and_per_pool_slots():
    config = build(master={"version": "0.38.1"})
    rm = config["resource_manager"]
    assert rm["type"] == "kubernetes"
    assert rm["default_namespace"] == "determined"
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


def test_masters_before_0_27_get_one_global_slots_value():
    config = build(master={"version": "0.26.0"})
    assert config["resource_manager"]["max_slots_per_pod"] == 4
    assert "task_container_defaults" not in config
    # 0.26 does not know security.initial_user_password and would refuse it.
    assert "security" not in config


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
        "cluster_name",
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
    assert config["task_container_defaults"]["checkpoint_gc_pod_spec"] == {
        "apiVersion": "v1",
        "kind": "Pod",
        "spec": {"nodeSelector": {"pool": "system"}},
    }


def test_rendered_yaml_reads_back_to_the_same_config():
    config = build()
    assert yaml.safe_load(master_config.render(config)) == config


def test_checksum_changes_with_any_file_content():
    a = master_config.checksum({"master.yaml": "a: 1\n"})
    assert a == master_config.checksum({"master.yaml": "a: 1\n"})
    assert a != master_config.checksum({"master.yaml": "a: 2\n"})
    assert a != master_config.checksum({"master.yaml": "a: 1\n", "db-root-cert.pem": "x"})
