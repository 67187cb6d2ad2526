"""Moving the records of a Determined Helm chart install into this stack's database
(`database.fromHelmChart`).

The chart runs PostgreSQL 10 (`postgres:10.14`, a Deployment) on the ReadWriteOnce claim
`determined-db-pvc-<release>`, with PGDATA in `pgdata/` of the volume. A one-shot Job in the
chart's namespace:

1. mounts that claim read-only (the old volume is never written) and refuses while the
   chart's database Service still answers (its Deployment must be scaled to 0 first: a
   running server's files are no consistent copy, and the claim attaches to one node);
2. copies the data directory into an emptyDir and starts PostgreSQL of the data's major
   version (10.23, 10's last release) on the copy, on a local socket only;
3. dumps the chart's database with that server's pg_dump;
4. loads the dump into this stack's database with the new server's client, in one
   transaction, and refuses if that database already holds any table (so a run after the
   master started can never overwrite newer records).

The master waits for the Job (`DatabaseBackups.before_master`). The new database's password
comes from a Secret the Job's namespace can read, made there.
"""

from __future__ import annotations

from typing import Any

import pulumi

from components import constants, kube, versions
from components.config import ExternalDatabase, InClusterDatabase
from components.determined import database_jobs, registry
from components.determined.args import DeterminedArgs
from components.determined.database_jobs import (
    ALL_READ,
    CA_KEY,
    PASSWORD_KEY,
    TMP_DIR,
    WORK_DIR,
    Target,
    container,
    empty_dir,
    env_value,
    mount,
    sh,
)

COMPONENT = constants.MIGRATION_COMPONENT
CHART_VOLUME = "/chart"


def server_image(cfg: DeterminedArgs) -> str:
    source = cfg.database.from_helm_chart
    assert source is not None
    return source.image or versions.HELM_CHART_POSTGRES_IMAGE


def database_host(cfg: DeterminedArgs, tgt: Target) -> Any:
    """The new database's address as the chart's namespace sees it."""
    if isinstance(cfg.database, InClusterDatabase):
        return f"{constants.DB_SERVICE_NAME}.{cfg.namespace}.svc"
    return tgt.endpoint.host


def password_secret(cfg: DeterminedArgs, password: Any) -> dict[str, Any]:
    """The new database's password (and an external server's CA certificate), in the chart's
    namespace."""
    source = cfg.database.from_helm_chart
    assert source is not None
    data: dict[str, Any] = {PASSWORD_KEY: password}
    if isinstance(cfg.database, ExternalDatabase) and cfg.database.ssl_root_cert:
        data[CA_KEY] = cfg.database.ssl_root_cert
    meta = kube.metadata(constants.MIGRATION_SECRET, COMPONENT, source.namespace)
    return kube.manifest("v1", "Secret", meta, type="Opaque", stringData=data)


def migration_job(cfg: DeterminedArgs, tgt: Target) -> dict[str, Any]:
    source = cfg.database.from_helm_chart
    assert source is not None
    work = [mount("work", WORK_DIR), mount("tmp", TMP_DIR)]
    chart_env = [
        env_value("CHART_VOLUME", CHART_VOLUME),
        env_value("CHART_DATA_DIR", constants.HELM_CHART_DATA_DIR),
        env_value("CHART_CLAIM", source.claim),
        env_value("CHART_SERVICE", source.service),
        env_value("CHART_PORT", str(constants.DB_PORT)),
        env_value("CHART_USER", source.user),
        env_value("CHART_DATABASE", source.database),
        env_value("WORK", WORK_DIR),
    ]
    copy = container(
        "chart-dump",
        server_image(cfg),
        sh("db_chart_dump.sh"),
        chart_env,
        [mount("chart", CHART_VOLUME, read_only=True), *work],
        constants.MIGRATION_SERVER_RESOURCES,
        uid=constants.MIGRATION_UID,
    )
    secret = constants.MIGRATION_SECRET
    credentials, credentials_mount = database_jobs.db_credentials(tgt.endpoint, secret, secret, ALL_READ)
    restore_env = [
        env_value("DUMP", f"{WORK_DIR}/restore.dump"),
        env_value("MODE", "into-empty"),
        env_value("WAIT_SECONDS", str(constants.RESTORE_WAIT_SECONDS)),
        *database_jobs.database_env(tgt.endpoint, host=database_host(cfg, tgt)),
    ]
    restore = container(
        "restore",
        database_jobs.client_image(cfg),
        sh("db_connect.sh", "db_restore.sh"),
        restore_env,
        [*work, credentials_mount],
        uid=constants.MIGRATION_UID,
    )
    claim = {"claimName": source.claim, "readOnly": True}
    pod_spec = {
        "restartPolicy": "Never",
        # No Kubernetes API, no cloud identity: the default account without its token.
        "automountServiceAccountToken": False,
        "enableServiceLinks": False,
        "priorityClassName": constants.SYSTEM_PRIORITY_CLASS,
        # No node selector: the chart's volume decides where the pod can run (its zone).
        **registry.pod_field(cfg),
        # The chart's files are its postgres user's; no fsGroup: its volume is mounted as it
        # is, never relabelled.
        "securityContext": database_jobs.pod_security(constants.MIGRATION_UID, fs_group=False),
        "initContainers": [copy],
        "containers": [restore],
        "volumes": [
            {"name": "chart", "persistentVolumeClaim": claim},
            empty_dir("work"),
            empty_dir("tmp"),
            credentials,
        ],
    }
    meta = kube.metadata(constants.MIGRATION_JOB, COMPONENT, source.namespace)
    meta["annotations"] = {database_jobs.REPLACE_UNREADY: "true"}
    spec = database_jobs.job_spec(kube.labels(COMPONENT), pod_spec)
    return kube.manifest("batch/v1", "Job", meta, spec=spec)


def register(
    cfg: DeterminedArgs,
    tgt: Target,
    password: pulumi.Input[str],
    needs: list[pulumi.Resource],
    child: pulumi.ResourceOptions,
) -> pulumi.Resource:
    """The Secret and the Job, in the chart's namespace; the Job once the database is up."""
    secret = kube.register(password_secret(cfg, password), child)
    opts = database_jobs.awaited_job_options([*needs, secret])
    return kube.register(migration_job(cfg, tgt), pulumi.ResourceOptions.merge(child, opts))
