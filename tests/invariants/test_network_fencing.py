"""Network fencing over every stack (stacks/ and fixtures), judged by what the rendered
NetworkPolicies allow, not by how they are written: a small evaluator applies the
NetworkPolicy rules (a pod selected by no policy of a direction is open in it; otherwise a
connection needs a rule of a selecting policy on both ends) to the pods the stack runs and to
those made at run time (Determined's task pods, Envoy Gateway's proxies, cluster DNS).

- Every pod of the Determined namespace is allowed what it needs, and a pod nobody taught
  this test about fails it (a new workload needs its own policy).
- The database admits nothing but the master and the backup, restore and migration Jobs.
- Task pods reach each other and hear from the master; nothing else reaches them.
- Every policy selects pods that exist, on ports they listen on.
- The default deny of a namespace is applied after its allow-lists.
- The clusters the stack creates enforce NetworkPolicies; `networkPolicies: false` removes
  the policies and nothing else.
"""

from __future__ import annotations

import functools
import ipaddress
import urllib.parse
from dataclasses import dataclass, field
from typing import Any

import pytest
import stack_plans
import yaml
from conftest import raw_config
from planning import plan_for
from stack_plans import containers, labels_match, master_workload, workloads

from components import constants, kube
from components.observability import layout
from components.observability import network_policies as observability_policies

NAME = "app.kubernetes.io/name"
ENVOY_NAMESPACE = "envoy-gateway-system"
TASK_PORT = 29500  # torch.distributed's default rendezvous port: any port must do
DNS = ("UDP", 53)
OUTSIDE = "203.0.113.7"
NODE = "10.0.3.4"  # a node's address: where host-network pods connect from
KUBERNETES_API = "172.16.0.2"  # an address the master cannot know in advance
DB_SERVER = "10.20.0.5"  # an external or managed server's private address
# The database's clients besides the master; any other pod is refused. The postgres
# exporter (observability) is the chart's pod in the monitoring namespace.
POSTGRES_EXPORTER = layout.POSTGRES_EXPORTER_POD_LABELS[NAME]
DB_CLIENTS = {
    "master",
    constants.BACKUP_COMPONENT,
    constants.RESTORE_COMPONENT,
    constants.MIGRATION_COMPONENT,
    POSTGRES_EXPORTER,
}
# Clients of the database from another namespace: the migration Job (the chart's) and the
# exporter (the monitoring namespace).
DB_CLIENTS_ELSEWHERE = {constants.MIGRATION_COMPONENT, POSTGRES_EXPORTER}


@dataclass(frozen=True)
class Pod:
    namespace: str
    labels: dict[str, str]
    ports: list[dict[str, Any]] = field(default_factory=list)  # container ports (name, number)
    name: str = ""

    def __hash__(self) -> int:
        return hash((self.namespace, self.name))


@dataclass(frozen=True)
class Address:
    """An address outside every pod (the internet, the Kubernetes API, a node)."""

    ip: str


# --- the evaluator ----------------------------------------------------------------------------------


def selects(selector: dict[str, Any], labels: dict[str, str]) -> bool:
    """A LabelSelector; the empty one selects everything."""
    if not selector.get("matchLabels") and not selector.get("matchExpressions"):
        return True
    return labels_match(selector, labels)


def peer_matches(peer: dict[str, Any], policy_namespace: str, other: Pod | Address) -> bool:
    if "ipBlock" in peer:
        if not isinstance(other, Address):
            return False  # (pod addresses are ephemeral: the API says not to name them so)
        block = peer["ipBlock"]
        ip = ipaddress.ip_address(other.ip)
        inside = ip.version == ipaddress.ip_network(block["cidr"]).version and ip in ipaddress.ip_network(
            block["cidr"]
        )
        return inside and not any(ip in ipaddress.ip_network(e) for e in block.get("except", []))
    if isinstance(other, Address):
        return False
    namespaces = peer.get("namespaceSelector")
    if namespaces is None:
        in_namespace = other.namespace == policy_namespace
    else:
        in_namespace = selects(namespaces, {"kubernetes.io/metadata.name": other.namespace})
    return in_namespace and selects(peer.get("podSelector") or {}, other.labels)


def port_matches(
    ports: list[dict[str, Any]] | None, protocol: str, port: int, listener: Pod | Address
) -> bool:
    """`listener`: the pod that receives the connection (named ports are its ports)."""
    if not ports:
        return True
    for entry in ports:
        if entry.get("protocol", "TCP") != protocol:
            continue
        if "port" not in entry:
            return True
        value = entry["port"]
        if isinstance(value, str):
            named = listener.ports if isinstance(listener, Pod) else []
            if any(p.get("name") == value and p["containerPort"] == port for p in named):
                return True
        elif value <= port <= entry.get("endPort", value):
            return True
    return False


def side_allows(policies, pod, other, protocol, port, direction, listener) -> bool:
    if not isinstance(pod, Pod):
        return True  # outside the cluster: no NetworkPolicy of ours applies
    selecting = [
        p
        for p in policies
        if p["metadata"]["namespace"] == pod.namespace
        and direction in p["spec"].get("policyTypes", [])
        and selects(p["spec"]["podSelector"], pod.labels)
    ]
    if not selecting:
        return True
    rules_key, peers_key = ("ingress", "from") if direction == "Ingress" else ("egress", "to")
    for p in selecting:
        for rule in p["spec"].get(rules_key) or []:
            if not port_matches(rule.get("ports"), protocol, port, listener):
                continue
            peers = rule.get(peers_key)
            if not peers or any(peer_matches(peer, p["metadata"]["namespace"], other) for peer in peers):
                return True
    return False


def allowed(policies, source, target, port: int, protocol: str = "TCP") -> bool:
    """Whether `source` may open a connection to `target` on `port` (both ends' policies)."""
    return side_allows(policies, target, source, protocol, port, "Ingress", target) and side_allows(
        policies, source, target, protocol, port, "Egress", target
    )


# --- the pods of a stack ----------------------------------------------------------------------------


@dataclass
class Cluster:
    stack: Any
    policies: list[dict[str, Any]]
    namespace: str
    task_namespaces: list[str]
    pods: list[Pod]  # the stack's own, from its workloads

    def component(self, name: str) -> list[Pod]:
        return [p for p in self.pods if p.labels.get(NAME) == name]

    def task_pod(self, namespace: str, allocation: str = "alloc-1") -> Pod:
        # Labels Determined puts on every task pod (master/internal/rm/kubernetesrm/spec.go).
        labels = {"determined": allocation, "determined.ai/task_type": "TRIAL"}
        return Pod(namespace, labels, name=f"task-{allocation}")

    @property
    def master(self) -> Pod:
        (pod,) = self.component("master")
        return pod

    @property
    def master_port(self) -> int:
        (port,) = self.master.ports
        return port["containerPort"]

    @property
    def envoy(self) -> Pod | None:
        """Envoy Gateway's proxy for the stack's Gateway, when the stack installs Envoy Gateway."""
        gateways = self.stack.manifests("Gateway", self.namespace)
        if not any(g["spec"]["gatewayClassName"] == "determined" for g in gateways):
            return None
        labels = {
            "app.kubernetes.io/name": "envoy",
            "gateway.envoyproxy.io/owning-gateway-name": gateways[0]["metadata"]["name"],
            "gateway.envoyproxy.io/owning-gateway-namespace": self.namespace,
        }
        return Pod(ENVOY_NAMESPACE, labels, name="envoy")

    @property
    def monitoring(self) -> str:
        return layout.namespace(self.namespace)

    @property
    def observed(self) -> bool:
        namespaces = self.stack.manifests("Namespace")
        return any(n["metadata"]["name"] == self.monitoring for n in namespaces)

    @property
    def prometheus(self) -> Pod:
        """The project's Prometheus with observability on, else one of the cluster's own."""
        labels = {"app.kubernetes.io/name": "prometheus"}
        return Pod(
            self.monitoring if self.observed else "monitoring",
            labels,
            [{"containerPort": 9090}],
            "prometheus",
        )

    def chart_pods(self) -> list[Pod]:
        """With observability on, the pods its charts run (in neither the plan's workloads nor
        the Determined namespace), with the ports they listen on (sources: the charts' values
        at their pinned versions, components/observability/network_policies.py)."""
        if not self.observed:
            return []
        mon, agents = self.monitoring, layout.agents_namespace(self.namespace)
        pods = [
            self.prometheus,
            Pod(mon, dict(observability_policies.GRAFANA_POD_LABELS), [{"containerPort": 3000}], "grafana"),
            Pod(
                mon, dict(observability_policies.OPERATOR_POD_LABELS), [{"containerPort": 10250}], "operator"
            ),
            Pod(mon, {NAME: "kube-state-metrics"}, [{"containerPort": 8080}], "kube-state-metrics"),
            Pod(mon, {NAME: "alertmanager"}, [{"containerPort": 9093}], "alertmanager"),
            Pod(
                mon, dict(layout.POSTGRES_EXPORTER_POD_LABELS), [{"containerPort": 9187}], "postgres-exporter"
            ),
        ]
        # On the host network (policies do not govern it), in the agents' namespace.
        pods.append(Pod(agents, {NAME: "prometheus-node-exporter"}, [], "node-exporter"))
        if any(p["metadata"]["name"] == observability_policies.DCGM_POLICY for p in self.policies):
            labels = dict(observability_policies.DCGM_POD_LABELS)
            pods.append(Pod(agents, labels, [{"containerPort": 9400}], "dcgm-exporter"))
        return pods

    @property
    def dns(self) -> Pod:
        return Pod("kube-system", {"k8s-app": "kube-dns"}, [{"name": "dns", "containerPort": 53}], "coredns")

    def stranger(self, namespace: str) -> Pod:
        return Pod(namespace, {"app": "intruder"}, name=f"intruder-{namespace}")


def cluster_of(stack) -> Cluster:
    deployment, _, _ = master_workload(stack)
    namespace = deployment["metadata"]["namespace"]
    # The master has a Role in every namespace tasks run in, granting it their pods (in its
    # own namespace from 0.35, where none run, only its Service).
    roles = [
        r
        for r in stack.manifests("Role")
        if r["metadata"]["name"] == constants.MASTER_NAME
        and any("pods" in rule["resources"] for rule in r["rules"])
    ]
    pods = []
    for obj, template in workloads(stack):
        ports = [p for c in containers(template) for p in c.get("ports", [])]
        labels = template["metadata"].get("labels") or {}
        pods.append(
            Pod(obj["metadata"]["namespace"], labels, ports, f"{obj['kind']}/{obj['metadata']['name']}")
        )
    # The dump before an upgrade: an update that changes the master version runs it (a plan is
    # of a first install, which runs none: components/determined/upgrade_dump.needed).
    before_upgrade = stack.raw.get("database", {}).get("backup", {}).get("beforeUpgrade", True)
    dumps = [p for p in pods if p.name.startswith(f"Job/{constants.PRE_UPGRADE_JOB_PREFIX}")]
    if before_upgrade and not dumps:
        pods.append(Pod(namespace, kube.labels(constants.BACKUP_COMPONENT), [], "Job/upgrade-dump"))
    return Cluster(
        stack=stack,
        policies=stack.manifests("NetworkPolicy"),
        namespace=namespace,
        task_namespaces=[r["metadata"]["namespace"] for r in roles],
        pods=pods,
    )


TLS_MASTER = {
    "mode": "master",
    "host": "det.example.com",
    "certificate": {"source": "secret", "secretName": "c"},
}
# Besides every stack and fixture: what they do not show.
VARIANTS = {
    "helm-chart-migration": raw_config(
        database={"mode": "inCluster", "fromHelmChart": {"namespace": "det-old"}}
    ),
    "restore-from-minio-prometheus": raw_config(
        master={"observability": {"enablePrometheus": True}},
        database={"mode": "inCluster", "restore": {"backup": "determined-20261122T030000Z.dump"}},
        checkpointStorage={"type": "s3", "bucket": "ckpts", "endpointUrl": "http://minio.minio:9000"},
    ),
    "external-db-scheduled-dumps": raw_config(
        database={
            "mode": "external",
            "host": "pg.internal",
            "port": 6432,
            "user": "det",
            "password": "Ext-Db-Pass-9",
            "backup": {"schedule": "0 4 * * *"},
        },
        checkpointStorage={
            "type": "azure",
            "container": "ckpt",
            "accountUrl": "https://a.blob.core.windows.net",
        },
    ),
    "master-load-balancer": raw_config(tls=TLS_MASTER, master={"service": {"type": "LoadBalancer"}}),
}


@functools.cache
def planned(name: str) -> stack_plans.Planned:
    if name in VARIANTS:
        result = plan_for(VARIANTS[name])
        return stack_plans.Planned(name, VARIANTS[name], result, yaml.safe_load(result.master_yaml))
    return stack_plans.plan(name)


def fenced(name: str) -> bool:
    return planned(name).raw.get("networkPolicies", True)


@pytest.fixture(scope="module", params=[*stack_plans.NAMES, *VARIANTS])
def cluster(request):
    if not fenced(request.param):
        pytest.skip("networkPolicies: false")
    return cluster_of(planned(request.param))


# --- what every pod of the Determined namespace needs -----------------------------------------------


def needs_master(c: Cluster, pod: Pod) -> list[str]:
    problems = []
    port = c.master_port
    for ns in c.task_namespaces:
        if not allowed(c.policies, c.task_pod(ns), pod, port):
            problems.append(f"task pods of {ns} cannot reach the master's port {port}")
    pools = c.stack.master.get("resource_pools") or []
    modes = [p["task_container_defaults"].get("network_mode") for p in pools]
    if "host" in modes and not allowed(c.policies, Address(NODE), pod, port):
        problems.append("task pods on the host network (networkMode host) cannot reach the master")
    scraped = (c.stack.master.get("observability") or {}).get("enable_prometheus")
    if scraped and not allowed(c.policies, c.prometheus, pod, port):
        problems.append("Prometheus cannot scrape the master")
    for job in c.component(constants.METRICS_TOKEN_COMPONENT):
        if not allowed(c.policies, job, pod, port):
            problems.append("the Jobs that log in for Prometheus' token cannot reach the master")
    for job in c.component("bind-workspaces"):
        if not allowed(c.policies, job, pod, port):
            problems.append("the workspace-binding Job cannot reach the master")
    envoy = c.envoy
    if envoy is not None and not allowed(c.policies, envoy, pod, port):
        problems.append("the Gateway's Envoy pods cannot reach the master")
    service = c.stack.one("Service", constants.MASTER_SERVICE_NAME, c.namespace)
    if service["spec"]["type"] != "ClusterIP" and not allowed(c.policies, Address(OUTSIDE), pod, port):
        problems.append(f"the master's {service['spec']['type']} Service does not let clients in")
    for target in (Address(KUBERNETES_API), Address(OUTSIDE)):
        if not allowed(c.policies, pod, target, 443) or not allowed(c.policies, pod, target, 6443):
            problems.append(f"the master cannot reach {target.ip} (API server, storage, webhooks)")
    return problems


def needs_database(c: Cluster, pod: Pod) -> list[str]:
    (port,) = [p["containerPort"] for p in pod.ports if p.get("name") == "postgres"]
    return [] if allowed(c.policies, c.master, pod, port) else ["the master cannot reach the database"]


def master_client_problems(c: Cluster, pod: Pod, who: str) -> list[str]:
    """What a Job calling the master's API needs: its port and DNS."""
    problems = []
    if not allowed(c.policies, pod, c.master, c.master_port):
        problems.append(f"{who} cannot reach the master")
    if not allowed(c.policies, pod, c.dns, DNS[1], DNS[0]):
        problems.append(f"{who} cannot resolve names")
    return problems


def needs_bind_workspaces(c: Cluster, pod: Pod) -> list[str]:
    return master_client_problems(c, pod, "the workspace-binding Job")


def database_server(c: Cluster) -> tuple[Pod | Address, int]:
    """The database the master uses, and its port: the in-cluster one's pod, or a server at
    an address outside the cluster (external, managed)."""
    for db in c.component("database"):
        (port,) = [p["containerPort"] for p in db.ports if p.get("name") == "postgres"]
        return db, port
    return Address(DB_SERVER), int(c.stack.master["db"]["port"])  # (a managed one's is text)


def needs_database_client(c: Cluster, pod: Pod) -> list[str]:
    problems = []
    server, port = database_server(c)
    if not allowed(c.policies, pod, server, port):
        problems.append(f"{pod.name} cannot reach the database")
    if not allowed(c.policies, pod, c.dns, DNS[1], DNS[0]):
        problems.append(f"{pod.name} cannot resolve names")
    storage = c.stack.master["checkpoint_storage"]
    if storage["type"] in ("gcs", "s3", "azure"):
        endpoint = urllib.parse.urlsplit(storage.get("endpoint_url") or "https://storage")
        port = endpoint.port or (443 if endpoint.scheme == "https" else 80)
        for number in sorted({443, port}):
            if not allowed(c.policies, pod, Address(OUTSIDE), number):
                problems.append(f"{pod.name} cannot reach object storage on port {number}")
    return problems


def needs_metrics_token(c: Cluster, pod: Pod) -> list[str]:
    problems = master_client_problems(c, pod, "the metrics token Job")
    if not allowed(c.policies, pod, Address(KUBERNETES_API), 443):
        problems.append("the metrics token Job cannot reach the Kubernetes API")
    return problems


def needs_nothing(c: Cluster, pod: Pod) -> list[str]:
    """The image pre-pull pods (components/determined/image_pre_pull.py): the kubelet pulls, the
    pods talk to no one, so the default deny is all they get."""
    reached = [t for t in (c.master, c.dns, Address(OUTSIDE)) if allowed(c.policies, pod, t, 443)]
    return [f"{pod.name} may reach {t}" for t in reached]


NEEDS = {
    constants.IMAGE_PRE_PULL_COMPONENT: needs_nothing,
    constants.METRICS_TOKEN_COMPONENT: needs_metrics_token,
    "master": needs_master,
    "database": needs_database,
    "bind-workspaces": needs_bind_workspaces,
    constants.BACKUP_COMPONENT: needs_database_client,
    constants.RESTORE_COMPONENT: needs_database_client,
    constants.MIGRATION_COMPONENT: needs_database_client,
}


def test_the_helm_chart_migration_job_reaches_the_database_from_wherever_it_runs(cluster):
    for job in cluster.component(constants.MIGRATION_COMPONENT):
        server, port = database_server(cluster)
        assert allowed(cluster.policies, job, server, port), job
        if isinstance(server, Pod):
            assert not allowed(cluster.policies, cluster.stranger(job.namespace), server, port)


def test_every_pod_of_the_determined_namespace_is_allowed_what_it_needs(cluster):
    own = [p for p in cluster.pods if p.namespace == cluster.namespace]
    assert own
    problems = []
    for pod in own:
        need = NEEDS.get(pod.labels.get(NAME))
        if need is None:
            problems.append(
                f"{pod.name}: no fencing known for pods of {pod.labels.get(NAME)!r}: give them a "
                "NetworkPolicy (components/determined/network_policies.py) and say here what they need"
            )
            continue
        problems += need(cluster, pod)
    assert problems == [], cluster.stack.name


def test_everything_else_is_denied_in_the_determined_namespace(cluster):
    """The default deny: a pod nobody selects reaches nothing and nothing reaches it."""
    intruder = cluster.stranger(cluster.namespace)
    for target in [*cluster.pods, Address(OUTSIDE)]:
        if isinstance(target, Pod) and target.namespace != cluster.namespace:
            continue
        assert not allowed(cluster.policies, intruder, target, 443), target
    assert not allowed(cluster.policies, cluster.stranger("default"), intruder, 80)


# --- the database -----------------------------------------------------------------------------------


def db_policies(c: Cluster, db: Pod) -> list[dict[str, Any]]:
    return [
        p
        for p in c.policies
        if p["metadata"]["namespace"] == db.namespace and selects(p["spec"]["podSelector"], db.labels)
    ]


def test_the_database_admits_nothing_but_the_master_and_its_backup_restore_and_migration_jobs(cluster):
    for db in cluster.component("database"):
        (port,) = [p["containerPort"] for p in db.ports if p.get("name") == "postgres"]
        # As written: every rule names its peers, each a client component, on the database port.
        for p in db_policies(cluster, db):
            for rule in p["spec"].get("ingress") or []:
                assert rule.get("from") and rule.get("ports") == [{"protocol": "TCP", "port": port}], p
                for peer in rule["from"]:
                    assert set(peer) <= {"podSelector", "namespaceSelector"}, peer
                    client = peer["podSelector"]["matchLabels"]
                    assert client[NAME] in DB_CLIENTS
                    if client[NAME] != POSTGRES_EXPORTER:
                        assert client["app.kubernetes.io/instance"] == "determined"
                    assert "namespaceSelector" not in peer or client[NAME] in DB_CLIENTS_ELSEWHERE
        # As applied: nobody else, on no other port.
        assert allowed(cluster.policies, cluster.master, db, port)
        assert not allowed(cluster.policies, cluster.master, db, 22)
        others = [
            *(cluster.task_pod(ns) for ns in cluster.task_namespaces),
            *cluster.component("bind-workspaces"),
            *([cluster.envoy] if cluster.envoy else []),
            cluster.stranger(cluster.namespace),
            cluster.stranger("default"),
            Pod("det-old", {NAME: "master", "app.kubernetes.io/instance": "determined"}, name="other-master"),
            Address(OUTSIDE),
        ]
        others += [p for p in cluster.chart_pods() if p.labels.get(NAME) != POSTGRES_EXPORTER]
        for other in others:
            assert not allowed(cluster.policies, other, db, port), other
        for exporter in cluster.chart_pods():
            if exporter.labels.get(NAME) == POSTGRES_EXPORTER:
                assert allowed(cluster.policies, exporter, db, port)
        # And it reaches nothing.
        for target in (Address(OUTSIDE), cluster.master, cluster.dns):
            assert not allowed(cluster.policies, db, target, 443), target


# --- task namespaces -------------------------------------------------------------------------------


def test_task_pods_reach_each_other_and_the_master_and_hear_from_nobody_else(cluster):
    for ns in cluster.task_namespaces:
        one, other = cluster.task_pod(ns, "a"), cluster.task_pod(ns, "b")
        assert allowed(cluster.policies, one, other, TASK_PORT), ns
        assert allowed(cluster.policies, cluster.master, one, 2222), ns  # the master's proxy (shells)
        assert allowed(cluster.policies, one, cluster.master, cluster.master_port), ns
        assert allowed(cluster.policies, one, Address(OUTSIDE), 443), ns  # datasets, pip, storage
        strangers = [cluster.stranger("default"), Address(OUTSIDE)]
        strangers += [cluster.task_pod(elsewhere) for elsewhere in cluster.task_namespaces if elsewhere != ns]
        for stranger in strangers:
            assert not allowed(cluster.policies, stranger, one, TASK_PORT), (ns, stranger)


def test_from_0_35_tasks_run_outside_the_determined_namespace(cluster):
    """0.35+: master.yaml's default namespace (tasks of unbound workspaces, checkpoint GC) is a
    task namespace of its own, fenced like a pool's, and the Determined namespace opens
    nothing to task pods (a task pod there would meet only the default deny)."""
    rm = cluster.stack.master["resource_manager"]
    if "default_namespace" not in rm:
        pytest.skip("before 0.35 tasks default to the master's namespace")
    default = rm["default_namespace"]
    assert default != cluster.namespace and default in cluster.task_namespaces
    assert cluster.namespace not in cluster.task_namespaces
    tasks = [p for p in cluster.policies if p["metadata"]["name"] == "determined-tasks"]
    assert {p["metadata"]["namespace"] for p in tasks} == set(cluster.task_namespaces)
    stray = cluster.task_pod(cluster.namespace)
    assert not allowed(cluster.policies, cluster.task_pod(default), stray, TASK_PORT)
    assert not allowed(cluster.policies, stray, Address(OUTSIDE), 443)


# --- policies and the pods they name ----------------------------------------------------------------


def runtime_pods(c: Cluster) -> list[Pod]:
    """Pods made at run time by others, in the stack's namespaces: task pods, and cert-manager's
    HTTP-01 solvers where the stack's issuer solves HTTP-01 (they have no ports here: any)."""
    pods = [c.task_pod(ns) for ns in c.task_namespaces] + c.chart_pods()
    issuers = c.stack.manifests("ClusterIssuer")
    if any("http01" in s for i in issuers for s in i["spec"]["acme"]["solvers"]):
        # cert-manager's solver pods (pkg/apis/acme: SolverIdentificationLabelKey), on 8089.
        labels = {"acme.cert-manager.io/http01-solver": "true"}
        pods.append(Pod(c.namespace, labels, [{"containerPort": 8089}], "acme-solver"))
    return pods


def test_every_policy_selects_pods_that_exist_and_opens_ports_they_listen_on(cluster):
    candidates = [*cluster.pods, *runtime_pods(cluster)]
    for p in cluster.policies:
        where, name = p["metadata"]["namespace"], p["metadata"]["name"]
        selected = [
            pod
            for pod in candidates
            if pod.namespace == where and selects(p["spec"]["podSelector"], pod.labels)
        ]
        assert selected, f"{cluster.stack.name}: {where}/{name} selects no pod"
        listening = [pod for pod in selected if pod.ports]
        for rule in p["spec"].get("ingress") or []:
            for entry in rule.get("ports") or []:
                for pod in listening:
                    assert any(entry["port"] == port["containerPort"] for port in pod.ports), (name, pod.name)


def test_peers_name_components_and_ports_the_stack_has(cluster):
    """Every peer naming one of the project's components names one the stack runs (or a
    database Job run on demand), and egress to it goes to a port it listens on."""
    components = {pod.labels.get(NAME) for pod in cluster.pods} | DB_CLIENTS
    for p in cluster.policies:
        for rule in [*(p["spec"].get("ingress") or []), *(p["spec"].get("egress") or [])]:
            for peer in [*(rule.get("from") or []), *(rule.get("to") or [])]:
                component = ((peer.get("podSelector") or {}).get("matchLabels") or {}).get(NAME)
                if component is None:
                    continue
                assert component in components, (p["metadata"]["name"], component)
                if peer in (rule.get("to") or []):
                    targets = cluster.component(component)
                    for entry in rule.get("ports") or []:
                        for pod in targets:
                            assert any(entry["port"] == port["containerPort"] for port in pod.ports)


def test_services_forward_to_ports_the_policies_open(cluster):
    """The master's and database's Services target the very ports their policies open."""
    for service_name, component in (
        (constants.MASTER_SERVICE_NAME, "master"),
        (constants.DB_SERVICE_NAME, "database"),
    ):
        found = cluster.stack.manifests("Service", cluster.namespace)
        service = next((s for s in found if s["metadata"]["name"] == service_name), None)
        if service is None:
            continue
        (pod,) = cluster.component(component)
        for port in service["spec"]["ports"]:
            (number,) = [p["containerPort"] for p in pod.ports if p.get("name") == port["targetPort"]]
            client = (
                cluster.master if component == "database" else cluster.task_pod(cluster.task_namespaces[0])
            )
            assert allowed(cluster.policies, client, pod, number), (service_name, number)


# --- enforcement and the switch ---------------------------------------------------------------------


@pytest.mark.parametrize("name", stack_plans.NAMES)
def test_clusters_the_stack_creates_enforce_network_policies(name):
    stack = stack_plans.plan(name)
    resources = stack.result.resources
    clusters = [r for r in resources if r["type"] == "gcp:container/cluster:Cluster"]
    for gke in clusters:
        assert gke["inputs"]["datapathProvider"] == "ADVANCED_DATAPATH"  # Dataplane V2
    addons = [
        r for r in resources if r["type"] == "aws:eks/addon:Addon" and r["inputs"]["addonName"] == "vpc-cni"
    ]
    for addon in addons:
        assert '"enableNetworkPolicy": "true"' in addon["inputs"]["configurationValues"]
    cloud = stack.raw.get("cloud")
    assert (cloud != "gke" or clusters) and (cloud != "eks" or addons), name


def test_every_stack_is_fenced_unless_told_otherwise():
    for name in stack_plans.NAMES:
        policies = stack_plans.plan(name).manifests("NetworkPolicy")
        assert bool(policies) == fenced(name), name


def test_network_policies_false_removes_the_policies_and_nothing_else():
    on = plan_for(raw_config())
    off = plan_for(raw_config(networkPolicies=False))
    assert [m for m in off.manifests if m["kind"] == "NetworkPolicy"] == []
    assert [m for m in on.manifests if m["kind"] != "NetworkPolicy"] == off.manifests
    assert len([m for m in on.manifests if m["kind"] == "NetworkPolicy"]) > 0


@pytest.mark.parametrize("name", stack_plans.NAMES)
def test_the_default_deny_comes_after_the_allow_lists_of_its_namespace(name):
    """Running pods (an upgrade) never meet the deny alone; a destroy removes it first."""
    policies = [
        r
        for r in planned(name).result.resources
        if r["type"] == "kubernetes:networking.k8s.io/v1:NetworkPolicy"
    ]
    for deny in policies:
        if deny["inputs"]["metadata"]["name"] != "determined-default-deny":
            continue
        namespace = deny["inputs"]["metadata"]["namespace"]
        allows = {r["urn"] for r in policies if r["inputs"]["metadata"]["namespace"] == namespace} - {
            deny["urn"]
        }
        assert allows and allows <= set(deny["dependsOn"]), name
