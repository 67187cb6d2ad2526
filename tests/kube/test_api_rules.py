"""The API server's own validation, rule by rule (components.kube.api_rules): each fact from
apimachinery v0.34.0 / pkg/apis/core/validation, accepted and refused at its edge."""

from __future__ import annotations

import pytest
from conftest import make_config, raw_config

from components.config import ConfigError, master_config_size
from components.kube import api_rules as r


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


# --- env valueFrom (validateEnvVarValueFrom) ------------------------------------------------------


@pytest.mark.parametrize(
    ("env", "found"),
    [
        ({"name": "A", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}}, None),
        ({"name": "A", "value": "", "valueFrom": {"secretKeyRef": {"name": "s", "key": "k"}}}, None),
        ({"name": "A", "value": "x"}, None),
        ({"name": "A", "value": "x", "valueFrom": {"secretKeyRef": {"name": "s", "key": "k"}}}, "`value`"),
        ({"name": "A", "valueFrom": {}}, "must name one of"),
        (
            {"name": "A", "valueFrom": {"fieldRef": {}, "resourceFieldRef": {"resource": "limits.cpu"}}},
            "names fieldRef and resourceFieldRef",
        ),
    ],
)
def test_env_value_from(env, found):
    problems = r.container_problems({"name": "c", "env": [env]})
    assert [w for w, _ in problems] == ([("env", 0, "valueFrom")] if found else [])
    assert found is None or found in _messages(problems)


# --- DNS (validatePodDNSConfig, MaxDNSNameservers, MaxDNSSearchPaths, MaxDNSSearchListChars) ------


@pytest.mark.parametrize(
    ("spec", "where"),
    [
        ({"dnsPolicy": "None"}, ("dnsConfig",)),
        ({"dnsPolicy": "None", "dnsConfig": {"searches": ["a"]}}, ("dnsConfig", "nameservers")),
        ({"dnsPolicy": "None", "dnsConfig": {"nameservers": ["10.0.0.10"]}}, None),
        ({"dnsPolicy": "ClusterFirst"}, None),
        ({"dnsConfig": {"nameservers": ["1.1.1.1", "8.8.8.8", "9.9.9.9"]}}, None),
        (
            {"dnsConfig": {"nameservers": ["1.1.1.1", "8.8.8.8", "9.9.9.9", "1.0.0.1"]}},
            ("dnsConfig", "nameservers"),
        ),
        ({"dnsConfig": {"nameservers": ["010.0.0.1", "::1"]}}, None),  # ParseIPSloppy: leading zeros
        ({"dnsConfig": {"nameservers": ["fe80::1%eth0"]}}, ("dnsConfig", "nameservers", 0)),
        ({"dnsConfig": {"nameservers": ["256.0.0.1"]}}, ("dnsConfig", "nameservers", 0)),
        ({"dnsConfig": {"searches": [f"s{i}" for i in range(32)]}}, None),
        ({"dnsConfig": {"searches": [f"s{i}" for i in range(33)]}}, ("dnsConfig", "searches")),
        ({"dnsConfig": {"searches": ["a" * 1024, "b" * 1023]}}, None),  # 2048 with the space
        ({"dnsConfig": {"searches": ["a" * 1024, "b" * 1024]}}, ("dnsConfig", "searches")),
        (
            {"dnsConfig": {"options": [{"name": "ndots", "value": "2"}, {"value": "1"}]}},
            ("dnsConfig", "options", 1, "name"),
        ),
    ],
)
def test_dns(spec, where):
    assert [w for w, _ in r.pod_spec_problems(spec)] == ([where] if where else [])


# --- topology spread (validateTopologySpreadConstraints) ------------------------------------------


def _spread(**fields):
    return {
        "maxSkew": 1,
        "topologyKey": "kubernetes.io/hostname",
        "whenUnsatisfiable": "DoNotSchedule",
        **fields,
    }


@pytest.mark.parametrize(
    ("constraints", "where"),
    [
        ([_spread()], None),
        ([_spread(maxSkew=0)], (0, "maxSkew")),
        ([_spread(maxSkew=-2)], (0, "maxSkew")),
        ([_spread(topologyKey="")], (0, "topologyKey")),
        ([_spread(minDomains=3)], None),
        ([_spread(minDomains=0)], (0, "minDomains")),
        ([_spread(minDomains=2, whenUnsatisfiable="ScheduleAnyway")], (0, "minDomains")),
        ([_spread(nodeTaintsPolicy="Honor", nodeAffinityPolicy="Ignore")], None),
        ([_spread(nodeTaintsPolicy="Always")], (0, "nodeTaintsPolicy")),
        ([_spread(), _spread(maxSkew=2)], (0,)),
        ([_spread(), _spread(whenUnsatisfiable="ScheduleAnyway")], None),
    ],
)
def test_topology_spread(constraints, where):
    found = r.pod_spec_problems({"topologySpreadConstraints": constraints})
    assert [w for w, _ in found] == ([("topologySpreadConstraints", *where)] if where else [])


# --- mounts of task pods: the master's volumes (Determined v0.38.1 kubernetesrm) ------------------


@pytest.mark.parametrize(
    ("name", "ok"),
    [
        ("det-shm-volume", True),
        ("archive-volume", True),
        ("entrypoint-volume", True),
        ("additional-files-volume", True),
        ("det-host-volume-0", True),
        ("root-volume-12", True),
        ("det-host-volume-01", False),  # fmt %d writes no leading zero
        ("det-host-volume", False),
        ("shm", False),
    ],
)
def test_master_task_volumes(name, ok):
    assert r.master_task_volume(name) is ok


def test_task_mounts_name_a_volume_someone_gives():
    spec = {
        "volumes": [{"name": "own", "emptyDir": {}}],
        "containers": [
            {
                "name": "c",
                "volumeMounts": [
                    {"name": "own", "mountPath": "/own"},
                    {"name": "det-shm-volume", "mountPath": "/dev/shm"},
                    {"name": "layer", "mountPath": "/layer"},
                    {"name": "missing", "mountPath": "/m"},
                ],
            }
        ],
    }
    found = r.task_mount_problems(spec, {"layer"})
    assert [w for w, _ in found] == [("containers", 0, "volumeMounts", 3, "name")]
    assert "no volume named 'missing'" in _messages(found)


def _gc_mount(name: str) -> dict:
    return {
        "containers": [{"name": "determined-container", "volumeMounts": [{"name": name, "mountPath": "/x"}]}]
    }


def test_checkpoint_gc_mounts_are_checked_against_every_layer():
    raw = raw_config()
    raw["taskContainerDefaults"] = {"checkpointGcPodSpec": _gc_mount("scratch")}
    with pytest.raises(ConfigError) as refused:
        make_config(**raw)
    assert [p.path for p in refused.value.problems] == [
        "taskContainerDefaults.checkpointGcPodSpec.containers[0].volumeMounts[0].name"
    ]
    # The GC spec is merged over the default pod specs: a volume of a pool's podSpec is given.
    raw["resourcePools"][1]["podSpec"] = {"volumes": [{"name": "scratch", "emptyDir": {}}]}
    make_config(**raw)


def test_checkpoint_gc_mounts_the_project_volumes(monkeypatch):
    from components.determined import resource_pools

    raw = raw_config()
    raw["taskContainerDefaults"] = {"checkpointGcPodSpec": _gc_mount("from-project")}
    layer = {"spec": {"volumes": [{"name": "from-project", "emptyDir": {}}]}}
    monkeypatch.setattr(resource_pools, "project_layer", lambda cfg: layer)
    make_config(**raw)


def test_cpu_and_gpu_pod_spec_mounts_are_left_to_experiments():
    # An experiment's own pod_spec is merged over these and may bring the volume.
    make_config(taskContainerDefaults={"gpuPodSpec": _gc_mount("from-experiment")})


# --- attack 22, pod specs: volume types, host aliases, sysctls, mounts, containers -----------


@pytest.mark.parametrize(
    ("volume", "found"),
    [
        ({"name": "v", "emptyDir": {}}, []),
        ({"name": "v", "emptyDir": {"sizeLimit": "0"}}, []),
        ({"name": "v", "emptyDir": {"sizeLimit": "+5Gi"}}, []),
        ({"name": "v", "emptyDir": {"sizeLimit": "-5Gi"}}, [("emptyDir", "sizeLimit")]),
        ({"name": "v", "emptyDir": {"sizeLimit": -1}}, [("emptyDir", "sizeLimit")]),
        ({"name": "v", "emptyDir": {}, "configMap": {"name": "x"}}, [("configMap",)]),
        ({"name": "v", "emptyDir": None, "configMap": {"name": "x"}}, []),
        ({"name": "v", "image": {"reference": "r:1"}}, []),
        ({"name": "v"}, [()]),
    ],
)
def test_volume_types(volume, found):
    """validateVolumeSource: one type (a null one is unset), emptyDir.sizeLimit >= 0."""
    assert [w for w, _ in r.volume_source_problems(volume)] == found


def test_every_volume_type_counts():
    for source in r.VOLUME_SOURCES:
        assert r.volume_source_problems({"name": "v", source: {}}) == [], source
        assert r.volume_source_problems(
            {"name": "v", source: {}, "emptyDir" if source != "emptyDir" else "nfs": {}}
        )


@pytest.mark.parametrize(
    ("alias", "found"),
    [
        ({"ip": "10.0.0.1", "hostnames": ["cache.local"]}, []),
        ({"ip": "010.000.000.001"}, []),  # ParseIPSloppy takes leading zeros (legacy field)
        ({"ip": "fd00::1"}, []),
        ({"ip": "not-an-ip"}, [("ip",)]),
        ({"ip": "10.0.0.256"}, [("ip",)]),
        ({"ip": "fe80::1%eth0"}, [("ip",)]),
        ({"ip": "10.0.0.1", "hostnames": ["ok", "Not_ok"]}, [("hostnames", 1)]),
    ],
)
def test_host_aliases(alias, found):
    """ValidateHostAliases: an IP, DNS-subdomain hostnames."""
    assert [w for w, _ in r.host_alias_problems(alias)] == found


@pytest.mark.parametrize(
    ("name", "ok"),
    [
        ("kernel.shm_rmid_forced", True),
        ("net.ipv4.ip_local_port_range", True),
        ("net/ipv4/conf/eth0.100/forwarding", True),  # '/' joins parts too (a VLAN interface)
        ("kernel..shm", False),
        ("Kernel.shm", False),
        ("net.ipv4.", False),
        ("_net", False),
        ("a" * 253, True),
        ("a" * 254, False),
    ],
)
def test_sysctl_names(name, ok):
    """IsValidSysctlName: SysctlContainSlashFmt, at most 253."""
    assert (r.sysctls_problems([{"name": name, "value": "1"}]) == []) is ok


def test_a_sysctl_set_twice():
    found = r.sysctls_problems([{"name": "kernel.sem"}, {"name": "kernel.sem"}])
    assert [w for w, _ in found] == [(1, "name")]


@pytest.mark.parametrize(
    ("mount", "found"),
    [
        ({"subPath": "a/b"}, []),
        ({"subPath": "a..b/..c"}, []),
        ({"subPath": "../etc"}, [("subPath",)]),
        ({"subPath": "a/../../b"}, [("subPath",)]),
        ({"subPath": "/etc"}, [("subPath",)]),
        ({"subPathExpr": "$(POD_NAME)"}, []),
        ({"subPathExpr": "$(POD_NAME)/.."}, [("subPathExpr",)]),
        ({"subPath": "a", "subPathExpr": "b"}, [("subPathExpr",)]),
    ],
)
def test_sub_paths(mount, found):
    """ValidateVolumeMounts / validateLocalDescendingPath."""
    assert [w for w, _ in r.sub_path_problems({"name": "v", "mountPath": "/m", **mount})] == found


@pytest.mark.parametrize(
    ("path", "ok"),
    [
        *[(p, True) for p in r.ENV_FIELD_PATHS],
        ("metadata.labels['team']", True),
        ("metadata.annotations['Example.com/Owner']", True),  # annotation keys: case aside
        ("metadata.labels['Example.com/Owner']", False),
        ("metadata.labels", False),
        ("metadata.annotations", False),
        ("spec.bogus", False),
        ("status.phase", False),  # a pod field, not one env vars may read
    ],
)
def test_env_field_refs(path, ok):
    """validateObjectFieldSelector with validEnvDownwardAPIFieldPathExpressions."""
    assert (r.field_ref_problem({"fieldPath": path}) is None) is ok


def test_env_field_ref_api_version():
    assert r.field_ref_problem({"apiVersion": "v1", "fieldPath": "metadata.name"}) is None
    assert "apiVersion 'v2'" in r.field_ref_problem({"apiVersion": "v2", "fieldPath": "metadata.name"})


@pytest.mark.parametrize(
    ("image", "is_pod", "ok"),
    [
        ("busybox:1.36", True, True),
        ("busybox:1.36 ", True, False),
        ("\tbusybox:1.36", True, False),
        ("busybox:1.36\u3000", True, False),
        ("busybox:1.36 ", False, True),  # a pod template is spared
    ],
)
def test_container_image_whitespace_in_a_pod(image, is_pod, ok):
    """validateContainerOnlyForPod."""
    found = r.container_problems({"name": "c", "image": image}, is_pod=is_pod)
    assert (found == []) is ok


@pytest.mark.parametrize(
    ("init", "policy", "ok"),
    [(False, None, True), (False, "Always", False), (True, "Always", True), (True, "Never", False)],
)
def test_container_restart_policy(init, policy, ok):
    """validateContainers: not on a regular container; validateInitContainerRestartPolicy."""
    container = {"name": "c", "image": "i:1", **({"restartPolicy": policy} if policy else {})}
    assert (r.container_problems(container, init=init) == []) is ok


def test_pod_spec_reports_the_new_rules_at_their_paths():
    spec = {
        "hostAliases": [{"ip": "x"}],
        "volumes": [{"name": "v", "hostPath": {"path": "/x"}, "nfs": {"server": "s", "path": "/p"}}],
        "securityContext": {"sysctls": [{"name": "Bad"}]},
        "containers": [
            {"name": "c", "image": " i:1", "restartPolicy": "Always", "volumeMounts": [{"subPath": ".."}]}
        ],
        "initContainers": [{"name": "c", "image": "i:1"}],
    }
    found = [w for w, _ in r.pod_spec_problems(spec, is_pod=True)]
    assert found == [
        ("volumes", 0, "nfs"),
        ("hostAliases", 0, "ip"),
        ("securityContext", "sysctls", 0, "name"),
        ("containers", 0, "image"),
        ("containers", 0, "restartPolicy"),
        ("containers", 0, "volumeMounts", 0, "subPath"),
        ("initContainers", 0, "name"),
    ]


def _problems(**raw) -> list[str]:
    with pytest.raises(ConfigError) as refused:
        make_config(**raw)
    return [f"{p.path}: {p.message}" for p in refused.value.problems]


def test_an_init_container_may_not_take_the_task_containers_name():
    """The master always runs the task in determined-container: a pod spec naming no container
    still clashes (the config, not the plan's own check, refuses it)."""
    spec = {"initContainers": [{"name": "determined-container", "image": "busybox:1.36"}]}
    assert _problems(taskContainerDefaults={"gpuPodSpec": spec}) == [
        "taskContainerDefaults.gpuPodSpec.initContainers[0].name: container name 'determined-container' "
        "is used twice (the master runs the task in a container of that name)"
    ]
    make_config(taskContainerDefaults={"gpuPodSpec": {"initContainers": [{"name": "warm", "image": "b:1"}]}})


@pytest.mark.parametrize("value", ["x\0y", "x\x1by", "x\u202ey"])
def test_annotation_values_hold_no_control_characters(value):
    assert _problems(master={"podAnnotations": {"team": value}})[0].startswith(
        "master.podAnnotations: annotation 'team' value must be text"
    )
    spec = {"metadata": {"annotations": {"team": value}}, "spec": {}}
    assert _problems(taskContainerDefaults={"cpuPodSpec": spec})[0].startswith(
        "taskContainerDefaults.cpuPodSpec.metadata.annotations: annotation 'team' value"
    )


def test_annotation_values_may_span_lines():
    """JSON of several lines is a common annotation value."""
    value = '{\n\t"checks": []\n}\n'
    make_config(
        master={"podAnnotations": {"ad.datadoghq.com/checks": value}},
        taskContainerDefaults={"cpuPodSpec": {"metadata": {"annotations": {"a": value}}, "spec": {}}},
    )
