"""The deploy's critical path over every stack (stacks/ and fixtures): what the master's
Deployment waits for, through `dependsOn` and parent links (as in test_dependencies: a child
registers only after its parent component, which registers after its own dependencies).

The master waits for what it needs to start (its database, namespace and RBAC, the node pool
it runs on and what that pool needs), never for GPU node pools, GPU drivers or device
plugins, Kueue, the Gateway or cert-manager (any Helm release), nor for a dump before an
upgrade on a stack's first update, when the database is new.
"""

from __future__ import annotations

import pytest
import stack_plans
from test_dependencies import ordered_after

from components import constants
from components.determined import upgrade_dump

DEPLOYMENT = "kubernetes:apps/v1:Deployment"
NODE_POOL_TYPES = ("gcp:container/nodePool:NodePool", "aws:eks/nodeGroup:NodeGroup")
# Kinds the master never waits for: Helm releases (Kueue, Envoy Gateway, cert-manager, the GPU
# operator, the device plugin, Reloader, the autoscaler), Kueue's and the Gateway's objects.
NEVER = (
    "kubernetes:helm.sh/v3:Release",
    "kubernetes:kueue.x-k8s.io/",
    "kubernetes:gateway.networking.k8s.io/",
    "kubernetes:gateway.envoyproxy.io/",
    "kubernetes:cert-manager.io/",
    "determined:components:GpuOperator",
)


@pytest.fixture(scope="module", params=stack_plans.NAMES)
def stack(request):
    return stack_plans.plan(request.param)


def master_waits_for(stack: stack_plans.Planned) -> list[dict]:
    resources = stack.result.resources
    (deployment,) = [
        r
        for r in resources
        if r["type"] == DEPLOYMENT and r["inputs"]["metadata"]["name"] == constants.MASTER_NAME
    ]
    waited = ordered_after(resources, deployment["urn"])
    return [r for r in resources if r["urn"] in waited]


def test_the_master_waits_for_no_gpu_software_kueue_gateway_or_gpu_node_pool(stack):
    waited = master_waits_for(stack)
    found = [f"{r['type']} {r['name']}" for r in waited if r["type"].startswith(NEVER)]
    assert not found, f"{stack.name}: the master waits for {found}"
    gpu_pools = {pool["name"] for pool in stack.raw.get("nodePools", []) if pool.get("gpu")}
    pools = [r["name"] for r in waited if r["type"] in NODE_POOL_TYPES]
    assert not set(pools) & gpu_pools, f"{stack.name}: the master waits for GPU pools {pools}"
    if stack.raw.get("cloud") in ("gke", "eks"):
        # One node pool can run it: the one it is pinned to.
        master_pool = stack.raw.get("master", {}).get("nodePool")
        assert len(pools) == 1 and (master_pool is None or pools == [master_pool]), f"{stack.name}: {pools}"


def test_the_master_waits_for_what_it_needs(stack):
    kinds = {r["type"].rsplit(":", 1)[-1] for r in master_waits_for(stack)}
    # Its namespace, RBAC and config Secret; an in-cluster database's StatefulSet.
    assert {"Namespace", "ClusterRoleBinding", "RoleBinding", "Secret"} <= kinds, stack.name
    if stack.raw.get("database", {}).get("mode", "inCluster") == "inCluster":
        assert "StatefulSet" in kinds, stack.name


def test_a_first_install_runs_no_dump_before_the_master(stack):
    # The plan is of a stack never deployed: only the Helm chart's records or an external
    # server's (which may hold another install's) are dumped before the master.
    database = stack.raw.get("database", {})
    jobs = [
        r["name"]
        for r in stack.result.resources
        if r["type"] == "kubernetes:batch/v1:Job"
        and r["inputs"]["metadata"]["name"].startswith(constants.PRE_UPGRADE_JOB_PREFIX)
    ]
    before_upgrade = database.get("backup", {}).get("beforeUpgrade", True)
    expected = before_upgrade and (database.get("mode") == "external" or "fromHelmChart" in database)
    assert bool(jobs) == expected, f"{stack.name}: {jobs}"
    if jobs:
        waited = {r["name"] for r in master_waits_for(stack)}
        assert set(jobs) <= waited, stack.name
    assert upgrade_dump.VERSION_OUTPUT in stack.result.outputs, stack.name
