"""The stacks the invariant tests run over: every stack in stacks/ and every fixture stack in
tests/fixtures/stacks/, each planned once per test session (under the plan's mocks, by whichever
worker process needs it first: tests/planning.py).

Fixture stacks use the stack file format of stacks/ and together exercise what the shipped
stacks do not: external databases with TLS, every checkpoint storage type, CPU slots,
several GPU pools, pool pod specs, task container defaults and masters at each version
boundary of master.yaml.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import planning
import yaml
from conftest import ROOT

from components import config as stack_config
from components import versions
from plan import stackfile
from plan.runner import PlanResult

FIXTURES_DIR = ROOT / "tests" / "fixtures" / "stacks"


def _stack_files(directory: Path) -> dict[str, Path]:
    return {
        path.name[len("Pulumi.") : -len(".yaml")]: path for path in sorted(directory.glob("Pulumi.*.yaml"))
    }


SHIPPED = _stack_files(stackfile.STACKS_DIR)
FIXTURES = _stack_files(FIXTURES_DIR)
STACK_FILES = {**SHIPPED, **{f"fixture:{name}": path for name, path in FIXTURES.items()}}
NAMES = sorted(STACK_FILES)


@dataclass(frozen=True)
class Planned:
    """A stack's plan, with its configuration as the user wrote it (keys without the
    `determined:` prefix, decoded) and its master.yaml as a document."""

    name: str
    raw: dict[str, Any]
    result: PlanResult
    master: dict[str, Any]

    @property
    def version(self) -> str:
        return self.raw.get("master", {}).get("version", versions.DEFAULT_DETERMINED_VERSION)

    def registrations(self, type_suffix: str) -> list[Any]:
        """The recorded registrations of a resource type, with unredacted inputs (for
        comparing secret values between objects without ever printing them)."""
        return [r for r in self.result.recorder.resources if r.type.endswith(type_suffix)]

    # --- lookups over the manifests -----------------------------------------------------------

    def manifests(self, kind: str | None = None, namespace: str | None = None) -> list[dict[str, Any]]:
        return [
            m
            for m in self.result.manifests
            if (kind is None or m["kind"] == kind)
            and (namespace is None or m["metadata"].get("namespace") == namespace)
        ]

    def one(self, kind: str, name: str, namespace: str | None = None) -> dict[str, Any]:
        matches = [m for m in self.manifests(kind, namespace) if m["metadata"]["name"] == name]
        assert len(matches) == 1, f"{self.name}: expected one {kind} {name!r}, found {len(matches)}"
        return matches[0]


def raw_config(path: Path) -> dict[str, Any]:
    """A stack file's `determined:` values as the user wrote them (secure values read as
    the plan's stand-in)."""
    config, _ = stackfile.load_stack_file(path)
    prefix = stack_config.PROJECT + ":"
    return stack_config.decode_raw({k[len(prefix) :]: v for k, v in config.items() if k.startswith(prefix)})


@functools.cache
def plan(name: str) -> Planned:
    path = STACK_FILES[name]
    # One plan per stack for the whole session, shared with the other test modules and the
    # session's other worker processes (planning.planned).
    result = planning.planned(name.removeprefix("fixture:"))
    return Planned(name=name, raw=raw_config(path), result=result, master=yaml.safe_load(result.master_yaml))


def chart_namespace(stack: Planned) -> str | None:
    """The namespace of the Helm chart install the stack moves records from (it exists
    already: the stack only runs the migration Job there)."""
    source = (stack.raw.get("database") or {}).get("fromHelmChart")
    return None if source is None else source.get("namespace", "default")


# --- views over Kubernetes objects --------------------------------------------------------------

WORKLOAD_KINDS = ("Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "Job")


def pod_template(obj: dict[str, Any]) -> dict[str, Any] | None:
    """The pod (metadata + spec) an object runs, if it runs one."""
    if obj["kind"] in WORKLOAD_KINDS:
        return obj["spec"]["template"]
    if obj["kind"] == "CronJob":
        return obj["spec"]["jobTemplate"]["spec"]["template"]
    if obj["kind"] == "Pod":
        return obj
    return None


def workloads(stack: Planned) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """(object, pod template) of everything that runs pods."""
    found = []
    for obj in stack.result.manifests:
        template = pod_template(obj)
        if template is not None:
            found.append((obj, template))
    return found


def containers(template: dict[str, Any]) -> list[dict[str, Any]]:
    spec = template["spec"]
    return [*spec.get("initContainers", []), *spec.get("containers", [])]


def labels_match(selector: dict[str, Any], labels: dict[str, str]) -> bool:
    """A Service selector (a plain map) or a LabelSelector (matchLabels/matchExpressions)."""
    if "matchLabels" in selector or "matchExpressions" in selector:
        if not selector.get("matchLabels", {}).items() <= labels.items():
            return False
        for expr in selector.get("matchExpressions", []):
            key, op, values = expr["key"], expr["operator"], expr.get("values", [])
            ok = {
                "In": key in labels and labels[key] in values,
                "NotIn": key not in labels or labels[key] not in values,
                "Exists": key in labels,
                "DoesNotExist": key not in labels,
            }[op]
            if not ok:
                return False
        return True
    return bool(selector) and selector.items() <= labels.items()


def secret_keys(secret: dict[str, Any]) -> set[str]:
    return set(secret.get("stringData") or {}) | set(secret.get("data") or {})


def master_workload(stack: Planned) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    """(Deployment, pod template, container) of the Determined master: the one container
    running a determined-master image."""
    found = [
        (obj, template, c)
        for obj, template in workloads(stack)
        for c in containers(template)
        if "/determined-master:" in c.get("image", "") or c.get("image", "").startswith("determined-master:")
    ]
    assert len(found) == 1, f"{stack.name}: expected one master container, found {len(found)}"
    return found[0]


def mounted_files(stack: Planned, namespace: str, template: dict[str, Any], container: dict[str, Any]):
    """{file path in the container: (kind, object name, key)} for every file a Secret or
    ConfigMap volume puts into `container`."""
    volumes = {v["name"]: v for v in template["spec"].get("volumes", [])}
    files: dict[str, tuple[str, str, str]] = {}
    for mount in container.get("volumeMounts", []):
        volume = volumes.get(mount["name"], {})
        for kind, source_key, name_key in (
            ("Secret", "secret", "secretName"),
            ("ConfigMap", "configMap", "name"),
        ):
            source = volume.get(source_key)
            if source is None:
                continue
            name = source[name_key]
            matches = [m for m in stack.manifests(kind, namespace) if m["metadata"]["name"] == name]
            keys = secret_keys(matches[0]) if matches and kind == "Secret" else set()
            if matches and kind == "ConfigMap":
                keys = set(matches[0].get("data") or {}) | set(matches[0].get("binaryData") or {})
            paths = (
                {item["key"]: item["path"] for item in source["items"]}
                if source.get("items")
                else {k: k for k in keys}
            )
            for key, rel in paths.items():
                if mount.get("subPath"):
                    if mount["subPath"] == rel:
                        files[mount["mountPath"]] = (kind, name, key)
                else:
                    files[mount["mountPath"].rstrip("/") + "/" + rel] = (kind, name, key)
    return files
