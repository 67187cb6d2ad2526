"""Kueue: the chart values, the manager Configuration, and the ResourceFlavor / ClusterQueue /
LocalQueue objects and queue label of each pool, checked against Kueue 0.19.2's CRD schemas,
its chart's value keys and its Configuration's field names."""

from __future__ import annotations

import copy
import json
import re

import pytest
import yaml
from conftest import BASE, ROOT, make_config
from crds import SCHEMA_DIR, crd_problems, scopes

from components.addons import kueue
from components.config import GPU_TAINT, ConfigError
from components.config.addons import IMAGE_PULL_SECONDS, NODE_PROVISION_SECONDS, KueueConfig
from components.config.resource_pools import determined_owned, pod_form_problem
from components.determined import resource_pools

KEY_SET = ROOT / "tests" / "data" / "chart-keys" / "kueue-0.19.2.txt"
NAMESPACE_LABEL = "kubernetes.io/metadata.name"
GPU_NOMINAL = {"nvidia.com/gpu": "8", "cpu": "96", "memory": "1Ti"}
CPU_NOMINAL = {"cpu": "32", "memory": "128Gi"}
LABEL_VALUE = re.compile(r"([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)?")

# Field names of Kueue's Configuration at v0.19.2 (apis/config/v1beta2/configuration_types.go,
# json tags; ControllerManager is inlined): a misspelt key would be ignored or refused.
CONFIGURATION_FIELDS = {
    "apiVersion",
    "kind",
    "namespace",
    "manageJobsWithoutQueueName",
    "managedJobsNamespaceSelector",
    "internalCertManagement",
    "waitForPodsReady",
    "clientConnection",
    "integrations",
    "multiKueue",
    "fairSharing",
    "admissionFairSharing",
    "resources",
    "featureGates",
    "objectRetentionPolicies",
    "visibilityServer",
    # ControllerManager
    "webhook",
    "leaderElection",
    "metrics",
    "health",
    "pprofBindAddress",
    "controller",
    "tls",
}
WAIT_FOR_PODS_READY_FIELDS = {"timeout", "blockAdmission", "requeuingStrategy", "recoveryTimeout"}
REQUEUING_STRATEGY_FIELDS = {"timestamp", "backoffLimitCount", "backoffBaseSeconds", "backoffMaxSeconds"}
INTEGRATIONS_FIELDS = {"frameworks", "externalFrameworks", "labelKeysToCopy"}

# A GPU pool with two taints of its own besides the GPU taint, and a CPU pool with none.
NODE_POOLS = [
    {"name": "system", "nodeSelector": {"pool": "system"}},
    {
        "name": "a100",
        "gpu": {"type": "nvidia-tesla-a100", "count": 4},
        "nodeSelector": {"pool": "a100", "cloud.google.com/gke-accelerator": "nvidia-tesla-a100"},
        "taints": [
            {"key": "dedicated", "value": "ml", "effect": "NoSchedule"},
            {"key": "spot", "effect": "NoExecute"},
        ],
    },
]
RESOURCE_POOLS = [
    {"name": "a100", "nodePool": "a100", "namespace": "det-a100"},
    {"name": "aux", "nodePool": "system", "namespace": "det-aux"},
    {"name": "Team_B.gpu", "nodePool": "a100"},  # no namespace: det-team-b-gpu
]


@pytest.fixture(scope="module")
def cfg():
    return make_config(nodePools=NODE_POOLS, resourcePools=RESOURCE_POOLS)


@pytest.fixture(scope="module")
def gpu_pool(cfg):
    return cfg.node_pool("a100")


@pytest.fixture(scope="module")
def cpu_pool(cfg):
    return cfg.node_pool("system")


def rp_named(cfg, name):
    return next(rp for rp in cfg.resource_pools if rp.name == name)


def queue_for(cfg, name, nominal=GPU_NOMINAL, cohort=None, namespaces=None):
    rp = rp_named(cfg, name)
    namespaces = namespaces or [rp.namespace_name]
    return kueue.cluster_queue(
        rp, kueue.flavor_name(cfg.node_pool(rp.node_pool)), nominal, cohort, namespaces
    )


def all_objects(cfg):
    objects = [kueue.resource_flavor(pool) for pool in cfg.node_pools]
    for rp in cfg.resource_pools:
        node_pool = cfg.node_pool(rp.node_pool)
        nominal = GPU_NOMINAL if node_pool.gpu else CPU_NOMINAL
        for cohort in (None, "determined"):
            for namespaces in ([rp.namespace_name], [rp.namespace_name, "determined"]):
                objects.append(
                    kueue.cluster_queue(rp, kueue.flavor_name(node_pool), nominal, cohort, namespaces)
                )
        objects.append(kueue.local_queue(rp, rp.namespace_name))
    return objects


def spec_of(obj):
    return obj["spec"]


# --- the objects against the CRD schemas -------------------------------------------------------


def test_every_object_matches_its_crd_schema(cfg):
    objects = all_objects(cfg)
    assert {(o["apiVersion"], o["kind"]) for o in objects} == {
        (kueue.API, "ResourceFlavor"),
        (kueue.API, "ClusterQueue"),
        (kueue.API, "LocalQueue"),
    }
    for obj in objects:
        assert crd_problems(obj) == [], obj["metadata"]["name"]


def test_the_schema_files_are_kueue_v1beta2_with_a_scope_each():
    files = sorted(path.name for path in SCHEMA_DIR.glob("*.json"))
    for kind in ("ClusterQueue", "LocalQueue", "ResourceFlavor"):
        assert f"kueue.x-k8s.io_v1beta2_{kind}.json" in files
    assert set(files) <= set(scopes()), (
        "a schema file without a scope row in tests/data/crd-schemas/README.md"
    )


def _misspell(obj, path, wrong):
    """A deep copy of obj with the key at path (a tuple) renamed to wrong."""
    bad = copy.deepcopy(obj)
    parent = bad
    for part in path[:-1]:
        parent = parent[part]
    parent[wrong] = parent.pop(path[-1])
    return bad


@pytest.mark.parametrize(
    ("make", "path", "wrong", "expected"),
    [
        (
            "queue",
            ("spec", "namespaceSelector"),
            "namespaceSelecter",
            "spec: unknown field 'namespaceSelecter'",
        ),
        ("queue", ("spec", "cohortName"), "cohort", "spec: unknown field 'cohort'"),  # the v1beta1 name
        (
            "queue",
            ("spec", "namespaceSelector", "matchLabels"),
            "matchLabel",
            "spec.namespaceSelector: unknown field 'matchLabel'",
        ),
        (
            "queue",
            ("spec", "resourceGroups", 0, "flavors", 0, "resources", 0, "nominalQuota"),
            "nominalquota",
            "spec.resourceGroups[0].flavors[0].resources[0]: unknown field 'nominalquota'",
        ),
        ("flavor", ("spec", "nodeLabels"), "nodeLabel", "spec: unknown field 'nodeLabel'"),
        ("flavor", ("spec", "tolerations"), "toleration", "spec: unknown field 'toleration'"),
        ("local", ("spec", "clusterQueue"), "clusterqueue", "spec: unknown field 'clusterqueue'"),
        ("local", ("spec",), "specs", "(object): unknown field 'specs'"),
    ],
)
def test_a_misspelt_field_is_caught(cfg, gpu_pool, make, path, wrong, expected):
    obj = {
        "queue": lambda: queue_for(cfg, "a100", cohort="determined"),
        "flavor": lambda: kueue.resource_flavor(gpu_pool),
        "local": lambda: kueue.local_queue(rp_named(cfg, "a100"), "det-a100"),
    }[make]()
    assert crd_problems(obj) == []
    problems = crd_problems(_misspell(obj, path, wrong))
    assert expected in problems, problems


def test_values_and_metadata_the_schema_refuses_are_caught(cfg, gpu_pool):
    queue = queue_for(cfg, "a100")
    bad = copy.deepcopy(queue)
    bad["spec"]["queueingStrategy"] = "FIFO"
    assert any(p.startswith("spec.queueingStrategy:") for p in crd_problems(bad))
    bad = copy.deepcopy(queue)
    bad["spec"]["resourceGroups"][0]["flavors"].append(bad["spec"]["resourceGroups"][0]["flavors"][0])
    assert any("duplicate entry" in p for p in crd_problems(bad))  # list-type map, keyed by name
    bad = copy.deepcopy(queue)
    bad["spec"]["resourceGroups"][0]["flavors"][0]["resources"][0]["nominalQuota"] = "eight"
    assert any(
        p.startswith("spec.resourceGroups[0].flavors[0].resources[0].nominalQuota:")
        for p in crd_problems(bad)
    )
    bad = copy.deepcopy(queue)
    bad["status"] = {}
    assert "status: written by the controller, not by the plan" in crd_problems(bad)
    assert crd_problems({**queue, "apiVersion": "kueue.x-k8s.io/v1beta3"})[0].startswith(
        "(object): no schema"
    )

    local = kueue.local_queue(rp_named(cfg, "a100"), "det-a100")
    del local["metadata"]["namespace"]
    assert crd_problems(local) == ["metadata.namespace: required (namespaced kind)"]
    flavor = kueue.resource_flavor(gpu_pool)
    flavor["metadata"]["namespace"] = "default"
    assert crd_problems(flavor) == ["metadata.namespace: set on a cluster-scoped kind"]
    del flavor["metadata"]["namespace"], flavor["metadata"]["labels"]
    assert crd_problems(flavor) == ["metadata.labels: required"]


# --- ResourceFlavor -------------------------------------------------------------------------------


def test_the_flavor_selects_the_node_pool_and_tolerates_each_taint_gpu_first(gpu_pool):
    flavor = kueue.resource_flavor(gpu_pool)
    assert flavor["metadata"]["name"] == kueue.flavor_name(gpu_pool) == "determined-a100"
    assert "namespace" not in flavor["metadata"]
    assert flavor["metadata"]["labels"]["app.kubernetes.io/name"] == "kueue"
    spec = spec_of(flavor)
    assert spec["nodeLabels"] == gpu_pool.selector
    assert spec["nodeLabels"] == {"pool": "a100", "cloud.google.com/gke-accelerator": "nvidia-tesla-a100"}
    assert spec["tolerations"] == [
        GPU_TAINT.toleration,
        {"key": "dedicated", "operator": "Equal", "value": "ml", "effect": "NoSchedule"},
        {"key": "spot", "operator": "Exists", "effect": "NoExecute"},
    ]
    assert spec["tolerations"][0] == {
        "key": "nvidia.com/gpu",
        "operator": "Equal",
        "value": "present",
        "effect": "NoSchedule",
    }
    # Kueue only adds tolerations and node labels; it never needs nodeTaints when they match.
    assert set(spec) == {"nodeLabels", "tolerations"}


def test_a_pool_without_taints_gets_a_flavor_without_tolerations(cpu_pool):
    spec = spec_of(kueue.resource_flavor(cpu_pool))
    assert spec == {"nodeLabels": {"pool": "system"}}


# --- ClusterQueue ---------------------------------------------------------------------------------


def test_the_cluster_queue_admits_exactly_the_namespaces_given(cfg):
    for name, namespace in (("a100", "det-a100"), ("Team_B.gpu", "det-team-b-gpu")):
        rp = rp_named(cfg, name)
        assert rp.namespace_name == namespace
        spec = spec_of(queue_for(cfg, name))
        assert spec["namespaceSelector"] == {"matchLabels": {NAMESPACE_LABEL: namespace}}
    spec = spec_of(queue_for(cfg, "a100", namespaces=["det-a100", "determined", "det-aux", "det-a100"]))
    assert spec["namespaceSelector"] == {
        "matchExpressions": [
            {"key": NAMESPACE_LABEL, "operator": "In", "values": ["det-a100", "det-aux", "determined"]}
        ]
    }
    with pytest.raises(ValueError, match="at least one namespace"):
        kueue.cluster_queue(rp_named(cfg, "a100"), "determined-a100", GPU_NOMINAL, None, [])


def test_the_cluster_queue_covers_the_given_resources_on_one_flavor(cfg):
    queue = queue_for(cfg, "a100")
    assert queue["metadata"]["name"] == "determined-a100"
    assert "namespace" not in queue["metadata"]
    spec = spec_of(queue)
    assert spec["queueingStrategy"] == "BestEffortFIFO"
    [group] = spec["resourceGroups"]
    assert group["coveredResources"] == ["cpu", "memory", "nvidia.com/gpu"]
    [flavor] = group["flavors"]
    assert flavor["name"] == "determined-a100"
    # Kueue's webhook: a flavor lists the covered resources in their order (and, its CEL
    # rule, as many of them).
    assert [r["name"] for r in flavor["resources"]] == group["coveredResources"]
    assert {r["name"]: r["nominalQuota"] for r in flavor["resources"]} == GPU_NOMINAL
    assert all(set(r) == {"name", "nominalQuota"} for r in flavor["resources"])

    cpu_only = spec_of(queue_for(cfg, "aux", nominal=CPU_NOMINAL))
    assert cpu_only["resourceGroups"][0]["coveredResources"] == ["cpu", "memory"]
    assert "nvidia.com/gpu" not in json.dumps(cpu_only)


def test_the_cluster_queue_has_a_cohort_only_when_given(cfg):
    assert "cohortName" not in spec_of(queue_for(cfg, "a100", cohort=None))
    assert "cohortName" not in spec_of(queue_for(cfg, "a100", cohort=""))
    assert spec_of(queue_for(cfg, "a100", cohort="determined"))["cohortName"] == "determined"
    # The CEL rule: no borrowingLimit without a cohort (none is ever set).
    assert "borrowingLimit" not in json.dumps(queue_for(cfg, "a100"))


def test_a_cluster_queue_without_quota_is_refused(cfg):
    with pytest.raises(ValueError, match="at least one resource"):
        queue_for(cfg, "a100", nominal={})


# --- LocalQueue and the queue label ---------------------------------------------------------------


def test_the_local_queue_is_in_the_given_namespace_and_points_at_its_cluster_queue(cfg):
    for rp in cfg.resource_pools:
        for namespace in (rp.namespace_name, "determined"):
            local = kueue.local_queue(rp, namespace)
            queue = queue_for(cfg, rp.name)
            assert local["metadata"]["namespace"] == namespace
            # One name in every namespace: the label value the pool's pod specs carry.
            assert local["metadata"]["name"] == kueue.queue_name(rp)
            assert spec_of(local) == {"clusterQueue": queue["metadata"]["name"]}


def test_queue_names_are_dns_labels_and_label_values(cfg):
    names = [kueue.queue_name(rp) for rp in cfg.resource_pools]
    assert names == ["determined-a100", "determined-aux", "determined-team-b-gpu"]
    for name in names:
        assert len(name) <= 63 and re.fullmatch(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?", name)
        assert LABEL_VALUE.fullmatch(name)


def test_the_label_layer_carries_exactly_the_queue_label(cfg):
    for rp in cfg.resource_pools:
        layer = kueue.queue_label_layer(rp)
        assert layer == {"metadata": {"labels": {"kueue.x-k8s.io/queue-name": kueue.queue_name(rp)}}}
        assert kueue.QUEUE_LABEL == "kueue.x-k8s.io/queue-name"
        # A task pod spec Determined accepts (Pod form, nothing it owns).
        assert pod_form_problem(layer) is None
        assert determined_owned(layer) == []
        # The label names the LocalQueue of the namespace the Job runs in.
        assert (
            layer["metadata"]["labels"][kueue.QUEUE_LABEL] == kueue.local_queue(rp, "ns")["metadata"]["name"]
        )


def test_no_partial_admission_anywhere(cfg):
    text = json.dumps([*all_objects(cfg), *(kueue.queue_label_layer(rp) for rp in cfg.resource_pools)])
    text += json.dumps(kueue.release_args(kueue.VERSION, 600))
    assert "job-min-parallelism" not in text
    assert "annotations" not in text


# --- the manager Configuration and the chart values -----------------------------------------------


def parsed_config(values):
    text = values["managerConfig"]["controllerManagerConfigYaml"]
    assert isinstance(text, str)
    return yaml.safe_load(text)


def test_the_manager_config_parses_back_from_the_values():
    config = parsed_config(kueue.values(600))
    assert config == kueue.manager_config(600)
    assert config["apiVersion"] == "config.kueue.x-k8s.io/v1beta2"
    assert config["kind"] == "Configuration"


def test_the_manager_config_manages_only_jobs_that_name_a_queue():
    config = kueue.manager_config(600)
    assert config["integrations"] == {"frameworks": ["batch/job"]}
    assert config["manageJobsWithoutQueueName"] is False


@pytest.mark.parametrize("seconds", [1, 600, 1800])
def test_the_manager_config_waits_for_pods_ready_and_blocks_admission(seconds):
    wait = parsed_config(kueue.values(seconds))["waitForPodsReady"]
    assert wait == {
        "timeout": f"{seconds}s",
        "blockAdmission": True,
        "recoveryTimeout": f"{seconds}s",
        "requeuingStrategy": {"timestamp": "Eviction", "backoffBaseSeconds": 60, "backoffMaxSeconds": 3600},
    }


def test_the_manager_config_keeps_the_charts_defaults():
    config = kueue.manager_config(600)
    assert config["health"] == {"healthProbeBindAddress": ":8081"}
    # The chart's address, plus the ClusterQueue quota and usage metrics (the Queues dashboard).
    assert config["metrics"] == {"bindAddress": ":8443", "enableClusterQueueResources": True}
    assert config["webhook"] == {"port": 9443}
    assert config["leaderElection"] == {"leaderElect": True, "resourceName": "c1f6bfd2.kueue.x-k8s.io"}
    assert config["clientConnection"] == {"qps": 300, "burst": 500}
    assert config["controller"]["groupKindConcurrency"]["Job.batch"] == 5


def test_the_manager_config_uses_only_kueue_0_19_2_field_names():
    config = kueue.manager_config(600)
    assert set(config) <= CONFIGURATION_FIELDS
    assert set(config["waitForPodsReady"]) <= WAIT_FOR_PODS_READY_FIELDS  # no v1beta1 `enable`
    assert set(config["waitForPodsReady"]["requeuingStrategy"]) <= REQUEUING_STRATEGY_FIELDS
    assert set(config["integrations"]) <= INTEGRATIONS_FIELDS
    # ControllerMetrics (apis/config/v1beta2/configuration_types.go:170-195 at v0.19.2).
    metrics_fields = {
        "certDir",
        "bindAddress",
        "enableClusterQueueResources",
        "customLabels",
        "localQueueMetrics",
    }
    assert set(config["metrics"]) <= metrics_fields
    assert config["waitForPodsReady"]["requeuingStrategy"]["timestamp"] in ("Eviction", "Creation")


@pytest.mark.parametrize("seconds", [0, -5, 1.5, "600", True, None])
def test_a_timeout_kueue_would_refuse_is_refused(seconds):
    with pytest.raises(ValueError, match="positive whole number"):
        kueue.manager_config(seconds)


def load_key_set():
    """{dotted path: kind} and the header of tests/data/chart-keys/kueue-0.19.2.txt."""
    header, paths = {}, {}
    for line in KEY_SET.read_text().splitlines():
        if line.startswith("#"):
            key, sep, value = line[1:].strip().partition(":")
            if sep and key in ("chart", "version"):
                header[key] = value.strip()
        elif line.strip():
            path, kind = line.split()
            paths[path] = kind
    return header, paths


def leaf_paths(values, prefix=""):
    for key, value in values.items():
        path = f"{prefix}{key}"
        if isinstance(value, dict) and value:
            yield from leaf_paths(value, f"{path}.")
        else:
            yield path, value


def test_every_value_is_a_key_of_the_pinned_chart():
    header, paths = load_key_set()
    assert header == {"chart": "kueue", "version": kueue.VERSION}
    assert kueue.CHART.rsplit("/", 1)[-1] == header["chart"]
    values = kueue.values(600)
    leaves = dict(leaf_paths(values))
    assert leaves
    for path, value in leaves.items():
        assert all("." not in key for key in path.split(".")), path
        free = any(path.startswith(f"{p}.") for p, kind in paths.items() if kind == "*")
        assert free or path in paths, f"{path}: not a key of kueue {kueue.VERSION}"
        if paths.get(path) == "S":
            assert not isinstance(value, (dict, list)), f"{path}: the chart expects a scalar"
    assert set(leaves) == {"managerConfig.controllerManagerConfigYaml"}


def test_the_release_arguments():
    args = kueue.release_args("0.19.2", 900)
    assert args == {
        "name": "kueue",
        "chart": "oci://registry.k8s.io/kueue/charts/kueue",
        "version": "0.19.2",
        "namespace": "kueue-system",
        "create_namespace": True,
        "values": kueue.values(900),
        "atomic": True,
        "cleanup_on_fail": True,
    }
    assert kueue.release_args("9.9.9", 900)["version"] == "9.9.9"
    assert kueue.VERSION == "0.19.2"


def test_the_base_config_builds_every_object():
    cfg = make_config()
    assert [rp["name"] for rp in BASE["resourcePools"]] == [rp.name for rp in cfg.resource_pools]
    for obj in all_objects(cfg):
        assert crd_problems(obj) == []


def test_a_partitioned_and_shared_gke_pool_is_queued_by_what_its_nodes_advertise():
    # 3 nodes x 1 A100 80GB x 7 partitions of 1g.10gb x 4 time-shared containers.
    gpu = {
        "type": "nvidia-a100-80gb",
        "count": 1,
        "partitionSize": "1g.10gb",
        "sharing": {"strategy": "TIME_SHARING", "maxSharedClientsPerGpu": 4},
    }
    cfg = make_config(
        cloud="gke",
        cluster={"name": "det", "region": "us-central1", "project": "p"},
        scheduler="kueue",
        nodePools=[
            {"name": "system", "machineType": "e2-standard-8"},
            {"name": "a100", "machineType": "a2-ultragpu-1g", "gpu": gpu, "maxNodes": 3},
        ],
        resourcePools=[{"name": "a100", "nodePool": "a100"}, {"name": "aux", "nodePool": "system"}],
    )
    objects = resource_pools.queue_objects(cfg)
    (queue,) = [
        o for o in objects if o["kind"] == "ClusterQueue" and o["metadata"]["name"] == "determined-a100"
    ]
    resources = queue["spec"]["resourceGroups"][0]["flavors"][0]["resources"]
    assert {r["name"]: r["nominalQuota"] for r in resources}["nvidia.com/gpu"] == "84"
    for obj in objects:
        assert crd_problems(obj) == [], obj["metadata"]["name"]


# --- where each pool's Jobs land: a LocalQueue in each (Determined's source per version) -----


def queued_config(version, **overrides):
    """Three pools on BASE's node pools: the master's default compute (a100) and aux (aux)
    pools, and a second GPU pool (vision) that the workspace Job binds to its workspace."""
    pools = [
        {"name": "a100", "nodePool": "a100", "namespace": "det-a100", "quota": {"gpu": 8}},
        {"name": "aux", "nodePool": "system", "namespace": "det-aux"},
        {"name": "vision", "nodePool": "a100", "namespace": "det-vision", "quota": {"gpu": 4}},
    ]
    return make_config(scheduler="kueue", master={"version": version}, resourcePools=pools, **overrides)


def local_queues(cfg):
    objects = resource_pools.queue_objects(cfg)
    found = {}
    for obj in objects:
        if obj["kind"] == "LocalQueue":
            found.setdefault(obj["metadata"]["name"], []).append(obj["metadata"]["namespace"])
    selectors = {
        o["metadata"]["name"]: o["spec"]["namespaceSelector"] for o in objects if o["kind"] == "ClusterQueue"
    }
    return {name: sorted(spaces) for name, spaces in found.items()}, selectors


def selected(selector):
    if "matchLabels" in selector:
        return [selector["matchLabels"][NAMESPACE_LABEL]]
    ((expression,),) = [selector["matchExpressions"]]
    assert (expression["key"], expression["operator"]) == (NAMESPACE_LABEL, "In")
    return expression["values"]


@pytest.mark.parametrize("version", ["0.35.0", "0.35.1", "0.36.0", "0.37.0", "0.38.1"])
def test_on_0_35_and_later_a_pool_is_queued_in_every_namespace_of_the_workspaces_it_serves(version):
    """0.35.0 to v0.38.1: a task runs in its workspace's namespace, else the default namespace
    (master/internal/rm/kubernetesrm/resource_pool.go:613-616), whatever its pool; the
    master's default pools cannot be bound (api_resourcepool.go:214-232) and a pool bound to
    no workspace serves them all (db/postgres_rp_workspace_bindings.go:212); checkpoint GC of a
    deleted experiment runs in the default namespace with the experiment's pod spec
    (api_experiment.go:389, pkg/tasks/task_gc.go:41-44); an experiment moved to another
    workspace keeps its pod spec and queue label (pkg/model/task_container_defaults.go:140-155,
    internal/experiment/bulk_action.go:701): so every pool is queued in every task namespace."""
    cfg = queued_config(version)
    queues, selectors = local_queues(cfg)
    default = getattr(cfg, "default_task_namespace", cfg.namespace)
    everywhere = sorted([default, "det-a100", "det-aux", "det-vision"])
    assert queues == {
        "determined-a100": everywhere,  # the default compute pool: every workspace's
        "determined-aux": everywhere,  # the default aux pool: every workspace's
        "determined-vision": everywhere,  # bound to workspace vision, yet moved experiments keep its label
    }
    for name, spaces in queues.items():
        assert sorted(selected(selectors[name])) == spaces


def test_on_0_35_a_default_task_namespace_apart_from_the_masters_gets_the_queues():
    """The default namespace is `resource_manager.default_namespace` (StackConfig.
    default_task_namespace once the stack has one apart from the master's)."""
    cfg = queued_config("0.38.1")
    default = getattr(cfg, "default_task_namespace", cfg.namespace)
    for rp in cfg.resource_pools:
        assert resource_pools.pool_namespaces(cfg, rp)[0] == default


def test_on_0_34_a_pool_is_queued_in_its_namespace_and_the_default_aux_pools():
    """0.34.0: a task runs in its pool's kubernetes_namespace (resource_pool.go:550); checkpoint
    GC runs on the default aux pool (checkpoint_gc.go:102), in its namespace, with the
    experiment's pod spec (task_gc.go:41-44)."""
    cfg = queued_config("0.34.0")
    queues, selectors = local_queues(cfg)
    assert queues == {
        "determined-a100": ["det-a100", "det-aux"],
        "determined-aux": ["det-aux"],
        "determined-vision": ["det-aux", "det-vision"],
    }
    for name, spaces in queues.items():
        assert sorted(selected(selectors[name])) == spaces


def test_every_local_queue_points_at_a_cluster_queue_that_selects_its_namespace():
    for version in ("0.34.0", "0.35.0", "0.38.1"):
        objects = resource_pools.queue_objects(queued_config(version))
        queues = {o["metadata"]["name"]: o for o in objects if o["kind"] == "ClusterQueue"}
        for local in (o for o in objects if o["kind"] == "LocalQueue"):
            queue = queues[local["spec"]["clusterQueue"]]
            assert local["metadata"]["namespace"] in selected(queue["spec"]["namespaceSelector"])
            assert crd_problems(local) == [] and crd_problems(queue) == []


@pytest.mark.parametrize("version", ["0.26.0", "0.29.0", "0.33.0"])
def test_kueue_is_refused_before_0_34_with_the_reason(version):
    """0.33.0 and older create a bare Pod per task (master/internal/rm/kubernetesrm/pods.go,
    request_workers.go:73 at 0.33.0): Kueue's batch/job integration never sees them."""
    with pytest.raises(ConfigError) as info:
        queued_config(version)
    messages = [str(p) for p in info.value.problems]
    assert messages == [
        f"determined:scheduler: kueue needs Determined 0.34.0 or newer: master {version} runs tasks as "
        "bare pods, not Jobs, so Kueue would never queue them (set master.version to 0.34.0 or newer, "
        "or scheduler: default)"
    ]
    assert kueue.MIN_DETERMINED == (0, 34, 0)
    queued_config("0.34.0")  # accepted


# --- timing: an eviction fails the task, so the timeout holds a scale-up and a pull ----------


def test_the_default_pods_ready_timeout_holds_a_node_scale_up_and_an_image_pull():
    # The cluster autoscaler's max-node-provision-time (15m), then drivers and the image pull.
    assert NODE_PROVISION_SECONDS == 15 * 60
    assert kueue.DEFAULT_PODS_READY_TIMEOUT_SECONDS == NODE_PROVISION_SECONDS + IMAGE_PULL_SECONDS == 1800
    cfg = queued_config("0.38.1")
    assert cfg.kueue.pods_ready_timeout_seconds == kueue.DEFAULT_PODS_READY_TIMEOUT_SECONDS
    wait = kueue.manager_config(cfg.kueue.pods_ready_timeout_seconds)["waitForPodsReady"]
    assert wait["timeout"] == "1800s"
    # Configurable, as before.
    cfg = queued_config("0.38.1", kueue={"podsReadyTimeoutSeconds": 3600})
    assert cfg.kueue.pods_ready_timeout_seconds == 3600


def kueue_docs():
    section = (ROOT / "docs/concepts/kueue.md").read_text()
    return section, kueue.__doc__, KueueConfig.__doc__


def test_the_docs_say_an_eviction_fails_the_allocation_not_that_it_requeues():
    """master/internal/rm/kubernetesrm/job.go (0.34.0 and v0.38.1): a pending pod with a
    deletion timestamp is terminated, without an exit code, so a failure, and once all pods
    exited the master deletes the Job; trial.go:653-667 restarts a trial within max_restarts."""
    for text in kueue_docs():
        flat = " ".join(text.split())
        assert "requeued with" not in flat and "and requeues" not in flat, flat[:200]
        assert "max_restarts" in flat
    readme = " ".join(kueue_docs()[0].split())
    assert "fails the task's allocation" in readme
    assert "30 minutes" in readme
