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
start on those; `master_yaml_schema.MASTER_RULES` covers only keys the project writes, and
`security.authz`, `security.ssh` and `security.token` are checked here (`_authz_problems`,
`_security_problems`).
"""

from __future__ import annotations

import copy
import re
from collections.abc import Iterator
from typing import Any, NamedTuple

from components.config import master_yaml_schema
from components.config.errors import format_path, kind_of


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


# --- security.authz, as the master's Validate methods check it --------------------------------

# `security.authz` (AuthZConfig) is left to overrides; the master checks it at start-up, and
# stops on a problem. Source: determined-ai/determined master/internal/config/authz_config.go,
# AuthZConfig.Validate and AssignWorkspaceCreatorConfig.Validate, read at tags 0.26.0, 0.31.0,
# 0.32.0, 0.37.0 and v0.38.1 (2026-11):
# - `type` and `fallback` must be a registered authz type: "basic" always; "rbac" is
#   registered by the open-source master from 0.32.0 (the authz_rbac.go files calling
#   AuthZProvider.Register("rbac", ...): none at 0.31.0, 13 at 0.32.0), before that only by
#   enterprise builds;
# - a `type` other than basic calls license.RequireLicense("RBAC"), which panics without a
#   license key built into the binary (master/internal/license/license.go) up to 0.37.x and
#   is a no-op from 0.38.0 ("chore: fix license check", #10211, 2024-11-19). The open-source
#   image (determinedai/determined-master) carries no key: only an enterprise build, named by
#   master.image, runs rbac before 0.38.0;
# - `workspace_creator_assign_role.role_id` must be positive ("must be >= 0 got 0" says the
#   message, but the test is RoleID <= 0), whether or not the assignment is enabled.
AUTHZ_BASIC = "basic"
AUTHZ_RBAC = "rbac"
RBAC_IN_OPEN_SOURCE = (0, 32, 0)
RBAC_WITHOUT_LICENSE = (0, 38, 0)


def _key(mapping: Any, name: str) -> tuple[str, Any] | None:
    """(the key as written, its value) of `name` in `mapping`, matched as the master's JSON
    decoding matches keys (an exact match first, else any case); None when absent."""
    if not isinstance(mapping, dict):
        return None
    if name in mapping:
        return name, mapping[name]
    return next(((str(k), v) for k, v in mapping.items() if str(k).lower() == name), None)


def _authz_problems(
    overrides: dict[str, Any], version: master_yaml_schema.Version, open_source_image: bool
) -> list[tuple[str, str]]:
    found: list[tuple[str, str]] = []
    security = _key(overrides, "security")
    authz = _key(security[1], "authz") if security else None
    if authz is None:
        return found
    at = f"{security[0]}.{authz[0]}"
    shown_version = master_yaml_schema.format_version(version)
    known = [AUTHZ_BASIC]
    if not open_source_image or version >= RBAC_IN_OPEN_SOURCE:
        known.append(AUTHZ_RBAC)
    for name in ("type", "fallback"):
        entry = _key(authz[1], name)
        if entry is None or not isinstance(entry[1], str) or entry[1] in known:
            continue
        value = entry[1]
        since = master_yaml_schema.format_version(RBAC_IN_OPEN_SOURCE)
        why = f"the open-source master has rbac from {since}" if value == AUTHZ_RBAC else "there is no other"
        found.append(
            (
                f"{at}.{entry[0]}",
                f"{value!r} is not an authz type Determined {shown_version} knows (it knows "
                f"{', '.join(known)}; {why}): {master_yaml_schema.REFUSED}",
            )
        )
    kind = _key(authz[1], "type")
    if (
        kind is not None
        and kind[1] == AUTHZ_RBAC
        and AUTHZ_RBAC in known
        and open_source_image
        and version < RBAC_WITHOUT_LICENSE
    ):
        found.append(
            (
                f"{at}.{kind[0]}",
                f"rbac needs an enterprise license before Determined "
                f"{master_yaml_schema.format_version(RBAC_WITHOUT_LICENSE)}: the open-source master "
                f"{shown_version} stops at start-up without one; use 0.38.0 or later, or name your "
                "enterprise build in master.image",
            )
        )
    assign = _key(authz[1], "workspace_creator_assign_role")
    role = _key(assign[1], "role_id") if assign else None
    if role is not None and isinstance(role[1], int) and not isinstance(role[1], bool) and role[1] <= 0:
        found.append(
            (
                f"{at}.{assign[0]}.{role[0]}",
                f"{role[1]} is not a role ID: the master takes positive ones only (2, WorkspaceAdmin, by "
                f"default): {master_yaml_schema.REFUSED}",
            )
        )
    return found


# --- security.ssh and security.token, as the master's Validate methods check them -----------

# Source: determined-ai/determined master/internal/config/config.go, SSHConfig.Validate,
# TokenConfig.Validate, DefaultConfig and Config.Resolve, read at tags 0.26.0, 0.37.0, v0.38.0
# and v0.38.1 (2026-11-25). The master refuses to start on any of these:
# - ssh: before 0.38.0 `rsa_key_size` (default 1024) must be 1 to 16384; from 0.38.0
#   `key_type` (default ED25519) must be RSA, ECDSA or ED25519, exactly so, and with RSA
#   `rsa_key_size` (no default: 0) must be 1 to 16384;
# - token (0.38.0+): `max_lifespan_days` and `default_lifespan_days` (default 30 each; -1 is
#   read as infinite, 106751 days, before the check) must be 0 or more, at most 106751, and
#   the default at most the max.
SSH_KEY_TYPES = ("RSA", "ECDSA", "ED25519")
SSH_KEY_TYPE_SINCE = (0, 38, 0)
TOKEN_SINCE = (0, 38, 0)
SSH_DEFAULT_KEY_TYPE = "ED25519"
RSA_KEY_SIZE_BEFORE_KEY_TYPE = 1024
RSA_KEY_SIZE_MAX = 16384
TOKEN_DEFAULT_LIFESPAN_DAYS = 30
TOKEN_INFINITE = -1
TOKEN_MAX_LIFESPAN_DAYS = 106751


def _int(entry: tuple[str, Any] | None) -> int | None:
    if entry is None or not isinstance(entry[1], int) or isinstance(entry[1], bool):
        return None
    return entry[1]


def _ssh_problems(security: tuple[str, Any], version: master_yaml_schema.Version) -> list[tuple[str, str]]:
    ssh = _key(security[1], "ssh")
    if ssh is None or not isinstance(ssh[1], dict):
        return []
    at = f"{security[0]}.{ssh[0]}"
    found = []
    size_entry = _key(ssh[1], "rsa_key_size")
    size = _int(size_entry)
    if version >= SSH_KEY_TYPE_SINCE:
        kind_entry = _key(ssh[1], "key_type")
        kind = kind_entry[1] if kind_entry else SSH_DEFAULT_KEY_TYPE
        if not isinstance(kind, str):
            return found
        if kind not in SSH_KEY_TYPES:
            found.append(
                (
                    f"{at}.{kind_entry[0]}",
                    f"{kind!r} is not a key type the master knows: one of {', '.join(SSH_KEY_TYPES)} "
                    f"(upper case): {master_yaml_schema.REFUSED}",
                )
            )
            return found
        if kind != "RSA":
            return found
        if size_entry is None:
            found.append(
                (
                    f"{at}.rsa_key_size",
                    f"required with key_type RSA (Determined {master_yaml_schema.format_version(version)} "
                    f"has no default: 0): 1 to {RSA_KEY_SIZE_MAX} bits, e.g. 4096: "
                    f"{master_yaml_schema.REFUSED}",
                )
            )
            return found
    elif size_entry is None:
        return found
    if size is not None and not 1 <= size <= RSA_KEY_SIZE_MAX:
        found.append(
            (
                f"{at}.{size_entry[0]}",
                f"{size} is not an RSA key size the master takes: 1 to {RSA_KEY_SIZE_MAX} bits: "
                f"{master_yaml_schema.REFUSED}",
            )
        )
    return found


def _token_problems(security: tuple[str, Any]) -> list[tuple[str, str]]:
    token = _key(security[1], "token")
    if token is None or not isinstance(token[1], dict):
        return []
    at = f"{security[0]}.{token[0]}"
    found = []
    days: dict[str, int] = {}
    for name in ("max_lifespan_days", "default_lifespan_days"):
        entry = _key(token[1], name)
        value = _int(entry)
        if entry is not None and value is None:
            return found  # a wrong type: the schema check reports it
        value = TOKEN_DEFAULT_LIFESPAN_DAYS if value is None else value
        value = TOKEN_MAX_LIFESPAN_DAYS if value == TOKEN_INFINITE else value
        if not 0 <= value <= TOKEN_MAX_LIFESPAN_DAYS:
            found.append(
                (
                    f"{at}.{entry[0]}",
                    f"{entry[1]} days: the master takes 0 to {TOKEN_MAX_LIFESPAN_DAYS} (Go's longest "
                    f"duration), or -1 for that: {master_yaml_schema.REFUSED}",
                )
            )
        days[name] = value
    if not found and days["default_lifespan_days"] > days["max_lifespan_days"]:
        shown_days = {k: "-1 (infinite)" if v == TOKEN_MAX_LIFESPAN_DAYS else f"{v}" for k, v in days.items()}
        found.append(
            (
                at,
                f"default_lifespan_days {shown_days['default_lifespan_days']} is above max_lifespan_days "
                f"{shown_days['max_lifespan_days']} (each 30 when not set): the default token lifespan "
                f"must be at most the max: {master_yaml_schema.REFUSED}",
            )
        )
    return found


def _security_problems(
    overrides: dict[str, Any], version: master_yaml_schema.Version
) -> list[tuple[str, str]]:
    security = _key(overrides, "security")
    if security is None or not isinstance(security[1], dict):
        return []
    found = _ssh_problems(security, version)
    if version >= TOKEN_SINCE:  # before, the schema check refuses the key
        found += _token_problems(security)
    return found


def problems(overrides: Any, version: str, open_source_image: bool = True) -> list[tuple[str, str]]:
    """What is wrong with `overrides` (master.configOverrides) for Determined `version`, as
    (path inside configOverrides, message); empty: the master takes them as written.

    Owned keys are reported as such (and not checked further). The rest is
    checked by master_yaml_schema.check as a partial document: key paths, version ranges and
    types, which need nothing the generated file provides (check requires no key but a
    union's `type`, and every union the project writes is owned). The master's value rules
    (`rules=`) read the whole document; those it has are about owned keys, so they are left
    to the check of the merged file. A version the key data does not describe is one problem
    (nothing can be vouched for). `security.authz` is checked as the master's Validate
    checks it (`_authz_problems`); `open_source_image`: the master runs the open-source image
    (no master.image), which knows no enterprise license. Raises ValueError for a version
    that is not X.Y.Z (master.version's own validation refuses it)."""
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
    found += _authz_problems(rest, v, open_source_image)
    found += _security_problems(rest, v)
    return found
