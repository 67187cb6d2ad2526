"""Policies: the Determined master's configuration: every resource pool's namespace exists
and is bound to the pool, master.yaml holds only keys its master version accepts, and idle
notebooks are stopped."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from components import versions
from components.config import master_yaml_schema as schema
from policies import facts
from policies.rule import Context, Report, Rule

# The Job that binds pools' namespaces to workspaces (0.35+; components/determined/workspaces.py).
BIND_WORKSPACES = "bind-workspaces"
MAPPING_ENV = "DET_MAPPING"
# Problems shown per master.yaml, the rest counted.
MAX_PROBLEMS = 10

Version = tuple[int, int, int]


def _version(text: str | None) -> Version | None:
    if not isinstance(text, str):
        return None
    try:
        return versions.parse_version(text.strip().removeprefix("v"))
    except ValueError:
        return None


# --- pool-namespaces-bound -------------------------------------------------------------------


def _binding_jobs(resources: Sequence[Any]) -> list[Any]:
    return [
        r
        for r in facts.of_type(resources, facts.JOB)
        if facts.labels(r).get("app.kubernetes.io/name") == BIND_WORKSPACES
    ]


def _mapping(job: Any) -> tuple[list[Mapping[str, Any]], str | None]:
    """The Job's DET_MAPPING entries, or a problem with it."""
    for container in facts.containers(facts.pod_spec_of(job)):
        for env in facts.items(container.get("env")):
            if facts.get(env, "name") != MAPPING_ENV:
                continue
            text = facts.get(env, "value")
            try:
                loaded = json.loads(text) if isinstance(text, str) else None
            except ValueError:
                loaded = None
            if not isinstance(loaded, list):
                return [], f"its {MAPPING_ENV} is not a JSON list"
            return [e for e in loaded if isinstance(e, Mapping)], None
    return [], f"it has no {MAPPING_ENV}"


def pool_namespaces_bound(context: Context, resources: Sequence[Any], report: Report) -> None:
    masters = facts.master_configs(resources)
    if not masters:
        return
    namespaces = {facts.metadata(r).get("name") for r in facts.of_type(resources, facts.NAMESPACE)}
    for master in masters:
        pools = [p for p in facts.items(master.config.get("resource_pools")) if isinstance(p, Mapping)]
        version = _version(master.version)
        if version is None:
            # No version to go by: the pools' own keys tell which way they are bound.
            workspaces = not any("kubernetes_namespace" in p for p in pools)
        else:
            workspaces = version >= versions.WORKSPACE_NAMESPACES_SINCE
        if workspaces:
            _check_workspace_bindings(master, pools, namespaces, _binding_jobs(resources), report)
        else:
            for pool in pools:
                name = facts.get(pool, "pool_name", default="?")
                where = f"master.yaml resource_pools[{name}].kubernetes_namespace"
                namespace = facts.get(pool, "kubernetes_namespace")
                if not namespace:
                    report(
                        f"resource pool {name!r}: {where} is not set, so its tasks run in the master's "
                        "namespace",
                        master.resource.urn,
                    )
                elif namespace not in namespaces:
                    report(
                        f"resource pool {name!r}: namespace {namespace!r} ({where}) is not a Namespace the "
                        "stack creates",
                        master.resource.urn,
                    )


def _check_workspace_bindings(
    master: facts.MasterConfig,
    pools: list[Mapping[str, Any]],
    namespaces: set[Any],
    jobs: list[Any],
    report: Report,
) -> None:
    version = master.version or "0.35+"
    if not jobs:
        for pool in pools:
            name = facts.get(pool, "pool_name", default="?")
            report(
                f"resource pool {name!r} (master.yaml resource_pools[{name}]) is bound to no namespace: "
                f"Determined {version} binds namespaces to workspaces, and the stack has no "
                f"workspace-binding Job (label app.kubernetes.io/name={BIND_WORKSPACES})",
                master.resource.urn,
            )
        return
    entries: list[Mapping[str, Any]] = []
    for job in jobs:
        found, problem = _mapping(job)
        if problem:
            report(f"workspace-binding Job {facts.object_name(job)}: {problem}", job.urn)
        entries += found
    for pool in pools:
        name = facts.get(pool, "pool_name", default="?")
        bound = [e for e in entries if e.get("pool") == name]
        if not bound:
            report(
                f"resource pool {name!r} (master.yaml resource_pools[{name}]) is bound to no namespace: the "
                f"workspace-binding Job's {MAPPING_ENV} has no entry for it",
                jobs[0].urn,
            )
            continue
        for entry in bound:
            namespace = entry.get("namespace")
            if not namespace or not entry.get("workspace"):
                report(
                    f"resource pool {name!r}: its {MAPPING_ENV} entry names no namespace or no workspace",
                    jobs[0].urn,
                )
            elif namespace not in namespaces:
                report(
                    f"resource pool {name!r}: namespace {namespace!r} (bound to workspace "
                    f"{entry.get('workspace')!r} by the workspace-binding Job) is not a Namespace the stack "
                    "creates",
                    jobs[0].urn,
                )


# --- master-yaml-known-keys ------------------------------------------------------------------

# Sections of master.yaml whose values are secrets or sit beside them.
_SECRET_SECTIONS = ("db", "security", "webhooks")
_KEY_NAMED = re.compile(r"(^|[_-])(key|string)$", re.I)


def _strings(value: Any, sensitive: bool, path: tuple[str, ...] = ()) -> Iterator[str]:
    """String values of master.yaml that may be secret: everything below a secret section
    and any value whose key says it holds a secret (password, token, *_key, connection_string)."""
    if isinstance(value, Mapping):
        for key, item in value.items():
            name = str(key)
            below = sensitive or facts.secret_named(name) or bool(_KEY_NAMED.search(name))
            if not path and name in _SECRET_SECTIONS:
                below = True
            yield from _strings(item, below, (*path, name))
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item, sensitive, path)
    elif sensitive and isinstance(value, str) and len(value) >= 3:
        yield value


def master_yaml_known_keys(context: Context, resource: Any, report: Report) -> None:
    master = facts.master_config_of(resource)
    if master is None:
        return
    version = _version(master.version)
    if version is None:
        return
    oldest, newest = schema.known_range()
    if not oldest <= version <= newest:
        return  # a release the key data does not describe: nothing to vouch for
    problems = schema.check(dict(master.config), version)
    secrets = set(_strings(master.config, False))
    for problem in problems[:MAX_PROBLEMS]:
        path, _, detail = problem.partition(":")
        detail = " ".join(detail.split())
        if detail and not any(secret in detail for secret in secrets):
            report(f"master.yaml {path}: {detail} (Determined {master.version})")
        else:
            report(f"master.yaml {path}: not accepted by Determined {master.version} (details withheld)")
    if len(problems) > MAX_PROBLEMS:
        report(f"master.yaml: {len(problems) - MAX_PROBLEMS} more key(s) Determined {master.version} refuses")


# --- notebook-idle-timeout -------------------------------------------------------------------


def notebook_idle_timeout(context: Context, resource: Any, report: Report) -> None:
    master = facts.master_config_of(resource)
    if master is None:
        return
    value = master.config.get("notebook_timeout")
    if value is None:
        report("master.yaml notebook_timeout is not set, so idle notebooks keep their GPUs until stopped")
    elif isinstance(value, bool) or not isinstance(value, (int, float)):
        report("master.yaml notebook_timeout is not a number of seconds")
    elif value <= 0:
        report(f"master.yaml notebook_timeout is {value}, so idle notebooks keep their GPUs until stopped")


RULES: list[Rule] = [
    Rule(
        name="pool-namespaces-bound",
        description="Every resource pool of master.yaml runs its tasks in a Namespace the stack creates, "
        "bound to the pool: its kubernetes_namespace (Determined 0.34 and older) or an entry of the "
        "workspace-binding Job (0.35 and newer).",
        remediation="set determined:resourcePools[].namespace (and determined:resourcePools[].workspace on "
        "0.35+) for the pool",
        dev="mandatory",
        prod="mandatory",
        area="determined",
        stack=pool_namespaces_bound,
        why="An unbound pool runs its tasks in the default namespace (the master's up to 0.34, the "
        "default task namespace on 0.35+), outside its quota and permissions.",
    ),
    Rule(
        name="master-yaml-known-keys",
        description="master.yaml holds only keys (and value types) the configured Determined master "
        "version accepts.",
        remediation="fix or drop the key in determined:master.configOverrides, or set "
        "determined:master.version to a release that accepts it",
        dev="mandatory",
        prod="mandatory",
        area="determined",
        resource=master_yaml_known_keys,
        why="The master refuses to start on an unknown key, or silently ignores it.",
    ),
    Rule(
        name="notebook-idle-timeout",
        description="master.yaml sets notebook_timeout above 0, so idle notebooks are stopped.",
        remediation="set determined:master.notebookTimeout to a number of seconds above 0",
        dev="advisory",
        prod="mandatory",
        area="determined",
        resource=notebook_idle_timeout,
        why="An idle notebook otherwise holds its GPU forever.",
    ),
]
