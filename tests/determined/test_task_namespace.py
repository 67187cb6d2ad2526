"""The default task namespace (0.35+): tasks of workspaces bound to no namespace and
checkpoint GC run in a namespace of their own, not beside the master and its database.

Facts from the master's source (determined-ai/determined), one test each below:

- RELEASE_NAMESPACE: from 0.35.0 the master looks for its own Service in the namespace the
  DET_RELEASE_NAMESPACE variable names, else in `default_namespace`; 0.34.0 looks in
  `resource_manager.namespace` only. So tasks may default elsewhere from 0.35 only, and the
  master then needs the variable (the Helm chart sets it from the pod's namespace).
- DEFAULT_NAMESPACE: a task whose workspace is bound to no namespace runs in
  `default_namespace`, whatever its pool.
- START_NAMESPACES: the master watches the default namespace and every bound one, and
  checks that the default one exists when it starts: its Role must be in each.
"""

from __future__ import annotations

import pytest
from component_args import make_args
from conftest import ROOT, raw_config

from components import versions
from components.config import ConfigError, load_config
from components.determined import (
    checkpoint_volumes,
    database,
    master,
    network_policies,
    resource_pools,
    workspaces,
)
from components.determined import master_yaml as master_config
from components.determined.master_yaml import MasterSecrets

RELEASE_NAMESPACE = {
    # tag: (the variable, where it is read for the Service lookup)
    "0.35.0": ("master/internal/rm/kubernetesrm/jobs.go:71", "jobs.go:426, 2403-2408"),
    "0.35.1": ("master/internal/rm/kubernetesrm/jobs.go:72", "jobs.go:442, 2500-2505"),
    "0.36.0": ("master/internal/rm/kubernetesrm/jobs.go:73", "jobs.go:428, 2424-2429"),
    "0.37.0": ("master/internal/rm/kubernetesrm/jobs.go:74", "jobs.go:429, 2436-2441"),
    "v0.38.0": ("master/internal/rm/kubernetesrm/jobs.go:75", "jobs.go:446, 2533-2538"),
    "v0.38.1": ("master/internal/rm/kubernetesrm/jobs.go:75", "jobs.go:446, 2533-2538"),
}
SERVICE_IN_NAMESPACE_BEFORE = "0.34.0:master/internal/rm/kubernetesrm/jobs.go:370"  # Services(j.namespace)
CHART_SETS_IT = "v0.38.1:helm/charts/determined/templates/master-deployment.yaml:41"
DEFAULT_NAMESPACE = "v0.38.1:master/internal/rm/kubernetesrm/resource_pool.go:613-616"
START_NAMESPACES = (
    "v0.38.1:master/internal/rm/kubernetesrm/jobs.go:156-168",  # bound namespaces + default
    "v0.38.1:master/internal/rm/kubernetesrm/kubernetes_resource_manager.go:110-114",  # default exists
)

SECRETS = MasterSecrets(
    db_password="Db-Pass-1", initial_user_password="Init-Pass-1", webhook_signing_key="K-1"
)


def master_yaml(cfg):
    return master_config.master_config(cfg, database.endpoint(cfg), SECRETS)


def env_of(deployment):
    (container,) = deployment["spec"]["template"]["spec"]["containers"]
    return {e["name"]: e for e in container.get("env", [])}


def test_the_release_namespace_is_read_from_0_35_on():
    assert versions.RELEASE_NAMESPACE_SINCE == versions.WORKSPACE_NAMESPACES_SINCE == (0, 35, 0)
    assert min(RELEASE_NAMESPACE) == "0.35.0"
    assert SERVICE_IN_NAMESPACE_BEFORE.startswith("0.34.0:")


@pytest.mark.parametrize("version", ["0.35.0", "0.36.0", "0.38.1"])
def test_from_0_35_tasks_default_to_their_own_namespace_and_the_master_finds_its_service(version):
    cfg = make_args(master={"version": version})
    assert cfg.default_task_namespace == "determined-tasks"
    assert master_yaml(cfg)["resource_manager"]["default_namespace"] == "determined-tasks"
    release = env_of(master.deployment(cfg, "sum"))[master.RELEASE_NAMESPACE_ENV]
    assert release == {
        "name": "DET_RELEASE_NAMESPACE",
        "valueFrom": {"fieldRef": {"fieldPath": "metadata.namespace"}},
    }
    # Its Service is where the variable says, which is where the master runs.
    assert master.service(cfg)["metadata"]["namespace"] == cfg.namespace


def test_before_0_35_the_default_namespace_stays_the_masters():
    cfg = make_args(master={"version": "0.34.0"})
    assert cfg.default_task_namespace == cfg.namespace == "determined"
    assert master_yaml(cfg)["resource_manager"]["namespace"] == "determined"
    assert master.RELEASE_NAMESPACE_ENV not in env_of(master.deployment(cfg, "sum"))
    assert cfg.task_namespaces == ["determined", "det-a100", "det-aux"]


def test_task_namespace_names_it():
    cfg = make_args(taskNamespace="ml-tasks", namespace="det")
    assert cfg.default_task_namespace == "ml-tasks"
    assert make_args(namespace="det").default_task_namespace == "det-tasks"
    assert cfg.task_namespaces == ["ml-tasks", "det-a100", "det-aux"]
    assert cfg.pod_namespaces == ["det", "ml-tasks", "det-a100", "det-aux"]
    # It may be a pool's: unbound workspaces then share that pool's namespace and quota.
    shared = make_args(taskNamespace="det-aux")
    assert shared.task_namespaces == ["det-aux", "det-a100"]
    assert [ns["metadata"]["name"] for ns in resource_pools.namespaces(shared)] == ["det-aux", "det-a100"]


@pytest.mark.parametrize(
    ("overrides", "expected"),
    [
        (
            {"taskNamespace": "x", "master": {"version": "0.34.0"}},
            "taskNamespace: needs master.version 0.35.0 or newer",
        ),
        ({"taskNamespace": "determined"}, "taskNamespace: 'determined' is the master's namespace"),
        ({"taskNamespace": "kube-system"}, "taskNamespace: 'kube-system' belongs to the cluster itself"),
        ({"namespace": "n" * 60}, "namespace: derives the task namespace"),
        ({"taskNamespace": "Not_A_Label"}, "taskNamespace"),
    ],
)
def test_task_namespace_problems_name_the_key(overrides, expected):
    with pytest.raises(ConfigError) as caught:
        load_config(raw_config(**overrides))
    lines = str(caught.value).splitlines()
    assert any(line.startswith(f"determined:{expected}") for line in lines), lines


def test_the_task_namespace_is_made_like_a_pool_namespace():
    cfg = make_args()
    (tasks, *pools) = resource_pools.namespaces(cfg)
    assert tasks["metadata"]["name"] == "determined-tasks"
    assert tasks["metadata"]["labels"]["app.kubernetes.io/name"] == "tasks"
    level = resource_pools.task_pod_security(cfg)
    assert tasks["metadata"]["labels"]["pod-security.kubernetes.io/enforce"] == level
    assert {p["metadata"]["labels"]["pod-security.kubernetes.io/enforce"] for p in pools} == {level}
    # The master's namespace is made apart (components/determined/determined.py), never here.
    assert cfg.namespace not in [ns["metadata"]["name"] for ns in resource_pools.namespaces(cfg)]


def test_the_master_has_its_full_role_in_every_task_namespace_and_only_its_service_in_its_own():
    cfg = make_args()
    roles = {r["metadata"]["namespace"]: r for r in master.namespace_roles(cfg) if r["kind"] == "Role"}
    assert list(roles) == cfg.pod_namespaces == ["determined", "determined-tasks", "det-a100", "det-aux"]
    assert roles["determined"]["rules"] == [
        {
            "apiGroups": [""],
            "resources": ["services"],
            "verbs": ["get"],
            "resourceNames": ["determined-master-service"],
        }
    ]
    for ns in cfg.task_namespaces:
        rules = roles[ns]["rules"]
        granted = {(res, verb) for rule in rules for res in rule["resources"] for verb in rule["verbs"]}
        # What it lists at start and does with tasks there, and the namespace it checks exists.
        assert ("jobs", "list") in granted
        assert {("pods", "list"), ("pods", "watch"), ("events", "list"), ("configmaps", "list")} <= granted
        assert {
            "apiGroups": [""],
            "resources": ["namespaces"],
            "verbs": ["get"],
            "resourceNames": [ns],
        } in rules


def test_task_service_accounts_and_shared_objects_follow_the_pods():
    cfg = make_args(
        registryCredentials={"server": "ghcr.io", "username": "u", "password": "p"},
        master={"caBundle": (ROOT / "tests" / "data" / "test-ca.pem").read_text()},
    )
    accounts = resource_pools.task_service_accounts(cfg, {})
    assert [a["metadata"]["namespace"] for a in accounts] == cfg.task_namespaces
    shared = resource_pools.namespace_objects(cfg, "{}")
    for kind in ("Secret", "ConfigMap"):
        # The master's namespace too: the master and its Jobs pull and trust with them.
        assert [o["metadata"]["namespace"] for o in shared if o["kind"] == kind] == cfg.pod_namespaces


def test_nfs_checkpoints_are_bound_wherever_pods_mount_them():
    cfg = make_args(
        checkpointStorage={"type": "directory", "nfs": {"server": "10.0.0.2", "path": "/ckpt"}, "size": "1Ti"}
    )
    claims = [o for o in checkpoint_volumes.objects(cfg) if o["kind"] == "PersistentVolumeClaim"]
    assert [c["metadata"]["namespace"] for c in claims] == cfg.pod_namespaces


def test_the_task_namespace_is_fenced_like_a_pool_namespace():
    cfg = make_args(checkpointStorage={"type": "s3", "bucket": "ckpt-bucket"})
    policies = {(p["metadata"]["namespace"], p["metadata"]["name"]): p for p in network_policies.objects(cfg)}
    tasks = policies[("determined-tasks", network_policies.TASKS_POLICY)]
    assert tasks == network_policies.task_policy(cfg, "determined-tasks")
    assert tasks["spec"]["podSelector"] == {}  # every pod there is a task pod
    assert "Egress" not in tasks["spec"]["policyTypes"]
    # No task runs in the master's namespace any more: its default deny holds for all but its own pods.
    assert ("determined", network_policies.TASKS_POLICY) not in policies
    peers = network_policies.master_clients(cfg)
    assert network_policies.pods(network_policies.TASK_PODS, "determined-tasks") in peers


def test_the_binding_job_moves_workspaces_back_to_it():
    cfg = make_args()
    assert workspaces.namespaces(cfg) == {"default": "determined-tasks", "tasks": cfg.task_namespaces}
