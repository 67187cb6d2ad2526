"""The API server's own validation, rule by rule (deploy.kube.api_rules): each fact from
apimachinery v0.34.0 / pkg/apis/core/validation, accepted and refused at its edge."""

from __future__ import annotations

import pytest
from conftest import make_config, raw_config

from deploy.config import ConfigError, master_config_size
from deploy.kube import api_rules as r


def _pod(spec: dict, labels: dict | None = None, annotations: dict | None = None) -> dict:
    return {"metadata": {"labels": labels or {}, "annotations": annotations or {}}, "spec": spec}


def _messages(found) -> str:
    return "\n".join(f"{'.'.join(map(str, w))}: {m}" for w, m in found)


# --- qualified names, label values, annotations (validation.go:41, :165; objectmeta.go:36-67) --


@pytest.mark.parametrize(
    "key", ["a", "app.kubernetes.io/name", "A_b.c-D", "x" * 63, "example.com/" + "k" * 63]
)
def test_qualified_names_accepted(key):
    assert r.label_key_problem(key) is None


@pytest.mark.parametrize(
    ("key", "why"),
    [
        ("bad key!", "name part"),
        ("x" * 64, "name part"),
        ("-a", "name part"),
        ("a/b/c", "at most one '/'"),
        ("/a", "invalid prefix ''"),
        ("Example.com/a", "invalid prefix 'Example.com'"),
        ("example.com/", "name part"),
    ],
)
def test_qualified_names_refused(key, why):
    assert why in (r.label_key_problem(key) or "")


def test_annotation_keys_are_judged_in_lower_case():
    """objectmeta.go:48: an upper-case prefix is fine on an annotation, not on a label."""
    assert r.annotation_key_problem("Example.com/Note") is None
    assert r.label_key_problem("Example.com/Note") is not None


@pytest.mark.parametrize(
    ("value", "ok"), [("", True), ("v" * 63, True), ("v" * 64, False), ("a b", False), ("-a", False)]
)
def test_label_values(value, ok):
    assert (r.label_value_problem("k", value) is None) is ok


def test_annotations_total_at_most_256_kib_of_keys_and_values():
    assert r.annotations_problems({"k": "x" * (256 * 1024 - 1)}) == []
    (problem,) = r.annotations_problems({"k": "x" * (256 * 1024)})
    assert "262145 bytes" in problem and "at most 262144" in problem


def test_annotation_size_counts_bytes_not_characters():
    assert r.annotations_size({"k": "é"}) == 3


# --- names per kind (generic.go, path/name.go, core validation) --------------------------------


@pytest.mark.parametrize(
    ("kind", "name", "ok"),
    [
        ("Namespace", "det-a100", True),
        ("Namespace", "det.a100", False),  # a DNS label
        ("Service", "det-master", True),
        ("Service", "1det", False),  # DNS-1035: a letter first
        ("ConfigMap", "det.config", True),  # a DNS subdomain
        ("ConfigMap", "Det", False),
        ("Role", "system:det", True),  # path segment names
        ("ClusterRoleBinding", "a/b", False),
        ("Role", "..", False),
        ("CronJob", "c" * 52, True),
        ("CronJob", "c" * 53, False),
        ("Job", "j" * 63, True),
        ("Job", "j" * 64, False),
        ("Certificate", "x" * 253, True),  # custom resources: DNS subdomain
        ("Certificate", "x" * 254, False),
    ],
)
def test_names_per_kind(kind, name, ok):
    assert (r.name_problem(kind, name) is None) is ok


def test_metadata_namespace_is_a_dns_label():
    found = r.metadata_problems("ConfigMap", {"name": "c", "namespace": "Det"})
    assert [w for w, _ in found] == [("metadata", "namespace")]


# --- env names: strict unless relaxed; '=' never (validation.go:398-430, KEP-4369) ---------------


@pytest.mark.parametrize(
    ("name", "strict", "relaxed"),
    [
        ("MY_VAR", True, True),
        ("my.env-name", True, True),
        ("1ST", False, True),
        ("A B", False, True),
        ("..x", False, True),
        ("A=B", False, False),
        ("é", False, False),
    ],
)
def test_env_names(name, strict, relaxed):
    assert (r.env_name_problem(name) is None) is strict
    assert (r.env_name_problem(name, relaxed=True) is None) is relaxed


# --- ports, keys ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "ok"),
    [
        ("http", True),
        ("metrics-9100", True),
        ("x" * 15, True),
        ("x" * 16, False),
        ("9100", False),
        ("a--b", False),
        ("-a", False),
        ("HTTP", False),
    ],
)
def test_port_names(name, ok):
    assert (r.port_name_problem(name) is None) is ok


@pytest.mark.parametrize(
    ("key", "ok"),
    [("master.yaml", True), ("a_b-c", True), ("a/b", False), ("..a", False), ("k" * 254, False)],
)
def test_config_keys(key, ok):
    assert (r.config_key_problem(key) is None) is ok


# --- tolerations and taints (ValidateTolerations, validateTaintEffect) ----------------------------


@pytest.mark.parametrize(
    ("toleration", "where"),
    [
        ({"key": "k", "operator": "Exists", "value": "v"}, ("value",)),
        ({"operator": "Equal", "value": "v"}, ("operator",)),
        ({"operator": "Exists"}, None),  # tolerates every taint
        ({"key": "k", "effect": "NoSchedule", "tolerationSeconds": 1}, ("effect",)),
        ({"key": "k", "effect": "NoExecute", "tolerationSeconds": 1}, None),
        ({"key": "k", "operator": "In"}, ("operator",)),
        ({"key": "k", "effect": "NoAdmit"}, ("effect",)),
        ({"key": "bad key!", "operator": "Exists"}, ("key",)),
        ({"key": "k", "value": "v" * 64}, ("value",)),
    ],
)
def test_tolerations(toleration, where):
    found = r.toleration_problems(toleration)
    assert [w for w, _ in found] == ([where] if where else []), found


def test_taints():
    assert r.taint_problems({"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}) == []
    assert [w for w, _ in r.taint_problems({"key": "k", "effect": "NO_SCHEDULE"})] == [("effect",)]


# --- resources (validateResourceRequirements, helpers.go) ----------------------------------------


@pytest.mark.parametrize(
    ("resources", "found"),
    [
        ({"requests": {"cpu": "500m"}, "limits": {"cpu": "1"}}, None),
        ({"requests": {"cpu": "2"}, "limits": {"cpu": "1"}}, "cpu request is above its limit"),
        (
            {"requests": {"memory": "1Gi"}, "limits": {"memory": "1000Mi"}},
            "memory request is above its limit",
        ),
        ({"requests": {"nvidia.com/gpu": "1"}, "limits": {"nvidia.com/gpu": "1"}}, None),
        ({"requests": {"nvidia.com/gpu": "1"}, "limits": {"nvidia.com/gpu": "2"}}, "must equal its limit"),
        ({"requests": {"nvidia.com/gpu": "1"}}, "needs a limit equal to its request"),
        ({"limits": {"nvidia.com/gpu": "500m"}}, "whole number"),
        ({"requests": {"hugepages-2Mi": "2Mi"}}, "needs a limit"),
        ({"limits": {"gpu": "1"}}, "is not a container resource"),
        ({"limits": {"cpu": "-1"}}, None),  # not a quantity the project parses: the schema check's
    ],
)
def test_resources(resources, found):
    problems = _messages(r.resources_problems(resources))
    assert (found in problems) if found else problems == "", problems


# --- pods ----------------------------------------------------------------------------------------


def test_pod_spec_rules_report_each_at_its_path():
    spec = {
        "containers": [
            {
                "name": "a",
                "ports": [{"name": "http", "containerPort": 80}, {"name": "http", "containerPort": 81}],
            },
            {
                "name": "a",
                "volumeMounts": [{"name": "v", "mountPath": "/v"}, {"name": "v", "mountPath": "/v"}],
            },
        ],
        "initContainers": [{"name": "Init"}],
        "volumes": [{"name": "v", "emptyDir": {}}],
        "hostname": "Host",
        "activeDeadlineSeconds": 0,
    }
    paths = [w for w, _ in r.pod_spec_problems(spec)]
    assert paths == [
        ("containers", 0, "ports", 1, "name"),
        ("containers", 1, "volumeMounts", 1, "mountPath"),
        ("containers", 1, "name"),
        ("initContainers", 0, "name"),
        ("hostname",),
        ("activeDeadlineSeconds",),
    ]


def test_pod_labels_and_annotations():
    found = r.pod_problems(_pod({}, labels={"team": "t" * 64}, annotations={"bad key!": ""}))
    assert [w for w, _ in found] == [("metadata", "labels"), ("metadata", "annotations")]


def test_mounts_name_volumes_of_whole_pods():
    spec = {"containers": [{"name": "c", "volumeMounts": [{"name": "missing", "mountPath": "/m"}]}]}
    assert r.pod_spec_problems(spec) == []  # a task pod spec gets the master's volumes merged in
    assert "no volume named 'missing'" in _messages(r.volume_mount_problems(spec))


# --- Secrets and ConfigMaps (MaxSecretSize, ValidateSecret, ValidateConfigMap) --------------------


def test_secret_data_is_counted_decoded():
    secret = {"kind": "Secret", "data": {"k": "eHh4eHh4eHh4eA=="}, "stringData": {"s": "abc"}}
    assert r.data_size(secret) == 13


def test_one_mib_of_data_at_most():
    ok = {"kind": "ConfigMap", "data": {"a": "x" * (2**20 - 1)}, "binaryData": {"b": "eA=="}}
    assert r.data_problems(ok) == []
    over = {"kind": "ConfigMap", "data": {"a": "x" * 2**20}, "binaryData": {"b": "eA=="}}
    assert "1048577 bytes" in _messages(r.data_problems(over))


# --- the master's configuration Secret at config time ---------------------------------------------


def test_master_config_size_is_refused_at_its_largest_part():
    raw = raw_config()
    raw["resourcePools"][1]["description"] = "d" * (2 * 2**20)
    with pytest.raises(ConfigError) as refused:
        make_config(**raw)
    (problem,) = refused.value.problems
    assert problem.path == "resourcePools[1].description"
    assert "holds at most 1048576 (1 MiB)" in problem.message


def test_task_pod_specs_count_once_per_pool():
    # The task container defaults' pod specs are merged into every pool's: 40 KB of them
    # fills the Secret when there are 30 pools.
    raw = raw_config()
    raw["taskContainerDefaults"] = {"cpuPodSpec": {"metadata": {"annotations": {"a": "x" * 40_000}}}}
    pools = [{"name": f"p{i}", "nodePool": raw["resourcePools"][1]["nodePool"]} for i in range(30)]
    raw["resourcePools"] = [*raw["resourcePools"], *pools]
    with pytest.raises(ConfigError) as refused:
        make_config(**raw)
    assert [p.path for p in refused.value.problems] == ["taskContainerDefaults.cpuPodSpec"]


def test_a_small_master_config_fits():
    found = []
    master_config_size.master_config_size_problems(make_config(), lambda path, m: found.append(path))
    assert found == []
