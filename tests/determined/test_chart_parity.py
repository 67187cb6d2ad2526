"""Chart-parity keys as the master and the cluster receive them: master.yaml per version
(components.determined.master_yaml), the project's own pods (master, database, workspace Job), the
master's Service, the objects made in every namespace pods run in, and every task pod spec.

Invariants users rely on: every pod names the same pull Secrets and the project's own exists
wherever such a pod runs; the CA volume names of the init container, the volumes and the
mounts agree; every master.yaml passes the master's checks for its version; every object and
task pod spec validates strictly; no registry or Elasticsearch password is ever written in
clear by the plan (the fixture stack tests/fixtures/stacks/Pulumi.chart-parity.yaml).
"""

from __future__ import annotations

import base64
import json

import pytest
import yaml
from component_args import make_args
from conftest import BASE, EKS, ROOT, raw_config
from planning import files, planned

from components import constants, versions
from components.config import ConfigError, load_config, master_yaml_schema
from components.config.resource_pools import LogPolicy
from components.config.syntax import quantity_value
from components.determined import (
    ca_bundle,
    database,
    master,
    registry,
    resource_pools,
    workspaces,
)
from components.determined import master_yaml as master_yaml_module
from components.determined.master_yaml import MasterSecrets
from components.kube import validation
from plan import runner
from plan.redaction import unwrap
from stack_args import determined_args

SECRETS = MasterSecrets(
    db_password="Db-Pass-1", initial_user_password="Init-Pass-1", webhook_signing_key="Sign-Key-1"
)
# A real CA certificate: master.caBundle must parse as X.509 (components/config/syntax.py).
PEM = (ROOT / "tests" / "data" / "test-ca.pem").read_text()
CREDENTIALS = {"server": "mirror.example.com", "username": "robot", "password": "Registry-Token-1"}
TLS_SECRET = {"source": "secret", "secretName": "det-tls"}
TLS_MASTER = {
    "mode": "master",
    "host": "det.example.com",
    "certificate": TLS_SECRET,
    "sourceRanges": ["203.0.113.0/24", "10.0.0.0/8"],
}
TLS_INGRESS = {"mode": "ingress", "host": "det.example.com", "certificate": TLS_SECRET}
PROXY = {"httpProxy": "http://proxy.example.com:3128", "httpsProxy": "http://proxy.example.com:3129"}
MASTER_IMAGE = "mirror.example.com/determinedai/determined-master:0.38.1"
ELASTIC = {
    "type": "elastic",
    "host": "es.logging.svc.cluster.local",
    "port": 9201,
    "security": {"username": "det", "password": "Elastic-Pass-1", "tls": True},
}

GKE = {
    "cloud": "gke",
    "cluster": {"name": "det", "region": "us-central1", "project": "p"},
    "nodePools": [
        {"name": "spot-cpu", "machineType": "e2-standard-8", "spot": True},
        {"name": "system", "machineType": "e2-standard-8"},
        {"name": "a100", "machineType": "a2-highgpu-4g", "gpu": {"type": "nvidia-tesla-a100", "count": 4}},
    ],
    "resourcePools": [{"name": "a100", "nodePool": "a100"}, {"name": "aux", "nodePool": "system"}],
}


def build(cfg, secrets=SECRETS):
    return master_yaml_module.master_config(cfg, database.endpoint(cfg), secrets)


def everything(version: str = "0.38.1", master_extra=None, **overrides):
    """A config setting every chart-parity key the version has (`master_extra`: more master
    keys; `overrides`: top-level keys replaced)."""
    v = versions.parse_version(version)
    tcd = {
        "images": {"cpu": "mirror.example.com/det/pytorch:1", "gpu": "mirror.example.com/det/pytorch-gpu:1"},
        "forcePullImage": True,
        "env": {"NCCL_DEBUG": "INFO"},
        "shmSizeBytes": 8589934592,
        "networkMode": "host",
        "dtrainNetworkInterface": "eth1",
        "cpuPodSpec": {"priorityClassName": "determined-medium-priority"},
    }
    master_keys = {
        "version": version,
        "image": MASTER_IMAGE,
        "logLevel": "debug",
        "notebookTimeout": 1800,
        "tensorboardTimeout": 600,
        "webhooks": {"baseUrl": "https://hooks.example.com"},
        "defaultTaskUser": {"uid": 1000, "gid": 1001, "user": "det", "group": "det-group"},
        "observability": {"enablePrometheus": True},
        "logging": ELASTIC,
        "caBundle": PEM,
        "proxy": {**PROXY, "noProxy": ".example.internal"},
        "nodePool": "system",
        "resources": {"requests": {"cpu": "1", "memory": "4Gi"}, "limits": {"memory": "8Gi"}},
        "podAnnotations": {"prometheus.io/scrape": "true"},
        "env": {"GODEBUG": "http2client=0"},
        **(master_extra or {}),
    }
    if v >= versions.LOG_RETENTION_SINCE:
        master_keys["retention"] = {"logRetentionDays": 90, "schedule": "0 3 * * *"}
        tcd["startupHook"] = "pip install -r /mnt/requirements.txt"
    if v >= versions.LOG_POLICIES_SINCE:
        policy = {"pattern": ".*CUDA out of memory.*", "action": "cancel_retries"}
        if v >= versions.LOG_POLICY_NAME_SINCE:
            policy["name"] = "CUDA OOM"
        tcd["logPolicies"] = [policy, {"pattern": ".*ECC error.*", "action": "exclude_node"}]
    raw = raw_config(
        imagePullSecrets=["regcred"],
        registryCredentials=CREDENTIALS,
        master=master_keys,
        database={
            "image": "mirror.example.com/library/postgres:17.6",
            "resources": {"requests": {"cpu": "1", "memory": "2Gi"}, "limits": {"memory": "4Gi"}},
            "parameters": {"max_connections": 200, "work_mem": "64MB"},
        },
        taskContainerDefaults=tcd,
    )
    raw.update(overrides)
    return determined_args(load_config(raw))


def task_pod_specs(config):
    """(where, pod) for every task pod spec in a master.yaml document."""
    found = [
        (f"task_container_defaults.{key}", spec)
        for key, spec in config.get("task_container_defaults", {}).items()
        if key.endswith("_pod_spec")
    ]
    for pool in config["resource_pools"]:
        found += [
            (f"resource_pools[{pool['pool_name']}].{key}", spec)
            for key, spec in pool["task_container_defaults"].items()
            if key.endswith("_pod_spec")
        ]
    return found


def system_pods(cfg):
    """(object, pod spec) of every pod the project runs itself."""
    objects = [
        master.deployment(cfg, "checksum"),
        database.statefulset(cfg),
        workspaces.job(cfg, "determined-bind-workspaces", "password", "abc123"),
    ]
    return [(obj, obj["spec"]["template"]["spec"]) for obj in objects]


def task_container(pod):
    (container,) = [c for c in pod["spec"]["containers"] if c["name"] == constants.TASK_CONTAINER]
    return container


def env_of(container):
    return {e["name"]: e.get("value") for e in container.get("env", [])}


# --- master.yaml -------------------------------------------------------------------------------


VERSIONS = ["0.26.0", "0.26.4", "0.29.0", "0.30.1", "0.31.0", "0.34.0", "0.35.0", "0.37.0", "0.38.1"]


@pytest.mark.parametrize("version", VERSIONS)
def test_master_yaml_with_every_key_passes_the_masters_checks_at_each_version(version):
    assert master_yaml_schema.check(build(everything(version)), version) == []


@pytest.mark.parametrize("version", VERSIONS)
def test_master_yaml_with_tls_master_and_an_exposed_service_passes_the_masters_checks(version):
    cfg = everything(version, {"service": {"type": "LoadBalancer"}}, tls=TLS_MASTER)
    assert master_yaml_schema.check(build(cfg), version) == []


def test_master_settings_are_written_as_the_master_reads_them():
    config = build(everything())
    assert config["log"] == {"level": "debug", "color": False}
    assert config["notebook_timeout"] == 1800
    assert config["tensorboard_timeout"] == 600
    assert config["retention_policy"] == {"log_retention_days": 90, "schedule": "0 3 * * *"}
    assert config["webhooks"] == {"base_url": "https://hooks.example.com", "signing_key": "Sign-Key-1"}
    assert config["security"]["default_task"] == {
        "uid": 1000,
        "gid": 1001,
        "user": "det",
        "group": "det-group",
    }
    assert config["security"]["initial_user_password"] == "Init-Pass-1"
    assert config["observability"] == {"enable_prometheus": True}
    assert config["logging"] == {
        "type": "elastic",
        "host": "es.logging.svc.cluster.local",
        "port": 9201,
        "security": {"username": "det", "password": "Elastic-Pass-1", "tls": {"enabled": True}},
    }


def test_defaults_idle_timeouts_webhook_key_and_no_logging_section():
    config = build(make_args())
    assert config["log"]["level"] == "info"
    assert config["notebook_timeout"] == 3600
    assert config["tensorboard_timeout"] == 300
    assert config["observability"] == {"enable_prometheus": False}
    # Without tls there is no public address to link to, but payloads are still signed.
    assert config["webhooks"] == {"signing_key": "Sign-Key-1"}
    assert "logging" not in config and "retention_policy" not in config
    assert "default_task" not in config.get("security", {})


def test_a_notebook_timeout_of_zero_means_never_and_leaves_the_key_out():
    config = build(make_args(master={"notebookTimeout": 0}))
    assert "notebook_timeout" not in config
    assert master_yaml_schema.check(config, "0.38.1") == []


@pytest.mark.parametrize("tls", [TLS_INGRESS, TLS_MASTER], ids=["ingress", "master"])
def test_webhook_links_default_to_the_public_host(tls):
    assert build(make_args(tls=tls))["webhooks"] == {
        "base_url": "https://det.example.com",
        "signing_key": "Sign-Key-1",
    }
    given = build(make_args(tls=tls, master={"webhooks": {"baseUrl": "https://other.example.com"}}))
    assert given["webhooks"]["base_url"] == "https://other.example.com"


def test_a_preview_shows_no_secret_of_the_new_keys():
    config = build(everything(), MasterSecrets.redacted())
    assert config["webhooks"]["signing_key"] == constants.REDACTED
    assert config["logging"]["security"]["password"] == constants.REDACTED
    assert "Elastic-Pass-1" not in json.dumps(config)


def test_the_default_task_user_is_written_where_the_initial_password_is_not():
    config = build(everything("0.26.0"))
    assert config["security"] == {
        "default_task": {"uid": 1000, "gid": 1001, "user": "det", "group": "det-group"}
    }


def test_task_defaults_are_written_at_the_top_and_in_every_pool_alike():
    config = build(everything())
    expected = {
        "shm_size_bytes": 8589934592,
        "network_mode": "host",
        "image": {"cpu": "mirror.example.com/det/pytorch:1", "gpu": "mirror.example.com/det/pytorch-gpu:1"},
        "force_pull_image": True,
        "environment_variables": ["NCCL_DEBUG=INFO"],
        "dtrain_network_interface": "eth1",
        "startup_hook": "pip install -r /mnt/requirements.txt",
        "log_policies": [
            {"name": "CUDA OOM", "pattern": ".*CUDA out of memory.*", "action": {"type": "cancel_retries"}},
            {"pattern": ".*ECC error.*", "action": {"type": "exclude_node"}},
        ],
    }
    sections = [config["task_container_defaults"]] + [
        p["task_container_defaults"] for p in config["resource_pools"]
    ]
    assert len(sections) == 3
    for section in sections:
        assert {k: section.get(k) for k in expected} == expected


def test_pool_sections_carry_the_masters_defaults_even_when_nothing_is_configured():
    # A pool's task_container_defaults brings its own shm size and network mode over the top
    # one's: the configured (or default) values must be in each pool too.
    config = build(make_args(taskContainerDefaults={"shmSizeBytes": 1024}))
    for pool in config["resource_pools"]:
        assert pool["task_container_defaults"]["shm_size_bytes"] == 1024
        assert pool["task_container_defaults"]["network_mode"] == "bridge"
    assert config["task_container_defaults"]["shm_size_bytes"] == 1024


@pytest.mark.parametrize(
    ("version", "startup_hook", "policy_names", "retention"),
    [
        ("0.26.4", False, False, False),
        ("0.30.1", False, False, False),
        ("0.31.0", True, False, True),
        ("0.37.0", True, False, True),
        ("0.38.0", True, True, True),
    ],
)
def test_version_dependent_keys_are_written_only_where_the_master_has_them(
    version, startup_hook, policy_names, retention
):
    config = build(everything(version))
    for section in [config["task_container_defaults"]] + [
        p["task_container_defaults"] for p in config["resource_pools"]
    ]:
        assert ("startup_hook" in section) is startup_hook
        assert "log_policies" in section
        assert any("name" in policy for policy in section["log_policies"]) is policy_names
    assert ("retention_policy" in config) is retention


def test_keys_a_version_lacks_are_left_out_even_when_the_config_holds_them():
    # The config refuses them (tests/config); master.yaml never carries them either.
    cfg = make_args(master={"version": "0.30.1"})
    tcd = cfg.task_container_defaults.model_copy(
        update={
            "startup_hook": "echo hi",
            "log_policies": [LogPolicy(name="oom", pattern="OOM", action="cancel_retries")],
        }
    )
    config = build(cfg.model_copy(update={"task_container_defaults": tcd}))
    assert master_yaml_schema.check(config, "0.30.1") == []
    for section in [config["task_container_defaults"]] + [
        p["task_container_defaults"] for p in config["resource_pools"]
    ]:
        assert "startup_hook" not in section
        assert section["log_policies"] == [{"pattern": "OOM", "action": {"type": "cancel_retries"}}]


def test_log_policies_are_not_written_before_0_26_4():
    config = build(everything("0.26.0"))
    assert "log_policies" not in config["task_container_defaults"]


def test_an_empty_log_policy_list_is_written_to_clear_the_masters_defaults():
    # 0.38 masters bring default policies; an empty list is the way to turn them off.
    config = build(make_args(taskContainerDefaults={"logPolicies": []}))
    assert config["task_container_defaults"]["log_policies"] == []
    assert all(p["task_container_defaults"]["log_policies"] == [] for p in config["resource_pools"])


# --- the project's own pods ----------------------------------------------------------------------


def test_the_master_pod_uses_the_image_pool_resources_annotations_and_env():
    cfg = everything()
    deployment = master.deployment(cfg, "checksum")
    template = deployment["spec"]["template"]
    pod = template["spec"]
    (container,) = pod["containers"]
    assert container["image"] == MASTER_IMAGE
    assert pod["nodeSelector"] == {"pool": "system"}
    assert pod["imagePullSecrets"] == [{"name": "regcred"}, {"name": constants.REGISTRY_SECRET}]
    assert container["resources"]["requests"] == {"cpu": "1", "memory": "4Gi"}
    assert container["resources"]["limits"]["memory"] == "8Gi"
    assert template["metadata"]["annotations"] == {
        "prometheus.io/scrape": "true",
        "checksum/config": "checksum",
    }
    env = env_of(container)
    assert env["GODEBUG"] == "http2client=0"
    assert env["HTTP_PROXY"] == env["http_proxy"] == "http://proxy.example.com:3128"
    assert env["HTTPS_PROXY"] == env["https_proxy"] == "http://proxy.example.com:3129"
    assert env["SSL_CERT_DIR"] == f"/etc/ssl/certs:{ca_bundle.MOUNT_DIR}"
    assert list(validation.problems(deployment)) == []


def test_the_users_env_comes_first_and_is_never_repeated():
    cfg = make_args(master={"env": {"HTTP_PROXY": "http://mine:1"}, "proxy": PROXY})
    (container,) = master.deployment(cfg, "c")["spec"]["template"]["spec"]["containers"]
    names = [e["name"] for e in container["env"]]
    assert len(names) == len(set(names))
    assert env_of(container)["HTTP_PROXY"] == "http://mine:1"


def test_a_pod_annotation_never_replaces_the_config_checksum_that_rolls_the_master():
    cfg = make_args(master={"podAnnotations": {"checksum/config": "mine", "team": "ml"}})
    annotations = master.deployment(cfg, "computed")["spec"]["template"]["metadata"]["annotations"]
    assert annotations == {"checksum/config": "computed", "team": "ml"}


def test_the_master_image_defaults_to_the_registry_and_version():
    cfg = make_args(master={"version": "0.37.0", "imageRegistry": "mirror.example.com/det"})
    (container,) = master.deployment(cfg, "c")["spec"]["template"]["spec"]["containers"]
    assert container["image"] == "mirror.example.com/det/determined-master:0.37.0"


def test_the_database_pod_uses_the_image_resources_parameters_and_pool():
    cfg = everything()
    sts = database.statefulset(cfg)
    pod = sts["spec"]["template"]["spec"]
    (container,) = pod["containers"]
    assert container["image"] == "mirror.example.com/library/postgres:17.6"
    assert container["resources"] == {"requests": {"cpu": "1", "memory": "2Gi"}, "limits": {"memory": "4Gi"}}
    args = container["args"]
    settings = dict(args[i + 1].split("=", 1) for i in range(0, len(args), 2) if args[i] == "-c")
    assert settings == {"max_connections": "200", "shared_buffers": "512MB", "work_mem": "64MB"}
    assert pod["nodeSelector"] == {"pool": "system"}
    assert pod["imagePullSecrets"] == [{"name": "regcred"}, {"name": constants.REGISTRY_SECRET}]
    assert list(validation.problems(sts)) == []


@pytest.mark.parametrize(
    ("section", "resources"),
    [
        ("master", {"limits": {"memory": "16Gi"}}),
        ("master", {"requests": {"cpu": "500m", "memory": "1Gi"}, "limits": {"cpu": "1", "memory": "2Gi"}}),
        ("database", {"requests": {"memory": "1Gi"}, "limits": {"memory": "2Gi"}}),
        pytest.param(
            "master",
            {"limits": {"memory": "4Gi"}},
            id="master-limit-below-default-memory",
        ),
        pytest.param(
            "master",
            {"requests": {"cpu": "4"}, "limits": {"cpu": "2"}},
            id="master-requests-over-limits",
        ),
        pytest.param(
            "database",
            {"requests": {"memory": "8Gi"}, "limits": {"memory": "4Gi"}},
            id="database-requests-over-limits",
        ),
    ],
)
def test_a_container_never_requests_more_than_its_limit(section, resources):
    """Refused in the config, or rendered so that Kubernetes accepts it."""
    try:
        cfg = make_args(**{section: {"resources": resources}})
    except ConfigError as error:
        assert all(p.path.startswith(f"{section}.resources") for p in error.problems)
        return
    obj = master.deployment(cfg, "c") if section == "master" else database.statefulset(cfg)
    (container,) = obj["spec"]["template"]["spec"]["containers"]
    requests, limits = container["resources"].get("requests", {}), container["resources"].get("limits", {})
    for name in set(requests) & set(limits):
        assert quantity_value(requests[name]) <= quantity_value(limits[name]), (name, container["resources"])


def test_the_database_defaults_stay_without_the_new_keys():
    (container,) = database.statefulset(make_args())["spec"]["template"]["spec"]["containers"]
    assert container["image"] == versions.POSTGRES_IMAGE
    assert container["resources"] == constants.DB_RESOURCES


def test_the_workspace_job_runs_on_the_master_pool_with_the_pull_secrets():
    cfg = everything()
    job = workspaces.job(cfg, "determined-bind-workspaces", "password", "abc123")
    pod = job["spec"]["template"]["spec"]
    assert pod["nodeSelector"] == {"pool": "system"}
    assert pod["imagePullSecrets"] == [{"name": "regcred"}, {"name": constants.REGISTRY_SECRET}]
    assert list(validation.problems(job)) == []


def test_system_pods_skip_a_spot_pool_for_the_first_on_demand_one():
    cfg = determined_args(load_config(GKE))
    for obj, pod in system_pods(cfg):
        assert pod["nodeSelector"] == {constants.NODE_POOL_LABEL: "system"}, obj["kind"]
        assert "imagePullSecrets" not in pod, obj["kind"]


def test_system_pods_follow_a_named_master_pool():
    other = {"name": "other", "nodeSelector": {"pool": "other"}}
    cfg = make_args(nodePools=[*BASE["nodePools"], other], master={"nodePool": "other"})
    for obj, pod in system_pods(cfg):
        assert pod["nodeSelector"] == {"pool": "other"}, obj["kind"]


# --- the master's Service -------------------------------------------------------------------------


def test_the_master_service_is_cluster_ip_by_default_with_the_annotations_given():
    svc = master.service(make_args(master={"service": {"annotations": {"team": "ml"}}}))
    assert svc["spec"]["type"] == "ClusterIP"
    assert svc["metadata"]["annotations"] == {"team": "ml"}
    assert "loadBalancerSourceRanges" not in svc["spec"]
    assert list(validation.problems(svc)) == []


def test_a_load_balancer_for_a_master_ending_tls_keeps_the_source_ranges():
    cfg = make_args(tls=TLS_MASTER, master={"service": {"type": "LoadBalancer", "annotations": {"a": "b"}}})
    svc = master.service(cfg)
    assert svc["spec"]["type"] == "LoadBalancer"
    assert svc["spec"]["loadBalancerSourceRanges"] == ["203.0.113.0/24", "10.0.0.0/8"]
    assert svc["metadata"]["annotations"] == {"a": "b"}
    assert svc["spec"]["ports"][0]["port"] == constants.MASTER_SERVICE_PORT
    assert list(validation.problems(svc)) == []


@pytest.mark.parametrize(
    ("raw", "annotation"),
    [
        (
            {**GKE, "tls": {**TLS_MASTER, "exposure": "internal"}},
            {"networking.gke.io/load-balancer-type": "Internal"},
        ),
        (
            {**EKS, "tls": {**TLS_MASTER, "exposure": "internal"}},
            {
                "service.beta.kubernetes.io/aws-load-balancer-type": "nlb",
                "service.beta.kubernetes.io/aws-load-balancer-internal": "true",
            },
        ),
    ],
    ids=["gke", "eks"],
)
def test_an_internal_exposure_makes_the_masters_load_balancer_internal(raw, annotation):
    raw = {**raw, "master": {"service": {"type": "LoadBalancer", "annotations": {"mine": "x"}}}}
    svc = master.service(determined_args(load_config(raw)))
    assert svc["metadata"]["annotations"] == {**annotation, "mine": "x"}


def test_a_node_port_for_a_master_ending_tls():
    tls = {k: v for k, v in TLS_MASTER.items() if k != "sourceRanges"}
    svc = master.service(make_args(tls=tls, master={"service": {"type": "NodePort"}}))
    assert svc["spec"]["type"] == "NodePort"
    assert list(validation.problems(svc)) == []


def test_a_node_port_cannot_keep_to_the_source_ranges():
    with pytest.raises(ConfigError) as error:
        make_args(tls=TLS_MASTER, master={"service": {"type": "NodePort"}})
    assert [p.path for p in error.value.problems] == ["master.service.type"]


# --- objects in every namespace pods run in ----------------------------------------------------


def test_the_registry_secret_and_ca_config_map_are_made_in_every_namespace_pods_run_in():
    cfg = everything()
    objects = resource_pools.namespace_objects(cfg, "{}")
    secrets = {(o["metadata"]["namespace"], o["metadata"]["name"]) for o in objects if o["kind"] == "Secret"}
    maps = {(o["metadata"]["namespace"], o["metadata"]["name"]) for o in objects if o["kind"] == "ConfigMap"}
    namespaces = {"determined", "determined-tasks", "det-a100", "det-aux"}
    assert secrets == {(ns, constants.REGISTRY_SECRET) for ns in namespaces}
    assert maps == {(ns, constants.CA_BUNDLE_CONFIG_MAP) for ns in namespaces}
    for obj in objects:
        assert list(validation.problems(obj)) == []
        if obj["kind"] == "Secret":
            assert obj["type"] == "kubernetes.io/dockerconfigjson"
            assert set(obj["stringData"]) == {".dockerconfigjson"}
        else:
            assert obj["data"] == {ca_bundle.FILE: PEM}


def test_nothing_is_made_without_credentials_or_pem():
    assert resource_pools.namespace_objects(make_args(imagePullSecrets=["regcred"])) == []
    assert resource_pools.namespace_objects(make_args(master={"caBundleSecret": "extra-cas"})) == []


def test_namespaces_before_0_35_are_the_pools_own():
    cfg = everything("0.34.0")
    made = {o["metadata"]["namespace"] for o in resource_pools.namespace_objects(cfg, "{}")}
    pool_namespaces = {p["kubernetes_namespace"] for p in build(cfg)["resource_pools"]}
    assert pool_namespaces <= made and cfg.namespace in made


def test_the_docker_config_is_what_kubelet_reads():
    document = json.loads(registry.docker_config("mirror.example.com", "robot", "Registry-Token-1"))
    entry = document["auths"]["mirror.example.com"]
    assert entry["username"] == "robot" and entry["password"] == "Registry-Token-1"
    assert base64.b64decode(entry["auth"]).decode() == "robot:Registry-Token-1"


# --- invariants over every pod --------------------------------------------------------------------


@pytest.mark.parametrize("version", ["0.34.0", "0.38.1"])
@pytest.mark.parametrize(
    "pull",
    [
        {"imagePullSecrets": ["regcred", "other"]},
        {"registryCredentials": CREDENTIALS},
        {"imagePullSecrets": ["regcred"], "registryCredentials": CREDENTIALS},
    ],
    ids=["named", "credentials", "both"],
)
def test_every_pod_names_the_pull_secrets_and_the_projects_own_exists_wherever_one_runs(version, pull):
    cfg = determined_args(load_config(raw_config(master={"version": version}, **pull)))
    expected = [{"name": name} for name in cfg.pull_secrets]
    assert expected
    pods = [(obj["kind"], pod) for obj, pod in system_pods(cfg)]
    pods += [(where, pod["spec"]) for where, pod in task_pod_specs(build(cfg))]
    # Top: cpu, gpu, checkpoint GC; each of two pools the same three.
    assert len(pods) == 3 + 9
    for where, pod in pods:
        assert pod.get("imagePullSecrets") == expected, where
    made = {
        o["metadata"]["namespace"]
        for o in resource_pools.namespace_objects(cfg, "{}")
        if o["kind"] == "Secret" and o["metadata"]["name"] == constants.REGISTRY_SECRET
    }
    if cfg.registry_credentials:
        assert made == {cfg.namespace, *cfg.task_namespaces}
    else:
        assert made == set()


@pytest.mark.parametrize("ca", [{"caBundle": PEM}, {"caBundleSecret": "extra-cas"}], ids=["pem", "secret"])
def test_the_ca_volume_names_agree_between_init_container_volumes_and_mounts(ca):
    cfg = make_args(master=ca)
    source = (
        {"configMap": {"name": constants.CA_BUNDLE_CONFIG_MAP}}
        if "caBundle" in ca
        else {"secret": {"secretName": "extra-cas"}}
    )
    # The master.
    pod = master.deployment(cfg, "c")["spec"]["template"]["spec"]
    volumes = {v["name"]: v for v in pod["volumes"]}
    (container,) = pod["containers"]
    for mount in container["volumeMounts"]:
        assert mount["name"] in volumes, mount
    (ca_mount,) = [m for m in container["volumeMounts"] if m["mountPath"] == ca_bundle.MOUNT_DIR]
    assert {k: v for k, v in volumes[ca_mount["name"]].items() if k != "name"} == source
    assert env_of(container)["SSL_CERT_DIR"].split(":")[-1] == ca_bundle.MOUNT_DIR
    # Every task pod.
    specs = task_pod_specs(build(cfg))
    assert len(specs) == 9
    for where, task in specs:
        spec = task["spec"]
        volumes = {v["name"]: v for v in spec["volumes"]}
        assert len(volumes) == len(spec["volumes"]), where
        (init,) = [c for c in spec["initContainers"] if c["name"] == "determined-ca-bundle"]
        mounts = {m["mountPath"]: m["name"] for m in init["volumeMounts"]}
        assert set(mounts.values()) <= set(volumes), where
        assert {k: v for k, v in volumes[mounts[ca_bundle.MOUNT_DIR]].items() if k != "name"} == source, where
        trust = mounts[ca_bundle.TRUST_DIR]
        assert "emptyDir" in volumes[trust], where
        # What the init container writes is what the task container reads.
        assert init["command"][-1].endswith(f"> {ca_bundle.TRUST_FILE}"), where
        assert f"{ca_bundle.MOUNT_DIR}/*" in init["command"][-1], where
        container = task_container(task)
        (read,) = [m for m in container["volumeMounts"] if m["mountPath"] == ca_bundle.TRUST_DIR]
        assert read["name"] == trust and read["readOnly"], where
        env = env_of(container)
        for name in ca_bundle.TASK_ENV:
            assert env[name] == ca_bundle.TRUST_FILE, (where, name)
        assert validation.template_problems(task) == [], where


def test_the_ca_config_map_tasks_mount_is_the_one_made_in_their_namespace():
    cfg = make_args(master={"caBundle": PEM})
    made = {
        (o["metadata"]["namespace"], o["metadata"]["name"])
        for o in resource_pools.namespace_objects(cfg)
        if o["kind"] == "ConfigMap"
    }
    for rp in cfg.resource_pools:
        assert (rp.namespace_name, constants.CA_BUNDLE_CONFIG_MAP) in made
    assert (cfg.namespace, constants.CA_BUNDLE_CONFIG_MAP) in made


def test_the_ca_init_container_uses_the_masters_image():
    cfg = everything()
    for where, task in task_pod_specs(build(cfg)):
        (init,) = task["spec"]["initContainers"]
        assert init["image"] == MASTER_IMAGE, where


def test_without_extra_cas_or_proxy_task_pods_get_no_init_container_or_env():
    for where, task in task_pod_specs(build(make_args())):
        assert "initContainers" not in task["spec"], where
        names = set(env_of(task_container(task)))
        assert not names & {"SSL_CERT_FILE", "HTTP_PROXY", "NO_PROXY"}, where


@pytest.mark.parametrize(
    ("raw", "cidrs"),
    [
        (raw_config(), []),
        (GKE, ["10.36.0.0/20"]),
        (EKS, ["10.100.0.0/16", "172.20.0.0/16"]),
    ],
    ids=["existing", "gke", "eks"],
)
def test_cluster_internal_addresses_always_bypass_the_proxy(raw, cidrs):
    cfg = determined_args(
        load_config({**raw, "master": {"proxy": {**PROXY, "noProxy": " .corp.internal , 10.96.0.0/12,"}}})
    )
    (container,) = master.deployment(cfg, "c")["spec"]["template"]["spec"]["containers"]
    master_env = env_of(container)
    direct = master_env["NO_PROXY"].split(",")
    assert direct == [
        ".svc",
        ".cluster.local",
        "localhost",
        "127.0.0.1",
        *cidrs,
        ".corp.internal",
        "10.96.0.0/12",
    ]
    assert master_env["no_proxy"] == master_env["NO_PROXY"]
    # Tasks get the same settings.
    for where, task in task_pod_specs(build(cfg)):
        env = env_of(task_container(task))
        for name in ("HTTP_PROXY", "http_proxy", "HTTPS_PROXY", "https_proxy", "NO_PROXY", "no_proxy"):
            assert env[name] == master_env[name], (where, name)


def test_a_task_master_address_under_tls_master_bypasses_the_proxy():
    cfg = make_args(tls=TLS_MASTER, master={"proxy": PROXY})
    host = build(cfg)["resource_manager"]["determined_master_host"]
    (container,) = master.deployment(cfg, "c")["spec"]["template"]["spec"]["containers"]
    suffixes = [s for s in env_of(container)["NO_PROXY"].split(",") if s.startswith(".")]
    assert any(host.endswith(suffix) for suffix in suffixes), host


@pytest.mark.parametrize("version", ["0.26.0", "0.34.0", "0.38.1"])
def test_every_object_and_task_pod_spec_validates_strictly(version):
    cfg = everything(version, {"service": {"type": "LoadBalancer"}}, tls=TLS_MASTER)
    objects = [obj for obj, _ in system_pods(cfg)]
    objects += [master.service(cfg), *resource_pools.namespace_objects(cfg, "{}")]
    for obj in objects:
        assert list(validation.problems(obj)) == [], (obj["kind"], obj["metadata"]["name"])
    for where, pod in task_pod_specs(build(cfg)):
        assert validation.template_problems(pod) == [], where


# --- the plan of the fixture stack -----------------------------------------------------------------

SECRET_TEXTS = ["Registry-Token-1", "Elastic-Pass-1"]


@pytest.fixture(scope="module")
def parity():
    return planned("chart-parity")


@pytest.fixture(scope="module")
def parity_files(parity, tmp_path_factory):
    out = tmp_path_factory.mktemp("parity") / "plan"
    runner.write(parity, out)
    return files(out)


def _encodings(text):
    yield text
    yield base64.b64encode(text.encode()).decode()
    yield base64.b64encode(f"robot:{text}".encode()).decode()


def test_no_registry_or_elastic_password_is_written_by_the_plan(parity_files):
    assert "master.yaml" in parity_files
    assert any(name.startswith("manifests/") for name in parity_files)
    for name, content in parity_files.items():
        text = content.decode(errors="replace")
        for secret in SECRET_TEXTS:
            for needle in _encodings(secret):
                assert needle not in text, (name, secret)


def test_the_registry_secret_is_shown_redacted_in_every_namespace(parity):
    secrets = [
        m
        for m in parity.manifests
        if m["kind"] == "Secret" and m["metadata"]["name"] == constants.REGISTRY_SECRET
    ]
    assert {s["metadata"]["namespace"] for s in secrets} == {
        "determined",
        "determined-tasks",
        "det-a100",
        "det-aux",
    }
    for secret in secrets:
        assert secret["type"] == "kubernetes.io/dockerconfigjson"
        assert secret["stringData"] == {".dockerconfigjson": constants.REDACTED}


def test_the_registry_secret_holds_the_configured_login(parity):
    # As applied (the plan runs on a stand-in for the password, never the password itself).
    password = parity.stand_ins[("registryCredentials", "password")]
    documents = [
        unwrap(r.inputs)["stringData"][".dockerconfigjson"]
        for r in parity.recorder.resources
        if r.type.endswith(":Secret") and unwrap(r.inputs)["metadata"]["name"] == constants.REGISTRY_SECRET
    ]
    assert len(documents) == 4
    for document in documents:
        entry = json.loads(document)["auths"]["mirror.example.com"]
        assert entry["username"] == "robot" and entry["password"] == password
        assert base64.b64decode(entry["auth"]).decode() == f"robot:{password}"


def test_the_applied_master_yaml_carries_the_elastic_password_and_a_generated_signing_key(parity):
    (config_secret,) = [
        unwrap(r.inputs)
        for r in parity.recorder.resources
        if r.type.endswith(":Secret")
        and unwrap(r.inputs)["metadata"]["name"] == constants.MASTER_CONFIG_SECRET
    ]
    config = yaml.safe_load(config_secret["stringData"]["master.yaml"])
    assert (
        config["logging"]["security"]["password"]
        == parity.stand_ins[("master", "logging", "security", "password")]
    )
    key = config["webhooks"]["signing_key"]
    assert key in parity.recorder.generated_secrets
    assert any(
        r.type.endswith("RandomPassword") and r.name == "webhook-signing-key"
        for r in parity.recorder.resources
    )
    assert config["webhooks"]["base_url"] == "https://det.example.com"


def test_every_pod_of_the_fixture_plan_names_both_pull_secrets(parity):
    expected = [{"name": "regcred"}, {"name": constants.REGISTRY_SECRET}]
    workloads = [m for m in parity.manifests if m["kind"] in ("Deployment", "StatefulSet", "Job")]
    assert {m["kind"] for m in workloads} == {"Deployment", "StatefulSet", "Job"}
    for obj in workloads:
        spec = obj["spec"]["template"]["spec"]
        assert spec["imagePullSecrets"] == expected, obj["metadata"]["name"]
        assert spec["nodeSelector"] == {"pool": "system"}, obj["metadata"]["name"]
    config = yaml.safe_load(parity.master_yaml)
    for where, pod in task_pod_specs(config):
        assert pod["spec"]["imagePullSecrets"] == expected, where
    assert master_yaml_schema.check(config, "0.38.1") == []


def test_the_database_waits_for_the_registry_secret_it_pulls_with(parity):
    statefulset = next(r for r in parity.resources if r["type"].endswith("StatefulSet"))
    registry_secret = next(
        r["urn"]
        for r in parity.resources
        if r["type"] == "kubernetes:core/v1:Secret" and r["name"] == "determined/determined-registry"
    )
    assert registry_secret in statefulset["dependsOn"]
