"""The Determined master: native Kubernetes objects built by pure functions.

ServiceAccount and cluster-wide RBAC with exactly what the master needs (it launches task
Jobs and pods in every pool namespace), master.yaml in a Secret, a Deployment with probes
and a config checksum, a ClusterIP Service tasks reach it by, and Determined's two
PriorityClasses.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import pulumi
from pulumi.output import Unknown

from deploy import defaults, kube, passwords
from deploy.app import master_yaml
from deploy.app.database import DatabaseEndpoint
from deploy.config import StackConfig

COMPONENT = "master"

# What the chart's ClusterRole grants, rule for rule (see the reference notes).
RBAC_RULES: list[dict[str, Any]] = [
    {
        "apiGroups": [""],
        "resources": ["pods", "pods/status", "pods/log", "configmaps", "namespaces", "resourcequotas"],
        "verbs": ["create", "get", "list", "delete"],
    },
    {"apiGroups": [""], "resources": ["services", "resourcequotas"], "verbs": ["get", "list"]},
    {"apiGroups": [""], "resources": ["pods", "resourcequotas"], "verbs": ["watch", "patch"]},
    {"apiGroups": [""], "resources": ["events"], "verbs": ["list", "watch"]},
    {"apiGroups": [""], "resources": ["nodes"], "verbs": ["list", "watch", "patch"]},
    {
        "apiGroups": ["scheduling.k8s.io"],
        "resources": ["priorityclasses"],
        "verbs": ["create", "get", "list", "delete"],
    },
    {"apiGroups": ["batch"], "resources": ["jobs"], "verbs": ["create", "get", "list", "delete", "watch"]},
]


def image(cfg: StackConfig) -> str:
    return f"{cfg.master.image_registry}/determined-master:{cfg.master.version}"


def _rbac_name(cfg: StackConfig) -> str:
    # Cluster-scoped: the namespace in the name keeps two installs apart.
    return f"{defaults.MASTER_NAME}-{cfg.namespace}"


def service_account(cfg: StackConfig, annotations: dict[str, Any] | None = None) -> dict[str, Any]:
    """The master's account; `annotations` bind it to a cloud identity (checkpoint storage)."""
    meta = kube.metadata(defaults.MASTER_NAME, COMPONENT, cfg.namespace)
    if annotations:
        meta["annotations"] = dict(annotations)
    return kube.manifest("v1", "ServiceAccount", meta)


def cluster_role(cfg: StackConfig) -> dict[str, Any]:
    meta = kube.metadata(_rbac_name(cfg), COMPONENT)
    return kube.manifest("rbac.authorization.k8s.io/v1", "ClusterRole", meta, rules=RBAC_RULES)


def cluster_role_binding(cfg: StackConfig) -> dict[str, Any]:
    return kube.manifest(
        "rbac.authorization.k8s.io/v1",
        "ClusterRoleBinding",
        kube.metadata(_rbac_name(cfg), COMPONENT),
        roleRef={"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": _rbac_name(cfg)},
        subjects=[{"kind": "ServiceAccount", "name": defaults.MASTER_NAME, "namespace": cfg.namespace}],
    )


def priority_classes() -> list[dict[str, Any]]:
    """Determined's PriorityClasses. Preemption is off: a higher value only orders the queue."""
    return [
        kube.manifest(
            "scheduling.k8s.io/v1",
            "PriorityClass",
            kube.metadata(name, COMPONENT),
            value=value,
            preemptionPolicy="Never",
            globalDefault=False,
            description=description,
        )
        for name, value, description in (
            (
                defaults.SYSTEM_PRIORITY_CLASS,
                defaults.SYSTEM_PRIORITY_VALUE,
                "Determined master and database",
            ),
            (
                defaults.MEDIUM_PRIORITY_CLASS,
                defaults.MEDIUM_PRIORITY_VALUE,
                "Determined tasks of medium priority",
            ),
        )
    ]


def config_secret(namespace: str, files: Any) -> dict[str, Any]:
    """The Secret master.yaml (and a database CA certificate, if any) is mounted from."""
    meta = kube.metadata(defaults.MASTER_CONFIG_SECRET, COMPONENT, namespace)
    return kube.manifest("v1", "Secret", meta, type="Opaque", stringData=files)


@dataclass(frozen=True)
class Placement:
    """What the platform decided that master.yaml names: a bucket it created, and the
    service account tasks run as (bound to storage by workload identity)."""

    bucket: str | None = None
    task_service_account: str | None = None


def config_files(
    cfg: StackConfig,
    db: DatabaseEndpoint,
    secrets: master_yaml.MasterSecrets,
    placement: Placement = Placement(),
) -> dict[str, str]:
    """The files of the master's config Secret; `db.host` must be resolved (a str)."""
    config = master_yaml.master_config(cfg, db, secrets, placement.bucket, placement.task_service_account)
    files = {master_yaml.MASTER_YAML: master_yaml.render(config)}
    if db.ssl_root_cert:
        files[master_yaml.DB_ROOT_CERT] = db.ssl_root_cert
    return files


def _http_probe(**timing: int) -> dict[str, Any]:
    return {"httpGet": {"path": defaults.MASTER_HEALTH_PATH, "port": "http"}, **timing}


def deployment(cfg: StackConfig, config_checksum: Any) -> dict[str, Any]:
    resources = {
        "requests": {"cpu": cfg.master.cpu, "memory": cfg.master.memory},
        "limits": {"cpu": cfg.master.cpu, "memory": cfg.master.memory},
    }
    container = {
        "name": "determined-master",
        "image": image(cfg),
        "imagePullPolicy": "IfNotPresent",
        "ports": [{"name": "http", "containerPort": defaults.MASTER_CONTAINER_PORT}],
        "resources": resources,
        "volumeMounts": [{"name": "config", "mountPath": defaults.MASTER_CONFIG_DIR, "readOnly": True}],
        # Database migrations run before /info answers: the startup probe allows for them.
        "startupProbe": _http_probe(
            periodSeconds=10, failureThreshold=defaults.MASTER_STARTUP_SECONDS // 10, timeoutSeconds=5
        ),
        "readinessProbe": _http_probe(periodSeconds=10, failureThreshold=3, timeoutSeconds=5),
        "livenessProbe": _http_probe(periodSeconds=20, failureThreshold=3, timeoutSeconds=5),
        "securityContext": {"allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]}},
    }
    pod_spec = {
        "serviceAccountName": defaults.MASTER_NAME,
        "priorityClassName": defaults.SYSTEM_PRIORITY_CLASS,
        "containers": [container],
        "volumes": [{"name": "config", "secret": {"secretName": defaults.MASTER_CONFIG_SECRET}}],
        "securityContext": {"seccompProfile": {"type": "RuntimeDefault"}},
    }
    spec = {
        "replicas": 1,
        # Never two masters on one database: the old pod stops before the new one starts.
        "strategy": {"type": "Recreate"},
        "selector": {"matchLabels": kube.selector(COMPONENT)},
        "template": {
            "metadata": {
                "labels": kube.labels(COMPONENT),
                "annotations": {"checksum/config": config_checksum},
            },
            "spec": pod_spec,
        },
    }
    meta = kube.metadata(defaults.MASTER_NAME, COMPONENT, cfg.namespace)
    return kube.manifest("apps/v1", "Deployment", meta, spec=spec)


def service(cfg: StackConfig) -> dict[str, Any]:
    return kube.cluster_ip_service(
        defaults.MASTER_SERVICE_NAME, COMPONENT, cfg.namespace, "http", defaults.MASTER_SERVICE_PORT
    )


def internal_url(cfg: StackConfig) -> str:
    host = f"{defaults.MASTER_SERVICE_NAME}.{cfg.namespace}.svc.cluster.local"
    return f"http://{host}:{defaults.MASTER_SERVICE_PORT}"


class DeterminedMaster(pulumi.ComponentResource):
    """The master's objects. `initial_user_password` is a Pulumi secret (generated when
    the config has none)."""

    initial_user_password: pulumi.Output[str]
    # master.yaml as the master receives it, every secret replaced by a placeholder and
    # every value the cloud has not given yet by another: what previews (the offline plan)
    # show, built by the same code as the real file.
    config_preview: pulumi.Output[str]

    def __init__(
        self,
        name: str,
        cfg: StackConfig,
        db: DatabaseEndpoint,
        db_password: pulumi.Input[str],
        depends_on: list[pulumi.Resource],
        placement: Placement = Placement(),
        storage_identity: dict[str, pulumi.Input[str]] | None = None,
        opts: pulumi.ResourceOptions | None = None,
    ):
        super().__init__("determined:components:Master", name, None, opts)
        child = pulumi.ResourceOptions(parent=self, depends_on=depends_on)

        self.initial_user_password = passwords.configured_or_generated(
            "initial-user-password", cfg.master.initial_user_password, self
        )

        def preview(host: Any) -> str:
            known = defaults.NOT_KNOWN_YET if isinstance(host, Unknown) else host
            files = config_files(
                cfg, replace(db, host=known), master_yaml.MasterSecrets.redacted(), placement
            )
            return files[master_yaml.MASTER_YAML]

        # Runs in a preview too, with whatever the cloud has not told yet marked as such.
        self.config_preview = pulumi.Output.from_input(db.host).apply(preview, run_with_unknowns=True)
        files = pulumi.Output.all(db.host, db_password, self.initial_user_password).apply(
            lambda values: config_files(
                cfg, replace(db, host=values[0]), master_yaml.MasterSecrets(*values[1:]), placement
            )
        )
        # A keyed digest of the files reveals none of their secrets; kept plain so that the
        # Deployment is not hidden as a secret in previews and plans.
        checksum_key = passwords.configured_or_generated("config-checksum-key", None, self)
        config_checksum = pulumi.Output.unsecret(
            pulumi.Output.all(files, checksum_key).apply(lambda args: master_yaml.checksum(*args))
        )

        account = kube.register(service_account(cfg, storage_identity), child)
        role = kube.register(cluster_role(cfg), child)
        binding = kube.register(
            cluster_role_binding(cfg),
            pulumi.ResourceOptions.merge(child, pulumi.ResourceOptions(depends_on=[role, account])),
        )
        secret = kube.register(config_secret(cfg.namespace, pulumi.Output.secret(files)), child)
        self.service = kube.register(service(cfg), child)
        self.deployment = kube.register(
            deployment(cfg, config_checksum),
            pulumi.ResourceOptions.merge(child, pulumi.ResourceOptions(depends_on=[binding, secret])),
        )
        self.url = internal_url(cfg)
        self.register_outputs({"url": self.url})
