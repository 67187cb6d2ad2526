"""What every Job around the master's database shares: scheduled dumps (database_backup), the
dump before an upgrade (upgrade_dump), restores (database_restore), the Helm chart migration
(from_helm_chart).

Every Job dumps with `pg_dump --format=custom` from a client of the server's major version
(the in-cluster database's own image; the managed servers' major; the newest pinned client
for an external server) and stores with rclone, which reaches GCS, S3 and Azure Blob with the
pod's workload identity (`env_auth`: GKE Workload Identity, EKS Pod Identity, Azure's
credential chain) or the checkpoint store's own keys:

- where: `<checkpoint prefix>/determined-db-backups/` of the checkpoint bucket or container
  (gcs, s3, azure), else the claim `determined-db-backups` (sharedFs, directory; kept on
  destroy like the database's);
- who: the ServiceAccount `determined-db-backup`, annotated like the master's and bound to the
  bucket's identity by the platform (`components/cluster/checkpoints.kubernetes_accounts`);
- the CronJob `determined-db-backup`: `determined-<UTC time>.dump`, then deletes dumps older
  than `keepDays`;
- the Job `determined-db-backup-<version>`, named after the master version: a new version is a
  new Job, which the master waits for (`DatabaseBackups.before_master`), so the schema
  migrations of a new master never run without a dump of the data before them
  (`determined-<time>-upgrade-<from>-to-<to>.dump`). Only where there may be records to dump
  (`upgrade_dump.needed`): not on a stack's first update, whose database is new;
- the restore Job (`database.restore`) loads a dump into the database in one transaction while
  the master is held at 0 replicas (`database_restore.master_replicas`).

Pods: an init container dumps (or, for a restore, fetches) into an emptyDir, the main
container stores (or restores); with a claim both work on the claim. Passwords and keys reach
the scripts (components/determined/data/db_*.sh) as files of Secrets: never the pod's environment, argv
or a literal value. The pods run as a user of their own with a read-only root file system.

Pure builders of what the Jobs reach (Target), their credentials, images and pods;
`database_backup.DatabaseBackups` registers the Jobs.
"""

from __future__ import annotations

import ipaddress
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pulumi
from pydantic import SecretStr

from components import constants, kube, versions
from components.cluster import ClusterHandle
from components.config import (
    AzureStorage,
    DirectoryStorage,
    ExternalDatabase,
    GcsStorage,
    InClusterDatabase,
    ManagedDatabase,
    S3Storage,
    SharedFsStorage,
)
from components.determined import ca_bundle, database, proxy, system_pods
from components.determined.args import DeterminedArgs
from components.determined.database import DatabaseEndpoint

COMPONENT = constants.BACKUP_COMPONENT
RESTORE_COMPONENT = constants.RESTORE_COMPONENT

DATA = Path(__file__).resolve().parent / "data"
# The rclone remote the Jobs' environment defines (RCLONE_CONFIG_BACKUP_*).
REMOTE = "backup"
RCLONE_PREFIX = f"RCLONE_CONFIG_{REMOTE.upper()}_"
WORK_DIR = "/work"  # emptyDir: the dump between its two containers
BACKUPS_DIR = "/backups"  # the backups claim
INCOMING = f"{BACKUPS_DIR}/.incoming"  # on the claim: dumps not stored yet
TMP_DIR = "/tmp"
PASSWORD_KEY = "POSTGRES_PASSWORD"  # in the database's Secret, and in ours
CA_KEY = "root.crt"  # in the backup Secret: an external server's CA certificate
# Keys of the backup Secret that hold the checkpoint store's credentials.
S3_ACCESS_KEY = "S3_ACCESS_KEY_ID"
S3_SECRET_KEY = "S3_SECRET_ACCESS_KEY"
AZURE_CONNECTION_STRING = "AZURE_CONNECTION_STRING"
AZURE_CREDENTIAL = "AZURE_CREDENTIAL"
# Files in constants.DB_CREDENTIALS_DIR (the scripts read them there).
PASSWORD_FILE = "postgres-password"
CA_FILE = "root.crt"
# Credential files: readable by the Jobs' group (their fsGroup), or by every user of a pod
# that has no fsGroup (the migration, whose pod holds nothing but its own two containers).
GROUP_READ = 0o440
ALL_READ = 0o444
# On Jobs Pulumi awaits: a failed run is replaced (run again) by the next `up` instead of
# counting as done.
REPLACE_UNREADY = "pulumi.com/replaceUnready"


def script(name: str) -> str:
    return (DATA / name).read_text(encoding="utf-8")


def sh(*names: str) -> list[str]:
    """A container command running the scripts `names`, in order, as one POSIX sh script
    (without their comment lines: the files explain, the objects stay small)."""
    lines = [
        line for name in names for line in script(name).splitlines() if not line.lstrip().startswith("#")
    ]
    return ["/bin/sh", "-c", "\n".join(lines) + "\n"]


# --- what the Jobs reach --------------------------------------------------------------------


@dataclass(frozen=True)
class Target:
    """What the platform says that the Jobs use: the database's address (a managed server's
    may be an Output), the checkpoint bucket it created (None: the configured one), and
    whether the backup account is bound to a cloud identity (its pods then mount their token)."""

    endpoint: DatabaseEndpoint
    # The bucket resource's name (an output): a stack keeps the bucket it was deployed with.
    bucket: pulumi.Input[str] | None = None
    workload_identity: bool = False


def target(cfg: DeterminedArgs, cluster: ClusterHandle) -> Target:
    return Target(
        endpoint=database.endpoint(cfg, cluster.database),
        bucket=cluster.bucket,
        workload_identity=bool(cluster.storage_identity),
    )


def on_claim(cfg: DeterminedArgs) -> bool:
    """Whether dumps go to the backups claim (no bucket: sharedFs or directory checkpoints)."""
    return isinstance(cfg.checkpoint_storage, (SharedFsStorage, DirectoryStorage))


def runs_jobs(cfg: DeterminedArgs) -> bool:
    return cfg.database.runs_backup_jobs


def keeps_namespace(cfg: DeterminedArgs) -> bool:
    """Whether the Determined namespace must outlive a destroy for the backups claim."""
    return runs_jobs(cfg) and on_claim(cfg) and not cfg.data_deletion_allowed


def destination(cfg: DeterminedArgs, tgt: Target) -> pulumi.Input[str]:
    """Where dumps are: an rclone path below the checkpoint prefix, or the claim's directory
    (an output when the bucket is the platform's)."""
    if isinstance(tgt.bucket, pulumi.Output):
        return tgt.bucket.apply(lambda name: destination(cfg, replace(tgt, bucket=name)))
    cs = cfg.checkpoint_storage
    if isinstance(cs, (GcsStorage, S3Storage)):
        bucket = tgt.bucket or cs.bucket
        assert bucket, "validation requires a bucket where the platform creates none"
        parts = [bucket, cs.prefix.strip("/"), constants.BACKUP_PREFIX]
    elif isinstance(cs, AzureStorage):
        parts = [cs.container, constants.BACKUP_PREFIX]
    else:
        return BACKUPS_DIR
    return f"{REMOTE}:" + "/".join(part for part in parts if part)


def azure_account(account_url: str) -> str:
    """The storage account of a blob endpoint: https://<account>.blob.core.windows.net, or
    an emulator's http://127.0.0.1:10000/<account>."""
    parts = urllib.parse.urlsplit(account_url)
    host = parts.hostname or ""
    try:
        ipaddress.ip_address(host)
        local = True
    except ValueError:
        local = host == "localhost"
    return parts.path.strip("/").split("/")[0] if local else host.split(".")[0]


def env_value(name: str, value: Any) -> dict[str, Any]:
    return {"name": name, "value": value}


def storage_credentials(cfg: DeterminedArgs) -> list[tuple[str, str]]:
    """(key of the backup Secret, variable it sets) of the checkpoint store's credentials: each
    becomes a file named after its variable, which db_rclone_env.sh exports."""
    cs = cfg.checkpoint_storage
    if isinstance(cs, S3Storage) and cs.access_key is not None:
        return [
            (S3_ACCESS_KEY, RCLONE_PREFIX + "ACCESS_KEY_ID"),
            (S3_SECRET_KEY, RCLONE_PREFIX + "SECRET_ACCESS_KEY"),
        ]
    if isinstance(cs, AzureStorage) and cs.connection_string is not None:
        return [(AZURE_CONNECTION_STRING, RCLONE_PREFIX + "CONNECTION_STRING")]
    if isinstance(cs, AzureStorage) and cs.credential is not None:
        # A key or a SAS token: db_rclone_env.sh tells which.
        return [(AZURE_CREDENTIAL, AZURE_CREDENTIAL)]
    return []


def storage_env(cfg: DeterminedArgs) -> list[dict[str, Any]]:
    """rclone's settings of the `backup` remote (none for the claim); credentials are files.
    The master's proxy and extra CAs apply: the store is reached the way the master reaches it
    (rclone, in Go, adds SSL_CERT_DIR's files to the system CAs as the master does)."""
    prefix = RCLONE_PREFIX
    cs = cfg.checkpoint_storage
    env = [env_value("RCLONE_CONFIG", "/dev/null"), env_value("RCLONE_CACHE_DIR", f"{TMP_DIR}/rclone")]
    env += [*proxy.env(cfg), *ca_bundle.master_env(cfg)]
    if isinstance(cs, GcsStorage):
        env += [
            env_value(prefix + "TYPE", "google cloud storage"),
            # Application Default Credentials: GKE Workload Identity's metadata server.
            env_value(prefix + "ENV_AUTH", "true"),
            # Buckets with uniform access refuse uploads that set object ACLs.
            env_value(prefix + "BUCKET_POLICY_ONLY", "true"),
            # Object rights only (roles/storage.objectUser): no bucket lookups or creation.
            env_value(prefix + "NO_CHECK_BUCKET", "true"),
        ]
    elif isinstance(cs, S3Storage):
        env += [
            env_value(prefix + "TYPE", "s3"),
            env_value(prefix + "PROVIDER", "Other" if cs.endpoint_url else "AWS"),
            env_value(prefix + "NO_CHECK_BUCKET", "true"),
        ]
        if cs.endpoint_url:
            env.append(env_value(prefix + "ENDPOINT", cs.endpoint_url))
        if cfg.region and cfg.cloud == "eks" and not cs.endpoint_url:
            env.append(env_value(prefix + "REGION", cfg.region))
        if cs.access_key is None:
            # The SDK's chain: EKS Pod Identity, IRSA, the node's role.
            env.append(env_value(prefix + "ENV_AUTH", "true"))
    elif isinstance(cs, AzureStorage):
        env.append(env_value(prefix + "TYPE", "azureblob"))
        if cs.connection_string is None:
            assert cs.account_url is not None
            env += [
                env_value(prefix + "ACCOUNT", azure_account(cs.account_url)),
                env_value(prefix + "ENDPOINT", cs.account_url),
                env_value("AZURE_ACCOUNT_URL", cs.account_url),
            ]
            if cs.credential is None:
                # Azure's credential chain (workload identity, managed identity).
                env.append(env_value(prefix + "ENV_AUTH", "true"))
    return env


def password_secret(cfg: DeterminedArgs) -> str:
    """The Secret with the database password: the in-cluster database's own, else ours."""
    return (
        constants.DB_SECRET_NAME if isinstance(cfg.database, InClusterDatabase) else constants.BACKUP_SECRET
    )


def secret_data(cfg: DeterminedArgs, password: Any, reveal: Callable[[SecretStr], Any]) -> dict[str, Any]:
    """The backup Secret's keys: an external or managed server's password (`password`, a
    Pulumi secret), the checkpoint store's credentials and an external server's CA
    certificate; `reveal` turns a configured secret into what the Secret holds."""
    data: dict[str, Any] = {}
    if not isinstance(cfg.database, InClusterDatabase):
        data[PASSWORD_KEY] = password
    cs = cfg.checkpoint_storage
    if isinstance(cs, S3Storage) and cs.access_key is not None and cs.secret_key is not None:
        data[S3_ACCESS_KEY] = reveal(cs.access_key)
        data[S3_SECRET_KEY] = reveal(cs.secret_key)
    if isinstance(cs, AzureStorage):
        if cs.connection_string is not None:
            data[AZURE_CONNECTION_STRING] = reveal(cs.connection_string)
        if cs.credential is not None:
            data[AZURE_CREDENTIAL] = reveal(cs.credential)
    if isinstance(cfg.database, ExternalDatabase) and cfg.database.ssl_root_cert:
        data[CA_KEY] = cfg.database.ssl_root_cert
    return data


def credentials_secret(cfg: DeterminedArgs, data: dict[str, Any]) -> dict[str, Any] | None:
    """The backup Secret (None when there is nothing to keep in it)."""
    if not data:
        return None
    meta = kube.metadata(constants.BACKUP_SECRET, COMPONENT, cfg.namespace)
    return kube.manifest("v1", "Secret", meta, type="Opaque", stringData=data)


# --- images ---------------------------------------------------------------------------------


def client_image(cfg: DeterminedArgs) -> str:
    """PostgreSQL's client tools, of the server's major version."""
    db = cfg.database
    if db.backup.client_image:
        return db.backup.client_image
    if isinstance(db, InClusterDatabase):
        return db.image or versions.POSTGRES_IMAGE
    if isinstance(db, ManagedDatabase):
        return versions.MANAGED_POSTGRES_CLIENT_IMAGE
    return versions.EXTERNAL_POSTGRES_CLIENT_IMAGE


def rclone_image(cfg: DeterminedArgs) -> str:
    return cfg.database.backup.rclone_image or versions.RCLONE_IMAGE


# --- pods -----------------------------------------------------------------------------------


def database_env(endpoint: DatabaseEndpoint, host: Any = None) -> list[dict]:
    """libpq's variables for the database (`host` overrides the endpoint's, e.g. with the
    namespace for a pod elsewhere); the password is a file (`db_credentials`)."""
    env = [
        env_value("PGHOST", host if host is not None else endpoint.host),
        env_value("PGPORT", str(endpoint.port)),
        env_value("PGDATABASE", endpoint.name),
        env_value("PGUSER", endpoint.user),
        env_value("PGCONNECT_TIMEOUT", "10"),
        env_value("PGAPPNAME", "determined-db-backup"),
    ]
    if endpoint.ssl_mode:
        env.append(env_value("PGSSLMODE", endpoint.ssl_mode))
    if endpoint.ssl_root_cert:
        env.append(env_value("PGSSLROOTCERT", f"{constants.DB_CREDENTIALS_DIR}/{CA_FILE}"))
    return env


def _pod_name_env() -> dict[str, Any]:
    return {"name": "POD_NAME", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}}


def container(
    name: str,
    image: str,
    command: list[str],
    env: list[dict],
    mounts: list[dict],
    resources: dict | None = None,
    uid: int = constants.BACKUP_UID,
) -> dict[str, Any]:
    return {
        "name": name,
        "image": image,
        "imagePullPolicy": "IfNotPresent",
        "command": command,
        # HOME: psql and rclone look there; the root file system is read-only.
        "env": [*env, env_value("HOME", TMP_DIR)],
        "resources": resources or constants.BACKUP_RESOURCES,
        "volumeMounts": mounts,
        "securityContext": kube.restricted_container(uid),
    }


def mount(name: str, path: str, read_only: bool = False) -> dict[str, Any]:
    volume_mount: dict[str, Any] = {"name": name, "mountPath": path}
    if read_only:
        volume_mount["readOnly"] = True
    return volume_mount


def empty_dir(name: str) -> dict[str, Any]:
    return {"name": name, "emptyDir": {}}


def credentials_volume(name: str, files: dict[str, list[tuple[str, str]]], mode: int) -> dict[str, Any]:
    """A projected volume of Secret keys as files: {Secret: [(key, file)]}."""
    sources = [
        {"secret": {"name": secret, "items": [{"key": key, "path": path} for key, path in items]}}
        for secret, items in files.items()
    ]
    return {"name": name, "projected": {"sources": sources, "defaultMode": mode}}


def db_credentials(
    endpoint: DatabaseEndpoint, password_from: str, ca_from: str, mode: int = GROUP_READ
) -> tuple[dict[str, Any], dict[str, Any]]:
    """(volume, mount) of the database password from the Secret `password_from` (and an
    external server's CA certificate from `ca_from`)."""
    files: dict[str, list[tuple[str, str]]] = {password_from: [(PASSWORD_KEY, PASSWORD_FILE)]}
    if endpoint.ssl_root_cert:
        files.setdefault(ca_from, []).append((CA_KEY, CA_FILE))
    volume = credentials_volume("db-credentials", files, mode)
    return volume, mount("db-credentials", constants.DB_CREDENTIALS_DIR, read_only=True)


def storage_volumes(cfg: DeterminedArgs) -> tuple[list[dict], list[dict]]:
    """([volume], [mount]) the rclone containers need: the checkpoint store's credentials and
    the master's extra CAs, where there are any."""
    volumes, mounts = [], []
    files = storage_credentials(cfg)
    if files:
        volumes.append(
            credentials_volume("storage-credentials", {constants.BACKUP_SECRET: files}, GROUP_READ)
        )
        mounts.append(mount("storage-credentials", constants.STORAGE_CREDENTIALS_DIR, read_only=True))
    extra_cas = ca_bundle.master_volume(cfg)
    if extra_cas:
        volumes.append(extra_cas[0])
        mounts.append(extra_cas[1])
    return volumes, mounts


def pod_security(uid: int = constants.BACKUP_UID, fs_group: bool = True) -> dict[str, Any]:
    context: dict[str, Any] = {
        "runAsNonRoot": True,
        "runAsUser": uid,
        "runAsGroup": uid,
        "seccompProfile": {"type": "RuntimeDefault"},
    }
    if fs_group:
        # The backups claim and the credential files: the Jobs' group's, whoever provisioned them.
        context["fsGroup"] = uid
    return context


def rclone_script(cfg: DeterminedArgs, name: str) -> list[str]:
    """An rclone script, after the step that reads the store's credentials where there are any."""
    return sh("db_rclone_env.sh", name) if storage_credentials(cfg) else sh(name)


def pod_spec(
    cfg: DeterminedArgs, tgt: Target, init: list[dict], main: list[dict], volumes: list[dict]
) -> dict[str, Any]:
    return {
        "restartPolicy": "Never",
        "serviceAccountName": constants.BACKUP_SERVICE_ACCOUNT,
        # The token only where the cloud identity needs it (the bucket, through the account).
        "automountServiceAccountToken": tgt.workload_identity and not on_claim(cfg),
        "enableServiceLinks": False,
        "priorityClassName": constants.SYSTEM_PRIORITY_CLASS,
        **system_pods.pod_fields(cfg),
        "securityContext": pod_security(),
        **({"initContainers": init} if init else {}),
        "containers": main,
        "volumes": volumes,
    }


def job_spec(labels: dict[str, str], spec: dict[str, Any]) -> dict[str, Any]:
    return {
        "backoffLimit": constants.BACKUP_BACKOFF_LIMIT,
        "activeDeadlineSeconds": constants.BACKUP_DEADLINE_SECONDS,
        "template": {"metadata": {"labels": labels}, "spec": spec},
    }


def dump_pod(cfg: DeterminedArgs, tgt: Target, master_version: str | None = None) -> dict[str, Any]:
    """The pod of a dump: `master_version` set, the one before an upgrade to it (named after
    it, never pruning); else a scheduled one (pruning dumps older than keepDays)."""
    claim = on_claim(cfg)
    work = INCOMING if claim else WORK_DIR
    credentials, credentials_mount = db_credentials(
        tgt.endpoint, password_secret(cfg), constants.BACKUP_SECRET
    )
    store_volumes, storage_mounts = storage_volumes(cfg)
    data_volume = (
        {"name": "backups", "persistentVolumeClaim": {"claimName": constants.BACKUP_CLAIM}}
        if claim
        else empty_dir("work")
    )
    data_mount = mount("backups", BACKUPS_DIR) if claim else mount("work", WORK_DIR)
    common = [env_value("WORK", work), _pod_name_env()]
    dump = container(
        "dump",
        client_image(cfg),
        sh("db_connect.sh", "db_dump.sh"),
        [*common, *database_env(tgt.endpoint)],
        [data_mount, mount("tmp", TMP_DIR), credentials_mount],
    )
    store_env = [
        *common,
        env_value("DEST", destination(cfg, tgt)),
        env_value("MARKER", constants.BACKUP_VERSION_MARKER),
        *storage_env(cfg),
    ]
    if master_version is not None:
        store_env.append(env_value("MASTER_VERSION", master_version))
    else:
        store_env.append(env_value("KEEP_DAYS", str(cfg.database.backup.keep_days)))
    store = container(
        "store",
        rclone_image(cfg),
        rclone_script(cfg, "db_store.sh"),
        store_env,
        [data_mount, mount("tmp", TMP_DIR), *storage_mounts],
    )
    volumes = [data_volume, empty_dir("tmp"), credentials, *store_volumes]
    return pod_spec(cfg, tgt, [dump], [store], volumes)


# --- objects around the Jobs ----------------------------------------------------------------


def service_account(cfg: DeterminedArgs, annotations: dict[str, Any] | None = None) -> dict[str, Any]:
    """The Jobs' account; `annotations` bind it to the checkpoint store's cloud identity, as
    the master's account is bound."""
    meta = kube.metadata(constants.BACKUP_SERVICE_ACCOUNT, COMPONENT, cfg.namespace)
    if annotations:
        meta["annotations"] = dict(annotations)
    return kube.manifest("v1", "ServiceAccount", meta)


def backup_claim(cfg: DeterminedArgs, default_storage_class: str | None = None) -> dict[str, Any]:
    """The claim dumps go to with sharedFs/directory checkpoints (the in-cluster database's
    storage class where it has one: gke/eks retain its disks)."""
    spec: dict[str, Any] = {
        "accessModes": ["ReadWriteOnce"],
        "resources": {"requests": {"storage": cfg.database.backup.storage_size}},
    }
    storage_class = getattr(cfg.database, "storage_class", None) or default_storage_class
    if storage_class:
        spec["storageClassName"] = storage_class
    meta = kube.metadata(constants.BACKUP_CLAIM, COMPONENT, cfg.namespace)
    return kube.manifest("v1", "PersistentVolumeClaim", meta, spec=spec)


def awaited_job_options(depends_on: list[pulumi.Resource]) -> pulumi.ResourceOptions:
    """A Job Pulumi waits for: as long as it may run; a finished Job's spec cannot change, so a
    changed one is deleted first."""
    timeout = f"{constants.BACKUP_DEADLINE_SECONDS + 600}s"
    return pulumi.ResourceOptions(
        depends_on=depends_on,
        delete_before_replace=True,
        custom_timeouts=pulumi.CustomTimeouts(create=timeout, update=timeout),
    )
