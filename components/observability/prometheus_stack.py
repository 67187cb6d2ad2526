"""The metrics store: kube-prometheus-stack (Prometheus Operator, Prometheus, Alertmanager,
Grafana, kube-state-metrics, node exporter) from its official chart, one install per
Determined namespace.

Two namespaces: `layout.namespace(ns)` (Pod Security `restricted`: everything but the node
exporter) and `layout.agents_namespace(ns)` (`privileged`: the node exporter's host network,
PID and root file system, NVIDIA's dcgm-exporter chart).

Two installs in one cluster (two Determined namespaces) stay apart:
- the operator watches only its install's two namespaces (`--namespaces`), so it never
  reconciles the other install's Prometheus, Alertmanager or monitors, and Prometheus selects
  monitors and rules only there;
- the chart's cluster-scoped objects (ClusterRoles and their bindings, the admission webhook
  configurations, the kubelet Service in kube-system) are named from `fullnameOverride`s
  derived from the Determined namespace (`cluster_scoped_names`).
What values cannot separate: the CRDs (one set per cluster; Helm installs them from the
chart's `crds/` directory only when absent and never upgrades or deletes them), and the
node exporter's host port (see `NODE_EXPORTER_PORT`).

Facts are from prometheus-community/helm-charts@kube-prometheus-stack-88.5.3 (commit
ea930bae), `charts/kube-prometheus-stack/` ("kps" below), and the subcharts it pins
(Chart.yaml dependencies): kube-state-metrics-8.4.0 ("ksm"), prometheus-node-exporter-4.56.1
("pne"), grafana-community/helm-charts@grafana-12.11.1 ("grafana"). Keys are checked against
tests/data/chart-keys/kube-prometheus-stack-88.5.3.txt.

Pure functions only: the lead's Observability component registers the objects.
"""

from __future__ import annotations

import hashlib
from typing import Any

from components import kube, versions
from components.addons import release
from components.config.tls import IngressTls
from components.determined import system_pods
from components.determined.args import DeterminedArgs
from components.kube import pod_security
from components.observability import dashboards, layout

CHART = versions.KUBE_PROMETHEUS_STACK_CHART
VERSION = versions.KUBE_PROMETHEUS_STACK_VERSION
REPOSITORY = versions.PROMETHEUS_COMMUNITY_REPOSITORY
COMPONENT = "monitoring"

# Grafana's admin Secret: the keys the chart reads by default (kps values.yaml:1470-1475,
# grafana.admin.userKey / passwordKey).
GRAFANA_ADMIN_SECRET = "grafana-admin"
GRAFANA_ADMIN_USER = "admin"
GRAFANA_USER_KEY = "admin-user"
GRAFANA_PASSWORD_KEY = "admin-password"

# kps truncates its fullname to 26 characters (templates/_helpers.tpl:14-25: "The longest
# name that gets created adds and extra 37 characters").
FULLNAME_MAX = 26
# The node exporter's port: the chart's (pne values.yaml `service.port: 9100`), a host port
# (`hostNetwork: true`, values.yaml:382). A second install in the same cluster wants the
# same port on the same nodes and its pods stay Pending: left as it is (what remains for two
# installs in one cluster).
NODE_EXPORTER_PORT = 9100

# Alertmanager's volume: it keeps silences and the notification log only.
ALERTMANAGER_STORAGE = "1Gi"
# Prometheus stops at this share of its volume (`retentionSize`), oldest blocks first, before
# the volume fills (the WAL and compaction need room beyond it).
RETENTION_SIZE_SHARE = 0.9

# Requests and memory limits: the chart sets none (kps values.yaml:3412, :4668; ksm :515;
# pne :334; grafana :427). Chosen for one cluster of tens of GPU nodes, not sourced.
PROMETHEUS_RESOURCES = {"requests": {"cpu": "500m", "memory": "2Gi"}, "limits": {"memory": "4Gi"}}
ALERTMANAGER_RESOURCES = {"requests": {"cpu": "10m", "memory": "64Mi"}, "limits": {"memory": "256Mi"}}
OPERATOR_RESOURCES = {"requests": {"cpu": "50m", "memory": "128Mi"}, "limits": {"memory": "512Mi"}}
RELOADER_RESOURCES = {"requests": {"cpu": "10m", "memory": "32Mi"}, "limits": {"memory": "128Mi"}}
WEBHOOK_JOB_RESOURCES = {"requests": {"cpu": "10m", "memory": "32Mi"}, "limits": {"memory": "128Mi"}}
GRAFANA_RESOURCES = {"requests": {"cpu": "100m", "memory": "256Mi"}, "limits": {"memory": "512Mi"}}
SIDECAR_RESOURCES = {"requests": {"cpu": "10m", "memory": "64Mi"}, "limits": {"memory": "256Mi"}}
KSM_RESOURCES = {"requests": {"cpu": "50m", "memory": "128Mi"}, "limits": {"memory": "512Mi"}}
NODE_EXPORTER_RESOURCES = {"requests": {"cpu": "20m", "memory": "32Mi"}, "limits": {"memory": "128Mi"}}

# A restricted container (Pod Security `restricted`: no escalation, every capability dropped,
# RuntimeDefault seccomp, non-root); the pods' own securityContexts give the user.
RESTRICTED_CONTAINER = {
    "allowPrivilegeEscalation": False,
    "readOnlyRootFilesystem": True,
    "runAsNonRoot": True,
    "capabilities": {"drop": ["ALL"]},
    "seccompProfile": {"type": "RuntimeDefault"},
}

# Control-plane components GKE and EKS run outside the cluster's nodes, unreachable from it:
# their ServiceMonitors would be down targets (kps general.rules.yaml:27-46 `TargetDown`,
# and each group's own `...Down` alert). `<key>.enabled: false` drops the Service, the
# ServiceMonitor, the default rule groups and dashboards gated on it (rules-1.14/etcd.yaml:7,
# kube-scheduler.rules.yaml:7, kubernetes-system-scheduler.yaml:7,
# kubernetes-system-controller-manager.yaml:7, kubernetes-system-kube-proxy.yaml:7;
# dashboards-1.14/etcd.yaml, proxy.yaml, ...). kube-proxy runs on the nodes but serves its
# metrics on 127.0.0.1:10249 by default (kube-proxy `--metrics-bind-address`), so it is down
# too. On an existing cluster the project cannot know where these listen (kubeadm binds the
# scheduler and controller manager to 127.0.0.1): off there as well.
UNREACHABLE_CONTROL_PLANE = ("kubeEtcd", "kubeControllerManager", "kubeScheduler", "kubeProxy")


def _short(name: str, limit: int) -> str:
    """`name`, or when longer than `limit` its head and a digest of the whole (two long
    namespaces with one head stay apart)."""
    if len(name) <= limit:
        return name
    tag = hashlib.sha256(name.encode()).hexdigest()[:6]
    return f"{name[: limit - len(tag) - 1].rstrip('-')}-{tag}"


def fullname(args: DeterminedArgs) -> str:
    """The chart's fullname (`fullnameOverride`), from the Determined namespace: what its
    cluster-scoped objects are named after (at most FULLNAME_MAX characters)."""
    return _short(f"{args.namespace}-mon", FULLNAME_MAX)


def cluster_scoped_names(args: DeterminedArgs) -> list[tuple[str, str]]:
    """(kind, name) of every cluster-scoped object the chart renders with these values (and
    the kubelet Service the operator keeps in kube-system): each install's own."""
    base = fullname(args)
    operator = f"{base}-operator"
    ksm = _ksm_fullname(args)
    return [
        ("ClusterRole", operator),  # templates/prometheus-operator/clusterrole.yaml:6
        ("ClusterRoleBinding", operator),  # prometheus-operator/clusterrolebinding.yaml:5
        ("ClusterRole", f"{base}-prometheus"),  # templates/prometheus/clusterrole.yaml:5
        ("ClusterRoleBinding", f"{base}-prometheus"),  # prometheus/clusterrolebinding.yaml:5
        ("ClusterRole", f"{base}-prometheus-crd-view"),  # prometheus-operator/aggregate-clusterroles.yaml:6
        ("ClusterRole", f"{base}-prometheus-crd-edit"),  # aggregate-clusterroles.yaml:20
        ("ClusterRole", f"{base}-admission"),  # admission-webhooks/job-patch/clusterrole.yaml:5
        ("ClusterRoleBinding", f"{base}-admission"),  # job-patch/clusterrolebinding.yaml:5
        ("MutatingWebhookConfiguration", f"{base}-admission"),  # mutatingWebhookConfiguration.yaml:5
        ("ValidatingWebhookConfiguration", f"{base}-admission"),  # validatingWebhookConfiguration.yaml:5
        ("ClusterRole", ksm),  # ksm templates/role.yaml:8-13
        ("ClusterRoleBinding", ksm),  # ksm templates/clusterrolebinding.yaml:7
        # The operator's `--kubelet-service=kube-system/<fullname>-kubelet`
        # (templates/prometheus-operator/deployment.yaml:2,61): namespaced, but in a namespace
        # both installs share.
        ("Service kube-system", f"{base}-kubelet"),
    ]


def _ksm_fullname(args: DeterminedArgs) -> str:
    # ksm's fullname names its ClusterRole and binding (ksm templates/_helpers.tpl fullname,
    # truncated to 63).
    return _short(f"{args.namespace}-kube-state-metrics", 63)


def namespaces(args: DeterminedArgs) -> list[dict[str, Any]]:
    """The monitoring namespace (Pod Security `restricted`, enforced, audited, warned) and the
    node agents' (`privileged` enforced: host network, PID and paths). The agents' namespace
    audits at `baseline`, so the audit log records each agent pod's host access, and warns at
    `privileged`: no client warning on every rollout of pods that need it by nature."""
    monitoring = kube.metadata(layout.namespace(args.namespace), COMPONENT)
    monitoring["labels"] |= pod_security.namespace_labels("restricted")
    agents = kube.metadata(layout.agents_namespace(args.namespace), COMPONENT)
    agents["labels"] |= pod_security.namespace_labels("privileged", audit="baseline", warn="privileged")
    return [kube.manifest("v1", "Namespace", monitoring), kube.manifest("v1", "Namespace", agents)]


def grafana_admin_secret(args: DeterminedArgs, password: Any) -> dict[str, Any]:
    """Grafana's admin login, read by the chart through `grafana.admin.existingSecret`;
    `password` is the Output the lead generates (a secret)."""
    meta = kube.metadata(GRAFANA_ADMIN_SECRET, COMPONENT, layout.namespace(args.namespace))
    return kube.manifest(
        "v1",
        "Secret",
        meta,
        type="Opaque",
        stringData={GRAFANA_USER_KEY: GRAFANA_ADMIN_USER, GRAFANA_PASSWORD_KEY: password},
    )


def _quantity_bytes(quantity: str) -> int:
    units = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50}
    units |= {"k": 10**3, "M": 10**6, "G": 10**9, "T": 10**12, "P": 10**15}
    for suffix in sorted(units, key=len, reverse=True):
        if quantity.endswith(suffix):
            return int(float(quantity[: -len(suffix)]) * units[suffix])
    return int(float(quantity))


def retention_size(storage_size: str) -> str:
    """Prometheus' `retentionSize` for a volume of `storage_size`: RETENTION_SIZE_SHARE of it,
    in whole MiB (Prometheus' size units are "based on powers-of-2, so 1KB is 1024B":
    https://prometheus.io/docs/prometheus/latest/storage/#operational-aspects)."""
    mib = int(_quantity_bytes(storage_size) * RETENTION_SIZE_SHARE) // 2**20
    return f"{mib}MB"


def _claim(size: str, storage_class: str | None) -> dict[str, Any]:
    spec: dict[str, Any] = {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": size}}}
    if storage_class:
        spec["storageClassName"] = storage_class
    return {"volumeClaimTemplate": {"spec": spec}}


def _watched(args: DeterminedArgs) -> dict[str, Any]:
    """A namespace selector of the install's two namespaces (kubernetes.io/metadata.name is
    set by the API server on every namespace)."""
    names = [layout.namespace(args.namespace), layout.agents_namespace(args.namespace)]
    return {"matchExpressions": [{"key": "kubernetes.io/metadata.name", "operator": "In", "values": names}]}


def _prometheus(args: DeterminedArgs) -> dict[str, Any]:
    # Pod Security: the pod runs as uid 1000, runAsNonRoot, RuntimeDefault (kps
    # values.yaml:4815-4821); the operator gives the prometheus and config-reloader
    # containers no escalation, a read-only root and drop ALL
    # (prometheus-operator@v0.93.0 pkg/prometheus/server/statefulset.go:347-353,
    # pkg/operator/config_reloader.go:368-373).
    obs = args.observability
    own = {"matchLabels": dict(layout.SELECTOR_LABELS)}
    spec: dict[str, Any] = {
        # kps values.yaml:4567 (default 10d), :4571 retentionSize, :4675 storageSpec;
        # templates/prometheus/prometheus.yaml:162-164,304-306.
        "retention": obs.retention,
        "retentionSize": retention_size(obs.storage_size),
        "storageSpec": _claim(obs.storage_size, obs.storage_class),
        "resources": PROMETHEUS_RESOURCES,
        # Only the project's monitors and rules (the release label, as the chart's own
        # NilUsesHelmValues default would select: prometheus.yaml:193-202), only in the
        # install's namespaces (the default {} is every namespace: values.yaml:4489).
        "serviceMonitorSelector": own,
        "serviceMonitorNamespaceSelector": _watched(args),
        "podMonitorSelector": own,
        "podMonitorNamespaceSelector": _watched(args),
        "ruleSelector": own,
        "ruleNamespaceSelector": _watched(args),
        "probeSelector": own,
        "probeNamespaceSelector": _watched(args),
        "scrapeConfigSelector": own,
        "scrapeConfigNamespaceSelector": _watched(args),
        **system_pods.placement(args),
    }
    return {"prometheusSpec": spec}


def _alertmanager(args: DeterminedArgs) -> dict[str, Any]:
    # kps values.yaml:1121 retention (120h), :1126 storage ({}: an emptyDir, silences lost on
    # every restart). Pod Security: pod uid 1000, RuntimeDefault (values.yaml:1219-1225);
    # container restricted by the operator (prometheus-operator@v0.93.0
    # pkg/alertmanager/statefulset.go:715-721).
    spec = {
        "retention": "120h",
        "storage": _claim(ALERTMANAGER_STORAGE, args.observability.storage_class),
        "resources": ALERTMANAGER_RESOURCES,
        **system_pods.placement(args),
    }
    return {"enabled": True, "alertmanagerSpec": spec}


def _operator(args: DeterminedArgs) -> dict[str, Any]:
    placement = system_pods.placement(args)
    return {
        # `--namespaces=<release namespace>,<additional>` (deployment.yaml:77-87): the
        # operator reconciles Prometheus, Alertmanager and monitors there only.
        "namespaces": {"releaseNamespace": True, "additional": [layout.agents_namespace(args.namespace)]},
        "resources": OPERATOR_RESOURCES,
        # Passed to the operator as the reloader sidecars' resources (deployment.yaml:100-103).
        "prometheusConfigReloader": {"resources": RELOADER_RESOURCES},
        "admissionWebhooks": {
            # The webhook checks PrometheusRules of this install's namespaces only: the other
            # install's rules do not wait on this operator (values.yaml:2887 namespaceSelector).
            "namespaceSelector": _watched(args),
            # The certificate Jobs: pod (values.yaml:3152-3157) and containers (:3167-3183)
            # restricted already; seccomp is the pod's.
            "patch": {"resources": WEBHOOK_JOB_RESOURCES, **placement},
        },
        # Pod (values.yaml:3468-3474: uid 65534, RuntimeDefault) and container (:3483-3488:
        # no escalation, drop ALL) restricted already.
        **placement,
    }


def _grafana(args: DeterminedArgs) -> dict[str, Any]:
    monitoring = layout.namespace(args.namespace)
    label, value = next(iter(layout.DASHBOARD_LABELS.items()))
    server: dict[str, Any] = {}
    if isinstance(args.tls, IngressTls):
        # Behind the Gateway under a path of the master's host (grafana.ini [server]:
        # root_url is what Grafana links to, serve_from_sub_path makes it answer there):
        # https://grafana.com/docs/grafana/latest/setup-grafana/configure-grafana/#root_url
        # The chart's probes (/api/health) still answer: Grafana registers its health
        # endpoints to be "not redirected or rejected" (grafana/grafana pkg/api/http_server.go,
        # after SetURLPrefix; read on main, not at the image's tag).
        server = {
            "root_url": f"https://{args.tls.host}{layout.GRAFANA_PATH}/",
            "serve_from_sub_path": True,
        }
    values: dict[str, Any] = {
        "fullnameOverride": layout.GRAFANA_SERVICE,
        "admin": {
            "existingSecret": GRAFANA_ADMIN_SECRET,
            "userKey": GRAFANA_USER_KEY,
            "passwordKey": GRAFANA_PASSWORD_KEY,
        },
        # A Role in its namespace instead of a ClusterRole (grafana templates/clusterrole.yaml:1):
        # the sidecars read ConfigMaps of their own namespace only.
        "rbac": {"namespaced": True},
        "sidecar": {
            "dashboards": {
                "enabled": True,
                "label": label,
                "labelValue": value,
                # kps sets ALL (values.yaml:1542); the sidecar's NAMESPACE env
                # (grafana templates/_pod.tpl:782-785).
                "searchNamespace": [monitoring],
                # The project's dashboards in their folder (dashboards.py).
                **dashboards.sidecar_values(),
            },
            "datasources": {"searchNamespace": [monitoring]},
            # Sidecar containers: no escalation, drop ALL, RuntimeDefault (grafana
            # values.yaml:1055-1061); the pod runs as uid 472, runAsNonRoot (:159-163).
            "resources": SIDECAR_RESOURCES,
        },
        # Dashboards are ConfigMaps and the admin a Secret: nothing to keep (grafana
        # values.yaml:489 persistence off by default; its root init container
        # `init-chown-data` runs only with persistence, templates/_pod.tpl:31,40).
        "persistence": {"enabled": False},
        # `helm test` pod: bats as root, no securityContext (grafana values.yaml:126-137).
        "testFramework": {"enabled": False},
        "resources": GRAFANA_RESOURCES,
        **system_pods.placement(args),
    }
    if server:
        values["grafana.ini"] = {"server": server}
        # Served from the sub-path, Grafana redirects /metrics there too (the chart's note,
        # grafana values.yaml:1662-1664): its own scrape asks for it where it is.
        values["serviceMonitor"] = {"path": f"{layout.GRAFANA_PATH}/metrics"}
    return values


def _kube_state_metrics(args: DeterminedArgs) -> dict[str, Any]:
    # `--metric-labels-allowlist` (ksm values.yaml:416): kube_node_labels and kube_pod_labels
    # get these labels as label_<name>.
    allow = [f"nodes=[{','.join(layout.NODE_LABELS_ALLOWLIST)}]"]
    if layout.TASK_POD_LABELS:
        allow.append(f"pods=[{','.join(layout.TASK_POD_LABELS)}]")
    return {
        "fullnameOverride": _ksm_fullname(args),
        "metricLabelsAllowlist": allow,
        "resources": KSM_RESOURCES,
        # Pod (ksm values.yaml:339-346) and container (:351-356) restricted already.
        **system_pods.placement(args),
    }


def _node_exporter(args: DeterminedArgs) -> dict[str, Any]:
    return {
        # Host network, PID and root file system (pne values.yaml:382,390,396): the agents'
        # privileged namespace (pne templates/_helpers.tpl:98-115 puts the DaemonSet, Service
        # and ServiceMonitor there).
        "namespaceOverride": layout.agents_namespace(args.namespace),
        # Every node, whatever its taints (GPU pools carry nvidia.com/gpu, pools their own);
        # the chart tolerates only NoSchedule (pne values.yaml:471-473).
        "tolerations": [{"operator": "Exists"}],
        "resources": NODE_EXPORTER_RESOURCES,
        # No escalation, drop ALL (pne values.yaml:366-370 sets only a read-only root).
        "containerSecurityContext": {
            "readOnlyRootFilesystem": True,
            "allowPrivilegeEscalation": False,
            "capabilities": {"drop": ["ALL"]},
        },
    }


def values(args: DeterminedArgs) -> dict[str, Any]:
    """The chart values of the install of Determined namespace `args.namespace`."""
    result: dict[str, Any] = {
        "fullnameOverride": fullname(args),
        "prometheus": _prometheus(args),
        "alertmanager": _alertmanager(args),
        "prometheusOperator": _operator(args),
        "grafana": _grafana(args),
        "kube-state-metrics": _kube_state_metrics(args),
        "prometheus-node-exporter": _node_exporter(args),
    }
    # The chart's dashboards stay (nodes, pods, workloads, Prometheus, ...): those of the
    # components turned off here go with them (dashboards-1.14/*.yaml `if` lines), as do the
    # AIX and Darwin node dashboards (nodes-aix.yaml, nodes-darwin.yaml: no such nodes).
    result["nodeExporter"] = {"operatingSystems": {"aix": {"enabled": False}, "darwin": {"enabled": False}}}
    for key in UNREACHABLE_CONTROL_PLANE:
        result[key] = {"enabled": False}
    if args.cloud == "gke":
        # GKE runs kube-dns, not CoreDNS: the chart's coreDns Service (selector
        # k8s-app=kube-dns, port 9153: kps templates/exporters/core-dns/service.yaml) finds
        # pods that do not serve that port, a down target (kps values.yaml:2139-2140,
        # templates/exporters/core-dns/service.yaml:26).
        result["coreDns"] = {"enabled": False}
    return result


def release_args(args: DeterminedArgs) -> dict[str, Any]:
    """Arguments of the `kubernetes:helm.sh/v3:Release` of kube-prometheus-stack in the
    monitoring namespace (created by `namespaces`, not by Helm)."""
    return release.release_args(
        layout.STACK_RELEASE,
        CHART,
        VERSION,
        layout.namespace(args.namespace),
        values(args),
        repository=REPOSITORY,
        timeout=900,  # the CRDs, the webhook certificate Jobs, then every workload
    )
