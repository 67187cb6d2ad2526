"""Creation order of every stack (stacks/ and fixtures): nothing is created in a namespace
before the namespace itself.

Pulumi records explicit dependencies as URNs in each registration's `dependsOn` (depending
on a component lists its children); a child registers only after its parent component,
which registers after its own dependencies. So an object is ordered after its namespace
when the namespace is reachable from it through `dependsOn` and `parent` links.
"""

from __future__ import annotations

import pytest
import stack_plans

NAMESPACE_TYPE = "kubernetes:core/v1:Namespace"


@pytest.fixture(scope="module", params=stack_plans.NAMES)
def stack(request):
    return stack_plans.plan(request.param)


def ordered_after(resources, urn):
    """URNs of everything `urn` waits for (its dependencies, their dependencies, its parents)."""
    by_urn = {r["urn"]: r for r in resources}
    seen: set[str] = set()
    todo = [urn]
    while todo:
        current = by_urn.get(todo.pop())
        if current is None:
            continue
        for nxt in [*current["dependsOn"], current["parent"]]:
            if nxt and nxt not in seen:
                seen.add(nxt)
                todo.append(nxt)
    return seen


def test_every_namespaced_object_waits_for_its_namespace(stack):
    resources = stack.result.resources
    namespaces = {r["inputs"]["metadata"]["name"]: r["urn"] for r in resources if r["type"] == NAMESPACE_TYPE}
    checked = 0
    for res in resources:
        if not res["type"].startswith("kubernetes:") or res["type"].startswith("pulumi:providers"):
            continue
        ns = (res["inputs"].get("metadata") or {}).get("namespace")
        if not ns or ns == "kube-system":  # every cluster has kube-system
            continue
        if ns == stack_plans.chart_namespace(stack):  # the Helm chart's install, being moved from
            continue
        assert ns in namespaces, (
            f"{stack.name}: {res['type']} {res['name']} is in namespace {ns}, which the stack does not create"
        )
        assert namespaces[ns] in ordered_after(resources, res["urn"]), (
            f"{stack.name}: {res['type']} {res['name']} does not depend on its namespace {ns}"
        )
        checked += 1
    assert checked, "no namespaced object found"


def test_the_order_is_read_from_dependencies_and_parents():
    resources = [
        {"urn": "ns", "dependsOn": [], "parent": None},
        {"urn": "component", "dependsOn": ["ns"], "parent": None},
        {"urn": "child", "dependsOn": [], "parent": "component"},
        {"urn": "grandchild", "dependsOn": ["child"], "parent": None},
        {"urn": "loose", "dependsOn": [], "parent": "root"},
    ]
    assert "ns" in ordered_after(resources, "child")
    assert "ns" in ordered_after(resources, "grandchild")
    assert "ns" not in ordered_after(resources, "loose")
