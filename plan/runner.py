"""The offline plan: run the Pulumi program under mocks and write what it would create.

`plan` validates the configuration, replaces its secrets by stand-ins (plan.standins), runs
main() of __main__.py (the composition root), the same function `pulumi up` runs, against
the recording mocks (plan.mocks), and turns the registrations into the plan's contents: resources.json,
manifests/, master.yaml, policy.json and outputs.json, secrets written as "[secret]" and,
in a first preview, values not known yet as "[unknown until apply]" (plan.redaction).
`write` puts them into the output directory (plan.output).
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import json
import os
import re
import sys
from collections import Counter
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

import pulumi
import yaml
from pulumi.runtime import settings as pulumi_settings
from pulumi.runtime import stack as pulumi_stack

from components import config as stack_config
from components.config import master_yaml_schema
from plan import cloud_check, kube_check, output, policy_check, standins
from plan.errors import PlanFailure
from plan.mocks import PlanMocks, Recorder, RecordingMonitor, Registration
from plan.redaction import redact
from plan.standins import Prepared

PROJECT = stack_config.PROJECT
# The composition root Pulumi runs (the project's __main__.py), imported under this name.
PROGRAM = Path(__file__).resolve().parent.parent / "__main__.py"
PROGRAM_MODULE = "determined_program"

__all__ = [
    "PlanResult",
    "Prepared",
    "check_master_yaml",
    "plan",
    "prepare",
    "run",
    "run_program",
    "summary",
    "write",
]


@dataclass
class PlanResult:
    recorder: Recorder
    stack: str
    # What must never reach an output: the stand-ins and the mocks' generated secrets.
    secrets: set[str]
    preview: bool = False
    # Stand-in by key path for every secret-by-nature value of the config.
    stand_ins: dict[tuple[str | int, ...], str] = field(default_factory=dict)
    resources: list[dict[str, Any]] = field(default_factory=list)
    manifests: list[dict[str, Any]] = field(default_factory=list)
    master_yaml: str | None = None
    violations: list[dict[str, str]] = field(default_factory=list)
    outputs: dict[str, Any] = field(default_factory=dict)
    # What the user should know that does not stop the plan.
    warnings: list[str] = field(default_factory=list)

    @property
    def mandatory_violations(self) -> list[dict[str, str]]:
        return [v for v in self.violations if v["level"] == "mandatory"]


# --- running the program ---------------------------------------------------------------


# libyaml's emitter where PyYAML has it (same output, faster).
_DUMPER = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


@contextlib.contextmanager
def _event_loops() -> Iterator[asyncio.AbstractEventLoop]:
    """The event loop a run goes on, current while it runs, and one in each thread of its
    executor (Pulumi runs the mock monitor there, which needs a loop of its own): all of
    them closed when the run ends, the executor's threads ended first.

    Left to Pulumi, these loops are created on demand and never closed. Each is kept alive
    by a reference cycle (its self-pipe's reader refers back to it), so the collector
    finalizes it, with its self-pipe sockets, at some later point, in no set order: when a
    socket goes first, the loop's `__del__` fails on its closed descriptor and, about one run
    in a few dozen, "Exception ignored in BaseEventLoop.__del__ ... Invalid file descriptor:
    -1" is printed as the process exits."""
    thread_loops: list[asyncio.AbstractEventLoop] = []

    def thread_loop() -> None:
        loop = asyncio.new_event_loop()
        asyncio.set_event_loop(loop)
        thread_loops.append(loop)

    executor = ThreadPoolExecutor(thread_name_prefix="plan-monitor", initializer=thread_loop)
    loop = asyncio.new_event_loop()
    loop.set_default_executor(executor)
    asyncio.set_event_loop(loop)
    try:
        yield loop
    finally:
        try:
            # As asyncio.run ends: what the program left unfinished is cancelled.
            pending = asyncio.all_tasks(loop)
            for task in pending:
                task.cancel()
            loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
            loop.run_until_complete(loop.shutdown_asyncgens())
        finally:
            executor.shutdown(wait=True)
            for other in thread_loops:
                other.close()
            asyncio.set_event_loop(None)
            loop.close()


def program() -> ModuleType:
    """The root program as a module, imported once and not as `__main__` (so importing it
    registers nothing): run_program calls its `main()`, which tests may replace."""
    module = sys.modules.get(PROGRAM_MODULE)
    if module is None:
        spec = importlib.util.spec_from_file_location(PROGRAM_MODULE, PROGRAM)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[PROGRAM_MODULE] = module
        spec.loader.exec_module(module)
    return module


def run_program(
    config: dict[str, str],
    secret_keys: list[str],
    stack: str,
    recorder: Recorder | None = None,
    preview: bool = False,
) -> Recorder:
    """Run the program under recording mocks. Raises ConfigError for a bad config."""
    recorder = recorder or Recorder()
    # Only the stack file counts: config a shell may carry for real runs is ignored.
    for name in [n for n in os.environ if n == "PULUMI_CONFIG" or n.startswith("PULUMI_CONFIG_")]:
        del os.environ[name]
    mocks = PlanMocks(recorder, preview=preview)
    pulumi.runtime.set_all_config(config, secret_keys)

    def main() -> None:
        recorder.deployment = program().main()
        # master.yaml as previews show it: an Output (it may name what the cloud computes).
        master = getattr(recorder.deployment, "master", None)
        if master is not None:
            master.config_preview.apply(lambda text: setattr(recorder, "master_yaml", text))

    with _event_loops() as loop:
        pulumi.runtime.set_mocks(
            mocks, project=PROJECT, stack=stack, preview=preview, monitor=RecordingMonitor(mocks, recorder)
        )
        # set_mocks installs a finished root stack; run the program in a fresh one, as the
        # Pulumi entry point does, so that its exports are recorded.
        pulumi_settings.ROOT.set(None)
        loop.run_until_complete(pulumi_stack.run_in_stack(main))
    return recorder


def _is_kubernetes_object(reg: Registration) -> bool:
    return reg.custom and reg.type.startswith("kubernetes:") and "helm.sh" not in reg.type


def _manifest(inputs: dict[str, Any]) -> dict[str, Any]:
    obj = {key: inputs[key] for key in ("apiVersion", "kind", "metadata") if key in inputs}
    obj |= {key: value for key, value in inputs.items() if key not in obj}
    return obj


def _check_known(recorder: Recorder) -> None:
    """After a simulated apply every value is known: an unknown means a mocked output is
    missing, and the plan would show a value the real run does not produce."""
    found = [f"{reg.type} {reg.name}: {path}" for reg in recorder.resources for path in reg.unknowns]
    found += [f"stack export {path}" for path in recorder.stack_output_unknowns]
    if found:
        more = f" (and {len(found) - 1} more)" if len(found) > 1 else ""
        raise PlanFailure(f"a value is still unknown after the simulated apply: {found[0]}{more}")


def check_master_yaml(text: str, version: str, secrets: set[str]) -> list[str]:
    """master.yaml checked against the key set of the Determined release it is for.

    A problem means the master would refuse or ignore what the project wrote: a bug in the
    project (PlanFailure). Returns warnings (a release the key data does not describe)."""
    oldest, newest = master_yaml_schema.known_range()
    if not oldest <= master_yaml_schema.parse_version(version) <= newest:
        known = f"{master_yaml_schema.format_version(oldest)} to {master_yaml_schema.format_version(newest)}"
        return [f"master.yaml not checked against Determined {version}: its key set is known for {known}"]
    document = yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    problems = master_yaml_schema.check(document, version)
    if not problems:
        return []
    first = " ".join(problems[0].split())
    if any(secret and secret in first for secret in secrets):
        first = first.split(":", 1)[0] + ": (its text holds a secret)"
    more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
    raise PlanFailure(f"master.yaml would not be accepted by Determined {version}: {first}{more}")


def prepare(config: dict[str, str], secret_keys: list[str]) -> Prepared:
    """The config validated as the program validates it (ConfigError names every problem),
    its secrets replaced by stand-ins. The rules over the task pods Determined renders get
    them from the root program's mapping (stack_args): the plan imports no component."""
    return standins.prepare(config, secret_keys, task_pods=program().stack_args.DeterminedTaskPods())


def run(prepared: Prepared, stack: str, policies=None, preview: bool = False) -> PlanResult:
    """Run the program on a prepared config and turn its registrations into the plan.
    `policies`: None judges the plan with the pack (policies/) as `pulumi preview
    --policy-pack policies` does; a list of policy objects judges it with those."""
    try:
        recorder = run_program(prepared.config, prepared.secret_keys, stack, preview=preview)
    except stack_config.ConfigError as exc:
        # The config passed validation with the user's values: the stand-ins broke a rule.
        paths = ", ".join(p.path for p in exc.problems)
        raise PlanFailure(f"the plan's secret stand-ins do not pass validation at {paths}") from None
    if not preview:
        _check_known(recorder)

    result = PlanResult(
        recorder=recorder,
        stack=stack,
        secrets=prepared.needles() | recorder.generated_secrets,
        preview=preview,
        stand_ins=dict(prepared.stand_ins),
    )
    # Registration order depends on how outputs resolve; sort for stable, diffable plans.
    ordered = sorted(recorder.resources, key=lambda r: r.urn)
    for reg in ordered:
        inputs = redact(reg.inputs)
        result.resources.append(
            {
                "type": reg.type,
                "name": reg.name,
                "urn": reg.urn,
                "parent": reg.parent,
                "inputs": inputs,
                "dependsOn": reg.depends_on,
                "options": reg.options,
            }
        )
        if _is_kubernetes_object(reg):
            result.manifests.append(_manifest(inputs))
    # What the clouds' APIs would refuse is a bug here (validation should have refused it).
    cloud_check.check(result.resources)
    result.master_yaml = recorder.master_yaml
    # And what the Kubernetes API server would refuse beyond its schema.
    kube_check.check(result.resources, result.master_yaml)
    if result.master_yaml is not None:
        result.warnings += check_master_yaml(result.master_yaml, prepared.cfg.master.version, result.secrets)
    result.outputs = redact(recorder.stack_outputs)
    # What the engine tells the pack: the stack's config (stand-ins for secrets), its exports.
    deployment = policy_check.Deployment(
        stack, ordered, prepared.config, prepared.secret_keys, preview, recorder.stack_outputs
    )
    if policies is None:
        result.violations = policy_check.run_pack(deployment, result.secrets)
    else:
        result.violations = policy_check.evaluate(policies, deployment, result.secrets)
    return result


def plan(
    config: dict[str, str],
    secret_keys: Sequence[str],
    stack: str,
    policies=None,
    preview: bool = False,
) -> PlanResult:
    """Validate the config (ConfigError), run the program on stand-ins, build the plan."""
    return run(prepare(config, secret_keys), stack, policies=policies, preview=preview)


# --- writing -----------------------------------------------------------------------------


def _file_part(value: Any) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", str(value)).strip("_") or "_"


def manifest_files(manifests: list[dict[str, Any]]) -> list[tuple[str, dict[str, Any]]]:
    """(file name under manifests/, object), one file per object, names unique."""
    named: list[tuple[str, dict[str, Any]]] = []
    taken: set[str] = set()
    for obj in manifests:
        meta = obj.get("metadata") if isinstance(obj.get("metadata"), dict) else {}
        scope = meta.get("namespace", "cluster")
        kind = str(obj.get("kind", "object")).lower()
        stem = "--".join(_file_part(p) for p in (scope, kind, meta.get("name") or ""))
        name, n = f"{stem}.yaml", 1
        while name in taken:
            n += 1
            name = f"{stem}--{n}.yaml"
        taken.add(name)
        named.append((name, obj))
    return named


def _text(content: str):
    return lambda path: path.write_text(content)


def contents(result: PlanResult) -> dict[str, Any]:
    """The plan's files: relative path -> writer. A plan that breaks a mandatory policy is
    policy.json alone: what the violation is about may be a secret written in clear (a
    password in master.env), and the other files would hold it; policy.json holds what the
    summary prints."""
    policy = _text(json.dumps(result.violations, indent=2) + "\n")
    if result.mandatory_violations:
        return {"policy.json": policy}
    files = {
        "resources.json": _text(json.dumps(result.resources, indent=2, sort_keys=True) + "\n"),
        "policy.json": policy,
        "outputs.json": _text(json.dumps(result.outputs, indent=2, sort_keys=True) + "\n"),
    }
    if result.master_yaml is not None:
        files["master.yaml"] = _text(result.master_yaml)
    for name, obj in manifest_files(result.manifests):
        # Sorted keys: apiVersion, kind, metadata first, then the rest in a stable order.
        files[f"manifests/{name}"] = _text(yaml.dump(obj, Dumper=_DUMPER, sort_keys=True))
    return files


def write(result: PlanResult, out: Path) -> list[str]:
    """Write the plan into `out` (see plan.output). Returns warnings to show the user."""
    mode = "preview" if result.preview else "update"
    return result.warnings + output.write(Path(out), result.stack, mode, contents(result), result.secrets)


# What each file of a plan holds, as the summary lists it.
FILE_GUIDE = {
    "resources.json": "every resource: type, name, parent, inputs, dependsOn, options",
    "manifests/": "every Kubernetes object, one YAML file each",
    "master.yaml": "the master's configuration as the master receives it",
    "policy.json": "each policy violation: policy, level, resource, message",
    "outputs.json": "the stack's exports",
    output.MARKER: "the plan's marker: its stack, mode and files",
}


def _guide(result: PlanResult, out: Path) -> list[str]:
    """Where the plan went and what each file holds, one line each."""
    names = list(contents(result))
    if result.mandatory_violations:
        return [
            f"Wrote only {out}/policy.json: a mandatory policy is violated, and the plan's other files "
            "could hold what it is about in clear (they are not written)"
        ]
    present = {name.split("/", 1)[0] + "/" if "/" in name else name for name in names} | {output.MARKER}
    manifests = sum(name.startswith("manifests/") for name in names)
    width = max(len(name) for name in present)
    lines = [f"Wrote {out}:"]
    for name, what in FILE_GUIDE.items():
        if name in present:
            count = f" ({manifests} files)" if name == "manifests/" else ""
            lines.append(f"  {name:<{width}}  {what}{count}")
    return lines


def summary(result: PlanResult, stack: str, out: Path) -> str:
    counts = Counter(r["type"] for r in result.resources)
    mode = " (first preview)" if result.preview else ""
    lines = [f"Plan for stack '{stack}'{mode}: {len(result.resources)} resources"]
    lines += [f"  {count:4d}  {kind}" for kind, count in sorted(counts.items())]
    mandatory = len(result.mandatory_violations)
    violations = [v for v in result.violations if not policy_check.not_runnable(v)]
    waiting = len(result.violations) - len(violations)
    lines.append(
        f"Policies: {len(violations)} violation(s), {mandatory} mandatory"
        if violations
        else "Policies: no violations"
    )
    for v in violations:
        lines.append(f"  [{v['level']}] {v['policy']}: {v['message']} ({v['resource']})")
    if waiting:
        lines.append(
            f"  {waiting} check(s) wait for values a first preview does not know yet (listed in policy.json)"
        )
    lines += _guide(result, out)
    return "\n".join(lines)
