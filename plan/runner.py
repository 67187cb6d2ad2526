"""The offline plan: run the Pulumi program under mocks and write what it would create.

`run` executes deploy.program.main, the same function `pulumi up` runs, against the
recording mocks, then writes resources.json, manifests/, master.yaml and policy.json with
every secret replaced by "[secret]".
"""

from __future__ import annotations

import json
import os
import shutil
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pulumi
import yaml
from pulumi.runtime import settings as pulumi_settings
from pulumi.runtime import stack as pulumi_stack
from pulumi.runtime.sync_await import _sync_await

from deploy import config as stack_config
from plan import policy_check
from plan.mocks import SECRET, PlanMocks, Recorder, RecordingMonitor, Registration, is_secret
from plan.stackfile import ENCRYPTED_STAND_IN

PROJECT = stack_config.PROJECT


@dataclass
class PlanResult:
    recorder: Recorder
    secrets: set[str]
    resources: list[dict[str, Any]] = field(default_factory=list)
    manifests: list[dict[str, Any]] = field(default_factory=list)
    master_yaml: str | None = None
    violations: list[dict[str, str]] = field(default_factory=list)
    outputs: dict[str, Any] = field(default_factory=dict)

    @property
    def mandatory_violations(self) -> list[dict[str, str]]:
        return [v for v in self.violations if v["level"] == "mandatory"]


# --- redaction ---------------------------------------------------------------------------


def _mask(value: Any) -> Any:
    """Keep the shape of a secret value (so manifests stay valid), hide every scalar."""
    if isinstance(value, dict):
        return {key: _mask(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_mask(item) for item in value]
    return SECRET


def redact(value: Any, secrets: set[str]) -> Any:
    """Replace secret-marked values and any known secret string by "[secret]"."""
    if is_secret(value):
        return _mask(unwrap(value["value"]))
    if isinstance(value, dict):
        return {key: redact(item, secrets) for key, item in value.items()}
    if isinstance(value, list):
        return [redact(item, secrets) for item in value]
    if isinstance(value, str):
        if value in secrets:
            return SECRET
        for secret in secrets:
            if secret and secret in value:
                value = value.replace(secret, SECRET)
    return value


def unwrap(value: Any) -> Any:
    """The plain value inside secret markers (for content the plan redacts itself)."""
    if is_secret(value):
        return unwrap(value["value"])
    if isinstance(value, dict):
        return {key: unwrap(item) for key, item in value.items()}
    if isinstance(value, list):
        return [unwrap(item) for item in value]
    return value


# --- running the program ---------------------------------------------------------------


def run_program(
    config: dict[str, str], secret_keys: list[str], stack: str, recorder: Recorder | None = None
) -> Recorder:
    """Run the program under recording mocks. Raises ConfigError for a bad config."""
    from deploy import program

    recorder = recorder or Recorder()
    # Only the stack file counts: config a shell may carry for real runs is ignored.
    os.environ.pop("PULUMI_CONFIG", None)
    mocks = PlanMocks(recorder)
    pulumi.runtime.set_all_config(config, secret_keys)
    pulumi.runtime.set_mocks(
        mocks, project=PROJECT, stack=stack, preview=False, monitor=RecordingMonitor(mocks, recorder)
    )
    # set_mocks installs a finished root stack; run the program in a fresh one, as the
    # Pulumi entry point does, so that its exports are recorded.
    pulumi_settings.ROOT.set(None)

    def main() -> None:
        recorder.deployment = program.main()

    _sync_await(pulumi_stack.run_in_stack(main))
    return recorder


def _is_kubernetes_object(reg: Registration) -> bool:
    return reg.custom and reg.type.startswith("kubernetes:") and "helm.sh" not in reg.type


def _manifest(reg: Registration, inputs: dict[str, Any]) -> dict[str, Any]:
    obj = {"apiVersion": inputs["apiVersion"], "kind": inputs["kind"], "metadata": inputs["metadata"]}
    obj |= {key: value for key, value in inputs.items() if key not in obj}
    return obj


def plan(config: dict[str, str], secret_keys: list[str], stack: str, policies=None) -> PlanResult:
    """Run the program and turn its registrations into the plan's contents."""
    from policies.rules import POLICIES

    recorder = run_program(config, secret_keys, stack)
    cfg = stack_config.load_config(stack_config.read_pulumi_config())
    secrets = stack_config.secret_values(cfg) | recorder.generated_secrets
    if secret_keys:
        secrets.add(ENCRYPTED_STAND_IN)

    result = PlanResult(recorder=recorder, secrets=secrets)
    checked = []
    # Registration order depends on how outputs resolve; sort for stable, diffable plans.
    for reg in sorted(recorder.resources, key=lambda r: r.urn):
        inputs = redact(reg.inputs, secrets)
        checked.append((reg, inputs))
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
            result.manifests.append(_manifest(reg, inputs))
    result.master_yaml = recorder.deployment.master.config_preview
    result.outputs = redact(recorder.stack_outputs, secrets)
    policy_config = {"environment": cfg.environment}
    result.violations = policy_check.evaluate(
        POLICIES if policies is None else policies, checked, policy_config
    )
    return result


# --- writing -----------------------------------------------------------------------------


def _manifest_file(obj: dict[str, Any]) -> str:
    meta = obj["metadata"]
    scope = meta.get("namespace", "cluster")
    return f"{scope}--{obj['kind'].lower()}--{meta['name']}.yaml"


def write(result: PlanResult, out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    manifests_dir = out / "manifests"
    shutil.rmtree(manifests_dir, ignore_errors=True)
    manifests_dir.mkdir()
    (out / "resources.json").write_text(json.dumps(result.resources, indent=2, sort_keys=True) + "\n")
    for obj in result.manifests:
        # Sorted keys: apiVersion, kind, metadata first, then the rest in a stable order.
        (manifests_dir / _manifest_file(obj)).write_text(yaml.safe_dump(obj, sort_keys=True))
    master_yaml = out / "master.yaml"
    if result.master_yaml is not None:
        master_yaml.write_text(result.master_yaml)
    elif master_yaml.exists():
        master_yaml.unlink()
    (out / "policy.json").write_text(json.dumps(result.violations, indent=2) + "\n")
    (out / "outputs.json").write_text(json.dumps(result.outputs, indent=2, sort_keys=True) + "\n")
    _assert_no_secret(out, result.secrets)


def _assert_no_secret(out: Path, secrets: set[str]) -> None:
    """Last line of defence: no known secret value may be in any written file."""
    for path in out.rglob("*"):
        if path.is_file():
            text = path.read_text()
            if any(secret and secret in text for secret in secrets):
                path.unlink()
                raise RuntimeError(f"plan output {path} contained a secret value; removed")


def summary(result: PlanResult, stack: str, out: Path) -> str:
    counts = Counter(r["type"] for r in result.resources)
    lines = [f"Plan for stack '{stack}': {len(result.resources)} resources"]
    lines += [f"  {count:4d}  {kind}" for kind, count in sorted(counts.items())]
    mandatory = len(result.mandatory_violations)
    lines.append(
        f"Policies: {len(result.violations)} violation(s), {mandatory} mandatory"
        if result.violations
        else "Policies: no violations"
    )
    for v in result.violations:
        lines.append(f"  [{v['level']}] {v['policy']}: {v['message']} ({v['resource']})")
    lines.append(f"Wrote {out}")
    return "\n".join(lines)
