"""Resource pools end to end: gang admission through Kueue, quotas, CPU slots that fit their
nodes, workspaces per pool (0.35+), and PriorityClasses adopted from another install."""

from __future__ import annotations

import json

import yaml
from conftest import raw_config
from planning import by_kind, of_type, one, plan_for, planned

from components.config import ConfigError, load_config
from components.determined import resource_pools

QUEUE_LABEL = "kueue.x-k8s.io/queue-name"


def problems(raw) -> list[str]:
    try:
        load_config(raw)
    except ConfigError as exc:
        return [str(p) for p in exc.problems]
    return []


# --- Kueue ------------------------------------------------------------------------------------


def test_every_pool_carries_its_queue_label_in_both_pod_specs():
    config = yaml.safe_load(planned("kueue-gke").master_yaml)
    pools = {p["pool_name"]: p["task_container_defaults"] for p in config["resource_pools"]}
    assert set(pools) == {"a100", "l4", "aux"}
    for name, tcd in pools.items():
        for key in ("cpu_pod_spec", "gpu_pod_spec"):
            assert tcd[key]["metadata"]["labels"] == {QUEUE_LABEL: f"determined-{name}"}
            # No partial admission annotation: only the autoscalers' hands-off marks.
            assert tcd[key]["metadata"]["annotations"] == resource_pools.NO_DISRUPTION


def test_every_local_queue_points_at_a_cluster_queue_of_its_namespace_and_existing_flavors():
    result = planned("kueue-gke")
    flavors = {f["metadata"]["name"]: f for f in by_kind(result, "ResourceFlavor")}
    cluster_queues = {q["metadata"]["name"]: q for q in by_kind(result, "ClusterQueue")}
    local_queues = by_kind(result, "LocalQueue")
    # Wherever the master puts the pools' tasks: the workspaces' namespaces and the default
    # one (tests/invariants/test_task_placement.py has which pool where).
    default = yaml.safe_load(result.master_yaml)["resource_manager"]["default_namespace"]
    assert {q["metadata"]["namespace"] for q in local_queues} == {"det-a100", "det-l4", "det-aux", default}
    for local in local_queues:
        cluster = cluster_queues[local["spec"]["clusterQueue"]]
        (expression,) = cluster["spec"]["namespaceSelector"]["matchExpressions"]
        assert (expression["key"], expression["operator"]) == ("kubernetes.io/metadata.name", "In")
        assert local["metadata"]["namespace"] in expression["values"]
        (group,) = cluster["spec"]["resourceGroups"]
        gpu_pool = local["spec"]["clusterQueue"] != "determined-aux"
        assert ("nvidia.com/gpu" in group["coveredResources"]) == gpu_pool
        for flavor in group["flavors"]:
            assert flavor["name"] in flavors
            assert [r["name"] for r in flavor["resources"]] == group["coveredResources"]
        assert cluster["spec"]["cohortName"] == "research"


def test_flavors_pin_admitted_jobs_to_the_node_pool():
    flavor = one(planned("kueue-gke"), "ResourceFlavor", "determined-a100")
    assert flavor["spec"]["nodeLabels"] == {"determined.ai/node-pool": "a100"}
    assert flavor["spec"]["tolerations"][0]["key"] == "nvidia.com/gpu"


def test_quotas_come_from_the_pool_or_from_the_node_pool_at_its_largest():
    result = planned("kueue-gke")
    quotas = {}
    for queue in by_kind(result, "ClusterQueue"):
        (flavor,) = queue["spec"]["resourceGroups"][0]["flavors"]
        quotas[queue["metadata"]["name"]] = {r["name"]: r["nominalQuota"] for r in flavor["resources"]}
    assert quotas["determined-a100"] == {"cpu": "180", "memory": "1200Gi", "nvidia.com/gpu": "16"}
    # l4: 6 nodes x 2 GPUs; 6 x the allocatable CPUs of a g2-standard-24 (24 vCPUs, 23.87 for pods).
    # CPU and memory are always covered (Kueue refuses a task asking for an uncovered
    # resource); memory without a known amount is not limited.
    assert quotas["determined-l4"] == {"cpu": "143220m", "memory": "1Ei", "nvidia.com/gpu": "12"}
    # aux: the system pool's one e2-standard-8 (maxNodes 1) gives 7.91 CPUs to pods.
    assert quotas["determined-aux"] == {"cpu": "7910m", "memory": "1Ei"}


def test_kueue_comes_from_its_chart_and_its_objects_wait_for_it():
    result = planned("kueue-gke")
    (release,) = [r for r in of_type(result, "helm.sh/v3:Release") if r["name"] == "kueue"]
    assert (release["inputs"]["chart"], release["inputs"]["version"]) == (
        "oci://registry.k8s.io/kueue/charts/kueue",
        "0.19.2",
    )
    config = yaml.safe_load(release["inputs"]["values"]["managerConfig"]["controllerManagerConfigYaml"])
    assert config["waitForPodsReady"]["timeout"] == "900s"
    assert config["waitForPodsReady"]["blockAdmission"] is True
    assert config["integrations"]["frameworks"] == ["batch/job"]
    for reg in result.resources:
        if "kueue.x-k8s.io" in reg["type"]:
            assert release["urn"] in reg["dependsOn"], reg["name"]


def test_without_kueue_nothing_of_it_is_created():
    result = planned("gke-prod")
    assert not [r for r in result.resources if "kueue" in r["type"] or r["name"] == "kueue"]
    config = yaml.safe_load(result.master_yaml)
    # No queue label: the pod specs' metadata holds only the autoscalers' hands-off marks.
    assert all(
        p["task_container_defaults"]["gpu_pod_spec"]["metadata"]
        == {"annotations": resource_pools.NO_DISRUPTION}
        for p in config["resource_pools"]
    )


def test_kueue_on_an_existing_cluster_needs_each_gpu_pools_quota():
    lines = "\n".join(problems(raw_config(scheduler="kueue")))
    assert "determined:resourcePools[0].quota.gpu: required with scheduler kueue" in lines
    assert "resourcePools[1]" not in lines  # a CPU pool of a GPU cluster: CPUs not limited
    pools = raw_config()["resourcePools"]
    with_quota = [{**pools[0], "quota": {"gpu": 8}}, pools[1]]
    assert problems(raw_config(scheduler="kueue", resourcePools=with_quota)) == []
    # A CPU-slot cluster admits by CPUs: each pool's are needed.
    cpu_nodes = [{"name": "system", "nodeSelector": {"pool": "system"}}]
    cpu_pools = [{"name": "cpu", "nodePool": "system"}]
    raw = raw_config(
        scheduler="kueue",
        nodePools=cpu_nodes,
        resourcePools=cpu_pools,
        slots={"type": "cpu", "maxSlotsPerPod": 4},
    )
    assert "determined:resourcePools[0].quota.cpu: required with scheduler kueue" in "\n".join(problems(raw))


def test_coscheduler_is_refused_with_the_reason():
    (line,) = problems(raw_config(scheduler="coscheduler"))
    assert line.startswith(
        "determined:scheduler: coscheduler is refused: Determined's coscheduler support needs"
    )


# --- quotas, slots, workspaces, priority classes ----------------------------------------------


def test_quota_limits_reach_the_resource_quota():
    pools = raw_config()["resourcePools"]
    quota = {"gpu": 8, "cpu": "32", "memory": "128Gi", "limits": {"cpu": "64", "memory": "256Gi"}}
    # Task pod specs that declare the limits (a quota on limits needs them: test_quota_defaults).
    limited = {
        "spec": {
            "containers": [
                {"name": "determined-container", "resources": {"limits": {"cpu": "8", "memory": "32Gi"}}}
            ]
        }
    }
    result = plan_for(
        raw_config(
            resourcePools=[{**pools[0], "quota": quota}, pools[1]],
            taskContainerDefaults={"cpuPodSpec": limited, "gpuPodSpec": limited},
        )
    )
    hard = one(result, "ResourceQuota", "determined-a100")["spec"]["hard"]
    assert hard == {
        "requests.nvidia.com/gpu": "8",
        "requests.cpu": "32",
        "requests.memory": "128Gi",
        "limits.cpu": "64",
        "limits.memory": "256Gi",
    }


def test_cpu_slots_must_fit_the_allocatable_cpus_of_a_known_machine():
    raw = yaml.safe_load(open("stacks/Pulumi.gke-dev.yaml"))["config"]  # noqa: SIM115
    raw = {key.split(":", 1)[1]: value for key, value in raw.items()}
    raw["nodePools"] = [{"name": "system", "machineType": "e2-standard-8", "maxNodes": 3}]
    raw["resourcePools"] = [{"name": "cpu", "nodePool": "system"}]
    raw.pop("defaultComputePool")
    raw.pop("defaultAuxPool")
    raw["slots"] = {"type": "cpu", "cpuPerSlot": 2, "maxSlotsPerPod": 4}
    (line,) = problems(raw)
    assert line == (
        "determined:slots.maxSlotsPerPod: 4 slots of 2 CPUs need 8 CPUs per pod, more than a e2-standard-8 "
        "node of node pool 'system' gives pods (about 7.91 of its 8 vCPUs); at most 3 fit"
    )
    raw["slots"]["maxSlotsPerPod"] = 3
    assert problems(raw) == []


def test_workspaces_have_one_namespace_and_one_default_pool_per_role():
    pools = raw_config()["resourcePools"]
    shared = [{**pools[0], "workspace": "team"}, {**pools[1], "workspace": "team"}]
    assert any(
        "workspace 'team' is bound to namespace 'det-a100'" in line
        for line in problems(raw_config(resourcePools=shared))
    )
    same_ns = [{**pools[0], "workspace": "team"}, {**pools[1], "namespace": "det-a100", "workspace": "team"}]
    assert problems(raw_config(resourcePools=same_ns)) == []  # compute and aux of one workspace
    two_compute = [
        pools[0],
        {**pools[0], "name": "a100b", "namespace": "det-a100", "workspace": "a100"},
        pools[1],
    ]
    assert any(
        "already takes its default compute pool" in line
        for line in problems(raw_config(resourcePools=two_compute))
    )
    old = problems(raw_config(master={"version": "0.34.0"}, resourcePools=shared))
    assert old == [
        "determined:resourcePools[0].workspace: needs master.version 0.35.0 or newer (older masters run a pool's tasks in its namespace without workspaces)",
        "determined:resourcePools[1].workspace: needs master.version 0.35.0 or newer (older masters run a pool's tasks in its namespace without workspaces)",
    ]


def test_priority_classes_of_another_install_are_adopted_not_created():
    result = plan_for(raw_config(adoptPriorityClasses=True))
    assert not by_kind(result, "PriorityClass")
    assert sorted(result.recorder.reads) == [
        ("kubernetes:scheduling.k8s.io/v1:PriorityClass", "determined-medium-priority"),
        ("kubernetes:scheduling.k8s.io/v1:PriorityClass", "determined-system-priority"),
    ]
    assert len(by_kind(plan_for(raw_config()), "PriorityClass")) == 2


# --- workspaces bound to pool namespaces ----------------------------------------------------


def bind_jobs(result):
    """The workspace-binding Jobs (not the database's backup Jobs)."""
    return [
        j for j in by_kind(result, "Job") if j["metadata"]["name"].startswith("determined-bind-workspaces")
    ]


def test_on_0_38_a_job_binds_each_pools_workspace_to_its_namespace():
    result = plan_for(raw_config(master={"version": "0.38.1"}))
    (job,) = bind_jobs(result)
    env = {e["name"]: e for e in job["spec"]["template"]["spec"]["containers"][0]["env"]}
    assert json.loads(env["DET_MAPPING"]["value"]) == [
        {"workspace": "a100", "namespace": "det-a100", "pool": "a100", "role": "compute"},
        {"workspace": "aux", "namespace": "det-aux", "pool": "aux", "role": "aux"},
    ]
    # The password is a file of the Secret's key.
    volumes = job["spec"]["template"]["spec"]["volumes"]
    (secret,) = [v["secret"] for v in volumes if "secret" in v]
    assert secret["secretName"] == "determined-bind-workspaces"
    assert [item["key"] for item in secret["items"]] == ["password"]
    assert env["DET_PASSWORD_FILE"]["value"].endswith("/" + secret["items"][0]["path"])
    config = yaml.safe_load(result.master_yaml)
    assert all("kubernetes_namespace" not in pool for pool in config["resource_pools"])
    # It runs once the master and the pool namespaces exist; a new mapping is a new Job.
    (reg,) = [
        r for r in of_type(result, "batch/v1:Job") if r["name"].startswith("determined/determined-bind")
    ]
    assert reg["options"]["deleteBeforeReplace"] is True
    master = next(r for r in result.resources if r["type"].endswith("apps/v1:Deployment"))
    namespaces = {
        r["urn"] for r in of_type(result, "core/v1:Namespace") if r["name"] in ("det-a100", "det-aux")
    }
    assert {master["urn"], *namespaces} <= set(reg["dependsOn"])


def test_on_0_34_namespaces_are_in_master_yaml_and_no_job_runs():
    result = plan_for(raw_config(master={"version": "0.34.0"}))
    assert not bind_jobs(result) and not by_kind(result, "ConfigMap")
    config = yaml.safe_load(result.master_yaml)
    assert {p["pool_name"]: p["kubernetes_namespace"] for p in config["resource_pools"]} == {
        "a100": "det-a100",
        "aux": "det-aux",
    }


def test_a_changed_mapping_is_a_new_job():
    first = bind_jobs(plan_for(raw_config()))[0]["metadata"]["name"]
    pools = raw_config()["resourcePools"]
    renamed = [{**pools[0], "workspace": "vision"}, pools[1]]
    second = bind_jobs(plan_for(raw_config(resourcePools=renamed)))[0]["metadata"]["name"]
    assert first != second
    assert bind_jobs(plan_for(raw_config()))[0]["metadata"]["name"] == first
