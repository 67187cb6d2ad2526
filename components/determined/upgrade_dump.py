"""database.backup.beforeUpgrade: the dump before the master of a new version first starts
(its schema migrations never run without a dump of the records before them), and whether
this update needs one: it reads back what the last update left (the master version that
ran, the dump Job made for it) from the stack's outputs. Built from the pieces every
database Job shares (components.determined.database_jobs)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pulumi

from components import constants, kube
from components.config import ExternalDatabase
from components.determined.args import DeterminedArgs
from components.determined.database_jobs import COMPONENT, REPLACE_UNREADY, Target, dump_pod, job_spec

# Stack outputs the program reads back at its next update (what the last update left): the
# master version that ran (recorded once its Deployment is ready) and the dump Job made for it.
VERSION_OUTPUT = "masterVersion"
UPGRADE_DUMP_OUTPUT = "upgradeDump"
# Pulumi's builtin function that reads a stack's outputs, the one stack references use (the
# engine's builtin provider, pkg/resource/components/builtins.go of pulumi/pulumi: readStackOutputs;
# the Node SDK's StackReference calls it synchronously, sdk/nodejs/stackReference.ts). A stack
# without a deployment has no outputs ({}), and an update in progress still shows the previous
# ones: the root stack keeps its outputs until the program registers new ones at its end
# (a "same" step retains a resource's outputs, pkg/resource/components/step.go SameStep.Apply).
# Read 2026-11 from the pulumi/pulumi sources.
READ_STACK_OUTPUTS = "pulumi:pulumi:readStackOutputs"


def previous_outputs() -> dict[str, Any] | None:
    """This stack's outputs as its last update left them ({} when it was never deployed, or
    was destroyed); None when they cannot be read."""
    parts = (pulumi.get_organization(), pulumi.get_project(), pulumi.get_stack())
    name = "/".join(part for part in parts if part)
    try:
        answer = pulumi.runtime.invoke(READ_STACK_OUTPUTS, {"name": name}).value
    except Exception:  # any failure: unknown, and unknown means dump
        return None
    outputs = answer.get("outputs") if isinstance(answer, Mapping) else None
    return dict(outputs) if isinstance(outputs, Mapping) else None


def needed(cfg: DeterminedArgs, previous: Mapping[str, Any] | None) -> bool:
    """Whether the master waits for the dump before an upgrade in this update (with
    `database.backup.beforeUpgrade`): when the database may hold records of another master
    version. `previous`: the stack's outputs from its last update (None: unknown).

    - The Helm chart's records (`fromHelmChart`) arrive before this master first starts: dump.
    - A stack's first update ({} outputs): a new database has nothing to dump, except an
      external server, which may hold another install's records.
    - Later: when the last update recorded another master version, or none (deployed before
      versions were recorded); and the Job made for this version stays while it runs.
    - Outputs that cannot be read: dump."""
    if not cfg.database.backup.before_upgrade:
        return False
    if cfg.database.from_helm_chart is not None or previous is None:
        return True
    if not previous:
        return isinstance(cfg.database, ExternalDatabase)
    version = cfg.master.version
    made_for_it = previous.get(UPGRADE_DUMP_OUTPUT) == pre_upgrade_job_name(version)
    return previous.get(VERSION_OUTPUT) != version or made_for_it


def pre_upgrade_job_name(version: str) -> str:
    return f"{constants.PRE_UPGRADE_JOB_PREFIX}-{version.replace('.', '-')}"


def pre_upgrade_job(cfg: DeterminedArgs, tgt: Target) -> dict[str, Any]:
    """The dump before the master of `master.version` first starts: a version change is a new
    Job (by name), and the master waits for it to complete."""
    version = cfg.master.version
    meta = kube.metadata(pre_upgrade_job_name(version), COMPONENT, cfg.namespace)
    meta["annotations"] = {constants.MASTER_VERSION_ANNOTATION: version, REPLACE_UNREADY: "true"}
    spec = job_spec(kube.labels(COMPONENT), dump_pod(cfg, tgt, master_version=version))
    return kube.manifest("batch/v1", "Job", meta, spec=spec)
