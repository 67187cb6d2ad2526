"""The master's own metrics: a Determined token kept fresh, and Prometheus' scrape of the master.

With master.yaml `observability.enable_prometheus` (on whenever observability is:
`args.master_prometheus`) the master serves `/debug/prom/metrics` (its default Prometheus
registry: `determined_healthy` (0.32+), echo's HTTP and gRPC server metrics, Go runtime) and
`/prom/det-state-metrics` (the det_* state gauges, a registry of their own:
prom/det_state_metrics.go:58), both to logged-in users only, and a login lasts 7 days
(master/internal/core.go:1537-1558, user/service.go:51-70,
user/postgres_users.go:23-25 at v0.38.1; /work/research24/metrics/README.md section 5). So a
script (data/metrics_login.py, standard library only) logs in as a Determined user of its own
(`prometheus`, not an admin; made by the script with the admin's password when the master
refuses it) and writes the token into a Secret Prometheus reads:

- a Job at every `up` whose script or settings changed (named by their hash, as the
  workspace binding Job is), so the scrape works as soon as the master does, and a CronJob
  every SCHEDULE_HOURS hours, far inside the 7 days a token lives;
- they run in the Determined namespace, beside the master: the admin password's Secret and
  (tls.mode master) the master's certificate Secret are there, and a pod mounts Secrets of
  its own namespace only. The pod mounts `tls.crt` alone, never the key;
- the token Secret is in the monitoring namespace: the Prometheus Operator reads a
  ServiceMonitor's Secrets (authorization, TLS CA) in the ServiceMonitor's own namespace only
  (prometheus-operator v0.93.0 pkg/prometheus/resource_selector.go:229,237: `sm.GetNamespace()`;
  pkg/apis/monitoring/v1/prometheus_types.go:2585 "a key of a Secret in the namespace"). The
  refresher's ServiceAccount may get and patch that one Secret (a Role there, by
  resourceNames) and nothing else. Pulumi creates it without data (RBAC cannot limit `create`
  by name); the script fills `token`, `previous-token` and, for a master ending TLS, `ca.crt`;
- until the Secret holds a token the operator rejects the ServiceMonitor (a missing key is
  invalid configuration, resource_selector.go:148-156) and takes it in on the Secret's next
  change (a Secret in a Prometheus' own namespace triggers a reconciliation:
  pkg/operator/informers.go:64-71, pkg/prometheus/server/operator.go:598-605 at v0.93.0).

A master ending TLS itself (tls.mode master) is scraped over https, its certificate checked
against its host (`serverName`) with `ca.crt` as the trust: the public CAs plus the master's
chain, what the script itself verifies the master with (as Determined's tasks do). A `ca`
replaces the system roots (prometheus/common v0.70.1 config/http_config.go:1464-1470: a pool
of that file alone, re-read when it changes), hence the public CAs in it: a renewed
certificate from another intermediate stays trusted until the next run copies the new chain.
Go accepts a leaf or intermediate found in the root pool as the chain's anchor
(golang/go src/crypto/x509/verify.go, Certificate.Verify: `if opts.Roots.contains(c)`).

Pure builders; the component registers them: the Job after the master, the Secrets, the
ConfigMap and the RBAC; the token Secret with `ignore_changes=["data", "stringData"]`; the
ServiceMonitor once the Prometheus Operator's CRDs exist.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from components import constants, kube, versions
from components.config.tls import MasterTls
from components.determined import master, system_pods, workspaces
from components.determined.args import DeterminedArgs
from components.observability import layout

COMPONENT = constants.METRICS_TOKEN_COMPONENT
PYTHON_IMAGE = versions.PYTHON_IMAGE

SCRIPT_FILE = Path(__file__).resolve().parent / "data" / "metrics_login.py"
SCRIPT_NAME = "metrics_login.py"
SCRIPT_CONFIG_MAP = "determined-metrics-token"
SCRIPT_DIR = "/opt/metrics-token"
SERVICE_ACCOUNT = "determined-metrics-token"
ROLE = "determined-metrics-token"
CRON_JOB = "determined-metrics-token"
JOB_PREFIX = "determined-metrics-token"

# The Determined user whose token Prometheus scrapes with (not an admin: the metrics
# endpoints check only that a user is logged in, core.go:1537-1558 / service.go:208-232).
METRICS_USER = "prometheus"
ADMIN_USER = workspaces.ADMIN_USER
# Passwords reach the script as files (Secret volumes), never through the environment.
METRICS_PASSWORD_SECRET = "determined-metrics-user"
ADMIN_PASSWORD_SECRET = "determined-metrics-admin"
PASSWORD_KEY = "password"
PASSWORD_DIR = "/etc/metrics-token/user"
ADMIN_PASSWORD_DIR = "/etc/metrics-token/admin"
PASSWORD_FILE = "password"

# In the monitoring namespace; the keys the script writes (data/metrics_login.py).
TOKEN_SECRET = "determined-master-metrics-token"
TOKEN_KEY = "token"
PREVIOUS_TOKEN_KEY = "previous-token"
CA_KEY = "ca.crt"

# The master's endpoint of its default registry (health, API, runtime); the det_* gauges
# (/prom/det-state-metrics) map containers to tasks, which the Kubernetes resource manager
# leaves empty (kubernetesrm/resource_pool.go:574-586 at v0.38.1): not scraped.
METRICS_PATH = "/debug/prom/metrics"

# Every 6 hours at minute 23 (off the hour, when other CronJobs start): a token is at most
# ~6 hours old, and a refresher that keeps failing leaves days before the scrape does.
SCHEDULE_HOURS = 6
SCHEDULE = f"23 */{SCHEDULE_HOURS} * * *"
TOKEN_LIFETIME_HOURS = 7 * 24  # user/postgres_users.go:23-25 at v0.38.1
# The Job at `up` waits as long as the master's startup probe allows (migrations); a
# scheduled run finds the master up, or tries again at the next schedule.
UP_WAIT_SECONDS = constants.MASTER_STARTUP_SECONDS
UP_DEADLINE_SECONDS = 3 * constants.MASTER_STARTUP_SECONDS
UP_BACKOFF_LIMIT = 6
CRON_WAIT_SECONDS = 300
CRON_DEADLINE_SECONDS = 1800
CRON_BACKOFF_LIMIT = 2
# A run missed (controller down, Forbid while one runs) still starts within the hour.
STARTING_DEADLINE_SECONDS = 3600
RUN_AS = workspaces.RUN_AS
RESOURCES = workspaces.RESOURCES


def needed(args: DeterminedArgs) -> bool:
    """Whether the refresher and the scrape exist: observability on (which turns the master's
    endpoints on, `args.master_prometheus`)."""
    return args.observed and args.master_prometheus


def script_text() -> str:
    return SCRIPT_FILE.read_text(encoding="utf-8")


def script_config_map(args: DeterminedArgs) -> dict[str, Any]:
    """The script, in a ConfigMap beside the Jobs (the Determined namespace)."""
    meta = kube.metadata(SCRIPT_CONFIG_MAP, COMPONENT, args.namespace)
    return kube.manifest("v1", "ConfigMap", meta, data={SCRIPT_NAME: script_text()})


def _password_secret(args: DeterminedArgs, name: str, password: Any) -> dict[str, Any]:
    meta = kube.metadata(name, COMPONENT, args.namespace)
    return kube.manifest("v1", "Secret", meta, type="Opaque", stringData={PASSWORD_KEY: password})


def password_secret(args: DeterminedArgs, metrics_password: Any) -> dict[str, Any]:
    """The metrics user's password (a Pulumi Output, generated by the caller)."""
    return _password_secret(args, METRICS_PASSWORD_SECRET, metrics_password)


def admin_password_secret(args: DeterminedArgs, admin_password: Any) -> dict[str, Any]:
    """The admin's password (the master's initial user password, as workspaces.py is given
    it): read by the script only when it must make or repair the metrics user."""
    return _password_secret(args, ADMIN_PASSWORD_SECRET, admin_password)


def token_secret(args: DeterminedArgs) -> dict[str, Any]:
    """The Secret the script keeps the token in, created without data: register it with
    `ignore_changes=["data", "stringData"]` so that no later `up` writes over the token."""
    meta = kube.metadata(TOKEN_SECRET, COMPONENT, layout.namespace(args.namespace))
    return kube.manifest("v1", "Secret", meta, type="Opaque")


def service_account(args: DeterminedArgs) -> dict[str, Any]:
    meta = kube.metadata(SERVICE_ACCOUNT, COMPONENT, args.namespace)
    return kube.manifest("v1", "ServiceAccount", meta)


def role(args: DeterminedArgs) -> dict[str, Any]:
    """Read and patch the token Secret, nothing else (the Secret exists before the script
    runs: `create` cannot be limited to one name)."""
    meta = kube.metadata(ROLE, COMPONENT, layout.namespace(args.namespace))
    rule = {
        "apiGroups": [""],
        "resources": ["secrets"],
        "resourceNames": [TOKEN_SECRET],
        "verbs": ["get", "patch"],
    }
    return kube.manifest("rbac.authorization.k8s.io/v1", "Role", meta, rules=[rule])


def role_binding(args: DeterminedArgs) -> dict[str, Any]:
    """The Role to the refresher's ServiceAccount (in the Determined namespace)."""
    meta = kube.metadata(ROLE, COMPONENT, layout.namespace(args.namespace))
    return kube.manifest(
        "rbac.authorization.k8s.io/v1",
        "RoleBinding",
        meta,
        roleRef={"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": ROLE},
        subjects=[{"kind": "ServiceAccount", "name": SERVICE_ACCOUNT, "namespace": args.namespace}],
    )


def env(args: DeterminedArgs, wait_seconds: int) -> list[dict[str, str]]:
    """The script's settings (data/metrics_login.py's docstring); no secret among them."""
    entries = [
        {"name": "DET_MASTER", "value": master.internal_url(args)},
        {"name": "DET_USER", "value": METRICS_USER},
        {"name": "DET_PASSWORD_FILE", "value": f"{PASSWORD_DIR}/{PASSWORD_FILE}"},
        {"name": "DET_ADMIN_USER", "value": ADMIN_USER},
        {"name": "DET_ADMIN_PASSWORD_FILE", "value": f"{ADMIN_PASSWORD_DIR}/{PASSWORD_FILE}"},
        {"name": "DET_STORE_NAMESPACE", "value": layout.namespace(args.namespace)},
        {"name": "DET_STORE_NAME", "value": TOKEN_SECRET},
        {"name": "DET_TIMEOUT_SECONDS", "value": str(wait_seconds)},
    ]
    if isinstance(args.tls, MasterTls):
        # As the workspace binding Job: the master's chain, checked against its host.
        entries += [
            {"name": "DET_MASTER_CERT_FILE", "value": f"{constants.MASTER_TLS_DIR}/tls.crt"},
            {"name": "DET_MASTER_CERT_NAME", "value": args.tls.host},
        ]
    return entries


def pod_spec(args: DeterminedArgs, wait_seconds: int) -> dict[str, Any]:
    """The refresher's pod: restricted, on the master's node pool, the script and the two
    password files mounted read-only, and (tls.mode master) the master's tls.crt alone."""
    mounts = [
        {"name": "script", "mountPath": SCRIPT_DIR, "readOnly": True},
        {"name": "password", "mountPath": PASSWORD_DIR, "readOnly": True},
        {"name": "admin-password", "mountPath": ADMIN_PASSWORD_DIR, "readOnly": True},
    ]
    volumes = [
        {"name": "script", "configMap": {"name": SCRIPT_CONFIG_MAP, "defaultMode": 0o444}},
        *(
            {
                "name": volume,
                "secret": {
                    "secretName": secret,
                    "items": [{"key": PASSWORD_KEY, "path": PASSWORD_FILE}],
                    "defaultMode": 0o444,
                },
            }
            for volume, secret in (
                ("password", METRICS_PASSWORD_SECRET),
                ("admin-password", ADMIN_PASSWORD_SECRET),
            )
        ),
    ]
    if isinstance(args.tls, MasterTls):
        volumes.append(
            {
                "name": "tls",
                "secret": {
                    "secretName": args.tls.secret_name,
                    "items": [{"key": "tls.crt", "path": "tls.crt"}],
                },
            }
        )
        mounts.append({"name": "tls", "mountPath": constants.MASTER_TLS_DIR, "readOnly": True})
    container = {
        "name": COMPONENT,
        "image": PYTHON_IMAGE,
        "imagePullPolicy": "IfNotPresent",
        # -I: no PYTHON* variables, no user site; -B: writes nothing (read-only root).
        "command": ["python3", "-I", "-B", f"{SCRIPT_DIR}/{SCRIPT_NAME}"],
        "env": env(args, wait_seconds),
        "resources": RESOURCES,
        "volumeMounts": mounts,
        "securityContext": kube.restricted_container(RUN_AS),
    }
    return {
        "restartPolicy": "Never",
        "priorityClassName": constants.SYSTEM_PRIORITY_CLASS,
        **system_pods.pod_fields(args),
        "serviceAccountName": SERVICE_ACCOUNT,
        # Its token patches the token Secret (the Role): the one API call it makes.
        "automountServiceAccountToken": True,
        "enableServiceLinks": False,
        "securityContext": kube.restricted_pod(RUN_AS),
        "containers": [container],
        "volumes": volumes,
    }


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


def job_name(args: DeterminedArgs) -> str:
    """Named by the hash of the script and its settings: an `up` that changes neither leaves
    the finished Job as it is (the CronJob keeps the token fresh); a change runs a new one."""
    run = script_text() + _canonical(env(args, UP_WAIT_SECONDS))
    return f"{JOB_PREFIX}-{hashlib.sha256(run.encode()).hexdigest()[:10]}"


def _labels() -> dict[str, str]:
    return kube.labels(COMPONENT)


def job(args: DeterminedArgs, previous: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The run at `up`, once the master is ready (order it after the master, the Secrets, the
    ConfigMap, the Role and its binding). `previous`: the stack's outputs of its last update
    (see workspaces.awaited: on a first update whose master waits for its certificate `up`
    does not wait for this Job; it retries until the master answers)."""
    meta = kube.metadata(job_name(args), COMPONENT, args.namespace)
    # A failed Job (a master still starting) is run again by the next `up`, not blocking it.
    meta["annotations"] = {"pulumi.com/replaceUnready": "true"}
    if not workspaces.awaited(args, previous):
        meta["annotations"][master.SKIP_AWAIT] = "true"
    spec = {
        "backoffLimit": UP_BACKOFF_LIMIT,
        "activeDeadlineSeconds": UP_DEADLINE_SECONDS,
        "template": {"metadata": {"labels": _labels()}, "spec": pod_spec(args, UP_WAIT_SECONDS)},
    }
    return kube.manifest("batch/v1", "Job", meta, spec=spec)


def cron_job(args: DeterminedArgs) -> dict[str, Any]:
    """The refresh every SCHEDULE_HOURS hours; one run at a time."""
    meta = kube.metadata(CRON_JOB, COMPONENT, args.namespace)
    job_spec = {
        "backoffLimit": CRON_BACKOFF_LIMIT,
        "activeDeadlineSeconds": CRON_DEADLINE_SECONDS,
        "template": {"metadata": {"labels": _labels()}, "spec": pod_spec(args, CRON_WAIT_SECONDS)},
    }
    spec = {
        "schedule": SCHEDULE,
        "timeZone": "Etc/UTC",
        "concurrencyPolicy": "Forbid",
        "startingDeadlineSeconds": STARTING_DEADLINE_SECONDS,
        "successfulJobsHistoryLimit": 1,
        "failedJobsHistoryLimit": 3,
        "jobTemplate": {"metadata": {"labels": _labels()}, "spec": job_spec},
    }
    return kube.manifest("batch/v1", "CronJob", meta, spec=spec)


def service_monitor(args: DeterminedArgs) -> dict[str, Any]:
    """Prometheus' scrape of the master's Service (components/determined/master.py: its
    labels and its one port, named `http`, or `https` with tls.mode master), with the token
    of the Secret beside it, labelled job=layout.MASTER_JOB."""
    tls = isinstance(args.tls, MasterTls)
    endpoint: dict[str, Any] = {
        "port": master.port_name(args),
        "path": METRICS_PATH,
        "scheme": "https" if tls else "http",
        "authorization": {"type": "Bearer", "credentials": {"name": TOKEN_SECRET, "key": TOKEN_KEY}},
        "relabelings": [{"action": "replace", "targetLabel": "job", "replacement": layout.MASTER_JOB}],
    }
    if tls:
        endpoint["tlsConfig"] = {
            "ca": {"secret": {"name": TOKEN_SECRET, "key": CA_KEY}},
            "serverName": args.tls.host,
        }
    meta = kube.metadata(layout.MASTER_JOB, COMPONENT, layout.namespace(args.namespace))
    meta["labels"] |= layout.SELECTOR_LABELS
    spec = {
        "selector": {"matchLabels": kube.selector(constants.MASTER_COMPONENT)},
        "namespaceSelector": {"matchNames": [args.namespace]},
        "endpoints": [endpoint],
    }
    return kube.manifest("monitoring.coreos.com/v1", "ServiceMonitor", meta, spec=spec)


def peer(args: DeterminedArgs) -> dict[str, Any]:
    """A NetworkPolicy peer selecting the refresher's pods (Job and CronJob), for the master's
    ingress rule. Their own egress needs DNS, the master's port and the API server."""
    return {
        "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": args.namespace}},
        "podSelector": {"matchLabels": kube.selector(COMPONENT)},
    }


def objects(
    args: DeterminedArgs,
    metrics_password: Any,
    admin_password: Any,
    previous: Mapping[str, Any] | None = None,
) -> list[dict[str, Any]]:
    """Everything above, in an order that registers (Secrets and RBAC before the Jobs)."""
    return [
        script_config_map(args),
        password_secret(args, metrics_password),
        admin_password_secret(args, admin_password),
        token_secret(args),
        service_account(args),
        role(args),
        role_binding(args),
        job(args, previous),
        cron_job(args),
        service_monitor(args),
    ]
