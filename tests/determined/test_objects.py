"""The master's and the database's Kubernetes objects, built by pure functions."""

from __future__ import annotations

import re

from conftest import make_config
from planning import grants

from components import constants
from components.determined import database, master


def containers(obj):
    return obj["spec"]["template"]["spec"]["containers"]


def test_cluster_wide_the_master_reads_nodes_and_where_needed_lists_jobs():
    # Cluster-wide writes are opt-in: tests/determined/test_master_cluster_writes.py.
    for version, job_list in (("0.26.0", False), ("0.34.0", False), ("0.35.0", False), ("0.38.1", True)):
        cfg = make_config(master={"version": version})
        granted = grants(master.cluster_role(cfg)["rules"])
        expected = {("", "nodes", v) for v in ("list", "watch")}
        if job_list:
            expected.add(("batch", "jobs", "list"))  # the master does not start without it
        assert granted == expected, version
        # Never cluster-wide: pod rights, job writes or watches, secrets, anything by wildcard.
        assert not {g for g in granted if g[1] in ("pods", "pods/log", "configmaps", "secrets")}
        assert not any("*" in str(rule) for rule in master.cluster_role(cfg)["rules"])


def test_every_task_namespace_gets_a_role_for_what_the_master_does_there():
    cfg = make_config()
    roles = [o for o in master.namespace_roles(cfg) if o["kind"] == "Role"]
    # Its own namespace first (0.35+: only its Service there; tests/determined/test_task_namespace.py).
    assert [r["metadata"]["namespace"] for r in roles] == cfg.pod_namespaces
    by_ns = {r["metadata"]["namespace"]: grants(r["rules"]) for r in roles}
    pool = by_ns["det-a100"]
    assert {("batch", "jobs", v) for v in ("create", "delete", "list", "watch")} <= pool
    assert {("", "pods", v) for v in ("list", "watch", "delete")} <= pool
    assert ("", "pods", "create") not in pool  # 0.34+: tasks are Jobs
    assert ("", "pods/log", "get") in pool and ("", "events", "watch") in pool
    assert ("", "services", "get") in by_ns["determined"] and ("", "services", "get") not in pool
    (ns_rule,) = [r for r in roles[1]["rules"] if r["resources"] == ["namespaces"]]
    assert ns_rule["resourceNames"] == [roles[1]["metadata"]["namespace"]]
    old = {
        r["metadata"]["namespace"]: grants(r["rules"])
        for r in master.namespace_roles(make_config(master={"version": "0.26.0"}))
        if r["kind"] == "Role"
    }
    assert ("", "pods", "create") in old["det-a100"] and not {g for g in old["det-a100"] if g[0] == "batch"}
    assert not {g for g in old["det-a100"] if g[1] in ("namespaces", "resourcequotas")}


def test_role_bindings_bind_the_master_service_account_to_each_role():
    cfg = make_config()
    objects = master.namespace_roles(cfg)
    for role, binding in zip(objects[::2], objects[1::2], strict=True):
        assert (
            binding["kind"] == "RoleBinding"
            and binding["metadata"]["namespace"] == role["metadata"]["namespace"]
        )
        assert binding["roleRef"] == {
            "apiGroup": "rbac.authorization.k8s.io",
            "kind": "Role",
            "name": role["metadata"]["name"],
        }
        assert binding["subjects"] == [
            {"kind": "ServiceAccount", "name": "determined-master", "namespace": "determined"}
        ]


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
    assert pod["spec"]["volumes"][0] == {
        "name": "config",
        "secret": {"secretName": "determined-master-config"},
    }
    # The rest is scratch (its file cache, /tmp): its root file system is read-only.
    assert all("emptyDir" in v for v in pod["spec"]["volumes"][1:])
    assert container["volumeMounts"][0]["mountPath"] == "/etc/determined"
    assert deploy["spec"]["strategy"] == {"type": "Recreate"}


def test_the_master_disruption_budget_lets_drains_through():
    cfg = make_config()
    pdb = master.disruption_budget(cfg)
    deploy = master.deployment(cfg, "checksum")
    # It guards the master's pods (and only them) ...
    assert pdb["spec"]["selector"] == deploy["spec"]["selector"]
    assert pdb["metadata"]["namespace"] == deploy["metadata"]["namespace"] == cfg.namespace
    # ... and never holds a drain: the single master may be evicted, unhealthy or not.
    assert pdb["spec"]["maxUnavailable"] >= deploy["spec"]["replicas"]
    assert "minAvailable" not in pdb["spec"]
    assert pdb["spec"]["unhealthyPodEvictionPolicy"] == "AlwaysAllow"


def test_master_service_is_what_master_yaml_names():
    cfg = make_config()
    svc = master.service(cfg)
    assert svc["metadata"]["name"] == constants.MASTER_SERVICE_NAME
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
    reference, _, digest = container["image"].partition("@")
    image, tag = reference.split(":")
    assert image == "postgres"
    assert re.fullmatch(r"sha256:[0-9a-f]{64}", digest), "pinned by digest, the tag kept for readers"
    assert int(tag.split(".")[0]) >= 14, "PostgreSQL 13 and older are out of support"
    assert container["readinessProbe"]["exec"]["command"][0] == "pg_isready"
    env = {e["name"]: e for e in container["env"]}
    # The password as a file from the Secret (the image reads POSTGRES_PASSWORD_FILE).
    assert "POSTGRES_PASSWORD" not in env
    assert env["POSTGRES_PASSWORD_FILE"]["value"] == f"{database.PASSWORD_DIR}/POSTGRES_PASSWORD"
    assert env["PGDATA"]["value"].startswith(container["volumeMounts"][0]["mountPath"] + "/")
    volumes = sts["spec"]["template"]["spec"]["volumes"]
    assert volumes[0] == {"name": "data", "persistentVolumeClaim": {"claimName": "determined-db-data"}}
    # Everything else it writes is scratch, and the password comes read-only from its Secret.
    by_name = {v["name"]: v for v in volumes}
    assert by_name["password"]["secret"]["secretName"] == "determined-db"
    assert all("emptyDir" in v for v in volumes[1:] if v["name"] != "password")
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
