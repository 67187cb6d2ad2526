"""Policies on what runs in pods: the project's workloads and master.yaml's task pod specs."""

from __future__ import annotations

from components import constants
from components.addons import gke_driver_installer
from components.determined import workspaces
from tests.policies.support import args, check, ctx, master_config, resource, rule


def deployment(*images: str) -> dict:
    containers = [{"name": f"c{i}", "image": image} for i, image in enumerate(images)]
    return {
        "metadata": {"name": "m", "namespace": "determined"},
        "spec": {"template": {"spec": {"containers": containers}}},
    }


def test_images_pinned_passes_tags_and_digests():
    props = deployment(
        "determinedai/determined-master:0.38.1", "postgres:17.6", "registry:5000/x@sha256:" + "a" * 64
    )
    assert check("images-pinned", args("kubernetes:apps/v1:Deployment", props)) == []


def test_images_pinned_refuses_latest_and_missing_tags():
    props = deployment("postgres:latest", "postgres", "registry.example.com:5000/determined-master")
    found = check("images-pinned", args("kubernetes:apps/v1:StatefulSet", props))
    assert [m.split(" uses image ")[1].split(",")[0] for m in found] == [
        "'postgres:latest'",
        "'postgres'",
        "'registry.example.com:5000/determined-master'",
    ]


def test_images_pinned_reads_task_pod_specs_and_task_images_in_master_yaml():
    sidecar = {
        "containers": [{"name": "determined-container"}, {"name": "sidecar", "image": "busybox:latest"}]
    }
    config = {
        "task_container_defaults": {"image": {"cpu": "determinedai/pytorch-ngc:0.38.1"}},
        "resource_pools": [
            {
                "pool_name": "a100",
                "task_container_defaults": {"gpu_pod_spec": {"spec": sidecar}, "image": {"gpu": "my/img"}},
            }
        ],
    }
    found = check("images-pinned", args("kubernetes:core/v1:Secret", master_config(config)))
    assert len(found) == 2
    assert "resource_pools[a100].task_container_defaults.gpu_pod_spec" in found[0]
    assert "'busybox:latest'" in found[0] and "determined:resourcePools[a100].podSpec" in found[0]
    assert "resource_pools[a100].task_container_defaults.image.gpu" in found[1] and "'my/img'" in found[1]


def test_images_pinned_passes_pinned_task_pod_specs():
    spec = {"containers": [{"name": "determined-container"}, {"name": "sidecar", "image": "busybox:1.37"}]}
    config = {
        "resource_pools": [{"pool_name": "a", "task_container_defaults": {"cpu_pod_spec": {"spec": spec}}}]
    }
    assert check("images-pinned", args("kubernetes:core/v1:Secret", master_config(config))) == []


def test_other_resource_types_are_ignored():
    assert check("images-pinned", args("kubernetes:core/v1:Service", {"spec": {"ports": []}})) == []


# --- shapes from the plans (resources.json of the local, gke-dev and eks-dev stacks) -----------

DEPLOYMENT = "kubernetes:apps/v1:Deployment"
STATEFUL_SET = "kubernetes:apps/v1:StatefulSet"
JOB = "kubernetes:batch/v1:Job"
DAEMON_SET = "kubernetes:apps/v1:DaemonSet"
CONFIG_MAP = "kubernetes:core/v1:ConfigMap"
SECRET = "kubernetes:core/v1:Secret"
GKE_NODE_POOL = "gcp:container/nodePool:NodePool"
EKS_NODE_GROUP = "aws:eks/nodeGroup:NodeGroup"
SYSTEM = {"determined.ai/node-pool": "system"}
RESTRICTED = {"allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]}}


def labels(component: str) -> dict:
    return {
        "app.kubernetes.io/instance": "determined",
        "app.kubernetes.io/managed-by": "pulumi",
        "app.kubernetes.io/name": component,
        "app.kubernetes.io/part-of": "determined",
    }


def workload(kind: str, name: str, component: str, spec: dict) -> dict:
    template = {"metadata": {"labels": labels(component)}, "spec": spec}
    return {
        "apiVersion": "batch/v1" if kind == "Job" else "apps/v1",
        "kind": kind,
        "metadata": {"labels": labels(component), "name": name, "namespace": "determined"},
        "spec": {"template": template},
    }


def master_deployment(**pod: object) -> dict:
    container = {
        "image": "determinedai/determined-master:0.38.1",
        "name": "determined-master",
        "ports": [{"containerPort": 8081, "name": "http"}],
        "resources": {"limits": {"cpu": "1", "memory": "4Gi"}, "requests": {"cpu": "1", "memory": "4Gi"}},
        "securityContext": dict(RESTRICTED),
        "volumeMounts": [{"mountPath": "/etc/determined", "name": "config", "readOnly": True}],
    }
    spec = {
        "containers": [container],
        "nodeSelector": dict(SYSTEM),
        "priorityClassName": "determined-system-priority",
        "securityContext": {"seccompProfile": {"type": "RuntimeDefault"}},
        "serviceAccountName": "determined-master",
        "volumes": [{"name": "config", "secret": {"secretName": "determined-master-config"}}],
        **pod,
    }
    return workload("Deployment", "determined-master", "master", spec)


def database_stateful_set(**pod: object) -> dict:
    container = {
        "env": [
            {"name": "POSTGRES_USER", "value": "determined"},
            {
                "name": "POSTGRES_PASSWORD",
                "valueFrom": {"secretKeyRef": {"key": "POSTGRES_PASSWORD", "name": "determined-db"}},
            },
            {"name": "PGDATA", "value": "/var/lib/postgresql/data/pgdata"},
        ],
        "image": "postgres:17.6",
        "name": "postgres",
        "resources": {"limits": {"memory": "2Gi"}, "requests": {"cpu": "500m", "memory": "1Gi"}},
        "securityContext": dict(RESTRICTED),
    }
    spec = {"containers": [container], "nodeSelector": dict(SYSTEM), **pod}
    return workload("StatefulSet", "determined-db", "database", spec)


def workspace_job(**pod: object) -> dict:
    container = {
        "command": ["python3", "-I", "-B", "/opt/bind-workspaces/bind_workspaces.py"],
        "env": [
            {
                "name": "DET_MASTER",
                "value": "http://determined-master-service.determined.svc.cluster.local:8080",
            },
            {"name": "DET_USER", "value": "admin"},
            {
                "name": "DET_PASSWORD",
                "valueFrom": {"secretKeyRef": {"key": "password", "name": "determined-bind-workspaces"}},
            },
        ],
        "image": "python:3.13.14-slim",
        "name": "bind-workspaces",
        "resources": {
            "limits": {"cpu": "200m", "memory": "128Mi"},
            "requests": {"cpu": "10m", "memory": "32Mi"},
        },
        "securityContext": {**RESTRICTED, "readOnlyRootFilesystem": True, "runAsNonRoot": True},
    }
    spec = {"containers": [container], "nodeSelector": dict(SYSTEM), "restartPolicy": "Never", **pod}
    return workload("Job", "determined-bind-workspaces-ec5fb76518-b7ba53", "bind-workspaces", spec)


def containers_of(props: dict) -> list[dict]:
    return props["spec"]["template"]["spec"]["containers"]


def task_config(pod_spec: dict, **tcd: object) -> dict:
    """master.yaml with one pool whose GPU pod spec is `pod_spec`."""
    return {
        "task_container_defaults": {"network_mode": "bridge", **tcd},
        "resource_pools": [
            {
                "pool_name": "gpu",
                "task_container_defaults": {
                    "network_mode": "bridge",
                    "gpu_pod_spec": {"apiVersion": "v1", "kind": "Pod", "spec": pod_spec},
                    **tcd,
                },
            }
        ],
    }


def driver_installer() -> dict:
    return gke_driver_installer.daemonset("COS_CONTAINERD")


# --- containers-have-requests-and-limits ------------------------------------------------------


def test_requests_and_limits_levels():
    the_rule = rule("containers-have-requests-and-limits")
    assert (the_rule.level(ctx("dev")), the_rule.level(ctx("prod"))) == ("advisory", "mandatory")


def test_requests_and_limits_pass_the_projects_workloads():
    for kind, props in (
        (DEPLOYMENT, master_deployment()),
        (STATEFUL_SET, database_stateful_set()),
        (JOB, workspace_job()),
    ):
        assert check("containers-have-requests-and-limits", args(kind, props), ctx("prod")) == []


def test_requests_and_limits_refuse_a_container_without_resources():
    props = master_deployment()
    del containers_of(props)[0]["resources"]
    (found,) = check("containers-have-requests-and-limits", args(DEPLOYMENT, props))
    assert found == (
        "Deployment determined/determined-master: container 'determined-master' sets no "
        "requests.cpu, requests.memory, limits.memory"
    )


def test_requests_and_limits_refuse_an_init_container_without_a_memory_limit():
    init = {
        "name": "determined-ca-bundle",
        "image": "determinedai/determined-master:0.38.1",
        "resources": {"requests": {"cpu": "10m", "memory": "16Mi"}},
    }
    props = master_deployment(initContainers=[init])
    (found,) = check("containers-have-requests-and-limits", args(DEPLOYMENT, props), ctx("prod"))
    assert "init container 'determined-ca-bundle' sets no limits.memory" in found


def test_requests_and_limits_take_a_limit_alone_as_the_request():
    props = database_stateful_set()
    containers_of(props)[0]["resources"] = {"limits": {"cpu": "1", "memory": "2Gi"}}
    assert check("containers-have-requests-and-limits", args(STATEFUL_SET, props)) == []
    containers_of(props)[0]["resources"] = {"limits": {"memory": "2Gi"}}
    (found,) = check("containers-have-requests-and-limits", args(STATEFUL_SET, props))
    assert "container 'postgres' sets no requests.cpu" in found


def test_requests_and_limits_leave_task_pod_specs_and_upstream_node_agents_alone():
    spec = {"containers": [{"name": "determined-container"}, {"name": "sidecar", "image": "busybox:1.37"}]}
    assert check("containers-have-requests-and-limits", args(SECRET, master_config(task_config(spec)))) == []
    assert check("containers-have-requests-and-limits", args(DAEMON_SET, driver_installer())) == []
    # The same pod under another name is the project's own.
    renamed = driver_installer()
    renamed["metadata"]["name"] = "my-installer"
    assert len(check("containers-have-requests-and-limits", args(DAEMON_SET, renamed))) == 3


# --- no-secrets-in-plain-sight ----------------------------------------------------------------


def config_map(data: dict, field: str = "data") -> dict:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {
            "labels": labels("bind-workspaces"),
            "name": "determined-bind-workspaces",
            "namespace": "determined",
        },
        field: data,
    }


PEM = "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAfixture\n-----END RSA PRIVATE KEY-----\n"
AWS_KEY_ID = "AKIA" + "FIXTUREKEY123456"


def test_no_secrets_is_mandatory_everywhere():
    the_rule = rule("no-secrets-in-plain-sight")
    assert (the_rule.dev, the_rule.prod) == ("mandatory", "mandatory")


def test_no_secrets_passes_the_workspace_script_that_talks_of_passwords():
    text = workspaces.script_text()
    assert "password" in text
    assert (
        check("no-secrets-in-plain-sight", args(CONFIG_MAP, config_map({"bind_workspaces.py": text}))) == []
    )
    ca = {"ca.crt": "-----BEGIN CERTIFICATE-----\nMIIBszCCAVmg\n-----END CERTIFICATE-----\n"}
    assert check("no-secrets-in-plain-sight", args(CONFIG_MAP, config_map(ca))) == []


def test_no_secrets_refuses_config_map_keys_named_like_secrets():
    props = config_map({"db_password": "Hunter-2-Fixture", "log_level": "info"})
    (found,) = check("no-secrets-in-plain-sight", args(CONFIG_MAP, props))
    assert (
        found
        == "ConfigMap determined/determined-bind-workspaces: data key 'db_password' is named like a secret"
    )
    (found,) = check(
        "no-secrets-in-plain-sight", args(CONFIG_MAP, config_map({"api_token": "eA=="}, "binaryData"))
    )
    assert "binaryData key 'api_token'" in found


def test_no_secrets_refuses_config_map_values_holding_keys_without_echoing_them():
    props = config_map({"tls.pem": PEM, "settings.env": f"REGION=us-east-1\nKEY_ID={AWS_KEY_ID}\n"})
    found = check("no-secrets-in-plain-sight", args(CONFIG_MAP, props))
    assert found == [
        "ConfigMap determined/determined-bind-workspaces: data key 'tls.pem' holds a private key (PEM block)",
        "ConfigMap determined/determined-bind-workspaces: data key 'settings.env' holds an AWS access key id",
    ]


def test_no_secrets_passes_the_projects_workloads_and_value_from():
    for kind, props in (
        (DEPLOYMENT, master_deployment()),
        (STATEFUL_SET, database_stateful_set()),
        (JOB, workspace_job()),
    ):
        assert check("no-secrets-in-plain-sight", args(kind, props)) == []


def test_no_secrets_refuses_literal_secret_env_in_workloads():
    props = master_deployment()
    containers_of(props)[0]["env"] = [
        {"name": "GODEBUG", "value": "http2client=0"},
        {"name": "WEBHOOK_TOKEN", "value": "Fixture-Token-9"},
        {"name": "PLAIN", "value": AWS_KEY_ID},
        {"name": "EMPTY_SECRET", "value": ""},
        {"name": "GOOGLE_APPLICATION_CREDENTIALS", "value": "/var/secrets/google/key.json"},
        {"name": "AWS_SHARED_CREDENTIALS_FILE", "value": "/etc/aws/credentials"},
    ]
    found = check("no-secrets-in-plain-sight", args(DEPLOYMENT, props))
    assert found == [
        "Deployment determined/determined-master: container 'determined-master' env 'WEBHOOK_TOKEN' is named "
        "like a secret and has a literal value (not valueFrom)",
        "Deployment determined/determined-master: container 'determined-master' env 'PLAIN' holds an AWS "
        "access key id as a literal value",
    ]
    assert not any("Fixture-Token-9" in m or AWS_KEY_ID in m for m in found)


def test_no_secrets_reads_task_pod_specs_and_task_environment_variables():
    spec = {
        "containers": [
            {
                "name": "determined-container",
                "env": [
                    {"name": "AWS_SECRET_ACCESS_KEY", "value": "Fixture/Secret/Key"},
                    {"name": "HF_TOKEN", "valueFrom": {"secretKeyRef": {"name": "hf", "key": "token"}}},
                ],
            }
        ]
    }
    config = task_config(spec, environment_variables=["NCCL_DEBUG=INFO", "WANDB_API_KEY=fixture-wandb"])
    config["task_container_defaults"]["environment_variables"] = {
        "cpu": ["DB_PASSWORD=fixture-pw"],
        "gpu": [],
    }
    found = check("no-secrets-in-plain-sight", args(SECRET, master_config(config)))
    assert found == [
        "master.yaml resource_pools[gpu].task_container_defaults.gpu_pod_spec: container 'determined-container' "
        "env 'AWS_SECRET_ACCESS_KEY' is named like a secret and has a literal value (not valueFrom) "
        "(from determined:resourcePools[gpu].podSpec)",
        "master.yaml task_container_defaults.environment_variables.cpu: 'DB_PASSWORD' is named like a secret "
        "and has a literal value (not valueFrom) (from determined:taskContainerDefaults.env)",
        "master.yaml resource_pools[gpu].task_container_defaults.environment_variables: 'WANDB_API_KEY' is "
        "named like a secret and has a literal value (not valueFrom) (from determined:taskContainerDefaults.env)",
    ]
    assert not any("fixture" in m.lower() for m in found)


# --- system-pods-off-gpu-and-spot -------------------------------------------------------------


def gke_pool(name: str, spot: bool = False, gpus: int = 0) -> dict:
    config: dict = {
        "diskSizeGb": 100,
        "imageType": "COS_CONTAINERD",
        "labels": {"determined.ai/node-pool": name},
        "machineType": "g2-standard-8" if gpus else "e2-standard-4",
        "serviceAccount": "det-dev-nodes@my-gcp-project.iam.gserviceaccount.com",
        "spot": spot,
        "taints": [],
    }
    if gpus:
        config["guestAccelerators"] = [{"count": gpus, "type": "nvidia-l4"}]
        config["taints"] = [{"effect": "NO_SCHEDULE", "key": "nvidia.com/gpu", "value": "present"}]
    return {
        "autoscaling": {"totalMaxNodeCount": 3, "totalMinNodeCount": 0},
        "name": name,
        "nodeConfig": config,
    }


def eks_group(name: str, spot: bool = False) -> dict:
    return {
        "amiType": "AL2023_x86_64_STANDARD",
        "capacityType": "SPOT" if spot else "ON_DEMAND",
        "instanceTypes": ["m6i.xlarge"],
        "labels": {"determined.ai/node-pool": name},
        "nodeGroupName": name,
        "scalingConfig": {"desiredSize": 1, "maxSize": 3, "minSize": 1},
        "taints": [],
    }


def system_stack(master: dict | None = None, pools: list | None = None) -> list:
    gke = [
        resource(GKE_NODE_POOL, gke_pool("system"), "system"),
        resource(GKE_NODE_POOL, gke_pool("l4", True, 1), "l4"),
    ]
    return [
        *(gke if pools is None else pools),
        resource(DEPLOYMENT, master or master_deployment(), "master"),
        resource(STATEFUL_SET, database_stateful_set(), "db"),
        resource(JOB, workspace_job(), "job"),
    ]


def test_system_pods_rule_is_mandatory_everywhere():
    the_rule = rule("system-pods-off-gpu-and-spot")
    assert (the_rule.dev, the_rule.prod) == ("mandatory", "mandatory")


def test_system_pods_pass_on_an_on_demand_cpu_pool():
    assert check("system-pods-off-gpu-and-spot", system_stack(), ctx(cloud="gke")) == []
    eks = [
        resource(EKS_NODE_GROUP, eks_group("system"), "system"),
        resource(EKS_NODE_GROUP, eks_group("spot", True)),
    ]
    assert check("system-pods-off-gpu-and-spot", system_stack(pools=eks), ctx(cloud="eks")) == []


def test_system_pods_refuse_a_gpu_or_spot_pool():
    on_gpu = master_deployment(nodeSelector={"determined.ai/node-pool": "l4"})
    (found,) = check("system-pods-off-gpu-and-spot", system_stack(on_gpu), ctx(cloud="gke"))
    assert (
        found
        == "Deployment determined/determined-master: nodeSelector selects node pool 'l4', a GPU and spot pool"
    )
    eks = [
        resource(EKS_NODE_GROUP, eks_group("system"), "system"),
        resource(EKS_NODE_GROUP, eks_group("cheap", True)),
    ]
    on_spot = master_deployment(nodeSelector={"determined.ai/node-pool": "cheap"})
    (found,) = check("system-pods-off-gpu-and-spot", system_stack(on_spot, eks), ctx(cloud="eks"))
    assert "node pool 'cheap', a spot pool" in found


def test_system_pods_refuse_a_missing_or_unmatched_node_selector():
    props = database_stateful_set()
    del props["spec"]["template"]["spec"]["nodeSelector"]
    stack = [*system_stack(), resource(STATEFUL_SET, props, "db2")]
    (found,) = check("system-pods-off-gpu-and-spot", stack, ctx(cloud="gke"))
    assert found.startswith("StatefulSet determined/determined-db: no nodeSelector")
    nowhere = master_deployment(nodeSelector={"determined.ai/node-pool": "gone"})
    (found,) = check("system-pods-off-gpu-and-spot", system_stack(nowhere), ctx(cloud="gke"))
    assert "nodeSelector {'determined.ai/node-pool': 'gone'} selects no node pool of the stack" in found


def test_system_pods_refuse_gpu_tolerations_and_requests_on_existing_clusters():
    tolerating = master_deployment(
        nodeSelector={}, tolerations=[{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]
    )
    (found,) = check("system-pods-off-gpu-and-spot", system_stack(tolerating, pools=[]))
    assert found == "Deployment determined/determined-master: tolerates the nvidia.com/gpu taint of GPU nodes"
    everything = workspace_job(tolerations=[{"operator": "Exists"}])
    stack = [resource(JOB, everything, "job")]
    assert len(check("system-pods-off-gpu-and-spot", stack)) == 1
    gpu = database_stateful_set()
    containers_of(gpu)[0]["resources"]["limits"]["nvidia.com/gpu"] = 1
    (found,) = check("system-pods-off-gpu-and-spot", [resource(STATEFUL_SET, gpu, "db")])
    assert found == "StatefulSet determined/determined-db: container 'postgres' requests nvidia.com/gpu"


def test_system_pods_ignore_other_workloads_and_other_tolerations():
    other = master_deployment(nodeSelector={"determined.ai/node-pool": "l4"})
    other["metadata"]["name"] = "someone-else"
    calm = workspace_job(
        tolerations=[{"key": "dedicated", "operator": "Equal", "value": "ml", "effect": "NoSchedule"}]
    )
    stack = [*system_stack(), resource(DEPLOYMENT, other, "other"), resource(JOB, calm, "job2")]
    assert check("system-pods-off-gpu-and-spot", stack, ctx(cloud="gke")) == []


# --- no-privileged-pods -----------------------------------------------------------------------


def test_no_privileged_pods_is_mandatory_everywhere():
    the_rule = rule("no-privileged-pods")
    assert (the_rule.dev, the_rule.prod) == ("mandatory", "mandatory")


def test_no_privileged_pods_passes_the_projects_workloads_and_task_specs():
    for kind, props in (
        (DEPLOYMENT, master_deployment()),
        (STATEFUL_SET, database_stateful_set()),
        (JOB, workspace_job()),
    ):
        assert check("no-privileged-pods", args(kind, props)) == []
    spec = {
        "containers": [
            {"name": "determined-container", "securityContext": {"capabilities": {"add": ["IPC_LOCK"]}}}
        ],
        "volumes": [{"name": "ckpt", "hostPath": {"path": "/tmp/determined-checkpoints"}}],
    }
    assert check("no-privileged-pods", args(SECRET, master_config(task_config(spec)))) == []


def test_no_privileged_pods_refuses_privilege_in_workloads():
    props = workspace_job(hostNetwork=True, hostPID=False, hostIPC=True)
    containers_of(props)[0]["securityContext"] = {
        "privileged": True,
        "capabilities": {"add": ["CAP_SYS_ADMIN", "NET_RAW"]},
    }
    found = check("no-privileged-pods", args(JOB, props))
    name = "Job determined/determined-bind-workspaces-ec5fb76518-b7ba53"
    assert found == [
        f"{name}: hostNetwork: true",
        f"{name}: hostIPC: true",
        f"{name}: container 'bind-workspaces' is privileged",
        f"{name}: container 'bind-workspaces' adds capabilities CAP_SYS_ADMIN",
    ]


def test_no_privileged_pods_refuses_privileged_task_pod_specs():
    spec = {
        "containers": [
            {"name": "determined-container"},
            {
                "name": "sidecar",
                "image": "busybox:1.37",
                "securityContext": {"capabilities": {"add": ["NET_ADMIN"]}},
            },
        ],
        "initContainers": [{"name": "setup", "securityContext": {"privileged": True}}],
        "hostPID": True,
    }
    found = check("no-privileged-pods", args(SECRET, master_config(task_config(spec))))
    where = "master.yaml resource_pools[gpu].task_container_defaults.gpu_pod_spec"
    key = "(from determined:resourcePools[gpu].podSpec)"
    assert found == [
        f"{where}: hostPID: true {key}",
        f"{where}: container 'setup' is privileged {key}",
        f"{where}: container 'sidecar' adds capabilities NET_ADMIN {key}",
    ]


def test_no_privileged_pods_allows_only_the_pinned_tcpxo_daemon_its_net_admin():
    daemon = {
        "name": constants.TCPXO_DAEMON,
        "image": constants.TCPXO_DAEMON_IMAGE,
        "restartPolicy": "Always",
        "securityContext": {"capabilities": {"add": list(constants.TCPXO_DAEMON_CAPABILITIES)}},
    }
    spec = {"containers": [{"name": "determined-container"}], "initContainers": [daemon]}
    assert check("no-privileged-pods", args(SECRET, master_config(task_config(spec)))) == []
    # Another image, another name or more capabilities under the daemon's name: refused.
    for change in (
        {"image": "busybox:1.37"},
        {"name": "rxdm"},
        {"securityContext": {"capabilities": {"add": ["NET_ADMIN", "SYS_ADMIN"]}}},
    ):
        spec = {"containers": [{"name": "determined-container"}], "initContainers": [{**daemon, **change}]}
        assert check("no-privileged-pods", args(SECRET, master_config(task_config(spec)))), change


def test_no_privileged_pods_refuses_host_networking_of_tasks_once():
    config = task_config({"containers": [{"name": "determined-container"}]}, network_mode="host")
    (found,) = check("no-privileged-pods", args(SECRET, master_config(config)))
    assert found == (
        "master.yaml network_mode is host in task_container_defaults, resource_pools[gpu].task_container_defaults: "
        "task pods share the node's network (from determined:taskContainerDefaults.networkMode)"
    )


def test_no_privileged_pods_exempts_only_the_upstream_driver_installer():
    assert check("no-privileged-pods", args(DAEMON_SET, driver_installer())) == []
    renamed = driver_installer()
    renamed["metadata"]["namespace"] = "determined"
    found = check("no-privileged-pods", args(DAEMON_SET, renamed))
    assert "DaemonSet determined/nvidia-driver-installer: hostNetwork: true" in found
    assert (
        "DaemonSet determined/nvidia-driver-installer: container 'nvidia-driver-installer' is privileged"
        in found
    )
