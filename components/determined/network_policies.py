"""Network fencing: NetworkPolicies for the Determined namespace and the task namespaces.

Determined namespace: everything denied, in and out (`determined-default-deny`), then one
allow-list per kind of pod:

- database (in-cluster): the PostgreSQL port, from the master, the backup and restore Jobs,
  the Helm chart migration Job (from the chart's namespace, which is not fenced) and, with
  observability on, the postgres exporter (monitoring namespace); nothing out.
- master: its port, from task pods (every task namespace), the workspace-binding Job, the
  Gateway's Envoy pods (a Prometheus anywhere with master.observability.enablePrometheus,
  the monitoring namespace's pods with observability on); from anywhere when clients
  come from addresses no selector names (its own LoadBalancer/NodePort Service, a Gateway
  class the cluster brings, tasks on the host network). Everything out: it calls the
  Kubernetes API (an address only the cluster knows), object storage, webhooks, logging.
- task pods there (masters before 0.35, whose default namespace is the master's): from each
  other and from the master on any port; everything out.
- the workspace-binding Job: DNS and the master's port, out only.
- with observability on, the Jobs that keep Prometheus' token for the master fresh: DNS, the
  master's port and the Kubernetes API's ports, out only.
- backup and restore Jobs: DNS, the database (its pods, or a
  server's port anywhere), object storage (HTTPS, an S3/Azure endpoint's and a proxy's port) with
  the credential endpoints of the pod's cloud identity; out only.
- cert-manager's HTTP-01 solver pods (certificates issued through the Gateway): their port,
  from the Gateway's Envoy pods.

Task namespaces (each pool's and, 0.35+, the default task namespace where tasks of unbound
workspaces and checkpoint GC run): task pods accept from each other (distributed training,
any port) and from the master (it proxies notebooks, TensorBoards and shells), nothing else;
egress stays open (datasets, packages, object storage, the master).

Policies are additive: a pod is allowed what any policy selecting it allows. The kubelet's
probes are not subject to them (traffic from the pod's own node is always allowed: GKE
Dataplane V2, the EKS network policy agent), nor is `kubectl port-forward`. Only a network
plugin that enforces NetworkPolicy gives them effect: GKE Dataplane V2 (what the stack
creates), the EKS VPC CNI with its network policy agent on (what the stack configures); on an
existing cluster without one they are inert. Namespaces of others (Envoy Gateway,
cert-manager, Kueue, the Helm chart's) are left as they are.

Pure builders; `NetworkPolicies` registers them once the namespaces exist.
"""

from __future__ import annotations

import copy
import urllib.parse
from typing import Any

import pulumi

from components import constants, kube
from components.addons import envoy_gateway
from components.config import ExternalDatabase, InClusterDatabase
from components.config.checkpoint_storage import AzureStorage, GcsStorage, S3Storage
from components.config.tls import CertManagerCertificate, ExposedTls
from components.determined import database, master, workspaces
from components.determined.args import DeterminedArgs
from components.determined.tls import GATEWAY
from components.observability import layout, master_metrics

API = "networking.k8s.io/v1"
COMPONENT = "network-policy"

DEFAULT_DENY = "determined-default-deny"
DATABASE_POLICY = "determined-database"
MASTER_POLICY = "determined-master"
TASKS_POLICY = "determined-tasks"
BIND_WORKSPACES_POLICY = "determined-bind-workspaces"
DATABASE_CLIENTS_POLICY = "determined-database-clients"
ACME_SOLVER_POLICY = "determined-acme-solver"
METRICS_TOKEN_POLICY = "determined-metrics-token"

# The database's clients besides the master (`app.kubernetes.io/name` of their pods).
DB_JOBS = (constants.BACKUP_COMPONENT, constants.RESTORE_COMPONENT, constants.MIGRATION_COMPONENT)

NAME_LABEL = "app.kubernetes.io/name"  # a component's pods (kube.labels)
# Set by Kubernetes on every namespace (1.21+): selects a namespace by its name.
NAMESPACE_NAME_LABEL = "kubernetes.io/metadata.name"
# Determined puts this label on every task pod it creates (the allocation ID as value; in
# master/internal/rm/kubernetesrm since 0.26 at least).
TASK_LABEL = "determined"
TASK_PODS = {"matchExpressions": [{"key": TASK_LABEL, "operator": "Exists"}]}
# Envoy Gateway labels each Gateway's Envoy pods (in its controller's namespace) by the Gateway.
ENVOY_GATEWAY_NAME_LABEL = "gateway.envoyproxy.io/owning-gateway-name"
ENVOY_GATEWAY_NAMESPACE_LABEL = "gateway.envoyproxy.io/owning-gateway-namespace"
# cert-manager's HTTP-01 solver pods (made per challenge, in the Certificate's namespace).
ACME_SOLVER_LABELS = {"acme.cert-manager.io/http01-solver": "true"}
ACME_SOLVER_PORT = 8089

# Cluster DNS: kube-dns/CoreDNS pods (GKE, EKS and most clusters label them so), and the
# resolvers that are no pod: NodeLocal DNSCache (on by default on recent GKE) and GKE's
# Cloud DNS through the metadata server.
DNS_NAMESPACE = "kube-system"
DNS_POD_LABELS = {"k8s-app": "kube-dns"}
DNS_PORT = 53
NODE_DNS_CIDRS = ("169.254.20.10/32", "169.254.169.254/32")
HTTPS_PORT = 443
# The Kubernetes API as pods reach it: the `kubernetes` Service's port 443, which a network
# plugin may enforce on the endpoint's own port after translation (6443 on many control
# planes, 443 on GKE and EKS).
KUBE_API_PORTS = (443, 6443)
# Where a pod gets its cloud identity's credentials (link-local, on its node): the GKE
# metadata server (seen at .254:80, listening on .252:988; Azure's IMDS is .254:80 too) and
# the EKS Pod Identity agent.
CREDENTIAL_ENDPOINTS = (
    ("169.254.169.254/32", 80),
    ("169.254.169.252/32", 988),
    ("169.254.170.23/32", 80),
    ("fd00:ec2::23/128", 80),
)


# --- building blocks -----------------------------------------------------------------------


def namespace_selector(namespace: str) -> dict[str, Any]:
    return {"matchLabels": {NAMESPACE_NAME_LABEL: namespace}}


def label_selector(selector: dict[str, Any]) -> dict[str, Any]:
    """A LabelSelector (a copy) from a LabelSelector or a plain map of labels; {}: everything."""
    if not selector or {"matchLabels", "matchExpressions"} & selector.keys():
        return copy.deepcopy(selector)
    return {"matchLabels": dict(selector)}


def pods(selector: dict[str, Any], namespace: str | None = None) -> dict[str, Any]:
    """A peer: pods matching `selector` (a LabelSelector, or a plain map of labels) in the
    policy's own namespace, or in `namespace`."""
    peer: dict[str, Any] = {"podSelector": label_selector(selector)}
    if namespace is not None:
        peer["namespaceSelector"] = namespace_selector(namespace)
    return peer


def component_pods(component: str, namespace: str | None = None) -> dict[str, Any]:
    """A peer: the pods of one of the project's components (kube.selector)."""
    return pods(kube.selector(component), namespace)


def components_selector(*components: str) -> dict[str, Any]:
    """A LabelSelector for the pods of any of the project's `components` (kube.selector's
    labels, the component's name one of several)."""
    fixed = {k: v for k, v in kube.selector(components[0]).items() if k != NAME_LABEL}
    return {
        "matchLabels": fixed,
        "matchExpressions": [{"key": NAME_LABEL, "operator": "In", "values": list(components)}],
    }


def tcp(port: int) -> dict[str, Any]:
    return {"protocol": "TCP", "port": port}


def policy(
    name: str,
    namespace: str,
    pod_selector: dict[str, Any],
    ingress: list[dict[str, Any]] | None = None,
    egress: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """A NetworkPolicy for the pods `pod_selector` selects; a direction is isolated when its
    rules are given (an empty list: nothing allowed), left alone when None."""
    spec: dict[str, Any] = {"podSelector": label_selector(pod_selector), "policyTypes": []}
    if ingress is not None:
        spec["policyTypes"].append("Ingress")
        spec["ingress"] = copy.deepcopy(ingress)
    if egress is not None:
        spec["policyTypes"].append("Egress")
        spec["egress"] = copy.deepcopy(egress)
    return kube.manifest(API, "NetworkPolicy", kube.metadata(name, COMPONENT, namespace), spec=spec)


ANYWHERE: list[dict[str, Any]] = [{}]  # one rule without peers or ports: everything


def dns_rule() -> dict[str, Any]:
    """Egress to the cluster's DNS, UDP and TCP."""
    to = [pods(DNS_POD_LABELS, DNS_NAMESPACE), *({"ipBlock": {"cidr": cidr}} for cidr in NODE_DNS_CIDRS)]
    return {"to": to, "ports": [{"protocol": "UDP", "port": DNS_PORT}, tcp(DNS_PORT)]}


# --- what the configuration says ----------------------------------------------------------------


def migration_namespace(cfg: DeterminedArgs) -> str | None:
    """Where the Job that moves a Helm chart install's data into the database runs (the
    chart's namespace, `database.fromHelmChart.namespace`); None without one."""
    source = cfg.database.from_helm_chart
    return None if source is None else source.namespace


def tasks_use_host_network(cfg: DeterminedArgs) -> bool:
    """Whether task pods run on their node's network (networkMode host; pod specs cannot ask
    for it): they then reach the master from node addresses, which no selector names."""
    return cfg.task_container_defaults.network_mode == "host"


def gateway_proxies(cfg: DeterminedArgs) -> list[dict[str, Any]] | None:
    """Peers for the pods that proxy the Gateway's traffic: the Envoy pods Envoy Gateway runs
    for it (in its controller's namespace); None when they are not known (a class the cluster
    brings: its proxies may be pods of any namespace or the cloud's own load balancers, as
    with GKE's Gateway classes, which reach pods directly). Empty without a Gateway."""
    tls = cfg.tls
    if not isinstance(tls, ExposedTls):
        return []
    if tls.gateway_class_name is not None:
        return None
    labels = {ENVOY_GATEWAY_NAME_LABEL: GATEWAY, ENVOY_GATEWAY_NAMESPACE_LABEL: cfg.namespace}
    return [pods(labels, envoy_gateway.NAMESPACE)]


def master_clients(cfg: DeterminedArgs) -> list[dict[str, Any]] | None:
    """Peers allowed to the master's port; None: anyone (a LoadBalancer or NodePort Service,
    whose clients the load balancer's source ranges fence; a Gateway whose proxies are not
    known; tasks on the host network)."""
    proxies = gateway_proxies(cfg)
    if cfg.master.service.type != "ClusterIP" or proxies is None or tasks_use_host_network(cfg):
        return None
    # Task pods in every namespace tasks run in (the master's own before 0.35).
    peers = [pods(TASK_PODS, None if ns == cfg.namespace else ns) for ns in cfg.task_namespaces]
    if workspaces.needed(cfg):
        peers.append(component_pods(workspaces.COMPONENT))
    peers += proxies
    if cfg.master.observability.enable_prometheus:
        # A scraper of any namespace (where it runs is the cluster's choice).
        peers.append({"namespaceSelector": {}})
    elif cfg.observed:
        # The project's Prometheus.
        peers.append({"namespaceSelector": namespace_selector(layout.namespace(cfg.namespace))})
    if cfg.observed:
        # The Jobs that log in for Prometheus' token.
        peers.append(component_pods(master_metrics.COMPONENT))
    return peers


def object_storage_ports(cfg: DeterminedArgs) -> list[int]:
    """Ports the backup Jobs (rclone) reach checkpoint storage on: HTTPS, an S3 endpoint's or
    Azure account URL's own port, and the master's proxy's (which they go through too). None
    when dumps go to a claim."""
    storage = cfg.checkpoint_storage
    if not isinstance(storage, GcsStorage | S3Storage | AzureStorage):
        return []
    urls = [getattr(storage, "endpoint_url", None), getattr(storage, "account_url", None)]
    if cfg.master.proxy is not None:
        urls += [cfg.master.proxy.http_proxy, cfg.master.proxy.https_proxy]
    return sorted({HTTPS_PORT} | {_port(url) for url in urls if url})


def _port(url: str) -> int:
    parts = urllib.parse.urlsplit(str(url))
    try:
        explicit = parts.port
    except ValueError:
        explicit = None
    return explicit or (443 if parts.scheme == "https" else 80)


def _http01(cfg: DeterminedArgs) -> bool:
    """Whether cert-manager solves HTTP-01 challenges through the Gateway (solver pods run in
    the Determined namespace)."""
    tls = cfg.tls
    return (
        isinstance(tls, ExposedTls)
        and isinstance(tls.certificate, CertManagerCertificate)
        and tls.certificate.dns01 is None
    )


# --- the policies ---------------------------------------------------------------------------


def default_deny(cfg: DeterminedArgs) -> dict[str, Any]:
    """Every pod of the Determined namespace: nothing in, nothing out, unless allowed below."""
    return policy(DEFAULT_DENY, cfg.namespace, {}, ingress=[], egress=[])


def master_policy(cfg: DeterminedArgs) -> dict[str, Any]:
    """The master: its port from its clients; everything out (the Kubernetes API, at an
    address only the cluster knows; object storage; webhooks; logging; OIDC)."""
    clients = master_clients(cfg)
    rule: dict[str, Any] = {"ports": [tcp(constants.MASTER_CONTAINER_PORT)]}
    if clients is not None:
        rule = {"from": clients, **rule}
    return policy(MASTER_POLICY, cfg.namespace, kube.selector(master.COMPONENT), [rule], ANYWHERE)


def database_policy(cfg: DeterminedArgs) -> dict[str, Any]:
    """The in-cluster database: its port from the master, the backup and restore Jobs and the
    Helm chart migration Job; nothing out (the default)."""
    clients = [
        component_pods(master.COMPONENT),
        component_pods(constants.BACKUP_COMPONENT),
        component_pods(constants.RESTORE_COMPONENT),
    ]
    chart_namespace = migration_namespace(cfg)
    if chart_namespace is not None:
        clients.append(component_pods(constants.MIGRATION_COMPONENT, chart_namespace))
    if cfg.observed:
        clients.append(pods(layout.POSTGRES_EXPORTER_POD_LABELS, layout.namespace(cfg.namespace)))
    rule = {"from": clients, "ports": [tcp(constants.DB_PORT)]}
    return policy(DATABASE_POLICY, cfg.namespace, kube.selector(database.COMPONENT), ingress=[rule])


def database_rule(cfg: DeterminedArgs) -> dict[str, Any]:
    """Egress to the database: the in-cluster one's pods, or a server's port wherever it is
    (an external host or a managed server's private address, which no selector names)."""
    db = cfg.database
    if isinstance(db, InClusterDatabase):
        return {"to": [component_pods(database.COMPONENT)], "ports": [tcp(constants.DB_PORT)]}
    return {"ports": [tcp(db.port if isinstance(db, ExternalDatabase) else constants.DB_PORT)]}


def database_clients_policy(cfg: DeterminedArgs) -> dict[str, Any]:
    """Backup and restore Jobs: DNS, the database, object storage with the credential
    endpoints of the pod's cloud identity; nothing in."""
    egress = [dns_rule(), database_rule(cfg)]
    ports = object_storage_ports(cfg)
    if ports:
        egress.append({"ports": [tcp(port) for port in ports]})
        egress += [
            {"to": [{"ipBlock": {"cidr": cidr}}], "ports": [tcp(port)]} for cidr, port in CREDENTIAL_ENDPOINTS
        ]
    return policy(DATABASE_CLIENTS_POLICY, cfg.namespace, components_selector(*DB_JOBS), egress=egress)


def bind_workspaces_policy(cfg: DeterminedArgs) -> dict[str, Any]:
    """The workspace-binding Job: DNS and the master's port (through its Service)."""
    to_master = {"to": [component_pods(master.COMPONENT)], "ports": [tcp(constants.MASTER_CONTAINER_PORT)]}
    selector = kube.selector(workspaces.COMPONENT)
    return policy(BIND_WORKSPACES_POLICY, cfg.namespace, selector, egress=[dns_rule(), to_master])


def metrics_token_policy(cfg: DeterminedArgs) -> dict[str, Any]:
    """The Jobs that keep Prometheus' token for the master fresh: DNS, the master's port, and
    the Kubernetes API (they write the token into a Secret), whose address only the cluster
    knows: its HTTPS ports anywhere."""
    to_master = {"to": [component_pods(master.COMPONENT)], "ports": [tcp(constants.MASTER_CONTAINER_PORT)]}
    api = {"ports": [tcp(port) for port in KUBE_API_PORTS]}
    selector = kube.selector(master_metrics.COMPONENT)
    return policy(METRICS_TOKEN_POLICY, cfg.namespace, selector, egress=[dns_rule(), to_master, api])


def task_policy(cfg: DeterminedArgs, namespace: str) -> dict[str, Any]:
    """Task pods of `namespace`: any port from each other (distributed training) and from the
    master (its proxy to notebooks, TensorBoards, shells), nothing else in. In a task
    namespace of its own every pod is a task pod and egress is left open; in the master's
    namespace (before 0.35) the policy selects Determined's task pods and opens their egress
    (the default denies it)."""
    own = namespace == cfg.namespace
    selector = TASK_PODS if own else {}
    ingress = [{"from": [pods(selector), component_pods(master.COMPONENT, None if own else cfg.namespace)]}]
    return policy(TASKS_POLICY, namespace, selector, ingress=ingress, egress=ANYWHERE if own else None)


def acme_solver_policy(cfg: DeterminedArgs) -> dict[str, Any]:
    """cert-manager's HTTP-01 solver pods: their port from the Gateway's proxies."""
    proxies = gateway_proxies(cfg)
    rule: dict[str, Any] = {"ports": [tcp(ACME_SOLVER_PORT)]}
    if proxies is not None:
        rule = {"from": proxies, **rule}
    return policy(
        ACME_SOLVER_POLICY, cfg.namespace, {"matchLabels": dict(ACME_SOLVER_LABELS)}, ingress=[rule]
    )


def objects(cfg: DeterminedArgs) -> list[dict[str, Any]]:
    """Every NetworkPolicy of the stack; none with `networkPolicies: false`."""
    if not cfg.network_policies:
        return []
    found = [default_deny(cfg), master_policy(cfg)]
    if isinstance(cfg.database, InClusterDatabase):
        found.append(database_policy(cfg))
    # Backup and restore Jobs (the migration Job runs in the chart's namespace, never here).
    if cfg.database.runs_backup_jobs:
        found.append(database_clients_policy(cfg))
    if workspaces.needed(cfg):
        found.append(bind_workspaces_policy(cfg))
    if cfg.observed:
        found.append(metrics_token_policy(cfg))
    if _http01(cfg):
        found.append(acme_solver_policy(cfg))
    found += [task_policy(cfg, ns) for ns in cfg.task_namespaces]
    return found


class NetworkPolicies(pulumi.ComponentResource):
    """The stack's NetworkPolicies, each after its namespace (`namespaces`: name -> resource).
    The default deny comes after every allow-list of its namespace (and goes before them on
    destroy): pods already running, as on an upgrade, never meet the deny alone."""

    def __init__(
        self,
        name: str,
        cfg: DeterminedArgs,
        namespaces: dict[str, pulumi.Resource],
        opts: pulumi.ResourceOptions | None = None,
    ):
        super().__init__("determined:components:NetworkPolicies", name, None, opts)
        found = objects(cfg)
        allows: dict[str, list[pulumi.Resource]] = {}
        for obj in (o for o in found if o["metadata"]["name"] != DEFAULT_DENY):
            ns = obj["metadata"]["namespace"]
            after = [namespaces[ns]]
            allows.setdefault(ns, []).append(
                kube.register(obj, pulumi.ResourceOptions(parent=self, depends_on=after))
            )
        for obj in (o for o in found if o["metadata"]["name"] == DEFAULT_DENY):
            ns = obj["metadata"]["namespace"]
            after = [namespaces[ns], *allows.get(ns, [])]
            kube.register(obj, pulumi.ResourceOptions(parent=self, depends_on=after))
        self.register_outputs({})
