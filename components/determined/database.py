"""The master's PostgreSQL database: in the cluster, external, or managed by the cloud.

inCluster: a StatefulSet of a pinned, supported PostgreSQL with its own PersistentVolumeClaim,
a generated password in a Secret and a ClusterIP Service. The claim, and the namespace it
lives in, outlive `pulumi destroy` unless `allowDataDeletion` is set (dev only).
external: nothing is created; the connection goes into master.yaml.
managed: the platform created the server (Cloud SQL or RDS); its address and password come from
the cluster handle.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pulumi

from components import constants, kube, passwords, versions
from components.cluster import ClusterHandle, DatabaseServer
from components.config import ExternalDatabase, InClusterDatabase, ManagedDatabase
from components.determined import system_pods
from components.determined.args import DeterminedArgs

COMPONENT = constants.DB_COMPONENT


@dataclass(frozen=True)
class DatabaseEndpoint:
    """Where and as whom the master connects (the password travels separately). `host`
    may be an Output (a managed server's address); master.yaml is built once it is known."""

    host: pulumi.Input[str]
    port: int
    name: str
    user: str
    ssl_mode: str | None = None
    ssl_root_cert: str | None = None  # PEM content; mounted next to master.yaml


def endpoint(cfg: DeterminedArgs, server: DatabaseServer | None = None) -> DatabaseEndpoint:
    db = cfg.database
    if isinstance(db, ExternalDatabase):
        return DatabaseEndpoint(db.host, db.port, db.name, db.user, db.ssl_mode, db.ssl_root_cert)
    if isinstance(db, ManagedDatabase):
        assert server is not None  # the platform creates one for every managed database
        return DatabaseEndpoint(server.host, server.port, server.name, server.user, server.ssl_mode)
    return DatabaseEndpoint(
        constants.DB_SERVICE_NAME, constants.DB_PORT, constants.DB_DATABASE, constants.DB_USER
    )


def password_secret(namespace: str, password: Any) -> dict[str, Any]:
    meta = kube.metadata(constants.DB_SECRET_NAME, COMPONENT, namespace)
    return kube.manifest("v1", "Secret", meta, type="Opaque", stringData={"POSTGRES_PASSWORD": password})


def volume_claim(
    db: InClusterDatabase, namespace: str, default_storage_class: str | None = None
) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "accessModes": ["ReadWriteOnce"],
        "resources": {"requests": {"storage": db.storage_size}},
    }
    storage_class = db.storage_class or default_storage_class
    if storage_class:
        spec["storageClassName"] = storage_class
    meta = kube.metadata(constants.DB_VOLUME_CLAIM, COMPONENT, namespace)
    return kube.manifest("v1", "PersistentVolumeClaim", meta, spec=spec)


def service(cfg: DeterminedArgs) -> dict[str, Any]:
    return kube.cluster_ip_service(
        constants.DB_SERVICE_NAME, COMPONENT, cfg.namespace, "postgres", constants.DB_PORT
    )


def _pg_isready() -> dict[str, Any]:
    return {
        "exec": {
            "command": [
                "pg_isready",
                "--host=127.0.0.1",
                f"--username={constants.DB_USER}",
                f"--dbname={constants.DB_DATABASE}",
            ]
        }
    }


# Run at every start of the database container: makes the role's password the one in the
# Secret. A data directory kept from an earlier install (a destroy keeps the volume, and the
# new install generates a new password) is reattached with whatever password the Secret holds
# now, and a changed `database.password` takes effect the same way. Waits for the real server
# (TCP on 127.0.0.1: the entrypoint's first-run server listens on the socket only), however
# long crash recovery of a kept volume takes (a failed hook would kill the container and
# restart recovery; if the server exits, the container ends and the hook with it), then
# connects over the local socket, where the image's initdb trusts local users. The password
# goes through psql's variable quoting, never through argv or the log.
ADOPT_PASSWORD = f"""set -eu
until pg_isready --quiet --host=127.0.0.1 --username={constants.DB_USER}; do sleep 1; done
psql --host={constants.DB_SOCKET_DIR} --username={constants.DB_USER} --dbname=postgres \\
  --no-psqlrc --quiet --set=ON_ERROR_STOP=1 <<'SQL'
\\set password `cat "$POSTGRES_PASSWORD_FILE"`
ALTER ROLE {constants.DB_USER} PASSWORD :'password';
SQL
"""


# Where the Secret's POSTGRES_PASSWORD is mounted as a file.
PASSWORD_DIR = "/etc/determined-db"


def statefulset(cfg: DeterminedArgs) -> dict[str, Any]:
    db = cfg.database
    assert isinstance(db, InClusterDatabase)
    args = [arg for key, value in db.settings.items() for arg in ("-c", f"{key}={value}")]
    container = {
        "name": "postgres",
        "image": db.image or versions.POSTGRES_IMAGE,
        "args": args,
        "ports": [{"name": "postgres", "containerPort": constants.DB_PORT}],
        "env": [
            {"name": "POSTGRES_USER", "value": constants.DB_USER},
            {"name": "POSTGRES_DB", "value": constants.DB_DATABASE},
            # A file, not the environment: the image's entrypoint reads POSTGRES_PASSWORD_FILE.
            {"name": "POSTGRES_PASSWORD_FILE", "value": f"{PASSWORD_DIR}/POSTGRES_PASSWORD"},
            # A subdirectory: the volume root may hold lost+found, which initdb refuses.
            {"name": "PGDATA", "value": f"{constants.DB_DATA_DIR}/pgdata"},
        ],
        "resources": db.container_resources,
        "readinessProbe": {**_pg_isready(), "periodSeconds": 5, "failureThreshold": 3},
        "livenessProbe": {
            **_pg_isready(),
            "initialDelaySeconds": 30,
            "periodSeconds": 10,
            "failureThreshold": 6,
        },
        "lifecycle": {"postStart": {"exec": {"command": ["sh", "-c", ADOPT_PASSWORD]}}},
        "volumeMounts": [
            {"name": "data", "mountPath": constants.DB_DATA_DIR},
            # The only paths the server writes outside its data directory.
            {"name": "socket", "mountPath": constants.DB_SOCKET_DIR},
            {"name": "tmp", "mountPath": "/tmp"},
            {"name": "password", "mountPath": PASSWORD_DIR, "readOnly": True},
        ],
        "securityContext": {
            "allowPrivilegeEscalation": False,
            "capabilities": {"drop": ["ALL"]},
            "readOnlyRootFilesystem": True,
        },
    }
    pod_spec = {
        **system_pods.pod_fields(cfg),
        "containers": [container],
        "volumes": [
            {"name": "data", "persistentVolumeClaim": {"claimName": constants.DB_VOLUME_CLAIM}},
            {"name": "socket", "emptyDir": {"medium": "Memory", "sizeLimit": "16Mi"}},
            {"name": "tmp", "emptyDir": {"sizeLimit": "1Gi"}},
            # Group-readable: fsGroup makes the postgres group its owner.
            {"name": "password", "secret": {"secretName": constants.DB_SECRET_NAME, "defaultMode": 0o440}},
        ],
        # PostgreSQL never calls the Kubernetes API.
        "automountServiceAccountToken": False,
        "securityContext": {
            "runAsNonRoot": True,
            "runAsUser": constants.DB_UID,
            "runAsGroup": constants.DB_UID,
            "fsGroup": constants.DB_UID,
            "seccompProfile": {"type": "RuntimeDefault"},
        },
        "priorityClassName": constants.SYSTEM_PRIORITY_CLASS,
        "terminationGracePeriodSeconds": 60,
    }
    spec = {
        "replicas": 1,
        "serviceName": constants.DB_SERVICE_NAME,
        "selector": {"matchLabels": kube.selector(COMPONENT)},
        "template": {"metadata": {"labels": kube.labels(COMPONENT)}, "spec": pod_spec},
    }
    return kube.manifest(
        "apps/v1", "StatefulSet", kube.metadata(constants.DB_NAME, COMPONENT, cfg.namespace), spec=spec
    )


def data_options(cfg: DeterminedArgs) -> pulumi.ResourceOptions:
    """Options for the database's volume claim: kept on destroy, never re-classed, and
    protected in prod (a destroy stops before it; policies see `protect`, not retain-on-delete).
    (Its namespace is kept too; see components/determined/determined.py.)"""
    keep = not cfg.data_deletion_allowed
    return pulumi.ResourceOptions(
        retain_on_delete=keep,
        protect=cfg.environment == "prod",
        # A new storage class would replace the claim with an empty volume.
        ignore_changes=["spec.storageClassName"] if keep else None,
    )


class Database(pulumi.ComponentResource):
    """The master's database. `password` is the Pulumi secret the master connects with."""

    endpoint: DatabaseEndpoint
    password: pulumi.Output[str]

    def __init__(
        self,
        name: str,
        cfg: DeterminedArgs,
        cluster: ClusterHandle,
        depends_on: list[pulumi.Resource],
        opts: pulumi.ResourceOptions | None = None,
    ):
        super().__init__("determined:components:Database", name, None, opts)
        self.endpoint = endpoint(cfg, cluster.database)
        if cluster.database is not None:
            self.password = cluster.database.password
        else:
            # External databases always have a configured password (validation requires it).
            self.password = passwords.configured_or_generated("db-password", cfg.database.password, self)
        if not isinstance(cfg.database, InClusterDatabase):
            self.register_outputs({})
            return

        child = pulumi.ResourceOptions(parent=self, depends_on=depends_on)
        secret = kube.register(password_secret(cfg.namespace, self.password), child)
        claim = kube.register(
            volume_claim(cfg.database, cfg.namespace, cluster.default_storage_class),
            pulumi.ResourceOptions.merge(child, data_options(cfg)),
        )
        svc = kube.register(service(cfg), child)
        self.statefulset = kube.register(
            statefulset(cfg),
            pulumi.ResourceOptions.merge(child, pulumi.ResourceOptions(depends_on=[secret, claim, svc])),
        )
        self.register_outputs({})
