"""The master across the sections it reads: the release and what it supports, the node pool
it runs on, how it is reached, the Secrets and pull Secrets it is given, configOverrides."""

from __future__ import annotations

from typing import TYPE_CHECKING

from components import constants, versions
from components.config import config_overrides, master_yaml_schema
from components.config.errors import Add
from components.config.pools import arm_note
from components.config.tls import ExposedTls, MasterTls
from components.config.views import _system_capable

if TYPE_CHECKING:
    from components.config.stack import StackConfig


def version_problems(cfg: StackConfig, add: Add) -> None:
    """A release the project knows, and settings the configured master version does not have."""
    version = cfg.master.version_tuple
    newest = master_yaml_schema.known_range()[1]
    if version > newest and version[:2] != newest[:2]:
        # A newer minor is refused rather than planned with a warning: the master refuses to
        # start on a key it does not know and its Deployment is Recreate, so an unchecked
        # master.yaml could leave the cluster without a master; and no release beyond the key
        # data's is known to exist (https://hub.docker.com/r/determinedai/determined-master/tags,
        # read 2026-11). A newer patch of the newest minor is planned with the plan's warning:
        # patch releases keep their minor's configuration keys.
        known = master_yaml_schema.format_version(newest)
        add(
            "master.version",
            f"Determined {cfg.master.version} is newer than the newest release the project knows "
            f"({known}): its master.yaml keys cannot be checked (the master refuses to start on one it does "
            f"not know); pin a known release (the newest is {known})",
        )
    for key, is_set, since, why in (
        (
            "master.initialUserPassword",
            cfg.master.initial_user_password is not None,
            versions.INITIAL_PASSWORD_SINCE,
            "older masters cannot set it; set the admin password after the first login",
        ),
        (
            "taskContainerDefaults.checkpointGcPodSpec",
            bool(cfg.task_container_defaults.checkpoint_gc_pod_spec),
            versions.CHECKPOINT_GC_POD_SPEC_SINCE,
            "older masters ignore it",
        ),
        (
            "master.retention",
            cfg.master.retention is not None,
            versions.LOG_RETENTION_SINCE,
            "older masters have no log retention",
        ),
        (
            "taskContainerDefaults.startupHook",
            cfg.task_container_defaults.startup_hook is not None,
            versions.STARTUP_HOOK_SINCE,
            "older masters have no startup hook",
        ),
        (
            "taskContainerDefaults.logPolicies",
            cfg.task_container_defaults.log_policies is not None,
            versions.LOG_POLICIES_SINCE,
            "older masters have no log policies",
        ),
        *(
            (
                f"taskContainerDefaults.logPolicies[{i}].name",
                policy.name is not None,
                versions.LOG_POLICY_NAME_SINCE,
                "older masters have unnamed log policies",
            )
            for i, policy in enumerate(cfg.task_container_defaults.log_policies or [])
        ),
    ):
        if is_set and version < since:
            add(key, f"needs master.version {'.'.join(map(str, since))} or newer ({why})")


def master_problems(cfg: StackConfig, add: Add) -> None:
    """Where the master runs, how it is reached, what it pulls with, what overrides may set."""
    if cfg.master.node_pool:
        pool = cfg.master_node_pool
        if pool is None:
            add("master.nodePool", f"no node pool named {cfg.master.node_pool!r}")
        elif not _system_capable(pool):
            add(
                "master.nodePool",
                f"node pool {pool.name!r} is tainted, has GPUs or is spot: the master and database "
                "need an untainted on-demand CPU pool" + arm_note([pool]),
            )
    elif cfg.master_node_pool is None and any(not p.all_taints for p in cfg.node_pools):
        add(
            "master.nodePool",
            "no untainted on-demand CPU node pool for the master and database: add one "
            "(spot: false) or name one here",
        )
    if cfg.master.service.type != "ClusterIP" and not isinstance(cfg.tls, MasterTls):
        add(
            "master.service.type",
            f"{cfg.master.service.type} would expose the master without TLS: allowed only with "
            "tls.mode master (with tls.mode ingress the Gateway is the way in)",
        )
    if cfg.master.service.type == "NodePort" and isinstance(cfg.tls, ExposedTls) and cfg.tls.source_ranges:
        add(
            "master.service.type",
            "NodePort cannot restrict clients to tls.sourceRanges (any address reaching a node "
            "reaches the master): use LoadBalancer",
        )
    if cfg.master.proxy and not (cfg.master.proxy.http_proxy or cfg.master.proxy.https_proxy):
        add("master.proxy", "set httpProxy, httpsProxy or both")
    _secret_name_problems(cfg, add)
    if cfg.registry_credentials and constants.REGISTRY_SECRET in cfg.image_pull_secrets:
        add(
            "imagePullSecrets",
            f"{constants.REGISTRY_SECRET!r} is the Secret made from registryCredentials: "
            "name another Secret, or leave it out",
        )
    _override_problems(cfg, add)


def _project_secrets() -> dict[str, str]:
    """Secrets the project creates in the master's namespace, with what they hold."""
    return {
        constants.DB_SECRET_NAME: "the in-cluster database's password",
        constants.MASTER_CONFIG_SECRET: "the master's configuration",
        constants.WORKSPACES_PASSWORD_SECRET: "the admin password of the workspace Job",
    }


def _secret_name_problems(cfg: StackConfig, add: Add) -> None:
    """Secrets the user names must not be ones the project creates (and so replaces)."""
    named = [(f"imagePullSecrets[{i}]", name) for i, name in enumerate(cfg.image_pull_secrets)]
    if cfg.master.ca_bundle_secret:
        named.append(("master.caBundleSecret", cfg.master.ca_bundle_secret))
    if isinstance(cfg.tls, ExposedTls) and not cfg.tls.issued:
        named.append(("tls.certificate.secretName", cfg.tls.secret_name))
    owned = _project_secrets()
    for path, name in named:
        if name in owned:
            add(path, f"{name!r} is a Secret the project creates ({owned[name]}); name a Secret of your own")


def _override_problems(cfg: StackConfig, add: Add) -> None:
    overrides, version = cfg.master.config_overrides, cfg.master.version
    open_source = cfg.master.image is None
    for path, message in config_overrides.problems(overrides, version, open_source_image=open_source):
        add(f"master.configOverrides.{path}" if path else "master.configOverrides", message)


def pull_secret_problems(cfg: StackConfig, add: Add) -> None:
    """Each imagePullSecrets name once."""
    # The API server warns of a pod naming a pull Secret twice, and a merge (apply) may drop
    # one (kubernetes pkg/api/pod/warnings.go, "duplicate imagePullSecrets (#91629, #58477)",
    # v1.34.0, read 2026-11): every pod of the stack would carry the repeat.
    first: dict[str, int] = {}
    for i, name in enumerate(cfg.image_pull_secrets):
        j = first.setdefault(name, i)
        if j != i:
            add(f"imagePullSecrets[{i}]", f"{name!r} is already imagePullSecrets[{j}]; name each Secret once")
