"""master.yaml: the Determined master's configuration, built from the stack config.

`master_config` is pure and version-aware; its output goes into a Kubernetes Secret (it
holds the database password), never a ConfigMap. The master parses this file strictly,
so only keys the configured version knows are written.
"""

from __future__ import annotations

import hashlib
import hmac
from dataclasses import dataclass
from typing import Any

import yaml
from pydantic import SecretStr

from components import constants, versions
from components.config import config_overrides
from components.config.master import ElasticLogging
from components.config.tls import ExposedTls, MasterTls
from components.determined import checkpoint_storage, resource_pools
from components.determined.args import DeterminedArgs
from components.determined.database import DatabaseEndpoint

# File names inside the master's config Secret (mounted at /etc/determined).
MASTER_YAML = constants.MASTER_YAML
DB_ROOT_CERT = "db-root-cert.pem"


@dataclass(frozen=True)
class MasterSecrets:
    """Secret values master.yaml carries, resolved to plain strings."""

    db_password: str
    initial_user_password: str
    webhook_signing_key: str
    # True: every secret is written as a placeholder (a preview of the file).
    redact: bool = False

    @classmethod
    def redacted(cls) -> MasterSecrets:
        """Placeholders in place of every secret: master.yaml as a preview shows it."""
        return cls(constants.REDACTED, constants.REDACTED, constants.REDACTED, redact=True)

    def reveal(self, value: SecretStr) -> str:
        """A secret from the stack config as master.yaml carries it."""
        return constants.REDACTED if self.redact else value.get_secret_value()


def master_config(
    cfg: DeterminedArgs,
    db: DatabaseEndpoint,
    secrets: MasterSecrets,
    bucket: str | None = None,
    task_service_account: str | None = None,
) -> dict[str, Any]:
    """master.yaml for `cfg`. `bucket`: a checkpoint bucket the platform created;
    `task_service_account`: what task pods run as (workload identity for storage)."""
    version = cfg.master.version_tuple
    per_pool_slots = version >= versions.PER_POOL_MAX_SLOTS_SINCE

    db_section: dict[str, Any] = {
        "user": db.user,
        "password": secrets.db_password,
        "host": db.host,
        # The master declares db.port a string (a JSON number would not unmarshal into it).
        "port": str(db.port),
        "name": db.name,
    }
    if db.ssl_mode:
        db_section["ssl_mode"] = db.ssl_mode
    if db.ssl_root_cert:
        db_section["ssl_root_cert"] = f"{constants.MASTER_CONFIG_DIR}/{DB_ROOT_CERT}"

    security: dict[str, Any] = {}
    if isinstance(cfg.tls, MasterTls):
        # TLS ends in the master: one HTTPS listener on `port` (no plain HTTP anywhere).
        security["tls"] = {
            "cert": f"{constants.MASTER_TLS_DIR}/tls.crt",
            "key": f"{constants.MASTER_TLS_DIR}/tls.key",
        }
    if version >= versions.INITIAL_PASSWORD_SINCE:
        security["initial_user_password"] = secrets.initial_user_password
    if cfg.master.default_task_user:
        security["default_task"] = cfg.master.default_task_user.model_dump()

    namespace_key = "default_namespace" if version >= versions.WORKSPACE_NAMESPACES_SINCE else "namespace"
    resource_manager: dict[str, Any] = {
        "type": "kubernetes",
        # 0.35+: a namespace of the tasks' own; the master finds its Service by
        # DET_RELEASE_NAMESPACE (components/determined/master.py). Older masters: the master's.
        namespace_key: cfg.default_task_namespace,
        "master_service_name": constants.MASTER_SERVICE_NAME,
        "default_compute_resource_pool": cfg.compute_pool,
        "default_aux_resource_pool": cfg.aux_pool,
    }
    if isinstance(cfg.tls, MasterTls):
        resource_manager |= _task_master_address(cfg)
    if cfg.slot_type == "cpu":
        resource_manager["slot_type"] = "cpu"
        resource_manager["slot_resource_requests"] = {"cpu": cfg.slots.cpu_per_slot or 1}
    # Exactly one of the two global max_slots_per_pod keys may be set.
    if not per_pool_slots:
        resource_manager["max_slots_per_pod"] = cfg.max_slots_per_pod

    tcd_cfg = cfg.task_container_defaults
    project = resource_pools.project_layer(cfg)
    task_container_defaults: dict[str, Any] = resource_pools.task_settings(cfg)
    for key, spec in (
        ("cpu_pod_spec", tcd_cfg.cpu_pod_spec),
        ("gpu_pod_spec", tcd_cfg.gpu_pod_spec),
    ):
        if spec or project:
            task_container_defaults[key] = resource_pools.task_pod(project, spec)
    gc_spec = resource_pools.checkpoint_gc_pod_spec(cfg, task_service_account, project)
    if gc_spec:
        task_container_defaults["checkpoint_gc_pod_spec"] = gc_spec
    if per_pool_slots:
        task_container_defaults["kubernetes"] = {"max_slots_per_pod": cfg.max_slots_per_pod}

    config: dict[str, Any] = {
        "log": {"level": cfg.master.log_level, "color": False},
        "checkpoint_storage": checkpoint_storage.master_checkpoint_storage(
            cfg.checkpoint_storage, secrets.reveal, bucket
        ),
        "db": db_section,
    }
    if security:
        config["security"] = security
    config["port"] = constants.MASTER_CONTAINER_PORT
    config["resource_manager"] = resource_manager
    config["resource_pools"] = resource_pools.master_resource_pools(cfg, task_service_account, project)
    if task_container_defaults:
        config["task_container_defaults"] = task_container_defaults
    config["telemetry"] = {"enabled": cfg.master.telemetry}
    config["observability"] = {"enable_prometheus": cfg.master_prometheus}
    config["cluster_name"] = cfg.cluster_name
    config["tensorboard_timeout"] = cfg.master.tensorboard_timeout
    if cfg.master.notebook_timeout:
        config["notebook_timeout"] = cfg.master.notebook_timeout
    logging = _logging(cfg, secrets)
    if logging:
        config["logging"] = logging
    if cfg.master.retention:
        config["retention_policy"] = {
            "log_retention_days": cfg.master.retention.log_retention_days,
            "schedule": cfg.master.retention.schedule,
        }
    config["webhooks"] = _webhooks(cfg, secrets)
    # The user's own keys last (checked against the version's key set when the config loads).
    overrides = cfg.master.config_overrides
    if secrets.redact:
        overrides = config_overrides.redacted(overrides, constants.REDACTED)
    return config_overrides.apply(config, overrides)


def _webhooks(cfg: DeterminedArgs, secrets: MasterSecrets) -> dict[str, Any]:
    """Links in webhook payloads point at the master's public address; the signing key is
    kept in state (generated once when not configured) so receivers keep verifying."""
    section: dict[str, Any] = {}
    base_url = cfg.master.webhooks.base_url
    if base_url is None and isinstance(cfg.tls, ExposedTls):
        base_url = f"https://{cfg.tls.host}"
    if base_url:
        section["base_url"] = base_url
    section["signing_key"] = secrets.webhook_signing_key
    return section


def _logging(cfg: DeterminedArgs, secrets: MasterSecrets) -> dict[str, Any] | None:
    logging = cfg.master.logging
    if not isinstance(logging, ElasticLogging):
        return None
    section: dict[str, Any] = {"type": "elastic", "host": logging.host, "port": logging.port}
    if logging.security:
        section["security"] = {
            "username": logging.security.username,
            "password": secrets.reveal(logging.security.password),
        }
        if logging.security.tls:
            section["security"]["tls"] = {"enabled": True}
    return section


def _task_master_address(cfg: DeterminedArgs) -> dict[str, Any]:
    """Where tasks reach a master that ends TLS itself, in the keys the version reads: its
    Service over HTTPS (tasks check the certificate against its first name, the public host).
    Older masters find the Service by master_service_name and follow TLS on their own."""
    version = cfg.master.version_tuple
    if version < versions.TASK_MASTER_ADDRESS_SINCE:
        return {}
    host_key = (
        "determined_master_host" if version >= versions.TASK_MASTER_HOST_SINCE else "determined_master_ip"
    )
    address: dict[str, Any] = {
        host_key: f"{constants.MASTER_SERVICE_NAME}.{cfg.namespace}.svc.cluster.local",
        "determined_master_port": constants.MASTER_SERVICE_PORT,
    }
    if version >= versions.TASK_MASTER_SCHEME_SINCE:
        address["determined_master_scheme"] = "https"
    return address


# libyaml's emitter where PyYAML has it: the same document, several times faster (a stack with
# many pools renders a large file, twice per run).
_DUMPER = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


def render(config: dict[str, Any]) -> str:
    """master.yaml text; block style, keys in the order built."""
    return yaml.dump(config, Dumper=_DUMPER, sort_keys=False, default_flow_style=False, width=1000)


def checksum(files: dict[str, str], key: str) -> str:
    """HMAC-SHA-256 over the config files, for the pod annotation that rolls the master.
    Keyed with a generated secret: the files hold passwords, and a plain hash in an
    annotation anyone may read would let weak ones be guessed offline."""
    digest = hmac.new(key.encode(), digestmod=hashlib.sha256)
    for name in sorted(files):
        digest.update(name.encode() + b"\0" + files[name].encode() + b"\0")
    return digest.hexdigest()
