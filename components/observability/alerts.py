"""The project's alerts and recording rules: one PrometheusRule in the monitoring namespace.

Written in Python, not a YAML file: nearly every rule depends on the configuration (the
namespaces, pools, sizes, the backup schedule, the thresholds of `observability.alerts`), and
each alert keeps its runbook text beside its expression. Each alert has a `severity`
(critical: act now; warning: act today; info), a `summary`, a `description` and a `runbook`
(what it means, what to check, what to do) that the documentation shows.

The series they read, and where they come from (names: tests/data/metrics, checked by
tests/observability/promql.py):
- `up` of the scrape jobs in layout (the master's, the postgres exporter's);
- postgres exporter: `pg_up`, `pg_database_size_bytes`;
- kubelet (kube-prometheus-stack's kubelet ServiceMonitor): `kubelet_volume_stats_*` of the
  database's claim;
- kube-state-metrics: pods, Jobs, CronJobs, nodes (node pool label allow-listed: layout);
- DCGM: `DCGM_FI_DEV_GPU_UTIL` (every exporter the project uses), `DCGM_FI_DEV_XID_ERRORS`
  (the chart's and the GPU operator's, not GKE's managed one), with the GPU's `node` and,
  while a pod holds it, the pod's `namespace` and `pod` (honorLabels);
- cert-manager (cert_manager_metrics.py), Kueue (kueue_metrics.py).
"""

from __future__ import annotations

from typing import Any

from components import constants, kube
from components.addons import cert_manager, kueue
from components.config.database import InClusterDatabase, ManagedDatabase
from components.config.tls import ExposedTls
from components.determined.args import DeterminedArgs
from components.kube.api_rules import quantity_value
from components.observability import cron, layout, master_metrics

API = "monitoring.coreos.com/v1"
NAME = "determined-alerts"
COMPONENT = "alerts"

# The GPU metric every exporter the project scrapes collects (the dcgm-exporter chart's
# default list, the GPU operator's dcp-metrics-included.csv, GKE's managed set: the metrics
# README), so a GPU's presence is judged by it.
GPU_UTIL = "DCGM_FI_DEV_GPU_UTIL"
# Whether a GPU reports at all: its temperature, a device field every exporter the project
# uses collects, MIG or not (GPU_UTIL is not reported for MIG instances: NVIDIA/dcgm-exporter
# issues #216, #430).
GPU_PRESENT = "DCGM_FI_DEV_GPU_TEMP"
# "Value of the last XID error encountered" (dcgm-exporter 4.5.3-4.8.2 etc/default-counters.csv:29):
# a gauge of the last XID, not a count. Not collected by GKE's managed DCGM
# (/work/research24/gpu-metrics.md section 1).
XID = "DCGM_FI_DEV_XID_ERRORS"
# XID 79: "GPU has fallen off the bus" (NVIDIA's XID catalogue,
# https://docs.nvidia.com/deploy/xid-errors/index.html; dcgm-exporter 4.5.3-4.8.2
# internal/pkg/collector/xid_errors.go:100).
XID_FELL_OFF_THE_BUS = 79
# kube-state-metrics writes a resource name as a label value with every character outside
# [a-zA-Z0-9_] replaced by `_` (kube-state-metrics v2.20.0 internal/store/utils.go:38,148;
# extended resources: internal/store/pod.go:283-285).
GPU_RESOURCE = "nvidia_com_gpu"

# The database volume: warning past WARN used, critical past CRITICAL.
DISK_WARN = 0.80
DISK_CRITICAL = 0.90
# Certificates: Let's Encrypt's last 90 days and cert-manager renews a third before the end
# (Certificate spec.renewBefore default: 2/3 of the duration,
# https://cert-manager.io/docs/usage/certificate/#reissuance-triggered-by-expiry-renewal);
# under WARN days left, renewals have failed for over a week.
CERT_WARN_DAYS = 21
CERT_CRITICAL_DAYS = 7
# The backup may miss one run (a dump that failed once, a node drained mid-dump): it alerts
# when two scheduled runs in a row left no successful dump, plus time for a dump to finish.
BACKUP_RUNS_MISSED = 2
BACKUP_SLACK_MINUTES = 60
# A GPU seen within this window, and gone now, on a node that still exists.
GPU_VANISHED_WINDOW = "1h"


def _alert(
    name: str,
    expr: str,
    severity: str,
    summary: str,
    description: str,
    runbook: str,
    for_: str | None = None,
    labels: dict[str, str] | None = None,
) -> dict[str, Any]:
    rule: dict[str, Any] = {"alert": name, "expr": expr}
    if for_:
        rule["for"] = for_
    rule["labels"] = {"severity": severity, **(labels or {})}
    rule["annotations"] = {
        "summary": summary,
        "description": description,
        "runbook": " ".join(runbook.split()),
    }
    return rule


def _any_of(names: list[str]) -> str:
    """A label regex matching exactly these values (PromQL anchors regexes; DNS labels and
    queue names hold no regex metacharacters but `.`, escaped)."""
    return "|".join(name.replace(".", "\\.") for name in sorted(set(names)))


# --- recording rules ----------------------------------------------------------------------------


def _node_pools_with_max(args: DeterminedArgs) -> list[Any]:
    """The node pools the project creates (a maximum size) that resource pools run on."""
    used = {rp.node_pool for rp in args.resource_pools}
    return [pool for pool in args.node_pools if pool.name in used and getattr(pool, "max_nodes", None)]


def records(args: DeterminedArgs) -> list[dict[str, Any]]:
    """Series built from the configuration, for dashboards to join on (layout.RECORDING_RULES):
    a resource pool's task namespace and node pool, a node pool's largest size."""
    found = [
        {
            "record": layout.RESOURCE_POOL_INFO,
            "expr": "vector(1)",
            "labels": {"resource_pool": rp.name, "namespace": rp.namespace_name, "node_pool": rp.node_pool},
        }
        for rp in args.resource_pools
    ]
    found += [
        {
            "record": layout.NODE_POOL_MAX_NODES,
            "expr": f"vector({pool.max_nodes})",
            "labels": {"node_pool": pool.name},
        }
        for pool in _node_pools_with_max(args)
    ]
    return found


# --- the master and its database ----------------------------------------------------------------


def master_alerts(args: DeterminedArgs) -> list[dict[str, Any]]:
    job = f'job="{layout.MASTER_JOB}"'
    return [
        _alert(
            "DeterminedMasterDown",
            f"up{{{job}}} == 0 or absent(up{{{job}}})",
            "critical",
            "The Determined master is down or cannot be scraped",
            f"Prometheus has not scraped the Determined master (namespace {args.namespace}) for 5 minutes.",
            f"""Users cannot reach Determined and no task is scheduled while the master is down. Check the
            master's pod: `kubectl -n {args.namespace} get pods -l
            app.kubernetes.io/name={constants.MASTER_COMPONENT}` and its logs (`kubectl logs`), then its
            database (DeterminedDatabaseDown). If the master runs and answers, the scrape itself fails: the
            token the scrape sends expires after a week and is renewed by the CronJob
            {master_metrics.CRON_JOB} in {args.namespace}; check its last Job's logs and the target's error on
            Prometheus' Targets page. Right after the first install it may fire until the first token Job
            has run (the Prometheus Operator skips the scrape until its token Secret holds one).""",
            for_="5m",
        )
    ]


def _database_size_bytes(args: DeterminedArgs) -> int | None:
    """The most the database can hold: the in-cluster claim's size; a managed RDS instance's
    storage autoscaling bound (or its size); None where the disk grows without bound (Cloud
    SQL with automatic storage increase) or is not the project's (external)."""
    db = args.database
    if isinstance(db, InClusterDatabase):
        return int(quantity_value(db.storage_size))
    if isinstance(db, ManagedDatabase) and args.cloud == "eks":
        # Imported here: the EKS cluster component pulls in the AWS provider.
        from components.cluster.eks.database import max_storage_gb

        # RDS AllocatedStorage is in GiB (components/cluster/eks/database.py).
        return (max_storage_gb(db.storage_size_gb) or db.storage_size_gb) * 2**30
    return None


def backup_max_age_minutes(args: DeterminedArgs) -> int | None:
    """How old the newest scheduled dump may be before DeterminedBackupTooOld fires: two
    of the schedule's longest intervals plus an hour; None without the backup CronJob."""
    schedule = args.database.backup.schedule
    if schedule is None or not args.database.runs_backup_jobs:
        return None
    interval = cron.max_interval_minutes(schedule)
    return None if interval is None else BACKUP_RUNS_MISSED * interval + BACKUP_SLACK_MINUTES


def database_alerts(args: DeterminedArgs) -> list[dict[str, Any]]:
    job = f'job="{layout.POSTGRES_JOB}"'
    found = [
        _alert(
            "DeterminedDatabaseDown",
            f"pg_up{{{job}}} == 0 or absent(pg_up{{{job}}})",
            "critical",
            "The Determined database is down or unreachable",
            f"The postgres exporter cannot reach the master's database ({args.database.mode}) for 5 minutes.",
            f"""The master cannot work without its database: tasks stop being scheduled and the web UI fails.
            Check the database: in-cluster, its pod in {args.namespace} (`kubectl -n {args.namespace} get pods
            -l app.kubernetes.io/name={constants.DB_COMPONENT}`, its logs, its volume); managed, the cloud
            console's instance status and maintenance events;
            external, your database server. `absent` (no pg_up at all) means the postgres exporter in
            {layout.namespace(args.namespace)} is itself down: check its pod and logs.""",
            for_="5m",
        )
    ]
    limit = _database_size_bytes(args)
    if isinstance(args.database, InClusterDatabase):
        claim = f'namespace="{args.namespace}", persistentvolumeclaim="{constants.DB_VOLUME_CLAIM}"'
        used = f"kubelet_volume_stats_used_bytes{{{claim}}} / kubelet_volume_stats_capacity_bytes{{{claim}}}"
        # Without the kubelet's volume stats (a CSI driver that reports none), the databases'
        # size against the claim's: smaller (no WAL), still a warning in time.
        fallback = (
            f"sum(pg_database_size_bytes{{{job}}}) / {limit}"
            f" unless on() kubelet_volume_stats_capacity_bytes{{{claim}}}"
        )
        size = f"the {args.database.storage_size} volume {constants.DB_VOLUME_CLAIM} in {args.namespace}"
        grow = """raise database.storageSize and run `pulumi up` (the claim grows in place where its
            StorageClass allows volume expansion), or delete old experiments (`det experiment delete`)."""
    elif limit is not None:
        used = f"sum(pg_database_size_bytes{{{job}}}) / {limit}"
        fallback = None
        size = f"the RDS instance's storage (autoscaling up to {limit // 2**30} GiB)"
        grow = """raise database.storageSizeGb and run `pulumi up`, or delete old experiments
            (`det experiment delete`)."""
    else:
        used = None
    if used is not None:
        for name, share, severity, for_ in (
            ("DeterminedDatabaseDiskFilling", DISK_WARN, "warning", "30m"),
            ("DeterminedDatabaseDiskFull", DISK_CRITICAL, "critical", "5m"),
        ):
            expr = f"({used}) > {share}" + (f" or ({fallback}) > {share}" if fallback else "")
            found.append(
                _alert(
                    name,
                    expr,
                    severity,
                    f"The Determined database is over {int(share * 100)}% full",
                    f"The database uses {{{{ $value | humanizePercentage }}}} of {size}.",
                    f"""A full database stops the master (PostgreSQL refuses writes). Check what grows: the
                    Database dashboard's size panel; trial logs and metrics of many experiments are the usual
                    cause. To make room: {grow}""",
                    for_=for_,
                )
            )
    max_age = backup_max_age_minutes(args)
    if max_age is not None:
        cronjob = f'namespace="{args.namespace}", cronjob="{constants.BACKUP_CRONJOB}"'
        seconds = max_age * 60
        found.append(
            _alert(
                "DeterminedBackupTooOld",
                # Never succeeded: no last-successful time yet, only the CronJob's creation.
                f"((time() - kube_cronjob_status_last_successful_time{{{cronjob}}}) > {seconds}"
                f" or ((time() - kube_cronjob_created{{{cronjob}}}) > {seconds}"
                f" unless on(namespace, cronjob) kube_cronjob_status_last_successful_time{{{cronjob}}}))"
                # Suspended on purpose while a restore is configured.
                f" unless on(namespace, cronjob) (kube_cronjob_spec_suspend{{{cronjob}}} == 1)",
                "warning",
                "The newest database backup is older than its schedule allows",
                f"No scheduled dump has succeeded for over {max_age // 60} hours (schedule "
                f"'{args.database.backup.schedule}', UTC: two runs and an hour).",
                f"""Without recent dumps a lost database volume loses the records since the last one.
                Check the CronJob's recent Jobs: `kubectl -n {args.namespace} get jobs
                -l app.kubernetes.io/name={constants.BACKUP_COMPONENT}` and the failed Job's pod logs: a full
                backup store (database.backup.storageSize or the bucket's quota), the storage identity's
                permissions, or a database that was down at the time. Run a dump by hand with `kubectl -n
                {args.namespace} create job --from=cronjob/{constants.BACKUP_CRONJOB} manual-dump`.""",
                for_="10m",
            )
        )
    return found


# --- certificates -------------------------------------------------------------------------------


def certificate_alerts(args: DeterminedArgs) -> list[dict[str, Any]]:
    """Only where cert-manager issues the certificate (its metrics: cert_manager_metrics.py)."""
    if not isinstance(args.tls, ExposedTls) or not args.tls.issued:
        return []
    # Every certificate of the project's ClusterIssuer (the master's, Grafana's).
    certs = f'issuer_name="{cert_manager.ISSUER}", issuer_kind="ClusterIssuer"'
    checks = f"""Check the Certificate (`kubectl describe certificate -A`) and its CertificateRequest and
        Order/Challenge events, and the cert-manager controller's logs in {constants.CERT_MANAGER_NAMESPACE}:
        HTTP-01 challenges need {args.tls.host} reachable from the internet on port 80, DNS-01 challenges need
        the DNS credentials; Let's Encrypt limits failed attempts per hour. Once the cause is fixed, `cmctl
        renew` (or deleting the Certificate's Secret) retries at once."""
    runbook = f"""cert-manager renews a certificate 30 days before it expires; one this close to expiry has
        failed to renew for days, and users will get TLS errors when it runs out. {checks}"""
    # An unissued certificate reports expiry 0 (cert-manager v1.21.1
    # internal/collectors/certificate_collector.go:156-174): left to CertificateNotReady.
    expiry = f"(certmanager_certificate_expiration_timestamp_seconds{{{certs}}} > 0) - time()"
    return [
        _alert(
            "CertificateExpiringSoon",
            f"({expiry}) < {CERT_WARN_DAYS} * 86400",
            "warning",
            "A TLS certificate expires in less than three weeks",
            "Certificate {{ $labels.namespace }}/{{ $labels.name }} expires in "
            "{{ $value | humanizeDuration }}; it should have been renewed.",
            runbook,
            for_="1h",
        ),
        _alert(
            "CertificateExpiring",
            f"({expiry}) < {CERT_CRITICAL_DAYS} * 86400",
            "critical",
            "A TLS certificate expires within a week",
            "Certificate {{ $labels.namespace }}/{{ $labels.name }} expires in "
            "{{ $value | humanizeDuration }}.",
            runbook,
            for_="10m",
        ),
        _alert(
            "CertificateNotReady",
            f'certmanager_certificate_ready_status{{{certs}, condition="False"}} == 1',
            "warning",
            "A TLS certificate is not issued",
            "Certificate {{ $labels.namespace }}/{{ $labels.name }} has not been ready for an hour.",
            f"""cert-manager has not issued the certificate (a first issuance that fails, or a renewal
            that failed until it lapsed): users reach {args.tls.host} with a TLS error or not at all.
            {checks}""",
            for_="1h",
        ),
    ]


# --- GPUs ---------------------------------------------------------------------------------------


def gpu_alerts(args: DeterminedArgs) -> list[dict[str, Any]]:
    """XID errors (not with GKE's managed DCGM, which does not collect them), GPUs whose
    metrics vanished, GPUs allocated to a task and idle."""
    if args.gpu_metrics == "none" or not args.gpu_pools_in_use:
        return []
    node = layout.NODE_LABEL
    found = []
    if args.gpu_metrics != "gke":
        found += [
            _alert(
                "GpuXidError",
                f"({XID} > 0) != {XID_FELL_OFF_THE_BUS}",
                "warning",
                "A GPU reported an XID error",
                f"GPU {{{{ $labels.gpu }}}} on node {{{{ $labels.{node} }}}} last reported XID "
                "{{ $value }}.",
                """An XID is an error the NVIDIA driver logged for the GPU: some come from the application
                (13, 31, 43: a bad kernel or memory access of the task), others from the hardware or driver
                (48, 63, 64, 74, 92, 94, 95: memory ECC, row remapping, NVLink). Look the number up in
                NVIDIA's XID catalogue (docs.nvidia.com/deploy/xid-errors), and see the node's kernel log
                (`dmesg | grep -i xid`) and the task that ran there (the GPU dashboard). Hardware XIDs that
                repeat: cordon and drain the node, then reboot or replace it (the cloud's node auto-repair
                may do it). The value is the last XID seen and stays until the driver reloads.""",
                for_="1m",
            ),
            _alert(
                "GpuFellOffTheBus",
                f"{XID} == {XID_FELL_OFF_THE_BUS}",
                "critical",
                "A GPU has fallen off the bus (XID 79)",
                f"GPU {{{{ $labels.gpu }}}} on node {{{{ $labels.{node} }}}} reported XID 79: the driver "
                "lost it.",
                """The GPU no longer answers on PCIe: every task on it fails and new ones may be placed there.
                Cordon the node now (`kubectl cordon NODE`), let tasks finish or move, then drain it and
                reboot or replace it; on GKE node auto-repair and on EKS the node monitoring agent repair such
                nodes when configured. Repeated on one machine: a hardware fault, report it to the cloud.""",
            ),
        ]
    window = GPU_VANISHED_WINDOW
    found += [
        _alert(
            "GpuMetricsMissing",
            f'(kube_node_status_capacity{{resource="{GPU_RESOURCE}"}} > 0)'
            f" unless on(node) count by ({node}) ({GPU_PRESENT})",
            "warning",
            "A GPU node has no GPU metrics",
            "Node {{ $labels.node }} has {{ $value }} GPUs but no DCGM exporter series for 15 minutes.",
            f"""The DCGM exporter on the node does not run or cannot read its GPUs (the {args.gpu_metrics}
            exporter). Check its pod on the node (`kubectl get pods -A -o wide | grep -i dcgm`) and its logs;
            a driver that failed to load, or a GPU fallen off the bus, also stops it. Without these metrics
            the GPU alerts and dashboards are blind for the node.""",
            for_="15m",
        ),
        _alert(
            "GpuVanished",
            # Among GPUs whose node still reports others: a node whose exporter stopped
            # altogether (or which went away) is GpuMetricsMissing's, not a lost GPU.
            f"(count by ({node}, gpu) (max_over_time({GPU_PRESENT}[{window}]))"
            f" unless on({node}, gpu) count by ({node}, gpu) ({GPU_PRESENT}))"
            f" and on({node}) count by ({node}) ({GPU_PRESENT})",
            "critical",
            "A GPU disappeared from a node whose other GPUs still report",
            f"GPU {{{{ $labels.gpu }}}} of node {{{{ $labels.{node} }}}} reported metrics in the last "
            f"{window} and reports none now.",
            """A GPU that the exporter saw stopped reporting while its node stayed: the GPU may have fallen
            off the bus (on GKE's managed exporter, which reports no XIDs, this is the only sign), or the
            exporter lost it. Check `nvidia-smi` on the node (a debug pod or SSH) and the kernel log for XID
            79; if the GPU is gone, cordon, drain and repair or replace the node. Clears an hour after the GPU
            vanished even if it stays gone: check GpuMetricsMissing too.""",
            for_="5m",
        ),
    ]
    minutes = args.observability.alerts.gpu_idle_minutes
    found.append(
        _alert(
            "GpuAllocatedIdle",
            # Whole GPUs: a MIG instance (GPU_I_ID set) reports no utilisation.
            f'{GPU_UTIL}{{namespace=~"{_any_of(args.task_namespaces)}", pod!="", GPU_I_ID=""}} == 0',
            "info",
            f"A GPU held by a Determined task has been idle for {minutes} minutes",
            f"GPU {{{{ $labels.gpu }}}} on node {{{{ $labels.{node} }}}} is held by pod "
            f"{{{{ $labels.namespace }}}}/{{{{ $labels.pod }}}} and has done no work for {minutes} minutes.",
            """A task holds the GPU and does not use it: a notebook or shell left open, a trial stuck in data
            loading or waiting on something, or a task that asked for more GPUs than it uses. Find the task
            from the pod's labels (`kubectl get pod -n NAMESPACE POD --show-labels`: determined.ai/task_id)
            and its owner (determined.ai/user); ask them to stop it, or kill it (`det task list`, `det
            notebook kill`, `det experiment pause`). Notebooks and shells can be set to stop when idle
            (Determined's idle_timeout).""",
            for_=f"{minutes}m",
        )
    )
    return found


# --- tasks and capacity -------------------------------------------------------------------------


def task_alerts(args: DeterminedArgs) -> list[dict[str, Any]]:
    """Tasks waiting for nodes (a pod Pending) or, with Kueue, for admission (a suspended Job)."""
    minutes = args.observability.alerts.task_pending_minutes
    seconds = minutes * 60
    namespaces = f'namespace=~"{_any_of(args.task_namespaces)}"'
    found = [
        _alert(
            "DeterminedTaskPending",
            f"count by (namespace) ((time() - kube_pod_created{{{namespaces}}}) > {seconds}"
            f' and on(namespace, pod) (kube_pod_status_phase{{{namespaces}, phase="Pending"}} == 1))',
            "warning",
            f"Determined task pods have waited over {minutes} minutes to start",
            f"{{{{ $value }}}} pods in namespace {{{{ $labels.namespace }}}} have been Pending for over "
            f"{minutes} minutes.",
            """Pods of Determined tasks are created but not running: no node has room (see
            NodePoolAtMaxSize), the node pool is scaling up, images are slow or failing to pull, or a volume
            cannot attach. `kubectl -n NAMESPACE get pods --field-selector=status.phase=Pending` and
            `kubectl describe pod` show the reason in the events (FailedScheduling, ErrImagePull ...). Queue
            depth per pool is on the Queues dashboard.""",
            for_="2m",
        )
    ]
    if args.scheduler == "kueue":
        queues = _any_of([kueue.queue_name(rp) for rp in args.resource_pools])
        found += [
            _alert(
                "DeterminedTaskNotAdmitted",
                f"count by (namespace) ((time() - kube_job_created{{{namespaces}}}) > {seconds}"
                f" and on(namespace, job_name) (kube_job_status_suspended{{{namespaces}}} == 1))",
                "warning",
                f"Determined tasks have waited over {minutes} minutes for Kueue to admit them",
                f"{{{{ $value }}}} Jobs in namespace {{{{ $labels.namespace }}}} have been held by Kueue for "
                f"over {minutes} minutes.",
                """Kueue holds a task's Job (suspended) until the pool's ClusterQueue has quota for all of its
                pods: the pool is full. That is normal queueing when the pool is busy; check the queue on the
                Queues dashboard and `kubectl get workloads -n NAMESPACE` (its status says why). If tasks wait
                while GPUs are idle, a task may ask for more than the quota allows (see
                KueueWorkloadsInadmissible) or the quota is smaller than the pool.""",
                for_="2m",
            ),
            _alert(
                "KueueWorkloadsInadmissible",
                f'sum by (cluster_queue) (kueue_pending_workloads{{cluster_queue=~"{queues}", '
                'status="inadmissible"}) > 0',
                "warning",
                "Kueue cannot admit some workloads of a resource pool",
                f"ClusterQueue {{{{ $labels.cluster_queue }}}} has had {{{{ $value }}}} inadmissible "
                f"workloads for {minutes} minutes.",
                """Inadmissible workloads can never fit as the queue stands: a task asks for more GPUs, CPU
                or memory than the pool's quota (resourcePools[].quota, or maxNodes times the GPUs per node),
                or a resource the ClusterQueue does not cover. `kubectl describe workload -n NAMESPACE NAME`
                gives Kueue's reason. Lower the task's slots_per_trial, or raise the quota or maxNodes.""",
                for_=f"{minutes}m",
            ),
        ]
    return found


def _node_pool_namespaces(args: DeterminedArgs, node_pool: str) -> list[str]:
    """The task namespaces whose pods run on `node_pool`: its resource pools', and the default
    task namespace when the default compute pool is on it."""
    found = [rp.namespace_name for rp in args.resource_pools if rp.node_pool == node_pool]
    compute = next(rp for rp in args.resource_pools if rp.name == args.compute_pool)
    if compute.node_pool == node_pool:
        found.append(args.default_task_namespace)
    return found


def capacity_alerts(args: DeterminedArgs) -> list[dict[str, Any]]:
    """A GPU node pool at its maximum size while GPU pods of its pools cannot be scheduled:
    one rule per pool (its own size and namespaces), labelled with the pool."""
    minutes = args.observability.alerts.task_pending_minutes
    pool_label = layout.ksm_label(constants.NODE_POOL_LABEL)
    found = []
    for pool in _node_pools_with_max(args):
        if not pool.gpu:
            continue
        namespaces = f'namespace=~"{_any_of(_node_pool_namespaces(args, pool.name))}"'
        found.append(
            _alert(
                "NodePoolAtMaxSize",
                f'count(kube_node_labels{{{pool_label}="{pool.name}"}}) >= {pool.max_nodes}'
                f" and on() count((kube_pod_container_resource_requests{{{namespaces}, "
                f'resource="{GPU_RESOURCE}"}} > 0)'
                f" and on(namespace, pod) (kube_pod_status_unschedulable{{{namespaces}}} == 1)) > 0",
                "warning",
                f"GPU node pool {pool.name} is at its maximum size with GPU pods waiting",
                f"Node pool {pool.name} has {{{{ $value }}}} nodes (maxNodes {pool.max_nodes}) and GPU pods "
                f"of its resource pools cannot be scheduled for {minutes} minutes.",
                f"""The autoscaler cannot add nodes: the pool is at maxNodes ({pool.max_nodes}), so tasks
                wait for running ones to finish. If that is the pool's intended size, this is a busy pool;
                otherwise raise nodePools[].maxNodes for {pool.name} and run `pulumi up` (check the cloud's
                GPU quota in the region first: a quota too small stops the scale-up too). GPUs held idle
                (GpuAllocatedIdle) are the cheaper capacity to free.""",
                for_=f"{minutes}m",
                labels={"node_pool": pool.name},
            )
        )
    return found


# --- the PrometheusRule -------------------------------------------------------------------------


def rule_groups(args: DeterminedArgs) -> list[dict[str, Any]]:
    """The rule groups (a Prometheus rules file's `groups`), empty groups left out."""
    groups = [
        ("determined.records", records(args)),
        ("determined.master", master_alerts(args)),
        ("determined.database", database_alerts(args)),
        ("determined.certificates", certificate_alerts(args)),
        ("determined.gpus", gpu_alerts(args)),
        ("determined.tasks", task_alerts(args) + capacity_alerts(args)),
    ]
    return [{"name": name, "rules": rules} for name, rules in groups if rules]


def prometheus_rule(args: DeterminedArgs) -> dict[str, Any]:
    """The project's PrometheusRule (monitoring.coreos.com/v1) in the monitoring namespace,
    labelled for the stack's Prometheus (layout.SELECTOR_LABELS)."""
    meta = kube.metadata(NAME, COMPONENT, layout.namespace(args.namespace))
    meta["labels"] = {**meta["labels"], **layout.SELECTOR_LABELS}
    return kube.manifest(API, "PrometheusRule", meta, spec={"groups": rule_groups(args)})


def alert_names(args: DeterminedArgs) -> list[str]:
    """The alerts the configuration gets, in order, without repeats."""
    names = [rule["alert"] for group in rule_groups(args) for rule in group["rules"] if "alert" in rule]
    return list(dict.fromkeys(names))
