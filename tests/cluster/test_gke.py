"""GKE stacks under the plan's mocks: what Google Cloud is asked to create, and what the
Determined objects make of it (service accounts, bucket, database)."""

from __future__ import annotations

import copy

import pytest
import yaml
from conftest import GKE, ROOT, make_config, pulumi_config
from planning import by_kind, of_type, one, plan_for, planned, resource

import stack_args
from components.cluster.gke import cluster as gke_cluster
from components.cluster.gke import node_pools, storage
from components.config import ConfigError
from plan import runner
from plan.mocks import Recorder
from plan.redaction import SECRET, UNKNOWN

STACKS = ROOT / "stacks"
FIXTURES = ROOT / "tests" / "fixtures" / "stacks"


def node_pool(result, name):
    return resource(result, "container/nodePool:NodePool", name)["inputs"]


def master_yaml(result):
    return yaml.safe_load(result.master_yaml)


# --- node pools ---------------------------------------------------------------------------


def test_gpu_pools_carry_their_accelerators_and_the_gpu_taint():
    result = planned("gke-prod")
    a100 = node_pool(result, "a100")["nodeConfig"]
    assert a100["machineType"] == "a2-highgpu-4g"
    assert a100["guestAccelerators"] == [
        {
            "type": "nvidia-tesla-a100",
            "count": 4,
            "gpuDriverInstallationConfig": {"gpuDriverVersion": "DEFAULT"},
        }
    ]
    assert a100["taints"] == [{"key": "nvidia.com/gpu", "value": "present", "effect": "NO_SCHEDULE"}]
    assert a100["labels"] == {"determined.ai/node-pool": "a100", "team": "research"}
    l4 = node_pool(result, "l4")["nodeConfig"]
    assert [(a["type"], a["count"]) for a in l4["guestAccelerators"]] == [("nvidia-l4", 2)]


def test_cpu_pools_are_untainted_and_have_no_accelerators():
    system = node_pool(planned("gke-prod"), "system")["nodeConfig"]
    assert "guestAccelerators" not in system
    assert system["taints"] == []


def test_gpu_pools_scale_from_zero_and_spot_is_as_configured():
    dev = planned("gke-dev")
    l4 = node_pool(dev, "l4")
    assert l4["autoscaling"] == {"totalMinNodeCount": 0, "totalMaxNodeCount": 2, "locationPolicy": "ANY"}
    assert l4["initialNodeCount"] == 0
    assert l4["nodeConfig"]["spot"] is True
    system = node_pool(dev, "system")
    assert system["autoscaling"]["totalMinNodeCount"] == 1 and system["nodeConfig"]["spot"] is False
    assert node_pool(planned("gke-prod"), "a100")["nodeConfig"]["spot"] is False


def test_extra_taints_follow_the_gpu_taint_with_gke_effect_names():
    h100 = node_pool(planned("gke-operator"), "h100")["nodeConfig"]
    assert h100["taints"] == [
        {"key": "nvidia.com/gpu", "value": "present", "effect": "NO_SCHEDULE"},
        {"key": "team", "value": "research", "effect": "NO_SCHEDULE"},
    ]


@pytest.mark.parametrize("stack", ["gke-dev", "gke-prod", "gke-operator", "gke-shared-vpc"])
def test_nodes_run_as_a_least_privilege_account_with_gke_metadata(stack):
    result = planned(stack)
    (account,) = [a for a in of_type(result, "serviceaccount/account:Account") if a["name"] == "nodes"]
    email = f"{account['inputs']['accountId']}@{result.recorder.outputs[(account['type'], 'nodes')]['email'].split('@')[1]}"
    roles = sorted(
        r["inputs"]["role"] for r in of_type(result, "projects/iAMMember:IAMMember") if "nodes" in r["name"]
    )
    # Pools that stream images add the Service Usage Consumer role image streaming asks of a
    # custom node account (components/cluster/gke/node_pools.py STREAMING_ROLE).
    streams = any(
        p["inputs"]["nodeConfig"].get("gcfsConfig", {}).get("enabled")
        for p in of_type(result, "container/nodePool:NodePool")
    )
    assert roles == [
        "roles/artifactregistry.reader",
        "roles/container.defaultNodeServiceAccount",
        *(["roles/serviceusage.serviceUsageConsumer"] if streams else []),
    ]
    assert all(
        r["inputs"]["member"] == f"serviceAccount:{email}"
        for r in of_type(result, "projects/iAMMember:IAMMember")
    )
    for pool in of_type(result, "container/nodePool:NodePool"):
        config = pool["inputs"]["nodeConfig"]
        assert config["serviceAccount"] == email
        assert "-compute@developer" not in config["serviceAccount"]
        assert "https://www.googleapis.com/auth/cloud-platform" not in config["oauthScopes"]
        assert config["workloadMetadataConfig"] == {"mode": "GKE_METADATA"}


def test_gke_managed_gpu_settings_reach_the_accelerator():
    (accelerator,) = node_pool(planned("gke-shared-vpc"), "a100")["nodeConfig"]["guestAccelerators"]
    assert accelerator == {
        "type": "nvidia-a100-80gb",
        "count": 1,
        "gpuDriverInstallationConfig": {"gpuDriverVersion": "LATEST"},
        "gpuPartitionSize": "1g.10gb",
        "gpuSharingConfig": {"gpuSharingStrategy": "TIME_SHARING", "maxSharedClientsPerGpu": 4},
    }


# --- the cluster --------------------------------------------------------------------------


def test_deletion_protection_is_on_in_prod_and_off_in_dev():
    for stack, protected in (("gke-prod", True), ("gke-dev", False)):
        result = planned(stack)
        assert (
            resource(result, "container/cluster:Cluster", "cluster")["inputs"]["deletionProtection"]
            is protected
        )
    instance = resource(planned("gke-shared-vpc"), "sql/databaseInstance:DatabaseInstance", "database")[
        "inputs"
    ]
    assert instance["deletionProtection"] is False
    assert instance["settings"]["deletionProtectionEnabled"] is False


def test_the_cluster_is_vpc_native_with_workload_identity_and_no_default_pool():
    result = planned("gke-dev")
    cluster = resource(result, "container/cluster:Cluster", "cluster")["inputs"]
    assert cluster["removeDefaultNodePool"] is True
    assert cluster["networkingMode"] == "VPC_NATIVE"
    assert cluster["workloadIdentityConfig"] == {"workloadPool": "my-gcp-project.svc.id.goog"}
    assert cluster["ipAllocationPolicy"] == {
        "clusterSecondaryRangeName": "pods",
        "servicesSecondaryRangeName": "services",
    }
    subnet = resource(result, "compute/subnetwork:Subnetwork", "nodes")["inputs"]
    assert {r["rangeName"] for r in subnet["secondaryIpRanges"]} == {"pods", "services"}
    assert cluster["subnetwork"].endswith(f"/subnetworks/{subnet['name']}")
    assert "privateClusterConfig" not in cluster and not of_type(result, "compute/routerNat:RouterNat")


def test_private_nodes_get_cloud_nat_and_authorized_networks_fence_the_control_plane():
    result = planned("gke-prod")
    cluster = resource(result, "container/cluster:Cluster", "cluster")["inputs"]
    assert cluster["privateClusterConfig"] == {"enablePrivateNodes": True, "enablePrivateEndpoint": False}
    assert cluster["masterAuthorizedNetworksConfig"]["cidrBlocks"] == [
        {"cidrBlock": "203.0.113.0/24", "displayName": "authorized-0"}
    ]
    (nat,) = of_type(result, "compute/routerNat:RouterNat")
    assert nat["inputs"]["sourceSubnetworkIpRangesToNat"] == "ALL_SUBNETWORKS_ALL_IP_RANGES"


def test_an_existing_network_is_used_not_created():
    result = planned("gke-shared-vpc")
    cluster = resource(result, "container/cluster:Cluster", "cluster")["inputs"]
    assert (cluster["network"], cluster["subnetwork"]) == (
        "projects/plan-project/global/networks/shared-vpc",
        "projects/plan-project/regions/us-east4/subnetworks/gke-nodes",
    )
    assert cluster["ipAllocationPolicy"] == {
        "clusterSecondaryRangeName": "gke-pods",
        "servicesSecondaryRangeName": "gke-services",
    }
    for kind in ("compute/network:Network", "compute/subnetwork:Subnetwork", "compute/routerNat:RouterNat"):
        assert not of_type(result, kind)
    sql = resource(result, "sql/databaseInstance:DatabaseInstance", "database")["inputs"]
    assert (
        sql["settings"]["ipConfiguration"]["privateNetwork"]
        == "projects/plan-project/global/networks/shared-vpc"
    )


def test_kubernetes_objects_go_through_a_provider_made_from_the_new_cluster():
    result = planned("gke-dev")
    (provider,) = [r for r in result.resources if r["type"] == "pulumi:providers:kubernetes"]
    assert provider["inputs"]["kubeconfig"] == SECRET
    cluster_urn = resource(result, "container/cluster:Cluster", "cluster")["urn"]
    assert cluster_urn in provider["dependsOn"]
    for reg in result.recorder.resources:
        if reg.custom and reg.type.startswith("kubernetes:"):
            assert reg.provider.split("::")[-2] == "gke", reg.name


def test_the_kubeconfig_authenticates_with_the_gcloud_plugin_and_holds_no_credentials():
    config = yaml.safe_load(gke_cluster.kubeconfig("det", "34.118.0.1", "Q0E="))
    (cluster,) = config["clusters"]
    assert cluster["cluster"] == {"server": "https://34.118.0.1", "certificate-authority-data": "Q0E="}
    (user,) = config["users"]
    assert user["user"]["exec"]["command"] == "gke-gcloud-auth-plugin"
    assert set(user["user"]) == {"exec"}


def test_exports_name_the_cluster_the_bucket_and_the_way_in():
    outputs = planned("gke-prod").outputs
    assert outputs["clusterName"] == "det-prod"
    assert outputs["kubeconfig"] == SECRET
    assert outputs["getCredentials"] == (
        "gcloud container clusters get-credentials det-prod --region us-central1 --project my-gcp-project"
    )
    assert outputs["checkpointBucket"] == "gs://my-gcp-project-gke-prod-det-prod-us-central1-checkpoints"
    assert outputs["databaseEndpoint"].endswith(":5432")
    assert planned("gke-prod", preview=True).outputs["databaseEndpoint"] == UNKNOWN


def test_the_bucket_output_names_gcs_checkpoints_only():
    # docs/reference/outputs.md: `checkpointBucket` is GKE's with gcs checkpoints; an S3 store
    # (MinIO here) has no gs:// URL.
    outputs = planned("gke-shared-vpc").outputs
    assert "checkpointBucket" not in outputs
    assert outputs["clusterName"] == "det-shared"


# --- checkpoint bucket and workload identity ----------------------------------------------


def test_the_created_bucket_is_private_kept_and_versioned_in_prod():
    for stack, versioned in (("gke-prod", True), ("gke-dev", False)):
        result = planned(stack)
        bucket = resource(result, "storage/bucket:Bucket", "checkpoints")
        inputs = bucket["inputs"]
        cluster = "det-" + stack.removeprefix("gke-")
        assert inputs["name"] == f"my-gcp-project-{stack}-{cluster}-us-central1-checkpoints"
        assert inputs["uniformBucketLevelAccess"] is True
        assert inputs["publicAccessPrevention"] == "enforced"
        assert inputs["forceDestroy"] is False
        assert inputs["versioning"] == {"enabled": versioned}
        assert bucket["options"].get("retainOnDelete") is True
        assert master_yaml(result)["checkpoint_storage"]["bucket"] == inputs["name"]


def dev_config():
    raw = yaml.safe_load((STACKS / "Pulumi.gke-dev.yaml").read_text())["config"]
    return {key.split(":", 1)[1]: value for key, value in raw.items()}


def test_allow_data_deletion_lets_destroy_delete_the_bucket():
    result = plan_for({**dev_config(), "allowDataDeletion": True}, stack="gke-dev")
    assert not resource(result, "storage/bucket:Bucket", "checkpoints")["options"].get("retainOnDelete")


def test_storage_access_is_one_role_on_the_bucket_only():
    result = planned("gke-dev")
    (grant,) = of_type(result, "storage/bucketIAMMember:BucketIAMMember")
    assert grant["inputs"]["role"] == "roles/storage.objectUser"
    assert grant["inputs"]["bucket"] == "my-gcp-project-gke-dev-det-dev-us-central1-checkpoints"
    email = result.recorder.outputs[("gcp:serviceaccount/account:Account", "storage")]["email"]
    assert grant["inputs"]["member"] == f"serviceAccount:{email}"
    assert not [
        r for r in of_type(result, "projects/iAMMember:IAMMember") if "storage" in r["inputs"]["role"]
    ]


def test_workload_identity_binds_exactly_the_accounts_that_touch_checkpoints():
    result = planned("gke-dev")
    members = sorted(r["inputs"]["member"] for r in of_type(result, "serviceaccount/iAMMember:IAMMember"))
    assert members == [
        "serviceAccount:my-gcp-project.svc.id.goog[det-aux/determined-task]",
        "serviceAccount:my-gcp-project.svc.id.goog[det-l4/determined-task]",
        "serviceAccount:my-gcp-project.svc.id.goog[determined-tasks/determined-task]",
        "serviceAccount:my-gcp-project.svc.id.goog[determined/determined-db-backup]",
        "serviceAccount:my-gcp-project.svc.id.goog[determined/determined-master]",
    ]
    assert {r["inputs"]["role"] for r in of_type(result, "serviceaccount/iAMMember:IAMMember")} == {
        "roles/iam.workloadIdentityUser"
    }
    email = result.recorder.outputs[("gcp:serviceaccount/account:Account", "storage")]["email"]
    accounts = {
        (a["metadata"]["namespace"], a["metadata"]["name"]): a for a in by_kind(result, "ServiceAccount")
    }
    for member in members:
        namespace, name = member.split("[")[1].rstrip("]").split("/")
        annotations = accounts[(namespace, name)]["metadata"]["annotations"]
        assert annotations == {"iam.gke.io/gcp-service-account": email}


def test_task_pods_and_checkpoint_gc_run_as_the_bound_account():
    config = master_yaml(planned("gke-prod"))
    for pool in config["resource_pools"]:
        for key in ("cpu_pod_spec", "gpu_pod_spec"):
            assert pool["task_container_defaults"][key]["spec"]["serviceAccountName"] == "determined-task"
    gc = config["task_container_defaults"]["checkpoint_gc_pod_spec"]
    assert gc["spec"]["serviceAccountName"] == "determined-task"
    master = one(planned("gke-prod"), "Deployment", "determined-master")
    assert master["spec"]["template"]["spec"]["serviceAccountName"] == "determined-master"


def test_a_user_named_bucket_gets_the_binding_but_is_not_created():
    result = planned("gke-operator")
    assert not of_type(result, "storage/bucket:Bucket")
    (grant,) = of_type(result, "storage/bucketIAMMember:BucketIAMMember")
    assert grant["inputs"]["bucket"] == "research-checkpoints"
    assert master_yaml(result)["checkpoint_storage"]["bucket"] == "research-checkpoints"


def test_without_gcs_nothing_is_bound_and_pods_keep_the_default_account():
    result = planned("gke-shared-vpc")  # S3-compatible storage
    assert not of_type(result, "serviceaccount/iAMMember:IAMMember")
    assert not [a for a in by_kind(result, "ServiceAccount") if a["metadata"]["name"] == "determined-task"]
    spec = master_yaml(result)["resource_pools"][0]["task_container_defaults"]["gpu_pod_spec"]["spec"]
    assert "serviceAccountName" not in spec


@pytest.mark.parametrize(
    ("project", "stack", "cluster"),
    [("p", "dev", "det"), ("a" * 30, "b" * 40, "c" * 40), ("My_Proj", "Prod.1", "x")],
)
def test_derived_bucket_names_are_valid_gcs_names(project, stack, cluster):
    import re

    name = storage.bucket_name(project, stack, cluster, "europe-west4")
    assert re.fullmatch(r"[a-z0-9][a-z0-9-]{1,61}[a-z0-9]", name), name
    assert storage.bucket_name(project, stack, cluster, "europe-west4") == name  # stable across runs


def test_service_account_ids_fit_googles_limit():
    cfg = make_config(
        **copy.deepcopy(GKE) | {"cluster": {"name": "d" * 40, "region": "us-central1", "project": "p"}}
    )
    for purpose in ("storage", "nodes"):
        account = node_pools.account_id(stack_args.gke_cluster_args(cfg), purpose)
        assert len(account) <= 30 and f"-{purpose}-" in account


# --- Cloud SQL ----------------------------------------------------------------------------


def test_cloud_sql_has_no_public_ip_and_requires_tls():
    result = planned("gke-prod")
    instance = resource(result, "sql/databaseInstance:DatabaseInstance", "database")
    settings = instance["inputs"]["settings"]
    assert settings["ipConfiguration"]["ipv4Enabled"] is False
    assert settings["ipConfiguration"]["sslMode"] == "ENCRYPTED_ONLY"
    assert settings["edition"] == "ENTERPRISE" and settings["tier"] == "db-custom-2-8192"
    assert instance["inputs"]["databaseVersion"] == "POSTGRES_17"
    peering = resource(result, "servicenetworking/connection:Connection", "sql-peering")
    assert peering["urn"] in instance["dependsOn"]
    db = master_yaml(result)["db"]
    assert db["ssl_mode"] == "require"
    assert db["password"] == SECRET
    assert master_yaml(planned("gke-prod", preview=True))["db"]["host"] == UNKNOWN


def test_cloud_sql_backs_up_and_is_protected_in_prod_and_kept_on_destroy():
    prod = resource(planned("gke-prod"), "sql/databaseInstance:DatabaseInstance", "database")
    backups = prod["inputs"]["settings"]["backupConfiguration"]
    assert backups["enabled"] and backups["pointInTimeRecoveryEnabled"]
    assert prod["inputs"]["deletionProtection"] and prod["inputs"]["settings"]["deletionProtectionEnabled"]
    assert prod["inputs"]["settings"]["availabilityType"] == "REGIONAL"
    dev = resource(planned("gke-shared-vpc"), "sql/databaseInstance:DatabaseInstance", "database")
    assert dev["inputs"]["settings"]["backupConfiguration"]["pointInTimeRecoveryEnabled"] is False
    for stack in ("gke-prod", "gke-shared-vpc"):
        result = planned(stack)
        for kind in ("sql/databaseInstance:DatabaseInstance", "sql/database:Database", "sql/user:User"):
            (reg,) = of_type(result, kind)
            assert reg["options"].get("retainOnDelete") is True, kind
        assert of_type(result, "sql/database:Database")[0]["inputs"]["deletionPolicy"] == "ABANDON"


def test_a_kept_cloud_sql_instance_keeps_the_network_it_is_peered_with():
    result = planned("gke-prod")
    for kind, name in (
        ("compute/network:Network", "network"),
        ("compute/globalAddress:GlobalAddress", "sql-range"),
    ):
        assert resource(result, kind, name)["options"].get("retainOnDelete") is True, kind
    # Without a managed database the network goes with the stack.
    assert not resource(planned("gke-dev"), "compute/network:Network", "network")["options"].get(
        "retainOnDelete"
    )


def test_the_in_cluster_database_volume_is_retained_by_its_storage_class():
    result = planned("gke-dev")
    volume_class = one(result, "StorageClass", "determined-db")
    assert volume_class["reclaimPolicy"] == "Retain"
    assert volume_class["provisioner"] == "pd.csi.storage.gke.io"
    claim = one(result, "PersistentVolumeClaim", "determined-db-data")
    assert claim["spec"]["storageClassName"] == "determined-db"
    assert not by_kind(planned("gke-prod"), "StorageClass")  # managed database: no volume


def test_the_database_password_is_generated_and_secret():
    result = planned("gke-prod")
    user = resource(result, "sql/user:User", "determined")
    assert user["inputs"]["password"] == SECRET
    assert not by_kind(result, "StatefulSet")


# --- GPU drivers ------------------------------------------------------------------------------


def cluster_releases(result):
    """The Helm Releases the cluster component installs (not observability's)."""
    return [r for r in of_type(result, "helm.sh/v3:Release") if "Observability" not in r["urn"]]


def test_gke_managed_drivers_by_default_and_no_operator_objects():
    result = planned("gke-prod")
    assert not cluster_releases(result)
    assert not by_kind(result, "DaemonSet")
    for pool in ("a100", "l4"):
        config = node_pool(result, pool)["nodeConfig"]
        assert "gke-no-default-nvidia-gpu-device-plugin" not in config["labels"]
        (accelerator,) = config["guestAccelerators"]
        assert accelerator["gpuDriverInstallationConfig"] == {"gpuDriverVersion": "DEFAULT"}


def test_the_gpu_operator_is_installed_as_nvidia_documents_for_gke():
    result = planned("gke-operator")
    (release,) = cluster_releases(result)
    inputs = release["inputs"]
    assert (inputs["chart"], inputs["version"], inputs["repositoryOpts"]["repo"]) == (
        "gpu-operator",
        "v26.7.0",
        "https://helm.ngc.nvidia.com/nvidia",
    )
    values = inputs["values"]
    assert values["driver"] == {"enabled": False}
    assert values["hostPaths"] == {"driverInstallDir": "/home/kubernetes/bin/nvidia"}
    assert values["toolkit"] == {
        "installDir": "/home/kubernetes/bin/nvidia",
        "env": [{"name": "RUNTIME_CONFIG_SOURCE", "value": "file"}],
    }
    assert "cdi" not in values and "defaultRuntime" not in values.get("operator", {})
    gpu = {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}
    team = {"key": "team", "operator": "Equal", "value": "research", "effect": "NoSchedule"}
    assert values["daemonsets"]["tolerations"] == [gpu, team]
    assert gpu in values["node-feature-discovery"]["worker"]["tolerations"]
    assert team in values["node-feature-discovery"]["worker"]["tolerations"]
    for name in ("h100", "t4"):
        config = node_pool(result, name)["nodeConfig"]
        assert config["labels"]["gke-no-default-nvidia-gpu-device-plugin"] == "true"
        (accelerator,) = config["guestAccelerators"]
        assert accelerator["gpuDriverInstallationConfig"] == {"gpuDriverVersion": "INSTALLATION_DISABLED"}
    assert (
        "gke-no-default-nvidia-gpu-device-plugin" not in node_pool(result, "system")["nodeConfig"]["labels"]
    )


def test_the_operator_namespace_admits_critical_pods_and_drivers_come_from_googles_installer():
    result = planned("gke-operator")
    quota = one(result, "ResourceQuota", "gpu-operator-critical-pods")
    assert quota["metadata"]["namespace"] == "gpu-operator"
    (expression,) = quota["spec"]["scopeSelector"]["matchExpressions"]
    assert expression["scopeName"] == "PriorityClass"
    assert set(expression["values"]) == {"system-node-critical", "system-cluster-critical"}
    installer = one(result, "DaemonSet", "nvidia-driver-installer")
    assert installer["metadata"]["namespace"] == "kube-system"
    images = [c["image"] for c in installer["spec"]["template"]["spec"]["initContainers"]]
    assert any("gke-nvidia-installer" in image for image in images)  # the Ubuntu installer
    (release,) = cluster_releases(result)
    for obj in ("ResourceQuota", "DaemonSet"):
        (reg,) = [r for r in result.resources if r["type"].endswith(f":{obj}")]
        assert reg["urn"] in release["dependsOn"]


def test_determined_waits_for_the_node_pool_the_master_runs_on_only():
    # Not the GPU pools (tests/invariants/test_master_critical_path.py).
    result = planned("gke-dev")
    pools = {r["name"]: r["urn"] for r in of_type(result, "container/nodePool:NodePool")}
    for component in ("components:Database", "components:Master", "components:ResourcePools"):
        (reg,) = of_type(result, component)
        assert pools["system"] in reg["dependsOn"], component
        assert not {urn for name, urn in pools.items() if name != "system"} & set(reg["dependsOn"]), component


# --- project ------------------------------------------------------------------------------


def gke_dev_without_project():
    raw = dev_config()
    return {**raw, "cluster": {k: v for k, v in raw["cluster"].items() if k != "project"}}


def test_the_project_falls_back_to_gcp_project():
    config = {**pulumi_config(gke_dev_without_project()), "gcp:project": "from-provider-config"}
    result = runner.plan(config, [], "gke-dev", policies=[])
    cluster = resource(result, "container/cluster:Cluster", "cluster")["inputs"]
    assert cluster["project"] == "from-provider-config"
    assert cluster["workloadIdentityConfig"] == {"workloadPool": "from-provider-config.svc.id.goog"}


def test_without_a_project_nothing_is_registered():
    recorder = Recorder()
    with pytest.raises(ConfigError) as info:
        runner.run_program(pulumi_config(gke_dev_without_project()), [], "gke-dev", recorder=recorder)
    assert [str(p) for p in info.value.problems] == [
        "determined:cluster.project: required (or set gcp:project)"
    ]
    assert recorder.resources == []


def test_previews_know_every_name_the_plan_shows():
    result = planned("gke-prod", preview=True)
    assert resource(result, "storage/bucket:Bucket", "checkpoints")["inputs"]["name"].endswith("-checkpoints")
    assert (
        master_yaml(result)["checkpoint_storage"]["bucket"]
        == "my-gcp-project-gke-prod-det-prod-us-central1-checkpoints"
    )


# --- what a real apply and destroy need -----------------------------------------------------


def test_workload_identity_bindings_wait_for_the_cluster_that_creates_the_identity_pool():
    result = planned("gke-dev")
    cluster = resource(result, "container/cluster:Cluster", "cluster")["urn"]
    for binding in of_type(result, "serviceaccount/iAMMember:IAMMember"):
        assert cluster in binding["dependsOn"], binding["name"]


def test_replacing_a_pool_deletes_the_old_one_first_and_the_size_is_the_autoscalers():
    for pool in of_type(planned("gke-prod"), "container/nodePool:NodePool"):
        assert pool["options"]["deleteBeforeReplace"] is True
        assert pool["options"]["ignoreChanges"][0] == "initialNodeCount"


def test_even_the_default_pool_runs_as_the_nodes_account():
    result = planned("gke-dev")
    cluster = resource(result, "container/cluster:Cluster", "cluster")
    email = result.recorder.outputs[("gcp:serviceaccount/account:Account", "nodes")]["email"]
    assert cluster["inputs"]["nodeConfig"]["serviceAccount"] == email
    assert cluster["options"]["ignoreChanges"] == ["nodeConfig"]


def test_prod_cluster_and_database_are_protected_and_the_database_disk_may_grow():
    prod = planned("gke-prod")
    assert resource(prod, "container/cluster:Cluster", "cluster")["options"].get("protect") is True
    instance = resource(prod, "sql/databaseInstance:DatabaseInstance", "database")
    assert instance["options"].get("protect") is True
    # The disk grows by itself; the instance keeps the name it was created with (components.names).
    assert instance["options"]["ignoreChanges"] == ["settings.diskSize", "name"]
    dev = planned("gke-dev")
    assert not resource(dev, "container/cluster:Cluster", "cluster")["options"].get("protect")


def test_the_peering_is_abandoned_with_a_kept_database_and_removed_otherwise():
    kept = resource(planned("gke-prod"), "servicenetworking/connection:Connection", "sql-peering")
    assert kept["inputs"]["deletionPolicy"] == "ABANDON"
    raw = yaml.safe_load((FIXTURES / "Pulumi.gke-shared-vpc.yaml").read_text())["config"]
    raw = {key.split(":", 1)[1]: value for key, value in raw.items()}
    cluster = {k: v for k, v in raw["cluster"].items() if k != "network"}
    result = plan_for({**raw, "cluster": cluster, "allowDataDeletion": True}, stack="gke-shared")
    gone = resource(result, "servicenetworking/connection:Connection", "sql-peering")
    assert gone["inputs"]["deletionPolicy"] == "REMOVE_PEERING"
    assert not resource(result, "compute/network:Network", "network")["options"].get("retainOnDelete")


def test_the_gpu_operators_objects_wait_for_the_node_pools():
    result = planned("gke-operator")
    pools = {r["urn"] for r in of_type(result, "container/nodePool:NodePool")}
    children = [r for r in result.resources if "GpuOperator::" in (r["parent"] or "")]
    kinds = {r["type"].rsplit(":", 1)[-1] for r in children}
    assert kinds == {"Namespace", "ResourceQuota", "DaemonSet", "Release"}
    for reg in children:
        assert pools <= set(reg["dependsOn"]), reg["name"]
