"""What every pod the stacks (stacks/ and fixtures) run promises: fixed resources for the
master, read-only configuration, and a restricted security context."""

from __future__ import annotations

import pytest
import stack_plans
from stack_plans import containers, master_workload, workloads

# Volume sources that carry configuration (or credentials): never written by a container.
CONFIG_SOURCES = ("secret", "configMap", "projected", "downwardAPI")
# Pods that must be privileged, as their vendors ship them: (namespace, name) -> why.
PRIVILEGED_BY_NATURE = {
    ("kube-system", "nvidia-driver-installer"): "Google's GPU driver installer loads kernel modules",
}


@pytest.fixture(scope="module", params=stack_plans.NAMES)
def stack(request):
    return stack_plans.plan(request.param)


def test_master_requests_equal_limits(stack):
    # Guaranteed QoS by default: the master is neither throttled below nor evicted above what
    # it asked for. With master.resources, requests are still set and memory is limited.
    _, _, container = master_workload(stack)
    resources = container.get("resources", {})
    custom = "resources" in stack.raw.get("master", {})
    for resource in ("cpu", "memory"):
        request = resources.get("requests", {}).get(resource)
        limit = resources.get("limits", {}).get(resource)
        assert request is not None, f"{stack.name}: master {resource} has no request"
        if not custom:
            assert request == limit, f"{stack.name}: master {resource} request {request!r} != limit {limit!r}"
    assert resources.get("limits", {}).get("memory"), f"{stack.name}: master memory is not limited"


def test_configuration_volumes_are_mounted_read_only(stack):
    checked = 0
    for obj, template in workloads(stack):
        config_volumes = {
            v["name"] for v in template["spec"].get("volumes", []) if any(s in v for s in CONFIG_SOURCES)
        }
        for container in containers(template):
            for mount in container.get("volumeMounts", []):
                if mount["name"] in config_volumes:
                    checked += 1
                    assert mount.get("readOnly") is True, (
                        f"{stack.name}: {obj['metadata']['name']}/{container['name']} mounts "
                        f"{mount['name']} at {mount['mountPath']} writable"
                    )
    assert checked, "the master's config Secret at least is mounted"


def test_every_pod_runs_with_a_restricted_security_context(stack):
    for obj, template in workloads(stack):
        if (obj["metadata"].get("namespace"), obj["metadata"]["name"]) in PRIVILEGED_BY_NATURE:
            continue
        name = f"{stack.name}: {obj['kind']} {obj['metadata']['name']}"
        pod_context = template["spec"].get("securityContext") or {}
        assert (pod_context.get("seccompProfile") or {}).get("type") == "RuntimeDefault", (
            f"{name}: no pod-level seccompProfile RuntimeDefault"
        )
        for container in containers(template):
            context = container.get("securityContext") or {}
            assert context.get("allowPrivilegeEscalation") is False, (
                f"{name}/{container['name']}: privilege escalation"
            )
            assert "ALL" in ((context.get("capabilities") or {}).get("drop") or []), (
                f"{name}/{container['name']}: capabilities not dropped"
            )
            assert not context.get("privileged"), f"{name}/{container['name']}: privileged"
