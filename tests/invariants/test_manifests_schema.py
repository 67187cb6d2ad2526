"""Every rendered Kubernetes object, and every task pod spec in master.yaml, validated
strictly (unknown fields are errors) against the official Kubernetes schemas."""

from __future__ import annotations

import copy

import kubernetes_validate
import pytest
import stack_plans
import yaml
from conftest import BASE, raw_config
from crds import crd_problems
from planning import plan_for

from components.kube import validation

KUBERNETES_VERSION = "1.33"

# Besides every stack in stacks/ and every fixture stack (stack_plans), these configs.
VARIANTS = {
    "base": raw_config(),
    "external-db-s3-0.34": raw_config(
        master={"version": "0.34.0", "initialUserPassword": "Given-Pass-1"},
        database={
            "mode": "external",
            "host": "pg.internal",
            "user": "det",
            "password": "Ext-Db-Pass-9",
            "sslMode": "verify-ca",
            "sslRootCert": "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n",
        },
        checkpointStorage={"type": "s3", "bucket": "ckpt", "endpointUrl": "http://minio:9000"},
        resourcePools=[
            {**BASE["resourcePools"][0], "quota": {"gpu": 8, "cpu": "64", "memory": "512Gi"}},
            BASE["resourcePools"][1],
        ],
        taskContainerDefaults={
            "gpuPodSpec": {
                "metadata": {"labels": {"team": "ml"}},
                "spec": {
                    "containers": [
                        {"name": "determined-container", "volumeMounts": [{"name": "d", "mountPath": "/d"}]}
                    ],
                    "volumes": [{"name": "d", "hostPath": {"path": "/data"}}],
                },
            }
        },
        slots={"maxSlotsPerPod": 2},
    ),
}


def _plan(name):
    if name in VARIANTS:
        return plan_for(VARIANTS[name])
    return stack_plans.plan(name).result


# API groups with dots that Kubernetes itself serves.
BUILT_IN_GROUPS = (
    "rbac.authorization.k8s.io/",
    "scheduling.k8s.io/",
    "storage.k8s.io/",
    "apiextensions.k8s.io/",
    "networking.k8s.io/",
)


@pytest.fixture(scope="module", params=[*sorted(VARIANTS), *stack_plans.NAMES])
def result(request):
    return _plan(request.param)


def _custom(obj):
    return "." in obj["apiVersion"].split("/")[0] and not obj["apiVersion"].startswith(BUILT_IN_GROUPS)


def test_every_manifest_matches_the_kubernetes_schema(result):
    """Built-in kinds against the strict Kubernetes schema (kubernetes-validate's files, one
    compiled validator per kind); custom resources against their CRD's official schema
    (tests/data/crd-schemas)."""
    assert result.manifests
    for obj in result.manifests:
        if _custom(obj):
            assert crd_problems(obj) == [], (obj["kind"], obj["metadata"]["name"])
        else:
            assert list(validation.problems(obj)) == [], (obj["kind"], obj["metadata"]["name"])


def test_kubernetes_validate_itself_agrees_on_a_whole_stack():
    """The same judgement by kubernetes-validate's own entry point (slower: it reloads the
    schema per object), on the stack with the most kinds."""
    for obj in stack_plans.plan("fixture:tls-master").result.manifests:
        if not _custom(obj):
            kubernetes_validate.validate(obj, KUBERNETES_VERSION, strict=True)


def test_every_task_pod_spec_in_master_yaml_is_a_valid_pod(result):
    config = yaml.safe_load(result.master_yaml)
    pods = [
        spec
        for pool in config["resource_pools"]
        for key, spec in pool["task_container_defaults"].items()
        if key.endswith("_pod_spec")
    ]
    pods += [
        spec for key, spec in config.get("task_container_defaults", {}).items() if key.endswith("_pod_spec")
    ]
    assert pods
    for pod in pods:
        named = copy.deepcopy(pod)
        named.setdefault("metadata", {})["name"] = "task"
        kubernetes_validate.validate(named, KUBERNETES_VERSION, strict=True)


def test_the_validator_rejects_what_it_should():
    # Guard against a validator that accepts anything: a misspelt field must fail.
    bad = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "x"}, "spec": {"prots": []}}
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(bad, KUBERNETES_VERSION, strict=True)
