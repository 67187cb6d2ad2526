"""The master's database, seen by Prometheus: the prometheus-postgres-exporter chart 8.2.0
in the monitoring namespace, connected as the master's own database user to whichever
server the master uses (in-cluster, external or the cloud's managed one), scraped through
the chart's ServiceMonitor with the release label and job `layout.POSTGRES_JOB`.

Facts are from prometheus-community/helm-charts@prometheus-postgres-exporter-8.2.0 (commit
e759e9ae) `charts/prometheus-postgres-exporter/` (values.yaml, templates/); keys checked
against tests/data/chart-keys/prometheus-postgres-exporter-8.2.0.txt.

The password reaches the exporter only through a Secret of the monitoring namespace
(`config.datasource.passwordSecret` -> env DATA_SOURCE_PASS from a secretKeyRef,
templates/deployment.yaml:114-119); the values never hold it.
"""

from __future__ import annotations

from typing import Any

from components import kube, versions
from components.addons import release
from components.config import InClusterDatabase
from components.determined import system_pods
from components.determined.args import DeterminedArgs
from components.determined.database import DatabaseEndpoint
from components.observability import layout

CHART = versions.POSTGRES_EXPORTER_CHART
VERSION = versions.POSTGRES_EXPORTER_VERSION
REPOSITORY = versions.PROMETHEUS_COMMUNITY_REPOSITORY
RELEASE = "postgres-exporter"
COMPONENT = "postgres-exporter"
PASSWORD_SECRET = "postgres-exporter-password"
PASSWORD_KEY = "password"
CA_SECRET = "postgres-exporter-ca"
CA_KEY = "ca.crt"
CA_DIR = "/etc/postgres-exporter-ca"
# The pods' labels (templates/_helpers.tpl:51-54 selectorLabels: name = the chart's name
# unless nameOverride, instance = the release).
POD_LABELS = {**layout.POSTGRES_EXPORTER_POD_LABELS, "app.kubernetes.io/instance": RELEASE}
# The server's ssl mode when the endpoint names none: the in-cluster server runs without
# TLS (components/config/database.py refuses `ssl on` for it), and the master connects
# without it too (Determined's db.ssl_mode default `disable`).
DEFAULT_SSL_MODE = "disable"
INTERVAL = "30s"
# The chart sets none (values.yaml `resources: {}`); chosen, not sourced.
RESOURCES = {"requests": {"cpu": "20m", "memory": "64Mi"}, "limits": {"memory": "256Mi"}}


def password_secret(args: DeterminedArgs, password: Any) -> dict[str, Any]:
    """The master's database password (an Output, secret) for the exporter, in the
    monitoring namespace."""
    meta = kube.metadata(PASSWORD_SECRET, COMPONENT, layout.namespace(args.namespace))
    return kube.manifest("v1", "Secret", meta, type="Opaque", stringData={PASSWORD_KEY: password})


def ca_secret(args: DeterminedArgs, endpoint: DatabaseEndpoint) -> dict[str, Any] | None:
    """The server's CA (an external database's `sslRootCert`) for the exporter to verify the
    server with; None when the endpoint has none."""
    if not endpoint.ssl_root_cert:
        return None
    meta = kube.metadata(CA_SECRET, COMPONENT, layout.namespace(args.namespace))
    return kube.manifest("v1", "Secret", meta, type="Opaque", stringData={CA_KEY: endpoint.ssl_root_cert})


def values(args: DeterminedArgs, endpoint: DatabaseEndpoint) -> dict[str, Any]:
    """The chart values: a connection to `endpoint` (its host may be an Output: a managed
    server's address) as the master's user, the password by Secret reference."""
    host = endpoint.host
    if isinstance(args.database, InClusterDatabase):
        # The master reaches its Service by bare name in its own namespace; the exporter
        # runs in the monitoring namespace.
        host = f"{host}.{args.namespace}.svc"
    datasource: dict[str, Any] = {
        # Passed through `tpl` (templates/_helpers.tpl:78): a plain host name is unchanged.
        "host": host,
        "port": str(endpoint.port),
        "database": endpoint.name,
        "user": endpoint.user,
        "sslmode": endpoint.ssl_mode or DEFAULT_SSL_MODE,
        "passwordSecret": {"name": PASSWORD_SECRET, "key": PASSWORD_KEY},
    }
    result: dict[str, Any] = {
        "fullnameOverride": RELEASE,
        "config": {"datasource": datasource},
        "serviceMonitor": {
            "enabled": True,
            # Rendered only when set (templates/servicemonitor.yaml:4-9): the label the
            # install's Prometheus selects.
            "labels": dict(layout.SELECTOR_LABELS),
            "interval": INTERVAL,
            # The chart's jobLabel is its fullname (servicemonitor.yaml:93): the job
            # dashboards and alerts select is set here.
            "relabelings": [{"targetLabel": "job", "replacement": layout.POSTGRES_JOB, "action": "replace"}],
        },
        # Pod (values.yaml podSecurityContext: uid 1001, runAsNonRoot, RuntimeDefault) and
        # container (securityContext: no escalation, drop ALL, read-only root) restricted
        # already; the Role the chart makes grants nothing the exporter uses.
        "rbac": {"create": False},
        "resources": RESOURCES,
        **system_pods.placement(args),
    }
    if endpoint.ssl_root_cert:
        # libpq's sslrootcert (https://www.postgresql.org/docs/current/libpq-connect.html),
        # appended to the DSN by extraParams (templates/_helpers.tpl:78).
        datasource["extraParams"] = f"sslrootcert={CA_DIR}/{CA_KEY}"
        result["extraVolumes"] = [{"name": "ca", "secret": {"secretName": CA_SECRET}}]
        result["extraVolumeMounts"] = [{"name": "ca", "mountPath": CA_DIR, "readOnly": True}]
    return result


def release_args(args: DeterminedArgs, endpoint: DatabaseEndpoint) -> dict[str, Any]:
    """The `kubernetes:helm.sh/v3:Release` of the exporter in the monitoring namespace;
    `endpoint` is the master's (components.determined.database.endpoint(args, server))."""
    return release.release_args(
        RELEASE,
        CHART,
        VERSION,
        layout.namespace(args.namespace),
        values(args, endpoint),
        repository=REPOSITORY,
    )


def database_peer(args: DeterminedArgs) -> dict[str, Any]:
    """The NetworkPolicy peer of the exporter's pods: what the database's policy admits."""
    return {
        "podSelector": {"matchLabels": dict(POD_LABELS)},
        "namespaceSelector": {
            "matchLabels": {"kubernetes.io/metadata.name": layout.namespace(args.namespace)}
        },
    }
