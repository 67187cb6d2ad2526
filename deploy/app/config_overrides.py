"""`master.configOverrides`: master.yaml keys merged into the generated file, last.

The escape hatch for master settings the stack config has no key for (OIDC, SAML, SCIM,
authorization, OpenTelemetry, task bind mounts, ...). Keys are master.yaml's own, snake_case
as the master reads them. Pure functions:

- `merge(config, overrides)`: the generated master.yaml with the overrides deep-merged in;
- `problems(overrides, version)`: what is wrong with the overrides for the configured
  master version, as (path inside configOverrides, message) pairs: a key the project sets
  itself (`OWNED`), a task default the project's pools hide, or anything
  `master_yaml_schema.check` finds (an unknown key, a key of another release, a wrong
  type, a null).

What neither catches: the value rules of the master's own `Validate` methods on keys left
to overrides (a log level, an OIDC or SAML setup, a cron schedule): the master refuses to
start on those; `master_yaml_schema.MASTER_RULES` covers only keys the project writes.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Iterator
from typing import Any, NamedTuple

from deploy.app import master_yaml_schema
from deploy.config.errors import format_path, kind_of


class Owned(NamedTuple):
    """A master.yaml key the project writes: where its value comes from, and why an
    override may not replace it."""

    source: str  # the stack key (or the project's own state) the value comes from
    reason: str


# Why a key a typed stack key sets is owned: one place per setting, checked there.
_TYPED = "the stack config's own key for it (checked there): set it there"
_TASK_POD = (
    "the project adds what every task pod needs (image pull Secrets, CA bundle, proxy, the task "
    "service account) and each pool's spec adds its node pinning and queue"
)

# Key paths (dotted, from the top of master.yaml) overrides may not set, nor any key below
# them. A map given for a parent (`security`, `task_container_defaults`) is merged key by
# key, so it is refused only where it holds an owned key.
#
# Owned: what the deployment around the master depends on (the database, the port, TLS,
# the resource manager and pools the namespaces, RBAC, queues and pinning are built for,
# the checkpoint bucket and its identity), the secrets the project keeps (passwords, the
# webhook signing key), and every key a typed stack key sets (one place per setting: an
# override would silently win over the typed key).
#
# Left to overrides: `log.color` (written as a fixed default; harmless), the other
# `security` keys (authz, ssh, token), the other `telemetry` keys (otel_*, segment_*),
# `oidc`/`saml`/`scim`/`det_cloud`, `integrations`, `__internal`, `ui_customization`, `cache`,
# `reserved_ports`, `feature_switches`, `enable_cors`, `root` and `config_file` (the image's own
# layout: changing them breaks the master, not what the project builds around it), and the
# task_container_defaults keys no stack key sets (work_dir, bind_mounts, capabilities, ...;
# see `problems` for the versions that ignore them). Some hold secrets (oidc.client_secret,
# scim.auth, task_container_defaults.registry_auth, __internal.external_sessions.jwt_key):
# they end up in the master's config Secret like the project's own.
OWNED: dict[str, Owned] = {
    "db": Owned(
        "database.*",
        "the connection (host, port, user, name, TLS) and its password come from the database the "
        "project creates or is given",
    ),
    "security.initial_user_password": Owned(
        "master.initialUserPassword", "a secret, generated and kept in the stack's state when not set"
    ),
    "security.tls": Owned(
        "tls.mode master",
        "the certificate the master's pod mounts; the Service, probes and Gateway route expect HTTPS "
        "from the master exactly when tls.mode is master",
    ),
    "security.default_task": Owned("master.defaultTaskUser", _TYPED),
    "webhooks.signing_key": Owned(
        "master.webhooks.signingKey",
        "a secret, generated once and kept in the stack's state when not set, so that webhook "
        "signatures survive restarts",
    ),
    "webhooks.base_url": Owned("master.webhooks.baseUrl", f"{_TYPED} (default: https://<tls.host>)"),
    "port": Owned("the master's container port", "the Service, the probes and tasks reach the master on it"),
    "resource_manager": Owned(
        "namespace, resourcePools, defaultComputePool, defaultAuxPool and slots",
        "the namespaces, RBAC, master Service name, default pools, slot type and slots per pod "
        "the rest of the deployment is built for",
    ),
    "additional_resource_managers": Owned(
        "resourcePools",
        "the project runs one Kubernetes resource manager, in its own cluster: another would need "
        "a kubeconfig, RBAC and namespaces the project does not create",
    ),
    "resource_pools": Owned(
        "resourcePools",
        "each pool's namespace, node pinning, queue and slots per pod match objects the project creates",
    ),
    "checkpoint_storage": Owned(
        "checkpointStorage",
        "the bucket, the platform's storage identity and its credentials are created and granted for it",
    ),
    "cluster_name": Owned("cluster.name", _TYPED),
    "log.level": Owned("master.logLevel", _TYPED),
    "telemetry.enabled": Owned("master.telemetry", _TYPED),
    "observability.enable_prometheus": Owned("master.observability.enablePrometheus", _TYPED),
    "tensorboard_timeout": Owned("master.tensorboardTimeout", _TYPED),
    "notebook_timeout": Owned("master.notebookTimeout", _TYPED),
    "logging": Owned("master.logging", f"{_TYPED} (its Elasticsearch password is a stack secret)"),
    "retention_policy": Owned("master.retention", _TYPED),
    "task_container_defaults.cpu_pod_spec": Owned("taskContainerDefaults.cpuPodSpec", _TASK_POD),
    "task_container_defaults.gpu_pod_spec": Owned("taskContainerDefaults.gpuPodSpec", _TASK_POD),
    "task_container_defaults.checkpoint_gc_pod_spec": Owned(
        "taskContainerDefaults.checkpointGcPodSpec",
        "checkpoint GC runs as the task service account bound to the checkpoint storage, with what "
        "every task pod needs (image pull Secrets, CA bundle, proxy)",
    ),
    "task_container_defaults.kubernetes": Owned(
        "slots.maxSlotsPerPod",
        "the global slots per pod; exactly one of it and resource_manager.max_slots_per_pod is set",
    ),
    # The typed task settings, written at the top and into every pool alike.
    "task_container_defaults.image": Owned("taskContainerDefaults.images", _TYPED),
    "task_container_defaults.force_pull_image": Owned("taskContainerDefaults.forcePullImage", _TYPED),
    "task_container_defaults.environment_variables": Owned("taskContainerDefaults.env", _TYPED),
    "task_container_defaults.shm_size_bytes": Owned("taskContainerDefaults.shmSizeBytes", _TYPED),
    "task_container_defaults.network_mode": Owned("taskContainerDefaults.networkMode", _TYPED),
    "task_container_defaults.dtrain_network_interface": Owned(
        "taskContainerDefaults.dtrainNetworkInterface", _TYPED
    ),
    "task_container_defaults.startup_hook": Owned("taskContainerDefaults.startupHook", _TYPED),
    "task_container_defaults.log_policies": Owned("taskContainerDefaults.logPolicies", _TYPED),
}

# --- merging ---------------------------------------------------------------------------------


def merge(config: dict[str, Any], overrides: dict[str, Any]) -> dict[str, Any]:
    """`config` with `overrides` deep-merged in, as a new dict (neither input is changed,
    and the result shares nothing mutable with them). A map merges into a map key by key;
    anything else (a list, a scalar, null, a map over a non-map) replaces. Keys of `config`
    keep their place; new keys follow, in the overrides' order."""
    merged = copy.deepcopy(config)
    for key, value in overrides.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = merge(merged[key], value)
        else:
            merged[key] = copy.deepcopy(value)
    return merged


# Override keys whose values are secrets by their name (oidc.client_secret, scim.auth.password,
# ...): previews show them as placeholders, like the project's own secrets.
_SECRET_NAME = re.compile(r"password|secret|token|(^|_)key$", re.IGNORECASE)


def redacted(overrides: Any, placeholder: str) -> Any:
    """`overrides` with the value of every secret-named key replaced by `placeholder`."""
    if isinstance(overrides, dict):
        return {
            k: placeholder
            if _SECRET_NAME.search(str(k)) and not isinstance(v, dict)
            else redacted(v, placeholder)
            for k, v in overrides.items()
        }
    if isinstance(overrides, list):
        return [redacted(item, placeholder) for item in overrides]
    return overrides


def apply(config: dict[str, Any], overrides: dict[str, Any]) -> dict[str, Any]:
    """master.yaml with the overrides merged in: at the top, and their task_container_defaults
    into every resource pool's too. Each pool the project writes has its own section, which
    replaces the top one before 0.32 and brings the master's defaults (preemption_timeout)
    over it after: a task default set only at the top would reach no task."""
    merged = merge(config, overrides)
    task_defaults = {
        k: v
        for key, section in overrides.items()
        if str(key).lower() == "task_container_defaults" and isinstance(section, dict)
        for k, v in section.items()
    }
    if task_defaults:
        for pool in merged.get("resource_pools") or []:
            pool["task_container_defaults"] = merge(pool.get("task_container_defaults") or {}, task_defaults)
    return merged


# --- problems --------------------------------------------------------------------------------


def _owned(key_path: str) -> Owned | None:
    # Go's JSON decoding (and viper) read keys case-insensitively: `Port` is `port`.
    return _OWNED_LOWER.get(key_path.lower())


_OWNED_LOWER = {path.lower(): owned for path, owned in OWNED.items()}
# Every key above an owned key: a map given there is searched for owned keys.
_OWNED_PARENTS = {
    ".".join(parts[:i]) for parts in (path.lower().split(".") for path in OWNED) for i in range(1, len(parts))
}


def _owned_keys(overrides: dict[str, Any]) -> tuple[list[tuple[str, str]], dict[str, Any]]:
    """(problems of owned keys, the overrides without them)."""
    found: list[tuple[str, str]] = []

    def walk(value: dict[str, Any], prefix: str) -> dict[str, Any]:
        kept: dict[str, Any] = {}
        for key, item in value.items():
            path = f"{prefix}.{key}" if prefix else str(key)
            owned = _owned(path)
            if owned:
                found.append((path, f"set by the project from {owned.source}: {owned.reason}"))
            elif path.lower() in _OWNED_PARENTS and isinstance(item, dict):
                kept[key] = walk(item, path)
            else:
                kept[key] = item
        return kept

    return found, walk(overrides, "")


def _paths(value: Any, parts: tuple[Any, ...] = ()) -> Iterator[str]:
    """The key path of every node of a document, as master_yaml_schema writes them."""
    yield format_path(parts)
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _paths(item, (*parts, key))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from _paths(item, (*parts, i))


def _split(line: str, paths: list[str]) -> tuple[str, str]:
    """A `"<key.path>: <problem>"` line of master_yaml_schema.check as (path, problem). The
    path is the longest of the document's own paths the line starts with (a key may hold
    ': '), extended up to the next ': ' where check names a key the document lacks (a
    union's `type`)."""
    if line.startswith("(top level): "):
        return "", line.removeprefix("(top level): ")
    start = 0
    for path in paths:  # longest first
        if path and line.startswith(path) and line[len(path) : len(path) + 1] in (":", ".", "["):
            start = len(path)
            break
    end = line.index(": ", start)
    return line[:end], line[end + 2 :]


def problems(overrides: Any, version: str) -> list[tuple[str, str]]:
    """What is wrong with `overrides` (master.configOverrides) for Determined `version`, as
    (path inside configOverrides, message); empty: the master takes them as written.

    Owned keys are reported as such (and not checked further). The rest is
    checked by master_yaml_schema.check as a partial document: key paths, version ranges and
    types, which need nothing the generated file provides (check requires no key but a
    union's `type`, and every union the project writes is owned). The master's value rules
    (`rules=`) read the whole document; those it has are about owned keys, so they are left
    to the check of the merged file. A version the key data does not describe is one problem
    (nothing can be vouched for). Raises ValueError for a version that is not X.Y.Z
    (master.version's own validation refuses it)."""
    if not isinstance(overrides, dict):
        return [("", f"must be a mapping of master.yaml keys, got {kind_of(overrides)}")]
    v = master_yaml_schema.parse_version(version)
    found, rest = _owned_keys(overrides)
    oldest, newest = master_yaml_schema.known_range()
    if not oldest <= v <= newest:
        if not rest:
            return found
        # The master refuses a key it does not know, and its Deployment is Recreate: an
        # unchecked override could leave the cluster without a master.
        known = f"{master_yaml_schema.format_version(oldest)} to {master_yaml_schema.format_version(newest)}"
        return [
            *found,
            (
                "",
                f"cannot be checked for Determined {master_yaml_schema.format_version(v)}: the project "
                f"knows master.yaml's keys for {known} only",
            ),
        ]
    if not rest:
        return found
    paths = sorted(set(_paths(rest)), key=len, reverse=True)
    found += [_split(line, paths) for line in master_yaml_schema.check(rest, v, rules=False)]
    return found
