"""The master's and the database's Kubernetes objects, built by pure functions."""

from __future__ import annotations

from conftest import make_config

from deploy import defaults
from deploy.app import database, master


def containers(obj):
    return obj["spec"]["template"]["spec"]["containers"]


def test_master_rbac_grants_exactly_the_charts_rules():
    role = master.cluster_role(make_config())
    granted = {
        (group, resource, verb)
        for rule in role["rules"]
        for group in rule["apiGroups"]
        for resource in rule["resources"]
        for verb in rule["verbs"]
    }
    expected = set()
    for resource in ("pods", "pods/status", "pods/log", "configmaps", "namespaces", "resourcequotas"):
        expected |= {("", resource, verb) for verb in ("create", "get", "list", "delete")}
    expected |= {("", r, v) for r in ("services", "resourcequotas") for v in ("get", "list")}
    expected |= {("", r, v) for r in ("pods", "resourcequotas") for v in ("watch", "patch")}
    expected |= {("", "events", v) for v in ("list", "watch")}
    expected |= {("", "nodes", v) for v in ("list", "watch", "patch")}
    expected |= {("scheduling.k8s.io", "priorityclasses", v) for v in ("create", "get", "list", "delete")}
    expected |= {("batch", "jobs", v) for v in ("create", "get", "list", "delete", "watch")}
    assert granted == expected
    assert not any("*" in str(rule) for rule in role["rules"])


def test_role_binding_binds_the_master_service_account():
    binding = master.cluster_role_binding(make_config())
    assert binding["roleRef"]["name"] == master.cluster_role(make_config())["metadata"]["name"]
    assert binding["subjects"] == [
        {"kind": "ServiceAccount", "name": "determined-master", "namespace": "determined"}
    ]


def test_master_deployment():
    cfg = make_config(
        master={
            "version": "0.37.0",
            "imageRegistry": "registry.example.com/det",
            "cpu": "4",
            "memory": "16Gi",
        }
    )
    deploy = master.deployment(cfg, "abc123")
    pod = deploy["spec"]["template"]
    (container,) = containers(deploy)
    assert container["image"] == "registry.example.com/det/determined-master:0.37.0"
    assert container["resources"]["requests"] == {"cpu": "4", "memory": "16Gi"}
    assert container["resources"]["limits"]["memory"] == "16Gi"
    assert container["ports"] == [{"name": "http", "containerPort": 8081}]
    for probe in ("startupProbe", "readinessProbe", "livenessProbe"):
        assert container[probe]["httpGet"] == {"path": "/info", "port": "http"}
    # Migrations may take minutes: the startup probe waits up to ten of them.
    startup = container["startupProbe"]
    assert startup["periodSeconds"] * startup["failureThreshold"] >= 600
    assert pod["metadata"]["annotations"] == {"checksum/config": "abc123"}
    assert pod["spec"]["priorityClassName"] == "determined-system-priority"
    assert pod["spec"]["serviceAccountName"] == "determined-master"
    assert pod["spec"]["volumes"] == [
        {"name": "config", "secret": {"secretName": "determined-master-config"}}
    ]
    assert container["volumeMounts"][0]["mountPath"] == "/etc/determined"
    assert deploy["spec"]["strategy"] == {"type": "Recreate"}


def test_master_service_is_what_master_yaml_names():
    cfg = make_config()
    svc = master.service(cfg)
    assert svc["metadata"]["name"] == defaults.MASTER_SERVICE_NAME
    assert svc["spec"]["type"] == "ClusterIP"
    assert svc["spec"]["ports"] == [{"name": "http", "port": 8080, "targetPort": "http"}]
    assert svc["spec"]["selector"] == master.deployment(cfg, "x")["spec"]["selector"]["matchLabels"]


def test_priority_classes_never_preempt():
    classes = {pc["metadata"]["name"]: pc for pc in master.priority_classes()}
    assert classes["determined-system-priority"]["value"] == 1_000_000
    assert classes["determined-medium-priority"]["value"] == 50
    assert all(pc["preemptionPolicy"] == "Never" for pc in classes.values())


def test_postgres_is_pinned_supported_and_probed():
    sts = database.statefulset(make_config())
    (container,) = containers(sts)
    image, tag = container["image"].split(":")
    assert image == "postgres"
    assert int(tag.split(".")[0]) >= 14, "PostgreSQL 13 and older are out of support"
    assert container["readinessProbe"]["exec"]["command"][0] == "pg_isready"
    env = {e["name"]: e for e in container["env"]}
    assert env["POSTGRES_PASSWORD"]["valueFrom"]["secretKeyRef"] == {
        "name": "determined-db",
        "key": "POSTGRES_PASSWORD",
    }
    assert env["PGDATA"]["value"].startswith(container["volumeMounts"][0]["mountPath"] + "/")
    volumes = sts["spec"]["template"]["spec"]["volumes"]
    assert volumes == [{"name": "data", "persistentVolumeClaim": {"claimName": "determined-db-data"}}]
    assert sts["spec"]["template"]["spec"]["securityContext"]["runAsNonRoot"] is True


def test_volume_claim_takes_size_and_class_from_config():
    cfg = make_config(database={"storageSize": "100Gi", "storageClass": "premium-rwo"})
    claim = database.volume_claim(cfg.database, cfg.namespace, "cluster-default")
    assert claim["metadata"]["namespace"] == "determined"
    assert claim["spec"]["resources"]["requests"]["storage"] == "100Gi"
    assert claim["spec"]["storageClassName"] == "premium-rwo"


def test_volume_claim_falls_back_to_the_platform_storage_class_then_the_cluster_default():
    cfg = make_config()
    claim = database.volume_claim(cfg.database, cfg.namespace, "gp3-encrypted")
    assert claim["spec"]["storageClassName"] == "gp3-encrypted"
    assert "storageClassName" not in database.volume_claim(cfg.database, cfg.namespace)["spec"]


def test_database_service_selects_the_database_pods():
    cfg = make_config()
    assert (
        database.service(cfg)["spec"]["selector"]
        == database.statefulset(cfg)["spec"]["selector"]["matchLabels"]
    )
