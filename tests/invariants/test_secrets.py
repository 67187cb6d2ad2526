"""Secrets of every stack (stacks/ and fixtures) stay in Kubernetes Secrets: no secret value
in any other object (env vars of secrets only through secretKeyRef), and master.yaml (it
holds the database password) only inside a Secret."""

from __future__ import annotations

import json
import re

import pytest
import stack_plans
from stack_plans import containers, mounted_files, workloads

from plan.redaction import unwrap

REDACTED = "[secret]"
# Names of env vars that hold secrets by nature.
SECRET_NAME = re.compile(r"PASSWORD|PASSWD|SECRET|TOKEN|CREDENTIAL|CONNECTION_STRING|(^|_)KEY$|PRIVATE", re.I)
# Text only master.yaml has.
MASTER_YAML_MARKERS = ("master_service_name", "resource_manager:", "initial_user_password")


@pytest.fixture(scope="module", params=stack_plans.NAMES)
def stack(request):
    return stack_plans.plan(request.param)


def strings(value):
    if isinstance(value, dict):
        for key, item in value.items():
            yield str(key)
            yield from strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from strings(item)
    elif isinstance(value, str):
        yield value


def kubernetes_registrations(stack):
    return [r for r in stack.result.recorder.resources if r.custom and r.type.startswith("kubernetes:")]


def test_no_secret_outside_a_secret(stack):
    # As the plan shows them: a value Pulumi treats as secret is written as the placeholder.
    for obj in stack.result.manifests:
        if obj["kind"] != "Secret":
            assert REDACTED not in json.dumps(obj), (
                f"{stack.name}: {obj['kind']} {obj['metadata']['name']} carries a secret value"
            )
    # As they would be applied: no known secret value (configured or generated) in clear.
    secrets = {s for s in stack.result.secrets if s}
    for reg in kubernetes_registrations(stack):
        if reg.type.endswith(":Secret"):
            continue
        for text in strings(unwrap(reg.inputs)):
            assert not any(secret in text for secret in secrets), (
                f"{stack.name}: {reg.type} {reg.name} holds a secret value"
            )


def test_secret_env_vars_come_from_secrets(stack):
    for obj, template in workloads(stack):
        namespace = obj["metadata"].get("namespace")
        for container in containers(template):
            for env in container.get("env", []):
                if env["name"].endswith("_FILE") and "value" in env and SECRET_NAME.search(env["name"]):
                    # A path: to a file a Secret volume puts there.
                    source = mounted_files(stack, namespace, template, container).get(env["value"])
                    assert source and source[0] == "Secret", (
                        f"{stack.name}: {obj['metadata']['name']}/{container['name']} env {env['name']} "
                        f"names {env['value']}, no file of a Secret"
                    )
                elif SECRET_NAME.search(env["name"]):
                    assert "value" not in env and "secretKeyRef" in (env.get("valueFrom") or {}), (
                        f"{stack.name}: {obj['metadata']['name']}/{container['name']} env {env['name']} "
                        "is not read from a Secret"
                    )


def test_master_yaml_only_inside_a_secret(stack):
    holders = []
    for reg in kubernetes_registrations(stack):
        inputs = unwrap(reg.inputs)
        for text in strings(inputs):
            if text == "master.yaml" or any(marker in text for marker in MASTER_YAML_MARKERS):
                holders.append((inputs["kind"], inputs["metadata"]["name"]))
    assert holders, f"{stack.name}: master.yaml is in no object"
    assert {kind for kind, _ in holders} == {"Secret"}, f"{stack.name}: master.yaml in {sorted(set(holders))}"
    # And the whole file is secret: the plan shows none of it.
    for obj in stack.manifests("Secret"):
        if "master.yaml" in (obj.get("stringData") or {}) or "master.yaml" in (obj.get("data") or {}):
            assert (obj.get("stringData") or obj.get("data"))["master.yaml"] == REDACTED


def test_exports_show_no_secret(stack):
    outputs = stack.result.outputs
    if "initialUserPassword" in outputs:
        assert outputs["initialUserPassword"] == REDACTED
    secrets = {s for s in stack.result.secrets if s}
    assert not any(secret in json.dumps(outputs) for secret in secrets)
