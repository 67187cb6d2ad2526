"""The Determined master: native Kubernetes objects built by pure functions.

ServiceAccount and RBAC with what the master's resource manager calls: a Role in every
namespace tasks run in, cluster-wide only reading nodes (and, where the version needs it, the
list of all Jobs) plus the writes `master.clusterWrites` opts into; master.yaml in a Secret,
a Deployment with probes and a config checksum, a ClusterIP Service tasks reach it by, and
Determined's two PriorityClasses.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import pulumi
from pulumi.output import Unknown

from components import constants, kube, passwords, versions
from components.addons import envoy_gateway, reloader
from components.config.tls import ExposedTls, MasterTls
from components.determined import (
    ca_bundle,
    checkpoint_volumes,
    database_restore,
    master_yaml,
    proxy,
    system_pods,
)
from components.determined.args import DeterminedArgs
from components.determined.database import DatabaseEndpoint

COMPONENT = constants.MASTER_COMPONENT
# The master reads its own namespace from this variable (versions.RELEASE_NAMESPACE_SINCE).
RELEASE_NAMESPACE_ENV = "DET_RELEASE_NAMESPACE"


def _rule(group: str, resources: list[str], verbs: list[str], **extra: Any) -> dict[str, Any]:
    return {"apiGroups": [group], "resources": resources, "verbs": verbs, **extra}


def namespace_rules(cfg: DeterminedArgs, namespace: str) -> list[dict[str, Any]]:
    """What the master does inside a namespace tasks run in (its Kubernetes resource
    manager's calls, master/internal/rm/kubernetesrm at each version): per-namespace
    informers on pods, jobs and events; creating and deleting task objects; task logs.
    In its own namespace, when no task runs there (0.35+), only its Service."""
    own_service = _rule("", ["services"], ["get"], resourceNames=[constants.MASTER_SERVICE_NAME])
    if namespace not in cfg.task_namespaces:
        return [own_service]
    version = cfg.master.version_tuple
    jobs = version >= versions.JOB_TASKS_SINCE
    rules = [
        # Bare task pods before Jobs; with Jobs, pods are only watched and cleaned up.
        _rule("", ["pods"], ["get", "list", "watch", "delete", *([] if jobs else ["create"])]),
        _rule("", ["pods/log"], ["get"]),
        _rule("", ["configmaps"], ["get", "list", "create", "delete"]),
        _rule("", ["events"], ["list", "watch"]),
    ]
    if jobs:
        rules.append(_rule("batch", ["jobs"], ["get", "list", "watch", "create", "delete"]))
    if namespace == cfg.namespace:
        # It finds its own Service (the address tasks reach it by).
        rules.append(own_service)
    if version >= versions.WORKSPACE_NAMESPACES_SINCE:
        # Namespaces bound to workspaces are checked to exist; their quotas are shown.
        rules.append(_rule("", ["namespaces"], ["get"], resourceNames=[namespace]))
        rules.append(_rule("", ["resourcequotas"], ["get", "list"]))
    return rules


@dataclass(frozen=True)
class ClusterWrite:
    """A cluster-wide write the master makes for one optional feature, and does without when
    Kubernetes refuses it: granted only when `master.clusterWrites.<key>` asks for it.
    `sources`: where the master makes the call and tolerates the refusal, as
    tag:path:line of determined-ai/determined (the same code at every tag 0.26.0-v0.38.1)."""

    key: str  # camelCase, under master.clusterWrites
    rule: dict[str, Any]
    enables: str
    refused: str  # what happens without the right
    sources: tuple[str, ...]


CLUSTER_WRITES = (
    ClusterWrite(
        "nodes",
        _rule("", ["nodes"], ["patch"]),
        "enabling and disabling agents (det agent enable/disable, the WebUI's cluster page): "
        "the master labels the node determined.ai/cluster-id-<id> and keeps tasks off it",
        "enable/disable answers that the service account may not patch nodes and that "
        "Determined otherwise works; nothing else uses the right",
        (
            "0.26.0:master/internal/rm/kubernetesrm/pods.go:950",  # enableNode: Patch
            "0.26.0:master/internal/rm/kubernetesrm/pods.go:952",  # IsForbidden: an answer
            "0.26.0:master/internal/rm/kubernetesrm/pods.go:998",  # disableNode: Patch
            "0.34.0:master/internal/rm/kubernetesrm/jobs.go:1272",
            "0.34.0:master/internal/rm/kubernetesrm/jobs.go:1320",
            "v0.38.1:master/internal/rm/kubernetesrm/jobs.go:1434",
            "v0.38.1:master/internal/rm/kubernetesrm/jobs.go:1436",
            "v0.38.1:master/internal/rm/kubernetesrm/jobs.go:1482",
            "v0.38.1:master/internal/rm/kubernetesrm/jobs.go:1484",
        ),
    ),
    ClusterWrite(
        "priorityClasses",
        _rule("scheduling.k8s.io", ["priorityclasses"], ["create", "delete"]),
        "resources.priority of an experiment or task: a PriorityClass <id>-priorityclass "
        "(preemptionPolicy Never) per task whose pod spec names no class, deleted when it ends",
        "the task's pod gets no PriorityClass (the cluster's default priority) and starts "
        "anyway; the delete at each task's end logs a warning",
        (
            "0.26.0:master/internal/rm/kubernetesrm/spec.go:203",  # only with resources.priority
            "0.26.0:master/internal/rm/kubernetesrm/spec.go:210",  # a failed create: no class
            "0.26.0:master/internal/rm/kubernetesrm/pods.go:1221",  # delete; failure: a warning
            "0.34.0:master/internal/rm/kubernetesrm/spec.go:344",
            "0.34.0:master/internal/rm/kubernetesrm/jobs.go:1561",
            "v0.38.1:master/internal/rm/kubernetesrm/spec.go:361",
            "v0.38.1:master/internal/rm/kubernetesrm/spec.go:368",
            "v0.38.1:master/internal/rm/kubernetesrm/jobs.go:1713",
            "v0.38.1:master/internal/rm/kubernetesrm/jobs.go:1715",
        ),
    ),
)


def cluster_writes(cfg: DeterminedArgs) -> list[ClusterWrite]:
    """The cluster-wide writes `master.clusterWrites` asks for."""
    asked = cfg.master.cluster_writes
    wanted = {"nodes": asked.nodes, "priorityClasses": asked.priority_classes}
    return [write for write in CLUSTER_WRITES if wanted[write.key]]


def cluster_rules(cfg: DeterminedArgs) -> list[dict[str, Any]]:
    """What must be cluster-wide: reading nodes (a cluster-scoped informer), on the versions
    that list every namespace's Jobs at start-up that list (the master does not start
    without it), and the optional writes `master.clusterWrites` asks for."""
    rules = [_rule("", ["nodes"], ["list", "watch"])]
    if cfg.master.version_tuple >= versions.CLUSTER_JOB_LIST_SINCE:
        rules.append(_rule("batch", ["jobs"], ["list"]))
    rules += [write.rule for write in cluster_writes(cfg)]
    return rules


def image(cfg: DeterminedArgs) -> str:
    return cfg.master.image_reference


def _rbac_name(cfg: DeterminedArgs) -> str:
    # Cluster-scoped: the namespace in the name keeps two installs apart.
    return f"{constants.MASTER_NAME}-{cfg.namespace}"


def service_account(cfg: DeterminedArgs, annotations: dict[str, Any] | None = None) -> dict[str, Any]:
    """The master's account; `annotations` bind it to a cloud identity (checkpoint storage)."""
    meta = kube.metadata(constants.MASTER_NAME, COMPONENT, cfg.namespace)
    if annotations:
        meta["annotations"] = dict(annotations)
    return kube.manifest("v1", "ServiceAccount", meta)


def cluster_role(cfg: DeterminedArgs) -> dict[str, Any]:
    meta = kube.metadata(_rbac_name(cfg), COMPONENT)
    return kube.manifest("rbac.authorization.k8s.io/v1", "ClusterRole", meta, rules=cluster_rules(cfg))


def _subjects(cfg: DeterminedArgs) -> list[dict[str, str]]:
    return [{"kind": "ServiceAccount", "name": constants.MASTER_NAME, "namespace": cfg.namespace}]


def namespace_roles(cfg: DeterminedArgs) -> list[dict[str, Any]]:
    """A Role and a RoleBinding for the master in its own namespace and every namespace
    tasks run in."""
    objects = []
    for namespace in cfg.pod_namespaces:
        meta = kube.metadata(constants.MASTER_NAME, COMPONENT, namespace)
        ref = {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": constants.MASTER_NAME}
        objects.append(
            kube.manifest("rbac.authorization.k8s.io/v1", "Role", meta, rules=namespace_rules(cfg, namespace))
        )
        objects.append(
            kube.manifest(
                "rbac.authorization.k8s.io/v1",
                "RoleBinding",
                dict(meta),
                roleRef=ref,
                subjects=_subjects(cfg),
            )
        )
    return objects


def cluster_role_binding(cfg: DeterminedArgs) -> dict[str, Any]:
    return kube.manifest(
        "rbac.authorization.k8s.io/v1",
        "ClusterRoleBinding",
        kube.metadata(_rbac_name(cfg), COMPONENT),
        roleRef={"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": _rbac_name(cfg)},
        subjects=_subjects(cfg),
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
                constants.SYSTEM_PRIORITY_CLASS,
                constants.SYSTEM_PRIORITY_VALUE,
                "Determined master and database",
            ),
            (
                constants.MEDIUM_PRIORITY_CLASS,
                constants.MEDIUM_PRIORITY_VALUE,
                "Determined tasks of medium priority",
            ),
        )
    ]


def config_secret(namespace: str, version: str, files: Any) -> dict[str, Any]:
    """The Secret master.yaml (and a database CA certificate, if any) is mounted from,
    annotated with the master version it is written for (policies check its keys by it)."""
    meta = kube.metadata(constants.MASTER_CONFIG_SECRET, COMPONENT, namespace)
    meta["annotations"] = {constants.MASTER_VERSION_ANNOTATION: version}
    return kube.manifest("v1", "Secret", meta, type="Opaque", stringData=files)


@dataclass(frozen=True)
class Placement:
    """What the platform decided that master.yaml names: a bucket it created, and the
    service account tasks run as (bound to storage by workload identity)."""

    # The bucket resource's name (an output): a stack keeps the bucket it was deployed with.
    bucket: pulumi.Input[str] | None = None
    task_service_account: str | None = None


def config_files(
    cfg: DeterminedArgs,
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


# pulumi-kubernetes: do not wait for the object to become ready.
SKIP_AWAIT = "pulumi.com/skipAwait"

# The image has no USER (root) but runs as any user (upstream keeps it OpenShift-compatible);
# nobody:nogroup of its Ubuntu base, a numeric id the restricted Pod Security level accepts.
RUN_AS = 65534
# The only paths it writes: the file cache (master.yaml `cache.cache_dir`, made at start) and
# temporary files (uploads, SAML's xmlsec1). The root file system stays read-only.
DEFAULT_CACHE_DIR = "/var/cache/determined"
TMP_SIZE_LIMIT = "1Gi"


def cache_dir(cfg: DeterminedArgs) -> str:
    """Where the master keeps its file cache: its default, or a `cache.cache_dir` override."""
    cache = cfg.master.config_overrides.get("cache")
    path = cache.get("cache_dir") if isinstance(cache, dict) else None
    return path if isinstance(path, str) and path.startswith("/") else DEFAULT_CACHE_DIR


def _scratch(cfg: DeterminedArgs) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """(volume, volumeMount) of the writable directories: the cache grows with the models
    experiments upload (no size limit, as on the image's own file system before), /tmp is
    bounded."""
    return [
        ({"name": "cache", "emptyDir": {}}, {"name": "cache", "mountPath": cache_dir(cfg)}),
        ({"name": "tmp", "emptyDir": {"sizeLimit": TMP_SIZE_LIMIT}}, {"name": "tmp", "mountPath": "/tmp"}),
    ]


def waits_for_certificate(cfg: DeterminedArgs) -> bool:
    """tls.mode master with a cert-manager certificate: the master can only start once the
    certificate is issued, which needs the host's DNS to point at the Gateway, which the
    same `pulumi up` creates. So `up` does not wait for the master; it starts when it can."""
    return isinstance(cfg.tls, MasterTls) and cfg.tls.issued


def port_name(cfg: DeterminedArgs) -> str:
    """The master's port: HTTPS when TLS ends in the master (tls.mode master), else HTTP."""
    return "https" if isinstance(cfg.tls, MasterTls) else "http"


def _http_probe(cfg: DeterminedArgs, **timing: int) -> dict[str, Any]:
    probe = {"path": constants.MASTER_HEALTH_PATH, "port": port_name(cfg)}
    if isinstance(cfg.tls, MasterTls):
        probe["scheme"] = "HTTPS"  # the kubelet does not verify the certificate
    return {"httpGet": probe, **timing}


def _env(cfg: DeterminedArgs) -> list[dict[str, Any]]:
    env = []
    if cfg.master.version_tuple >= versions.RELEASE_NAMESPACE_SINCE:
        # Where it finds its own Service when tasks default to another namespace (first: it
        # must name the pod's own namespace). What the Helm chart sets (master-deployment.yaml).
        own_namespace = {"fieldRef": {"fieldPath": "metadata.namespace"}}
        env.append({"name": RELEASE_NAMESPACE_ENV, "valueFrom": own_namespace})
    env += [{"name": name, "value": value} for name, value in cfg.master.env.items()]
    env += proxy.env(cfg) + ca_bundle.master_env(cfg)
    # Later entries of a name would win in Kubernetes; the user's own come first and stay.
    seen: set[str] = set()
    return [e for e in env if not (e["name"] in seen or seen.add(e["name"]))]


def deployment(cfg: DeterminedArgs, config_checksum: Any) -> dict[str, Any]:
    container = {
        "name": "determined-master",
        "image": image(cfg),
        "imagePullPolicy": "IfNotPresent",
        "ports": [{"name": port_name(cfg), "containerPort": constants.MASTER_CONTAINER_PORT}],
        "resources": cfg.master.container_resources,
        "volumeMounts": [{"name": "config", "mountPath": constants.MASTER_CONFIG_DIR, "readOnly": True}],
        # Database migrations run before /info answers: the startup probe allows for them.
        "startupProbe": _http_probe(
            cfg, periodSeconds=10, failureThreshold=constants.MASTER_STARTUP_SECONDS // 10, timeoutSeconds=5
        ),
        "readinessProbe": _http_probe(cfg, periodSeconds=10, failureThreshold=3, timeoutSeconds=5),
        "livenessProbe": _http_probe(cfg, periodSeconds=20, failureThreshold=3, timeoutSeconds=5),
        "securityContext": kube.restricted_container(RUN_AS),
    }
    env = _env(cfg)
    if env:
        container["env"] = env
    pod_spec = {
        "serviceAccountName": constants.MASTER_NAME,
        "priorityClassName": constants.SYSTEM_PRIORITY_CLASS,
        **system_pods.pod_fields(cfg),
        "containers": [container],
        "volumes": [{"name": "config", "secret": {"secretName": constants.MASTER_CONFIG_SECRET}}],
        "securityContext": kube.restricted_pod(RUN_AS),
    }
    for extra in (ca_bundle.master_volume(cfg), checkpoint_volumes.master_volume(cfg), *_scratch(cfg)):
        if extra:
            pod_spec["volumes"].append(extra[0])
            container["volumeMounts"].append(extra[1])
    if isinstance(cfg.tls, MasterTls):
        # The certificate and key master.yaml's security.tls names (tls.crt, tls.key).
        items = [{"key": key, "path": key} for key in ("tls.crt", "tls.key")]
        pod_spec["volumes"].append(
            {"name": "tls", "secret": {"secretName": cfg.tls.secret_name, "items": items}}
        )
        container["volumeMounts"].append(
            {"name": "tls", "mountPath": constants.MASTER_TLS_DIR, "readOnly": True}
        )
    spec = {
        "replicas": database_restore.master_replicas(cfg),
        # Never two masters on one database: the old pod stops before the new one starts.
        "strategy": {"type": "Recreate"},
        "selector": {"matchLabels": kube.selector(COMPONENT)},
        "template": {
            "metadata": {
                "labels": kube.labels(COMPONENT),
                "annotations": {**cfg.master.pod_annotations, "checksum/config": config_checksum},
            },
            "spec": pod_spec,
        },
    }
    meta = kube.metadata(constants.MASTER_NAME, COMPONENT, cfg.namespace)
    annotations: dict[str, str] = {}
    if isinstance(cfg.tls, MasterTls):
        # The master reads its certificate only at start: a renewed one restarts it.
        annotations |= reloader.workload_annotations(cfg.tls.secret_name)
    if waits_for_certificate(cfg):
        annotations[SKIP_AWAIT] = "true"
    if annotations:
        meta["annotations"] = annotations
    return kube.manifest("apps/v1", "Deployment", meta, spec=spec)


def service(cfg: DeterminedArgs) -> dict[str, Any]:
    # Its first (only) port is what tasks reach the master by (the master reads Ports[0]).
    svc = kube.cluster_ip_service(
        constants.MASTER_SERVICE_NAME, COMPONENT, cfg.namespace, port_name(cfg), constants.MASTER_SERVICE_PORT
    )
    settings = cfg.master.service
    annotations = dict(settings.annotations)
    if settings.type != "ClusterIP":
        # Only with tls.mode master (validation): the master's own HTTPS, shaped like the
        # Gateway's load balancer would be (exposure, source ranges).
        assert isinstance(cfg.tls, ExposedTls)
        svc["spec"]["type"] = settings.type
        if settings.type == "LoadBalancer":
            annotations = envoy_gateway.load_balancer_annotations(cfg.cloud, cfg.tls.exposure) | annotations
            if cfg.tls.source_ranges:
                svc["spec"]["loadBalancerSourceRanges"] = list(cfg.tls.source_ranges)
    if annotations:
        svc["metadata"]["annotations"] = annotations
    return svc


def disruption_budget(cfg: DeterminedArgs) -> dict[str, Any]:
    """One master at a time, and drains never blocked: `maxUnavailable: 1` lets a drain evict
    the single master (a `minAvailable: 1` budget would hold every drain forever), and an
    unhealthy master (crash-looping, not ready) is always evictable. The Deployment's Recreate
    strategy keeps a second master off the database while the replacement starts."""
    spec = {
        "maxUnavailable": 1,
        "selector": {"matchLabels": kube.selector(COMPONENT)},
        "unhealthyPodEvictionPolicy": "AlwaysAllow",
    }
    meta = kube.metadata(constants.MASTER_NAME, COMPONENT, cfg.namespace)
    return kube.manifest("policy/v1", "PodDisruptionBudget", meta, spec=spec)


def internal_url(cfg: DeterminedArgs) -> str:
    host = f"{constants.MASTER_SERVICE_NAME}.{cfg.namespace}.svc.cluster.local"
    return f"{port_name(cfg)}://{host}:{constants.MASTER_SERVICE_PORT}"


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
        cfg: DeterminedArgs,
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
        # Kept in state: a key made afresh at each start would break every receiver's check.
        signing_key = passwords.configured_or_generated(
            "webhook-signing-key", cfg.master.webhooks.signing_key, self
        )

        def preview(host: Any, bucket: Any) -> str:
            known = constants.NOT_KNOWN_YET if isinstance(host, Unknown) else host
            unknown_bucket = isinstance(bucket, Unknown)
            placed = replace(placement, bucket=constants.NOT_KNOWN_YET if unknown_bucket else bucket)
            files = config_files(cfg, replace(db, host=known), master_yaml.MasterSecrets.redacted(), placed)
            return files[master_yaml.MASTER_YAML]

        # Runs in a preview too, with whatever the cloud has not told yet marked as such.
        self.config_preview = pulumi.Output.all(db.host, placement.bucket).apply(
            lambda values: preview(*values), run_with_unknowns=True
        )
        files = pulumi.Output.all(
            db.host, placement.bucket, db_password, self.initial_user_password, signing_key
        ).apply(
            lambda values: config_files(
                cfg,
                replace(db, host=values[0]),
                master_yaml.MasterSecrets(*values[2:]),
                replace(placement, bucket=values[1]),
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
        after_account = pulumi.ResourceOptions.merge(
            child, pulumi.ResourceOptions(depends_on=[role, account])
        )
        bindings = [kube.register(cluster_role_binding(cfg), after_account)]
        for obj in namespace_roles(cfg):
            registered = kube.register(obj, after_account)
            if obj["kind"] == "RoleBinding":
                bindings.append(registered)
        secret = kube.register(
            config_secret(cfg.namespace, cfg.master.version, pulumi.Output.secret(files)), child
        )
        self.service = kube.register(service(cfg), child)
        self.deployment = kube.register(
            deployment(cfg, config_checksum),
            pulumi.ResourceOptions.merge(child, pulumi.ResourceOptions(depends_on=[*bindings, secret])),
        )
        kube.register(disruption_budget(cfg), child)
        self.url = internal_url(cfg)
        self.register_outputs({"url": self.url})
