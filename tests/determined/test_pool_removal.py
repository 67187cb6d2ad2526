"""Removing a resource pool (0.35+) keeps the master starting: the binding Job moves the
pool's workspace back to the default task namespace before Pulumi deletes the pool's
namespace and the master's Role in it.

Why the order holds, from the sources (each a fact below, each with a test):

- The master lists pods, Jobs, config maps and events in every namespace a workspace is
  bound to when it starts, and does not start when a list is refused (MASTER_START).
- Pulumi deletes resources the program no longer registers only after every step of the
  program has completed, and not at all when a step failed (PULUMI_DELETES_LAST); a Job's
  creation completes when the Job has succeeded, unless `pulumi.com/skipAwait` is set
  (JOB_AWAITED).
- So the Job must be created in the update that removes the pool (a new name: a new Job),
  awaited, and depend on what it needs to exist: the namespaces it binds and the master with
  its Roles (its `dependsOn`, which also orders creation: the master checks that a namespace
  exists before binding it).

"The namespace depends on the Job" would not do it: Pulumi deletes a resource before the
resources it depends on, and the Job needs the namespaces to exist first (a cycle).
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from conftest import BASE, raw_config
from planning import plan_for

from components.config import load_config
from components.determined import master, workspaces

# Determined's master at v0.38.1 (the same code 0.35.0-0.38.1, at other lines).
MASTER_START = (
    "v0.38.1:master/internal/rm/kubernetesrm/jobs.go:156",  # GetAllNamespacesForRM: bound + default
    "v0.38.1:master/internal/rm/kubernetesrm/jobs.go:240",  # deleteDoomedKubernetesResources(ns) error: no start
    "v0.38.1:master/internal/rm/kubernetesrm/jobs.go:2263",  # config maps listed per namespace
)
# pulumi/pulumi pkg/resource/components/deployment_executor.go (commit 001ffec8, read 2026-11):
# Execute() calls performDeletes only once the source (the program) has sent its last event
# and no step failed (a failed step cancels the context first); performDeletes runs the
# delete steps of resources not registered again, in reverse dependency order.
PULUMI_DELETES_LAST = (
    "https://github.com/pulumi/pulumi/blob/master/pkg/resource/components/deployment_executor.go"
)
# "This resource waits until its status is ready before registering success for
# create/update ... '.status.conditions' has a status of type 'Complete'"; skipAwait skips it.
# https://www.pulumi.com/registry/packages/kubernetes/api-docs/batch/v1/job/ (read 2026-11).
JOB_AWAITED = "https://www.pulumi.com/registry/packages/kubernetes/api-docs/batch/v1/job/"

TEAM = [
    {"name": "team-gpu", "nodePool": "a100", "namespace": "det-team", "workspace": "team"},
    {"name": "team-cpu", "nodePool": "system", "namespace": "det-team", "workspace": "team"},
]


def raw(pools: list[dict[str, Any]], **overrides: Any) -> dict[str, Any]:
    return raw_config(
        resourcePools=[*BASE["resourcePools"], *pools], master={"version": "0.38.1"}, **overrides
    )


def key(resource: dict[str, Any]) -> tuple[str, str]:
    return resource["type"], resource["name"]


def urn_key(urn: str) -> tuple[str, str]:
    """(type, name) of a URN: urn:pulumi:<stack>::<project>::<parent types>$<type>::<name>."""
    qualified, name = urn.split("::", 3)[2:]
    return qualified.rsplit("$", 1)[-1], name


def bind_job(result) -> dict[str, Any]:
    (job,) = [
        r for r in result.resources if r["type"].endswith("batch/v1:Job") and "bind-workspaces" in r["name"]
    ]
    return job


def needs(resource: dict[str, Any]) -> set[tuple[str, str]]:
    return {urn_key(urn) for urn in resource["dependsOn"]}


@pytest.fixture(scope="module")
def before_and_after():
    return plan_for(raw(TEAM)), plan_for(raw([]))


def test_the_pools_namespace_and_the_masters_role_there_are_removed(before_and_after):
    before, after = before_and_after
    removed = {key(r) for r in before.resources} - {key(r) for r in after.resources}
    assert {
        ("kubernetes:core/v1:Namespace", "det-team"),
        ("kubernetes:rbac.authorization.k8s.io/v1:Role", "det-team/determined-master"),
        ("kubernetes:rbac.authorization.k8s.io/v1:RoleBinding", "det-team/determined-master"),
    } <= removed


def test_the_job_depends_on_every_namespace_it_binds_and_every_role_of_the_master(before_and_after):
    for result in before_and_after:
        job = bind_job(result)
        wanted = set()
        namespaces = {r["name"] for r in result.resources if r["type"] == "kubernetes:core/v1:Namespace"}
        for ns in namespaces:
            wanted.add(("kubernetes:core/v1:Namespace", ns))
            wanted.add(("kubernetes:rbac.authorization.k8s.io/v1:Role", f"{ns}/determined-master"))
            wanted.add(("kubernetes:rbac.authorization.k8s.io/v1:RoleBinding", f"{ns}/determined-master"))
        wanted.add(("kubernetes:apps/v1:Deployment", "determined/determined-master"))
        # The master's own namespace is made apart from the pools' (the Job depends on the
        # master, which depends on it).
        wanted.discard(("kubernetes:core/v1:Namespace", "determined"))
        missing = wanted - needs(job)
        assert not missing, missing


def test_the_job_of_the_removal_is_new_awaited_and_no_longer_knows_the_namespace(before_and_after):
    before, after = before_and_after
    old, new = bind_job(before), bind_job(after)
    # A new name: Pulumi creates it (it runs) in the update that removes the pool.
    assert old["name"] != new["name"]
    annotations = new["inputs"]["metadata"].get("annotations", {})
    assert master.SKIP_AWAIT not in annotations
    env = {
        e["name"]: e.get("value") for e in new["inputs"]["spec"]["template"]["spec"]["containers"][0]["env"]
    }
    assert "det-team" not in json.loads(env["DET_TASK_NAMESPACES"])
    assert all(entry["namespace"] != "det-team" for entry in json.loads(env["DET_MAPPING"]))
    assert env["DET_DEFAULT_NAMESPACE"] == "determined-tasks"


def test_the_job_is_awaited_except_on_a_first_update_that_waits_for_a_certificate():
    tls = {
        "mode": "master",
        "host": "det.example.com",
        "certificate": {"source": "certManager", "email": "a@b.co"},
    }
    waits = load_config(raw([], tls=tls))
    assert master.waits_for_certificate(waits)
    assert workspaces.awaited(waits, {"masterVersion": "0.38.1"})
    assert workspaces.awaited(waits, None)  # unknown: wait
    assert not workspaces.awaited(waits, {})  # never deployed: nothing to remove
    assert workspaces.awaited(load_config(raw([])), {})

    def annotations(cfg, previous):
        return workspaces.job(cfg, "s", "k", "h", previous)["metadata"]["annotations"]

    assert master.SKIP_AWAIT in annotations(waits, {})
    assert master.SKIP_AWAIT not in annotations(waits, {"masterVersion": "0.38.1"})
