"""Pod spec merging follows strategic-merge-patch rules for pod specs."""

from __future__ import annotations

import copy

from components.pod_spec import as_pod, merge, merge_pods


def test_containers_merge_by_name_and_keep_fields_of_both():
    base = {
        "containers": [{"name": "determined-container", "volumeMounts": [{"name": "a", "mountPath": "/a"}]}]
    }
    overlay = {"containers": [{"name": "determined-container", "resources": {"limits": {"cpu": "2"}}}]}
    merged = merge(base, overlay)
    assert merged["containers"] == [
        {
            "name": "determined-container",
            "volumeMounts": [{"name": "a", "mountPath": "/a"}],
            "resources": {"limits": {"cpu": "2"}},
        }
    ]


def test_a_volume_with_the_same_name_replaces_the_default():
    base = {"volumes": [{"name": "data", "hostPath": {"path": "/data"}}, {"name": "shm", "emptyDir": {}}]}
    overlay = {"volumes": [{"name": "data", "hostPath": None, "persistentVolumeClaim": {"claimName": "pvc"}}]}
    merged = merge(base, overlay)
    assert merged["volumes"] == [
        {"name": "data", "persistentVolumeClaim": {"claimName": "pvc"}},
        {"name": "shm", "emptyDir": {}},
    ]


def test_new_named_items_are_appended_in_order():
    merged = merge({"containers": [{"name": "a"}]}, {"containers": [{"name": "b"}, {"name": "c"}]})
    assert [c["name"] for c in merged["containers"]] == ["a", "b", "c"]


def test_other_lists_are_appended_without_repeating_items():
    toleration = {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}
    other = {"key": "team", "operator": "Equal", "value": "ml", "effect": "NoSchedule"}
    merged = merge({"tolerations": [toleration]}, {"tolerations": [toleration, other]})
    assert merged["tolerations"] == [toleration, other]


def test_maps_merge_and_null_removes_a_key():
    merged = merge({"nodeSelector": {"a": "1", "b": "2"}}, {"nodeSelector": {"b": None, "c": "3"}})
    assert merged["nodeSelector"] == {"a": "1", "c": "3"}


def test_scalars_are_replaced():
    assert merge({"priorityClassName": "x"}, {"priorityClassName": "y"}) == {"priorityClassName": "y"}


def test_inputs_are_not_changed():
    base = {"containers": [{"name": "a", "env": [{"name": "X", "value": "1"}]}]}
    overlay = {"containers": [{"name": "a", "env": [{"name": "X", "value": "2"}]}]}
    before = (copy.deepcopy(base), copy.deepcopy(overlay))
    merge(base, overlay)
    assert (base, overlay) == before


def test_bare_spec_and_pod_forms_merge_alike():
    as_spec = merge_pods({"nodeSelector": {"a": "1"}}, {"spec": {"nodeSelector": {"b": "2"}}})
    assert as_spec == {"apiVersion": "v1", "kind": "Pod", "spec": {"nodeSelector": {"a": "1", "b": "2"}}}


def test_pod_metadata_is_kept():
    pod = as_pod({"apiVersion": "v1", "kind": "Pod", "metadata": {"labels": {"x": "y"}}, "spec": {}})
    assert pod["metadata"] == {"labels": {"x": "y"}}
