"""Strategic merge patch of pod specs, as `kubectl patch --type=strategic` computes it.

Expected results follow the Kubernetes documentation: "Update API Objects in Place Using
kubectl patch" (kubernetes.io) and the strategic merge patch design doc
(kubernetes/community, contributors/devel/sig-api-machinery/strategic-merge-patch.md).
"""

from __future__ import annotations

import copy
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from components.kube import schema, strategic_merge
from components.kube.strategic_merge import POD, as_pod, merge, merge_pods

ROOT = Path(__file__).resolve().parents[2]

CTR = "determined-container"
DATA_HOST = {"name": "data", "hostPath": {"path": "/data"}}
SHM = {"name": "shm", "emptyDir": {"medium": "Memory"}}
GPU = {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}
TEAM = {"key": "team", "operator": "Equal", "value": "ml", "effect": "NoSchedule"}


def ctr(**fields: Any) -> dict[str, Any]:
    return {"name": CTR, **fields}


# (id, base PodSpec, overlay PodSpec, expected PodSpec)
CASES: list[tuple[str, dict[str, Any], dict[str, Any], dict[str, Any]]] = [
    # containers: merge key `name`; fields of both kept, scalars replaced
    (
        "containers-merge-by-name",
        {"containers": [ctr(image="a", volumeMounts=[{"name": "d", "mountPath": "/d"}])]},
        {"containers": [ctr(image="b", resources={"limits": {"cpu": "2"}})]},
        {
            "containers": [
                ctr(
                    image="b",
                    volumeMounts=[{"name": "d", "mountPath": "/d"}],
                    resources={"limits": {"cpu": "2"}},
                )
            ]
        },
    ),
    # The kubectl patch task: patch-demo-ctr-2 is listed before patch-demo-ctr after the patch.
    (
        "new-container-goes-before-the-base-ones",
        {"containers": [{"name": "patch-demo-ctr", "image": "nginx"}]},
        {"containers": [{"name": "patch-demo-ctr-2", "image": "redis"}]},
        {
            "containers": [
                {"name": "patch-demo-ctr-2", "image": "redis"},
                {"name": "patch-demo-ctr", "image": "nginx"},
            ]
        },
    ),
    (
        "a-base-item-before-a-patched-one-stays-before-it",
        {"containers": [{"name": "a"}, {"name": "b"}, {"name": "c"}]},
        {"containers": [{"name": "b", "image": "x"}, {"name": "new"}]},
        {"containers": [{"name": "a"}, {"name": "b", "image": "x"}, {"name": "new"}, {"name": "c"}]},
    ),
    (
        "env-merges-by-name",
        {"containers": [ctr(env=[{"name": "A", "value": "1"}, {"name": "B", "value": "2"}])]},
        {"containers": [ctr(env=[{"name": "B", "value": "3"}])]},
        {"containers": [ctr(env=[{"name": "A", "value": "1"}, {"name": "B", "value": "3"}])]},
    ),
    (
        "env-null-swaps-value-for-valueFrom",
        {"containers": [ctr(env=[{"name": "A", "value": "1"}])]},
        {
            "containers": [
                ctr(env=[{"name": "A", "value": None, "valueFrom": {"fieldRef": {"fieldPath": "x"}}}])
            ]
        },
        {"containers": [ctr(env=[{"name": "A", "valueFrom": {"fieldRef": {"fieldPath": "x"}}}])]},
    ),
    (
        "volumeMounts-same-name-other-mountPath-both-kept",
        {"containers": [ctr(volumeMounts=[{"name": "data", "mountPath": "/data"}])]},
        {"containers": [ctr(volumeMounts=[{"name": "data", "mountPath": "/scratch", "subPath": "s"}])]},
        {
            "containers": [
                ctr(
                    volumeMounts=[
                        {"name": "data", "mountPath": "/scratch", "subPath": "s"},
                        {"name": "data", "mountPath": "/data"},
                    ]
                )
            ]
        },
    ),
    (
        "volumeMounts-same-mountPath-merged",
        {"containers": [ctr(volumeMounts=[{"name": "data", "mountPath": "/data"}])]},
        {"containers": [ctr(volumeMounts=[{"name": "pvc", "mountPath": "/data", "readOnly": True}])]},
        {"containers": [ctr(volumeMounts=[{"name": "pvc", "mountPath": "/data", "readOnly": True}])]},
    ),
    (
        "ports-merge-by-containerPort",
        {"containers": [ctr(ports=[{"containerPort": 80, "name": "http"}, {"containerPort": 443}])]},
        {"containers": [ctr(ports=[{"containerPort": 80, "name": "web"}])]},
        {"containers": [ctr(ports=[{"containerPort": 80, "name": "web"}, {"containerPort": 443}])]},
    ),
    # volumes are `merge,retainKeys`: the overlay's source replaces the base's, as with kubectl apply
    (
        "volume-reusing-a-name-replaces-its-source",
        {"volumes": [DATA_HOST, SHM]},
        {"volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": "pvc"}}]},
        {"volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": "pvc"}}, SHM]},
    ),
    (
        "volume-same-source-merges-inside-it",
        {"volumes": [SHM]},
        {"volumes": [{"name": "shm", "emptyDir": {"sizeLimit": "1Gi"}}]},
        {"volumes": [{"name": "shm", "emptyDir": {"medium": "Memory", "sizeLimit": "1Gi"}}]},
    ),
    (
        "new-volume-added",
        {"volumes": [DATA_HOST]},
        {"volumes": [{"name": "scratch", "emptyDir": {}}]},
        {"volumes": [{"name": "scratch", "emptyDir": {}}, DATA_HOST]},
    ),
    (
        "explicit-retainKeys-on-a-volume-wins",
        {"volumes": [DATA_HOST]},
        {"volumes": [{"name": "data", "emptyDir": {}, "$retainKeys": ["name", "hostPath", "emptyDir"]}]},
        {"volumes": [{"name": "data", "hostPath": {"path": "/data"}, "emptyDir": {}}]},
    ),
    (
        "explicit-retainKeys-on-a-map",
        {"securityContext": {"runAsUser": 1, "fsGroup": 2}},
        {"securityContext": {"$retainKeys": ["runAsUser", "runAsGroup"], "runAsGroup": 3}},
        {"securityContext": {"runAsUser": 1, "runAsGroup": 3}},
    ),
    # lists without a patch strategy are replaced
    ("tolerations-replaced", {"tolerations": [GPU]}, {"tolerations": [TEAM]}, {"tolerations": [TEAM]}),
    (
        "command-args-envFrom-replaced",
        {"containers": [ctr(command=["a", "b"], args=["x"], envFrom=[{"configMapRef": {"name": "c1"}}])]},
        {"containers": [ctr(command=["c"], args=["y", "z"], envFrom=[{"secretRef": {"name": "s1"}}])]},
        {"containers": [ctr(command=["c"], args=["y", "z"], envFrom=[{"secretRef": {"name": "s1"}}])]},
    ),
    (
        "nodeSelector-is-a-map-merged",
        {"nodeSelector": {"pool": "a100", "zone": "z1"}},
        {"nodeSelector": {"zone": None, "gpu": "yes"}},
        {"nodeSelector": {"pool": "a100", "gpu": "yes"}},
    ),
    (
        "null-deletes",
        {"priorityClassName": "low", "securityContext": {"runAsUser": 1, "fsGroup": 2}, "tolerations": [GPU]},
        {"priorityClassName": None, "securityContext": {"fsGroup": None}, "tolerations": None},
        {"securityContext": {"runAsUser": 1}},
    ),
    (
        "scalar-replaced",
        {"priorityClassName": "low"},
        {"priorityClassName": "high"},
        {"priorityClassName": "high"},
    ),
    (
        "type-mismatch-overlay-wins",
        {"hostname": {"odd": "map"}, "subdomain": ["x"]},
        {"hostname": "h", "subdomain": {"a": None, "b": "c"}},
        {"hostname": "h", "subdomain": {"b": "c"}},
    ),
    (
        "patch-delete-container",
        {"containers": [{"name": "a"}, {"name": "sidecar", "image": "s"}]},
        {"containers": [{"name": "sidecar", "$patch": "delete"}]},
        {"containers": [{"name": "a"}]},
    ),
    (
        "patch-replace-map",
        {"securityContext": {"runAsUser": 1, "fsGroup": 2}},
        {"securityContext": {"$patch": "replace", "runAsGroup": 3}},
        {"securityContext": {"runAsGroup": 3}},
    ),
    (
        "patch-delete-map-leaves-it-empty",
        {"containers": [ctr(securityContext={"privileged": True})]},
        {"containers": [ctr(securityContext={"$patch": "delete"})]},
        {"containers": [ctr(securityContext={})]},
    ),
    (
        "patch-replace-list",
        {"volumes": [DATA_HOST, SHM]},
        {"volumes": [{"$patch": "replace"}, {"name": "data", "emptyDir": {}}]},
        {"volumes": [{"name": "data", "emptyDir": {}}]},
    ),
    (
        "directives-where-the-base-has-nothing",
        {},
        {"initContainers": [{"name": "i", "image": "busybox"}, {"name": "gone", "$patch": "delete"}]},
        {"initContainers": [{"name": "i", "image": "busybox"}]},
    ),
    (
        "new-item-drops-nulls-and-directives",
        {"containers": [ctr()]},
        {
            "containers": [
                {"name": "new", "workingDir": None, "env": [{"name": "A"}, {"name": "B", "$patch": "delete"}]}
            ]
        },
        {"containers": [{"name": "new", "env": [{"name": "A"}]}, ctr()]},
    ),
    (
        "setElementOrder",
        {"containers": [ctr(env=[{"name": "A", "value": "1"}, {"name": "B", "value": "2"}])]},
        {"containers": [ctr(**{"$setElementOrder/env": [{"name": "B"}, {"name": "A"}]})]},
        {"containers": [ctr(env=[{"name": "B", "value": "2"}, {"name": "A", "value": "1"}])]},
    ),
    (
        "initContainers-env-nested",
        {"initContainers": [{"name": "init", "env": [{"name": "X", "value": "1"}]}]},
        {
            "initContainers": [
                {"name": "init", "env": [{"name": "X", "value": "2"}, {"name": "Y", "value": "3"}]}
            ]
        },
        {
            "initContainers": [
                {"name": "init", "env": [{"name": "X", "value": "2"}, {"name": "Y", "value": "3"}]}
            ]
        },
    ),
    (
        "imagePullSecrets-by-name-hostAliases-by-ip",
        {"imagePullSecrets": [{"name": "s1"}], "hostAliases": [{"ip": "10.0.0.1", "hostnames": ["a"]}]},
        {
            "imagePullSecrets": [{"name": "s1"}, {"name": "s2"}],
            "hostAliases": [{"ip": "10.0.0.1", "hostnames": ["b"]}],
        },
        {
            "imagePullSecrets": [{"name": "s1"}, {"name": "s2"}],
            "hostAliases": [{"ip": "10.0.0.1", "hostnames": ["b"]}],
        },
    ),
    (
        "resources-maps-merge",
        {"containers": [ctr(resources={"limits": {"cpu": "1", "memory": "1Gi"}})]},
        {"containers": [ctr(resources={"limits": {"cpu": "2"}, "requests": {"cpu": "1"}})]},
        {"containers": [ctr(resources={"limits": {"cpu": "2", "memory": "1Gi"}, "requests": {"cpu": "1"}})]},
    ),
]


@pytest.mark.parametrize(("base", "overlay", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_merge(base: dict[str, Any], overlay: dict[str, Any], expected: dict[str, Any]) -> None:
    before = copy.deepcopy((base, overlay))
    assert merge(base, overlay) == expected
    assert (base, overlay) == before  # inputs untouched


# (id, base Pod, overlay Pod, expected Pod): the Pod schema reaches metadata too
POD_CASES: list[tuple[str, dict[str, Any], dict[str, Any], dict[str, Any]]] = [
    (
        "labels-annotations-merge-as-maps",
        {"metadata": {"labels": {"app": "det"}, "annotations": {"a": "1", "b": "2"}}},
        {"metadata": {"labels": {"team": "ml"}, "annotations": {"a": None, "c": "3"}}},
        {"metadata": {"labels": {"app": "det", "team": "ml"}, "annotations": {"b": "2", "c": "3"}}},
    ),
    (
        "finalizers-union-and-deleteFromPrimitiveList",
        {"metadata": {"finalizers": ["a", "b"]}},
        {"metadata": {"finalizers": ["b", "c"], "$deleteFromPrimitiveList/finalizers": ["a"]}},
        {"metadata": {"finalizers": ["b", "c"]}},
    ),
    (
        "spec-containers-under-pod",
        {"spec": {"containers": [ctr(image="a")]}},
        {"spec": {"containers": [ctr(env=[{"name": "X", "value": "1"}])]}},
        {"spec": {"containers": [ctr(image="a", env=[{"name": "X", "value": "1"}])]}},
    ),
]


@pytest.mark.parametrize(
    ("base", "overlay", "expected"), [c[1:] for c in POD_CASES], ids=[c[0] for c in POD_CASES]
)
def test_merge_pod_form(base: dict[str, Any], overlay: dict[str, Any], expected: dict[str, Any]) -> None:
    assert merge(base, overlay, schema=POD) == expected


def test_result_shares_nothing_with_the_inputs() -> None:
    base = {"containers": [ctr(env=[{"name": "A", "value": "1"}])], "volumes": [DATA_HOST]}
    overlay = {"containers": [ctr(args=["x"])], "tolerations": [GPU]}
    before = copy.deepcopy((base, overlay))
    result = merge(base, overlay)
    result["containers"][0]["env"][0]["value"] = "changed"
    result["containers"][0]["args"].append("y")
    result["volumes"][0]["hostPath"]["path"] = "/changed"
    result["tolerations"][0]["key"] = "changed"
    assert (base, overlay) == before


def test_merge_pods_accepts_bare_specs_and_pods() -> None:
    merged = merge_pods(
        {"containers": [ctr(image="a")], "nodeSelector": {"pool": "p"}},
        {},
        {"metadata": {"labels": {"x": "y"}}, "spec": {"containers": [ctr(args=["z"])]}},
        {"tolerations": [GPU]},
    )
    assert merged == {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"labels": {"x": "y"}},
        "spec": {
            "containers": [ctr(image="a", args=["z"])],
            "nodeSelector": {"pool": "p"},
            "tolerations": [GPU],
        },
    }


def test_as_pod() -> None:
    assert as_pod({"containers": []}) == {"apiVersion": "v1", "kind": "Pod", "spec": {"containers": []}}
    pod = {"kind": "Pod", "metadata": {"labels": {"x": "y"}}}
    assert as_pod(pod) == {"apiVersion": "v1", "kind": "Pod", "metadata": {"labels": {"x": "y"}}}
    assert as_pod(pod)["metadata"] is not pod["metadata"]


@pytest.mark.parametrize(
    ("base", "overlay", "message"),
    [
        ({}, {"$unknown": 1}, r"\$unknown"),
        ({"containers": [ctr()]}, {"containers": [ctr(**{"$patch": "merge"})]}, r"\$patch"),
        ({"securityContext": {}}, {"securityContext": {"$patch": "merge"}}, "merge"),
        ({"containers": [ctr()]}, {"containers": [{"name": "x", "$patch": "replace"}]}, r"\$patch"),
        ({"tolerations": [GPU]}, {"tolerations": [{"key": "k", "$patch": "delete"}]}, r"\$patch"),
        ({"containers": [ctr()]}, {"containers": [{"$patch": "delete"}]}, "merge key 'name'"),
        ({"containers": [ctr()]}, {"containers": [{"image": "x"}]}, "merge key 'name'"),
        (
            {"securityContext": {}},
            {"securityContext": {"$retainKeys": ["runAsUser"], "fsGroup": 1}},
            "fsGroup",
        ),
    ],
    ids=[
        "unknown-key-directive",
        "patch-merge-in-list",
        "patch-merge-in-map",
        "replace-item-with-content",
        "delete-in-atomic-list",
        "delete-without-merge-key",
        "item-without-merge-key",
        "retainKeys-not-listing-a-set-key",
    ],
)
def test_bad_directives_are_refused(base: dict[str, Any], overlay: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        merge(base, overlay)


# What the merge relies on, as the schema says it: (definition, field, strategies, merge key)
SCHEMA_FACTS = [
    ("io.k8s.api.core.v1.PodSpec", "containers", {"merge"}, "name"),
    ("io.k8s.api.core.v1.PodSpec", "initContainers", {"merge"}, "name"),
    ("io.k8s.api.core.v1.PodSpec", "volumes", {"merge", "retainKeys"}, "name"),
    ("io.k8s.api.core.v1.PodSpec", "imagePullSecrets", {"merge"}, "name"),
    ("io.k8s.api.core.v1.PodSpec", "hostAliases", {"merge"}, "ip"),
    ("io.k8s.api.core.v1.PodSpec", "tolerations", set(), None),
    ("io.k8s.api.core.v1.PodSpec", "nodeSelector", set(), None),
    ("io.k8s.api.core.v1.Container", "env", {"merge"}, "name"),
    ("io.k8s.api.core.v1.Container", "envFrom", set(), None),
    ("io.k8s.api.core.v1.Container", "volumeMounts", {"merge"}, "mountPath"),
    ("io.k8s.api.core.v1.Container", "ports", {"merge"}, "containerPort"),
    ("io.k8s.api.core.v1.Container", "command", set(), None),
    ("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta", "finalizers", {"merge"}, None),
]


@pytest.mark.parametrize(
    ("definition", "name", "strategies", "merge_key"),
    SCHEMA_FACTS,
    ids=[f"{d.rsplit('.', 1)[-1]}.{n}" for d, n, _, _ in SCHEMA_FACTS],
)
def test_schema_reports_merge_keys_and_strategies(
    definition: str, name: str, strategies: set[str], merge_key: str | None
) -> None:
    field = schema.field(definition, name)
    assert field is not None
    assert (field.patch_strategies, field.patch_merge_key) == (strategies, merge_key)


def test_merge_follows_the_schema_not_field_names(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make the schema say volumeMounts merge by `name`: the merge must follow it."""
    real = schema.field

    def fake(definition: str, name: str) -> schema.Field | None:
        found = real(definition, name)
        if found and (definition, name) == ("io.k8s.api.core.v1.Container", "volumeMounts"):
            return schema.Field(found.schema, found.definition, True, frozenset({"merge"}), "name")
        if found and (definition, name) == ("io.k8s.api.core.v1.PodSpec", "tolerations"):
            return schema.Field(found.schema, found.definition, True, frozenset({"merge"}), "key")
        return found

    monkeypatch.setattr(strategic_merge.kube_schema, "field", fake)
    base = {"containers": [ctr(volumeMounts=[{"name": "data", "mountPath": "/data"}])], "tolerations": [GPU]}
    overlay = {
        "containers": [ctr(volumeMounts=[{"name": "data", "mountPath": "/scratch"}])],
        "tolerations": [TEAM],
    }
    assert merge(base, overlay) == {
        "containers": [ctr(volumeMounts=[{"name": "data", "mountPath": "/scratch"}])],
        "tolerations": [TEAM, GPU],
    }


def test_schema_resolves_refs_and_items() -> None:
    mount = schema.resolve("io.k8s.api.core.v1.PodSpec", "containers", "volumeMounts")
    assert mount == schema.definition("io.k8s.api.core.v1.VolumeMount")
    assert schema.resolve("io.k8s.api.core.v1.Pod", "metadata", "annotations")["type"] == ["object", "null"]
    assert schema.resolve("io.k8s.api.core.v1.PodSpec", "noSuchField") is None
    with pytest.raises(KeyError, match="NoSuchKind"):
        schema.definition("io.k8s.api.core.v1.NoSuchKind")


def test_schema_loads_lazily_and_once() -> None:
    probe = (
        "import components.kube.schema as s, components.kube.strategic_merge as m\n"
        "assert s.document.cache_info().currsize == 0, 'loaded at import'\n"
        "m.merge_pods({'containers': [{'name': 'a'}]}, {'containers': [{'name': 'a', 'image': 'x'}]})\n"
        "m.merge({'volumes': []}, {'volumes': [{'name': 'v', 'emptyDir': {}}]})\n"
        "assert s.document.cache_info().misses == 1, s.document.cache_info()\n"
        "assert s.definitions.cache_info().misses == 1, s.definitions.cache_info()\n"
        "assert s.KUBERNETES_SCHEMA_VERSION == '1.33.0'\n"
    )
    subprocess.run([sys.executable, "-c", probe], cwd=ROOT, check=True)
