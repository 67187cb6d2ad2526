"""The NetworkPolicy builders: each policy's selected pods, peers and ports, by configuration."""

from __future__ import annotations

import json

import pytest
import yaml
from conftest import BASE, GKE, make_config

from components.config import ConfigError
from components.determined import network_policies as np
from components.kube import validation

TLS_ISSUED = {"mode": "ingress", "host": "det.example.com", "certificate": {"email": "ops@mail.example.com"}}
TLS_SECRET = {
    "mode": "ingress",
    "host": "det.example.com",
    "certificate": {"source": "secret", "secretName": "c"},
}
MASTER_NS = "determined"
MASTER_PODS = {
    "matchLabels": {"app.kubernetes.io/name": "master", "app.kubernetes.io/instance": "determined"}
}
TASK_PODS = {"matchExpressions": [{"key": "determined", "operator": "Exists"}]}
ENVOY_PODS = {
    "podSelector": {
        "matchLabels": {
            "gateway.envoyproxy.io/owning-gateway-name": "determined",
            "gateway.envoyproxy.io/owning-gateway-namespace": MASTER_NS,
        }
    },
    "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "envoy-gateway-system"}},
}


def by_name(cfg):
    return {(o["metadata"]["namespace"], o["metadata"]["name"]): o for o in np.objects(cfg)}


def component(name, namespace=None):
    peer = {
        "podSelector": {
            "matchLabels": {"app.kubernetes.io/name": name, "app.kubernetes.io/instance": "determined"}
        }
    }
    if namespace:
        peer["namespaceSelector"] = {"matchLabels": {"kubernetes.io/metadata.name": namespace}}
    return peer


def in_namespace(selector, namespace):
    return {
        "podSelector": selector,
        "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": namespace}},
    }


def only_rule(policy, direction="ingress"):
    (rule,) = policy["spec"][direction]
    return rule


# --- the Determined namespace -------------------------------------------------------------------


def test_the_default_denies_every_pod_of_the_namespace_both_ways():
    deny = np.default_deny(make_config())
    assert deny["metadata"]["namespace"] == MASTER_NS
    assert deny["spec"] == {
        "podSelector": {},
        "policyTypes": ["Ingress", "Egress"],
        "ingress": [],
        "egress": [],
    }


def test_the_master_takes_its_port_from_task_pods_of_every_task_namespace_and_the_workspace_job():
    master = np.master_policy(make_config())
    assert master["spec"]["podSelector"] == MASTER_PODS
    assert master["spec"]["policyTypes"] == ["Ingress", "Egress"]
    rule = only_rule(master)
    assert rule["ports"] == [{"protocol": "TCP", "port": 8081}]
    assert rule["from"] == [
        in_namespace(TASK_PODS, "determined-tasks"),  # 0.35+: tasks of unbound workspaces, checkpoint GC
        in_namespace(TASK_PODS, "det-a100"),
        in_namespace(TASK_PODS, "det-aux"),
        component("bind-workspaces"),
    ]
    # Everything out: the Kubernetes API, storage, webhooks, logging.
    assert master["spec"]["egress"] == [{}]


def test_before_0_35_tasks_of_the_masters_namespace_reach_it_from_there():
    rule = only_rule(np.master_policy(make_config(master={"version": "0.34.0"})))
    assert rule["from"] == [
        {"podSelector": TASK_PODS},  # the master's own namespace: no namespace selector
        in_namespace(TASK_PODS, "det-a100"),
        in_namespace(TASK_PODS, "det-aux"),
    ]


def test_before_workspaces_no_job_binds_them_so_none_is_admitted():
    rule = only_rule(np.master_policy(make_config(master={"version": "0.34.0"})))
    assert component("bind-workspaces") not in rule["from"]
    assert (MASTER_NS, np.BIND_WORKSPACES_POLICY) not in by_name(make_config(master={"version": "0.34.0"}))


def test_through_envoy_gateway_the_master_admits_the_gateways_envoy_pods():
    cfg = make_config(tls=TLS_SECRET)
    assert np.gateway_proxies(cfg) == [ENVOY_PODS]
    assert ENVOY_PODS in only_rule(np.master_policy(cfg))["from"]
    assert ENVOY_PODS not in only_rule(np.master_policy(make_config()))["from"]


@pytest.mark.parametrize(
    "overrides",
    [
        {"tls": {**TLS_SECRET, "gatewayClassName": "gke-l7-regional-external-managed"}},
        {"tls": {**TLS_SECRET, "mode": "master"}, "master": {"service": {"type": "LoadBalancer"}}},
        {"tls": {**TLS_SECRET, "mode": "master"}, "master": {"service": {"type": "NodePort"}}},
        {"taskContainerDefaults": {"networkMode": "host"}},
    ],
    ids=["cluster-gateway-class", "load-balancer", "node-port", "network-mode-host"],
)
def test_when_clients_come_from_unknown_addresses_the_master_port_is_open_to_any(overrides):
    rule = only_rule(np.master_policy(make_config(**overrides)))
    assert rule == {"ports": [{"protocol": "TCP", "port": 8081}]}


def test_a_prometheus_of_any_namespace_may_scrape_the_master():
    cfg = make_config(master={"observability": {"enablePrometheus": True}})
    assert {"namespaceSelector": {}} in only_rule(np.master_policy(cfg))["from"]
    assert {"namespaceSelector": {}} not in only_rule(np.master_policy(make_config()))["from"]


def test_the_database_admits_its_port_from_the_master_and_the_backup_and_restore_jobs_only():
    db = np.database_policy(make_config())
    assert db["spec"]["podSelector"] == {
        "matchLabels": {"app.kubernetes.io/name": "database", "app.kubernetes.io/instance": "determined"}
    }
    # Nothing out either: egress stays with the default deny.
    assert db["spec"]["policyTypes"] == ["Ingress"]
    assert only_rule(db) == {
        "from": [component("master"), component("database-backup"), component("database-restore")],
        "ports": [{"protocol": "TCP", "port": 5432}],
    }


def test_the_helm_chart_migration_job_reaches_the_database_from_the_charts_namespace():
    cfg = make_config(database={"mode": "inCluster", "fromHelmChart": {"namespace": "det-old"}})
    assert np.migration_namespace(cfg) == "det-old"
    assert only_rule(np.database_policy(cfg))["from"][-1] == component("database-migration", "det-old")


def test_without_a_migration_there_is_no_migration_peer():
    assert np.migration_namespace(make_config()) is None
    peers = only_rule(np.database_policy(make_config()))["from"]
    assert all(
        p["podSelector"]["matchLabels"]["app.kubernetes.io/name"] != "database-migration" for p in peers
    )


EXTERNAL = {
    "mode": "external",
    "host": "pg.internal",
    "port": 6432,
    "user": "det",
    "password": "Ext-Db-Pass-9",
}


def test_a_server_outside_the_cluster_has_no_database_policy_and_its_dumps_reach_its_port():
    found = by_name(make_config(database=EXTERNAL))
    assert (MASTER_NS, np.DATABASE_POLICY) not in found
    _, to_server = found[(MASTER_NS, np.DATABASE_CLIENTS_POLICY)]["spec"]["egress"]
    assert to_server == {"ports": [{"protocol": "TCP", "port": 6432}]}
    managed = {"mode": "managed", "tier": "db-custom-2-8192"}
    cfg = make_config(**{**GKE, "database": managed, "checkpointStorage": {"type": "gcs"}})
    _, to_server, *_ = np.database_clients_policy(cfg)["spec"]["egress"]
    assert to_server == {"ports": [{"protocol": "TCP", "port": 5432}]}


def test_without_backup_jobs_the_database_clients_policy_is_left_out():
    quiet = {**EXTERNAL, "backup": {"beforeUpgrade": False}}
    assert (MASTER_NS, np.DATABASE_CLIENTS_POLICY) not in by_name(make_config(database=quiet))
    # The in-cluster database's policy still admits the Jobs (a restore runs on demand).
    cfg = make_config(database={"mode": "inCluster", "backup": {"schedule": None, "beforeUpgrade": False}})
    assert (MASTER_NS, np.DATABASE_CLIENTS_POLICY) not in by_name(cfg)
    assert component("database-restore") in only_rule(np.database_policy(cfg))["from"]


def test_backup_and_restore_jobs_reach_dns_and_the_database_and_nothing_else_on_volume_storage():
    clients = np.database_clients_policy(make_config())
    assert clients["spec"]["podSelector"] == {
        "matchLabels": {"app.kubernetes.io/instance": "determined"},
        "matchExpressions": [
            {
                "key": "app.kubernetes.io/name",
                "operator": "In",
                "values": ["database-backup", "database-restore", "database-migration"],
            }
        ],
    }
    assert clients["spec"]["policyTypes"] == ["Egress"]
    dns, db = clients["spec"]["egress"]
    assert dns == {
        "to": [
            {
                "podSelector": {"matchLabels": {"k8s-app": "kube-dns"}},
                "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "kube-system"}},
            },
            {"ipBlock": {"cidr": "169.254.20.10/32"}},
            {"ipBlock": {"cidr": "169.254.169.254/32"}},
        ],
        "ports": [{"protocol": "UDP", "port": 53}, {"protocol": "TCP", "port": 53}],
    }
    assert db == {"to": [component("database")], "ports": [{"protocol": "TCP", "port": 5432}]}


CREDENTIAL_RULES = [
    {"to": [{"ipBlock": {"cidr": "169.254.169.254/32"}}], "ports": [{"protocol": "TCP", "port": 80}]},
    {"to": [{"ipBlock": {"cidr": "169.254.169.252/32"}}], "ports": [{"protocol": "TCP", "port": 988}]},
    {"to": [{"ipBlock": {"cidr": "169.254.170.23/32"}}], "ports": [{"protocol": "TCP", "port": 80}]},
    {"to": [{"ipBlock": {"cidr": "fd00:ec2::23/128"}}], "ports": [{"protocol": "TCP", "port": 80}]},
]


@pytest.mark.parametrize(
    "storage",
    [
        {"type": "gcs", "bucket": "ckpts"},
        {"type": "s3", "bucket": "ckpts"},
        {"type": "azure", "container": "ckpt", "accountUrl": "https://acct.blob.core.windows.net"},
    ],
    ids=["gcs", "s3", "azure"],
)
def test_on_cloud_storage_backups_reach_https_anywhere_and_the_credential_endpoints(storage):
    egress = np.database_clients_policy(make_config(checkpointStorage=storage))["spec"]["egress"]
    assert egress[2] == {"ports": [{"protocol": "TCP", "port": 443}]}
    assert egress[3:] == CREDENTIAL_RULES


@pytest.mark.parametrize(
    ("storage", "ports"),
    [
        ({"type": "sharedFs", "hostPath": "/tmp/c"}, []),
        ({"type": "s3", "bucket": "ckpts"}, [443]),
        ({"type": "s3", "bucket": "ckpts", "endpointUrl": "http://minio:9000"}, [443, 9000]),
        ({"type": "s3", "bucket": "ckpts", "endpointUrl": "http://minio.local"}, [80, 443]),
        ({"type": "azure", "container": "ckpt", "accountUrl": "http://azurite:10000/a"}, [443, 10000]),
    ],
    ids=["shared-fs", "s3", "s3-endpoint-port", "s3-endpoint-http", "azure-account-url"],
)
def test_object_storage_ports_follow_the_endpoint(storage, ports):
    assert np.object_storage_ports(make_config(checkpointStorage=storage)) == ports


def test_no_secret_reaches_a_policy():
    cfg = make_config(
        checkpointStorage={"type": "azure", "container": "ckpt", "connectionString": "Account=x;Key=y"},
        database=EXTERNAL,
    )
    text = json.dumps(np.objects(cfg))
    assert "Key=y" not in text and "Ext-Db-Pass-9" not in text


def test_the_workspace_job_reaches_dns_and_the_masters_port_only():
    job = np.bind_workspaces_policy(make_config())
    assert job["spec"]["podSelector"] == {
        "matchLabels": {
            "app.kubernetes.io/name": "bind-workspaces",
            "app.kubernetes.io/instance": "determined",
        }
    }
    assert job["spec"]["policyTypes"] == ["Egress"]
    dns, to_master = job["spec"]["egress"]
    assert dns == np.dns_rule()
    assert to_master == {"to": [component("master")], "ports": [{"protocol": "TCP", "port": 8081}]}


def test_acme_http01_solver_pods_take_their_port_from_the_envoy_pods():
    cfg = make_config(tls=TLS_ISSUED)
    solver = by_name(cfg)[(MASTER_NS, np.ACME_SOLVER_POLICY)]
    assert solver["spec"]["podSelector"] == {"matchLabels": {"acme.cert-manager.io/http01-solver": "true"}}
    assert only_rule(solver) == {"from": [ENVOY_PODS], "ports": [{"protocol": "TCP", "port": 8089}]}
    assert solver["spec"]["policyTypes"] == ["Ingress"]
    # With the cluster's own Gateway class: from wherever its proxies are.
    cfg = make_config(tls={**TLS_ISSUED, "gatewayClassName": "istio"})
    assert only_rule(by_name(cfg)[(MASTER_NS, np.ACME_SOLVER_POLICY)]) == {
        "ports": [{"protocol": "TCP", "port": 8089}]
    }


@pytest.mark.parametrize(
    "tls",
    [
        None,
        TLS_SECRET,
        {
            **TLS_ISSUED,
            "certificate": {"email": "ops@mail.example.com", "dns01": {"route53": {"region": "us-east-1"}}},
        },
    ],
    ids=["none", "secret", "dns01"],
)
def test_without_http01_challenges_there_is_no_solver_policy(tls):
    assert (MASTER_NS, np.ACME_SOLVER_POLICY) not in by_name(make_config(tls=tls))


# --- task namespaces -----------------------------------------------------------------------------


def test_pool_namespaces_admit_their_own_pods_and_the_master_on_any_port_and_keep_egress_open():
    tasks = np.task_policy(make_config(), "det-a100")
    assert tasks["metadata"]["namespace"] == "det-a100"
    assert tasks["spec"] == {
        "podSelector": {},
        "policyTypes": ["Ingress"],
        "ingress": [{"from": [{"podSelector": {}}, in_namespace(MASTER_PODS, MASTER_NS)]}],
    }


def test_task_pods_in_the_masters_namespace_admit_each_other_and_the_master_and_reach_anything():
    # Before 0.35 the master's namespace is the default one, where tasks may run.
    tasks = np.task_policy(make_config(master={"version": "0.34.0"}), MASTER_NS)
    assert tasks["spec"] == {
        "podSelector": TASK_PODS,
        "policyTypes": ["Ingress", "Egress"],
        "ingress": [{"from": [{"podSelector": TASK_PODS}, {"podSelector": MASTER_PODS}]}],
        "egress": [{}],
    }


def test_one_task_policy_per_task_namespace():
    found = by_name(make_config())
    tasks = [MASTER_NS + "-tasks", "det-a100", "det-aux"]
    assert [ns for ns, name in found if name == np.TASKS_POLICY] == tasks
    # Pools sharing a namespace share its policy.
    pools = [*BASE["resourcePools"], {"name": "more", "nodePool": "system", "namespace": "det-aux"}]
    found = by_name(make_config(resourcePools=pools))
    assert [ns for ns, name in found if name == np.TASKS_POLICY] == tasks
    # Before 0.35 the master's namespace is the default task namespace.
    found = by_name(make_config(master={"version": "0.34.0"}))
    assert [ns for ns, name in found if name == np.TASKS_POLICY] == [MASTER_NS, "det-a100", "det-aux"]


# --- the whole set --------------------------------------------------------------------------------


def test_the_base_stack_has_these_policies_in_these_namespaces():
    assert list(by_name(make_config())) == [
        (MASTER_NS, "determined-default-deny"),
        (MASTER_NS, "determined-master"),
        (MASTER_NS, "determined-database"),
        (MASTER_NS, "determined-database-clients"),
        (MASTER_NS, "determined-bind-workspaces"),
        ("determined-tasks", "determined-tasks"),
        ("det-a100", "determined-tasks"),
        ("det-aux", "determined-tasks"),
    ]


def test_network_policies_false_creates_none():
    assert np.objects(make_config(networkPolicies=False)) == []
    assert make_config().network_policies is True


def test_network_policies_takes_a_boolean_only():
    with pytest.raises(ConfigError) as info:
        make_config(networkPolicies="yes")
    assert [str(p) for p in info.value.problems] == [
        "determined:networkPolicies: must be true or false, not a string"
    ]


@pytest.mark.parametrize(
    "overrides",
    [
        {},
        {"tls": TLS_ISSUED},
        {"tls": {**TLS_ISSUED, "gatewayClassName": "istio"}},
        {"checkpointStorage": {"type": "gcs", "bucket": "ckpts"}},
    ],
    ids=["base", "tls-issued", "cluster-class", "gcs"],
)
def test_every_policy_is_a_valid_network_policy_written_without_shared_parts(overrides):
    objects = np.objects(make_config(**overrides))
    for obj in objects:
        assert list(validation.problems(obj)) == [], obj["metadata"]["name"]
    # No object shares a part with another (YAML would write aliases, edits would leak).
    assert "&id" not in yaml.safe_dump_all(objects)
