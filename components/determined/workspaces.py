"""Workspaces bound to the resource pools' namespaces (Determined 0.35+).

From 0.35.0 the master no longer reads `resource_pools[].kubernetes_namespace`: a task runs
in `resource_manager.default_namespace` unless its workspace is bound to a namespace, and
that binding lives in the master's database, set through its REST API. A Kubernetes Job
runs components/determined/data/bind_workspaces.py (standard library only) against the master: per
resource pool, a workspace (the pool's `workspace`, else its name) bound to the pool's
namespace, the pool bound to that workspace, and the pool made the workspace's default
compute pool (GPU node pool) or default aux pool (CPU node pool). Then it moves every other
workspace bound to a namespace the stack does not have back to the default task namespace,
and removes pool bindings the config does not make (see the script's docstring).

What was bound before is read from the master itself, not remembered: the master's
database is what it starts from, so the Job repairs whatever it finds there (a binding left
by a removed pool, by a failed run, or made by hand to a namespace the stack does not
manage) on the first `up` after an upgrade too, with no state of its own to drift and no
Kubernetes API token.

Pure builders only; whoever registers them orders the Job after the master (with its Roles)
and the namespaces. Pulumi deletes removed resources only after every creation of the
update has succeeded (the Job awaited), so a removed namespace and its Role outlive the Job
that moves its workspaces away. The Job's name carries a hash of the mapping, so a changed
mapping runs a new Job and an unchanged one runs nothing.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from components import constants, kube, versions
from components.config.tls import MasterTls
from components.determined import master, system_pods
from components.determined.args import DeterminedArgs

COMPONENT = constants.WORKSPACES_COMPONENT

PYTHON_IMAGE = versions.PYTHON_IMAGE

SCRIPT_FILE = Path(__file__).resolve().parent / "data" / "bind_workspaces.py"
SCRIPT_NAME = "bind_workspaces.py"
SCRIPT_CONFIG_MAP = "determined-bind-workspaces"
SCRIPT_DIR = "/opt/bind-workspaces"
PASSWORD_SECRET = constants.WORKSPACES_PASSWORD_SECRET
PASSWORD_KEY = "password"
# The password reaches the script as a file (a Secret volume), never through the environment.
PASSWORD_DIR = "/etc/bind-workspaces"
PASSWORD_FILE = "password"
JOB_PREFIX = "determined-bind-workspaces"
ADMIN_USER = "admin"
HASH_ANNOTATION = "determined.ai/workspace-mapping-hash"
# What the script waits for the master (and a master still learning a new pool): as long
# as the master's own startup probe allows for migrations.
WAIT_SECONDS = constants.MASTER_STARTUP_SECONDS
# The whole Job, every retry included; well past the script's own waits.
JOB_DEADLINE_SECONDS = 3 * constants.MASTER_STARTUP_SECONDS
JOB_BACKOFF_LIMIT = 6
RUN_AS = 65534  # nobody in the Debian-based python image
RESOURCES = {
    "requests": {"cpu": "10m", "memory": "32Mi"},
    "limits": {"cpu": "200m", "memory": "128Mi"},
}


def needed(cfg: DeterminedArgs) -> bool:
    """Whether the master binds namespaces to workspaces (0.35+), so the Job must run."""
    return cfg.master.version_tuple >= versions.WORKSPACE_NAMESPACES_SINCE


def mapping(cfg: DeterminedArgs) -> list[dict[str, str]]:
    """One entry per resource pool, in the order the pools are configured (the script makes
    the first compute and the first aux pool of a workspace its defaults)."""
    return [
        {
            "workspace": rp.workspace_name,
            "namespace": rp.namespace_name,
            "pool": rp.name,
            "role": cfg.pool_role(rp),
        }
        for rp in cfg.resource_pools
    ]


def canonical_json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


def mapping_hash(entries: list[dict[str, str]]) -> str:
    """sha256 of the mapping's canonical JSON, first 10 hex digits."""
    return hashlib.sha256(canonical_json(entries).encode()).hexdigest()[:10]


def script_text() -> str:
    return SCRIPT_FILE.read_text(encoding="utf-8")


def script_config_map(cfg: DeterminedArgs) -> dict[str, Any]:
    """The script, in a ConfigMap in the master's namespace."""
    meta = kube.metadata(SCRIPT_CONFIG_MAP, COMPONENT, cfg.namespace)
    return kube.manifest("v1", "ConfigMap", meta, data={SCRIPT_NAME: script_text()})


def password_secret(cfg: DeterminedArgs, password: Any) -> dict[str, Any]:
    """The admin password the script logs in with (`password` may be a Pulumi Output)."""
    meta = kube.metadata(PASSWORD_SECRET, COMPONENT, cfg.namespace)
    return kube.manifest("v1", "Secret", meta, type="Opaque", stringData={PASSWORD_KEY: password})


def namespaces(cfg: DeterminedArgs) -> dict[str, Any]:
    """The namespaces the script reconciles bindings against: the master's default one and
    every namespace the stack gives the master a Role in."""
    return {"default": cfg.default_task_namespace, "tasks": list(cfg.task_namespaces)}


def job_name(hash_: str, cfg: DeterminedArgs) -> str:
    """Named by the mapping's hash and that of the script with its namespaces: any of them
    changed, a new Job runs."""
    run = script_text() + canonical_json(namespaces(cfg))
    return f"{JOB_PREFIX}-{hash_}-{hashlib.sha256(run.encode()).hexdigest()[:6]}"


def awaited(cfg: DeterminedArgs, previous: Mapping[str, Any] | None) -> bool:
    """Whether `up` waits for the Job to finish (`previous`: the stack's outputs from its
    last update, {} when never deployed, None when unknown). It must on every update that
    may remove a namespace: Pulumi deletes removed resources once the update's creations
    succeeded, so an awaited Job has moved the namespace's workspaces away by then. Only a
    stack's first update whose master waits for its certificate (tls.mode master with
    cert-manager: the certificate needs DNS that this `up` only makes possible) does not
    wait; it has nothing to remove."""
    return not (master.waits_for_certificate(cfg) and previous == {})


def job(
    cfg: DeterminedArgs,
    password_secret_name: str,
    password_secret_key: str,
    mapping_hash: str,
    previous: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The Job that runs the script for `mapping(cfg)`, named after `mapping_hash` (its
    hash): a changed mapping is a new Job, an unchanged one is left as it ran. `previous`:
    see awaited()."""
    env = [
        {"name": "DET_MASTER", "value": master.internal_url(cfg)},
        {"name": "DET_USER", "value": ADMIN_USER},
        {"name": "DET_PASSWORD_FILE", "value": f"{PASSWORD_DIR}/{PASSWORD_FILE}"},
        {"name": "DET_MAPPING", "value": canonical_json(mapping(cfg))},
        {"name": "DET_DEFAULT_NAMESPACE", "value": namespaces(cfg)["default"]},
        {"name": "DET_TASK_NAMESPACES", "value": canonical_json(namespaces(cfg)["tasks"])},
        {"name": "DET_TIMEOUT_SECONDS", "value": str(WAIT_SECONDS)},
    ]
    if isinstance(cfg.tls, MasterTls):
        # The master ends TLS itself: trust its chain and check it against its host, as
        # tasks do (the script's docstring): no other CA (not master.caBundle, which tasks'
        # calls to the master do not use either).
        env += [
            {"name": "DET_MASTER_CERT_FILE", "value": f"{constants.MASTER_TLS_DIR}/tls.crt"},
            {"name": "DET_MASTER_CERT_NAME", "value": cfg.tls.host},
        ]
    container = {
        "name": COMPONENT,
        "image": PYTHON_IMAGE,
        "imagePullPolicy": "IfNotPresent",
        # -I: no PYTHON* variables, no user site; -B: writes nothing (read-only root).
        "command": ["python3", "-I", "-B", f"{SCRIPT_DIR}/{SCRIPT_NAME}"],
        "env": env,
        "resources": RESOURCES,
        "volumeMounts": [
            {"name": "script", "mountPath": SCRIPT_DIR, "readOnly": True},
            {"name": "password", "mountPath": PASSWORD_DIR, "readOnly": True},
        ],
        "securityContext": kube.restricted_container(RUN_AS),
    }
    pod_spec = {
        "restartPolicy": "Never",
        "priorityClassName": constants.SYSTEM_PRIORITY_CLASS,
        **system_pods.pod_fields(cfg),
        # It talks to the master only: no Kubernetes API token, no service links.
        "automountServiceAccountToken": False,
        "enableServiceLinks": False,
        "securityContext": kube.restricted_pod(RUN_AS),
        "containers": [container],
        "volumes": [
            {
                "name": "script",
                "configMap": {"name": SCRIPT_CONFIG_MAP, "defaultMode": 0o444},
            },
            {
                "name": "password",
                "secret": {
                    "secretName": password_secret_name,
                    "items": [{"key": password_secret_key, "path": PASSWORD_FILE}],
                    "defaultMode": 0o444,
                },
            },
        ],
    }
    if isinstance(cfg.tls, MasterTls):
        pod_spec["volumes"].append(
            {
                "name": "tls",
                "secret": {
                    "secretName": cfg.tls.secret_name,
                    "items": [{"key": "tls.crt", "path": "tls.crt"}],
                },
            }
        )
        container["volumeMounts"].append(
            {"name": "tls", "mountPath": constants.MASTER_TLS_DIR, "readOnly": True}
        )
    annotations = {HASH_ANNOTATION: mapping_hash}
    meta = kube.metadata(job_name(mapping_hash, cfg), COMPONENT, cfg.namespace)
    # A Job that failed (a master still starting, a changed password) is run again by the
    # next `up` instead of blocking it; on a first update whose master waits for its
    # certificate, `up` does not wait for the Job either (it retries until the master answers).
    meta["annotations"] = {**annotations, "pulumi.com/replaceUnready": "true"}
    if not awaited(cfg, previous):
        meta["annotations"][master.SKIP_AWAIT] = "true"
    spec = {
        "backoffLimit": JOB_BACKOFF_LIMIT,
        "activeDeadlineSeconds": JOB_DEADLINE_SECONDS,
        "template": {
            "metadata": {"labels": kube.labels(COMPONENT), "annotations": dict(annotations)},
            "spec": pod_spec,
        },
    }
    return kube.manifest("batch/v1", "Job", meta, spec=spec)
