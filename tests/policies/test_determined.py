"""Policies on the Determined master's configuration: pool namespaces bound, master.yaml keys
the version accepts, idle notebooks stopped.

Props are copied from the offline plans (gke-dev at 0.38.1, the multi-gpu-0.29.0 fixture)."""

from __future__ import annotations

import copy
import json
from typing import Any

from policies import determined
from tests.policies.support import args, check, ctx, master_config, resource, rule

SECRET = "kubernetes:core/v1:Secret"
NAMESPACE = "kubernetes:core/v1:Namespace"
JOB = "kubernetes:batch/v1:Job"

LABELS = {
    "app.kubernetes.io/instance": "determined",
    "app.kubernetes.io/managed-by": "pulumi",
    "app.kubernetes.io/part-of": "determined",
}


def namespace(name: str) -> dict[str, Any]:
    component = "determined" if name == "determined" else "resource-pool"
    return {
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": {"labels": {**LABELS, "app.kubernetes.io/name": component}, "name": name},
    }


GKE_DEV_MAPPING = [
    {"namespace": "det-l4", "pool": "l4", "role": "compute", "workspace": "l4"},
    {"namespace": "det-aux", "pool": "aux", "role": "aux", "workspace": "aux"},
]


def bind_job(mapping: Any = None, raw: str | None = None) -> dict[str, Any]:
    """gke-dev's workspace-binding Job (trimmed)."""
    value = raw if raw is not None else json.dumps(GKE_DEV_MAPPING if mapping is None else mapping)
    env = [
        {"name": "DET_MASTER", "value": "http://determined-master-service.determined.svc.cluster.local:8080"},
        {"name": "DET_USER", "value": "admin"},
        {
            "name": "DET_PASSWORD",
            "valueFrom": {"secretKeyRef": {"key": "password", "name": "determined-bind-workspaces"}},
        },
        {"name": "DET_MAPPING", "value": value},
        {"name": "DET_TIMEOUT_SECONDS", "value": "600"},
    ]
    labels = {**LABELS, "app.kubernetes.io/name": "bind-workspaces"}
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {
            "labels": labels,
            "name": "determined-bind-workspaces-0a1cb5a15a-b7ba53",
            "namespace": "determined",
        },
        "spec": {
            "template": {
                "metadata": {"labels": labels},
                "spec": {
                    "containers": [{"name": "bind-workspaces", "image": "python:3.13.14-slim", "env": env}],
                    "restartPolicy": "Never",
                },
            }
        },
    }


def pod(node_pool: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "spec": {
            "containers": [{"name": "determined-container"}],
            "serviceAccountName": "determined-task",
            "nodeSelector": {"determined.ai/node-pool": node_pool},
        },
    }


def gke_dev_master() -> dict[str, Any]:
    """gke-dev's master.yaml (0.38.1), its secrets as the plan's stand-ins."""
    pools = []
    for name, node_pool in (("l4", "l4"), ("aux", "system")):
        pools.append(
            {
                "pool_name": name,
                "description": name,
                "task_container_defaults": {
                    "shm_size_bytes": 4294967296,
                    "network_mode": "bridge",
                    "cpu_pod_spec": pod(node_pool),
                    "gpu_pod_spec": pod(node_pool),
                    "kubernetes": {"max_slots_per_pod": 1},
                },
            }
        )
    return {
        "log": {"level": "info", "color": False},
        "checkpoint_storage": {"type": "gcs", "bucket": "my-gcp-project-gke-dev-checkpoints", "prefix": ""},
        "db": {
            "user": "determined",
            "password": "stand-in-db-password-7f3a",
            "host": "determined-db",
            "port": "5432",
            "name": "determined",
        },
        "security": {"initial_user_password": "stand-in-initial-9c1e"},
        "port": 8081,
        "resource_manager": {
            "type": "kubernetes",
            "default_namespace": "determined",
            "master_service_name": "determined-master-service",
            "default_compute_resource_pool": "l4",
            "default_aux_resource_pool": "aux",
        },
        "resource_pools": pools,
        "task_container_defaults": {
            "shm_size_bytes": 4294967296,
            "network_mode": "bridge",
            "kubernetes": {"max_slots_per_pod": 1},
        },
        "telemetry": {"enabled": False},
        "cluster_name": "det-dev",
        "tensorboard_timeout": 300,
        "notebook_timeout": 3600,
        "webhooks": {"signing_key": "stand-in-signing-key-41d2"},
    }


def old_master() -> dict[str, Any]:
    """A 0.29.0 master.yaml (multi-gpu-0.29.0): pools name their namespaces."""
    config = gke_dev_master()
    config["resource_manager"] = {"type": "kubernetes", "namespace": "determined"}
    for pool, ns in zip(config["resource_pools"], ("det-l4", "det-aux"), strict=True):
        pool["kubernetes_namespace"] = ns
    return config


def stack(
    config: dict | None = None,
    version: str | None = "0.38.1",
    namespaces: tuple[str, ...] = ("determined", "det-l4", "det-aux"),
    job: dict | bool | None = True,
) -> list:
    found = [resource(NAMESPACE, namespace(n), n) for n in namespaces]
    found.append(resource(SECRET, master_config(config or gke_dev_master(), version), "master-config"))
    if job is True:
        job = bind_job()
    if job:
        found.append(resource(JOB, job, "determined/determined-bind-workspaces"))
    return found


# --- pool-namespaces-bound -------------------------------------------------------------------


def test_namespaces_bound_passes_workspace_bindings():
    assert check("pool-namespaces-bound", stack()) == []


def test_namespaces_bound_refuses_a_stack_without_the_binding_job():
    found = check("pool-namespaces-bound", stack(job=None))
    assert len(found) == 2
    assert found[0] == (
        "resource pool 'l4' (master.yaml resource_pools[l4]) is bound to no namespace: Determined 0.38.1 "
        "binds namespaces to workspaces, and the stack has no workspace-binding Job "
        "(label app.kubernetes.io/name=bind-workspaces)"
    )


def test_namespaces_bound_refuses_a_pool_missing_from_the_mapping():
    found = check("pool-namespaces-bound", stack(job=bind_job(GKE_DEV_MAPPING[:1])))
    assert found == [
        "resource pool 'aux' (master.yaml resource_pools[aux]) is bound to no namespace: the "
        "workspace-binding Job's DET_MAPPING has no entry for it"
    ]


def test_namespaces_bound_refuses_a_namespace_the_stack_does_not_create():
    found = check("pool-namespaces-bound", stack(namespaces=("determined", "det-l4")))
    assert found == [
        "resource pool 'aux': namespace 'det-aux' (bound to workspace 'aux' by the workspace-binding Job) "
        "is not a Namespace the stack creates"
    ]


def test_namespaces_bound_refuses_a_broken_mapping():
    found = check("pool-namespaces-bound", stack(job=bind_job(raw="{not json")))
    assert found[0].startswith(
        "workspace-binding Job determined/determined-bind-workspaces-0a1cb5a15a-b7ba53:"
    )
    assert "DET_MAPPING is not a JSON list" in found[0]
    assert len(found) == 3  # and neither pool is bound
    no_workspace = copy.deepcopy(GKE_DEV_MAPPING)
    no_workspace[0]["workspace"] = ""
    found = check("pool-namespaces-bound", stack(job=bind_job(no_workspace)))
    assert found == ["resource pool 'l4': its DET_MAPPING entry names no namespace or no workspace"]


def test_namespaces_bound_before_workspaces_reads_kubernetes_namespace():
    assert check("pool-namespaces-bound", stack(old_master(), "0.29.0", job=None)) == []
    # Without a version annotation, the pools' own keys tell.
    assert check("pool-namespaces-bound", stack(old_master(), None, job=None)) == []
    found = check("pool-namespaces-bound", stack(old_master(), "0.34.0", ("determined", "det-l4"), job=None))
    assert found == [
        "resource pool 'aux': namespace 'det-aux' (master.yaml resource_pools[aux].kubernetes_namespace) is "
        "not a Namespace the stack creates"
    ]
    config = old_master()
    del config["resource_pools"][0]["kubernetes_namespace"]
    found = check("pool-namespaces-bound", stack(config, "0.34.0", job=None))
    assert found == [
        "resource pool 'l4': master.yaml resource_pools[l4].kubernetes_namespace is not set, so its tasks run "
        "in the master's namespace"
    ]


def test_namespaces_bound_needs_master_yaml():
    assert check("pool-namespaces-bound", [resource(NAMESPACE, namespace("det-l4"))]) == []


# --- master-yaml-known-keys ------------------------------------------------------------------


def known_keys(config: dict, version: str | None = "0.38.1") -> list[str]:
    return check("master-yaml-known-keys", args(SECRET, master_config(config, version)))


def test_known_keys_passes_the_projects_master_yaml():
    assert known_keys(gke_dev_master()) == []
    assert known_keys(old_master(), "0.29.0") == []


def test_known_keys_refuses_unknown_keys_and_keys_of_other_versions():
    config = gke_dev_master()
    config["notebook_timeot"] = 60
    found = known_keys(config)
    assert found == [
        "master.yaml notebook_timeot: unknown key: the master refuses to start (Determined 0.38.1)"
    ]
    # 0.34 still has resource_manager.namespace; default_namespace came with 0.35.
    found = known_keys(gke_dev_master(), "0.34.0")
    assert any(
        m.startswith("master.yaml resource_manager.default_namespace: not a key of Determined 0.34.0")
        for m in found
    )


def test_known_keys_never_echoes_a_secret():
    config = gke_dev_master()
    secret = config["db"]["password"]
    config["resource_manager"]["default_scheduler"] = secret  # a problem text that quotes the value
    found = known_keys(config)
    assert found == [
        "master.yaml resource_manager.default_scheduler: not accepted by Determined 0.38.1 (details withheld)"
    ]
    assert not any(secret in m for m in found)


def test_known_keys_counts_what_it_does_not_show():
    config = gke_dev_master()
    config.update({f"unknown_{i}": i for i in range(12)})
    found = known_keys(config)
    assert len(found) == determined.MAX_PROBLEMS + 1
    assert found[-1] == "master.yaml: 2 more key(s) Determined 0.38.1 refuses"


def test_known_keys_skips_versions_it_cannot_vouch_for():
    config = gke_dev_master() | {"no_such_key": 1}
    assert known_keys(config, "0.99.0") == []
    assert known_keys(config, None) == []
    assert known_keys(config, "latest") == []


def test_known_keys_ignores_other_secrets():
    other = master_config({"no_such_key": 1})
    other["metadata"]["name"] = "determined-db"
    assert check("master-yaml-known-keys", args(SECRET, other)) == []


# --- notebook-idle-timeout -------------------------------------------------------------------


def timeout(value: Any, context=None) -> list[str]:
    config = gke_dev_master()
    if value is None:
        del config["notebook_timeout"]
    else:
        config["notebook_timeout"] = value
    return check("notebook-idle-timeout", args(SECRET, master_config(config)), context or ctx("dev"))


def test_notebook_timeout_levels():
    assert rule("notebook-idle-timeout").level(ctx("dev")) == "advisory"
    assert rule("notebook-idle-timeout").level(ctx("prod")) == "mandatory"


def test_notebook_timeout_passes_a_positive_timeout():
    assert timeout(3600) == []
    assert timeout(1800, ctx("prod")) == []


def test_notebook_timeout_refuses_none_zero_and_nonsense():
    assert timeout(None) == [
        "master.yaml notebook_timeout is not set, so idle notebooks keep their GPUs until stopped"
    ]
    assert timeout(0, ctx("prod")) == [
        "master.yaml notebook_timeout is 0, so idle notebooks keep their GPUs until stopped"
    ]
    assert timeout("1h") == ["master.yaml notebook_timeout is not a number of seconds"]
    assert timeout(True) == ["master.yaml notebook_timeout is not a number of seconds"]


def test_notebook_timeout_ignores_other_resources():
    assert check("notebook-idle-timeout", args(NAMESPACE, namespace("determined"))) == []
