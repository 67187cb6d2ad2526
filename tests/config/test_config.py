"""The configuration model: what is accepted, derived and refused, and how refusals read."""

from __future__ import annotations

import pytest
from conftest import BASE, GKE, make_config, raw_config

from components import config as config_mod
from components.config import ConfigError, decode_raw, load_config
from plan import stackfile


def problems(raw) -> list[str]:
    with pytest.raises(ConfigError) as info:
        load_config(raw)
    return [str(p) for p in info.value.problems]


# --- accepted configurations ---------------------------------------------------------


def test_every_stack_file_in_stacks_parses():
    for path in sorted(stackfile.STACKS_DIR.glob("Pulumi.*.yaml")):
        config, _ = stackfile.load_stack_file(path)
        raw = decode_raw({k.split(":", 1)[1]: v for k, v in config.items() if k.startswith("determined:")})
        load_config(raw)


def test_defaults_fill_in_what_the_contract_leaves_optional():
    cfg = make_config()
    assert cfg.environment == "dev"
    assert cfg.allow_data_deletion is False
    assert cfg.master.version == "0.38.1"
    assert cfg.master.image_registry == "determinedai"
    assert cfg.database.mode == "inCluster"
    assert cfg.database.storage_size == "30Gi"
    assert cfg.checkpoint_storage.type == "sharedFs"
    assert cfg.tls.mode == "none"
    assert cfg.scheduler == "default"


def test_default_pools_are_derived_from_the_node_pools():
    cfg = make_config()
    # No defaults configured: compute runs on the GPU pool, aux on the CPU pool.
    assert cfg.compute_pool == "a100"
    assert cfg.aux_pool == "aux"
    assert cfg.slot_type == "gpu"


def test_max_slots_per_pod_is_the_largest_divisor_of_every_gpu_pool():
    node_pools = [
        *BASE["nodePools"],
        {"name": "h100", "gpu": {"count": 8}, "nodeSelector": {"pool": "h100"}},
        {"name": "l4", "gpu": {"count": 6}, "nodeSelector": {"pool": "l4"}},
    ]
    pools = [
        *BASE["resourcePools"],
        {"name": "h100", "nodePool": "h100"},
        {"name": "l4", "nodePool": "l4"},
    ]
    cfg = make_config(nodePools=node_pools, resourcePools=pools)
    assert cfg.gpu_counts == [4, 6, 8]
    assert cfg.max_slots_per_pod == 2  # gcd(4, 6, 8)


def test_pool_namespace_defaults_to_a_dns_label_made_from_the_pool_name():
    pools = [{"name": "A100_Big.pool", "nodePool": "a100"}, BASE["resourcePools"][1]]
    cfg = make_config(resourcePools=pools)
    assert cfg.resource_pools[0].namespace_name == "det-a100-big-pool"


def test_numbers_given_for_quantities_become_strings():
    cfg = make_config(master={"cpu": 2, "memory": "8Gi"})
    assert cfg.master.cpu == "2"


def test_pod_specs_may_be_given_as_a_pod_or_a_bare_spec():
    tcd = {
        "cpuPodSpec": {"apiVersion": "v1", "kind": "Pod", "spec": {"containers": []}},
        "gpuPodSpec": {"containers": []},
    }
    cfg = make_config(taskContainerDefaults=tcd)
    assert cfg.task_container_defaults.gpu_pod_spec == {"containers": []}


def test_secret_by_nature_values_are_secret_however_given():
    cfg = make_config(
        database={"mode": "external", "host": "db", "user": "det", "password": "plain-text-pw"},
        master={"initialUserPassword": "Plain-Text-1"},
    )
    assert "plain-text-pw" not in repr(cfg)
    assert config_mod.secret_values(cfg) == {"plain-text-pw", "Plain-Text-1"}


def test_decode_raw_reads_pulumi_strings_and_json():
    decoded = decode_raw(
        {
            "cloud": "existing",
            "defaultAuxPool": "123",
            "allowDataDeletion": "true",
            "cluster": '{"name": "x"}',
        }
    )
    assert decoded == {
        "cloud": "existing",
        "defaultAuxPool": "123",  # a pool name stays a string
        "allowDataDeletion": True,
        "cluster": {"name": "x"},
    }


# --- refused configurations: one line per problem, naming the key path -----------------

node_pools = BASE["nodePools"]
resource_pools = BASE["resourcePools"]

BAD_CASES = [
    ("cloud missing", {"cloud": None}, "determined:cloud: required"),
    (
        "cloud unknown",
        {"cloud": "aks"},
        "determined:cloud: must be one of 'existing', 'gke', 'eks' (got 'aks')",
    ),
    (
        "environment",
        {"environment": "staging"},
        "determined:environment: must be one of 'dev' or 'prod' (got 'staging')",
    ),
    (
        "unknown top-level key",
        {"nodepools": []},
        "determined:nodepools: unknown key; did you mean 'nodePools'?",
    ),
    ("snake_case key", {"node_pools": []}, "determined:node_pools: unknown key; did you mean 'nodePools'?"),
    (
        "nested snake_case key",
        {"master": {"image_registry": "x"}},
        "determined:master.image_registry: unknown key; did you mean 'imageRegistry'?",
    ),
    (
        "misspelt key",
        {"master": {"verison": "0.38.1"}},
        "determined:master.verison: unknown key; did you mean 'version'?",
    ),
    ("cluster name missing", {"cluster": {}}, "determined:cluster.name: required"),
    (
        "cluster name not DNS",
        {"cluster": {"name": "Det_Dev"}},
        "determined:cluster.name: 'Det_Dev' is not a valid DNS label",
    ),
    (
        "kubernetes version form",
        {"cluster": {"name": "x", "kubernetesVersion": "1.33.2"}},
        "determined:cluster.kubernetesVersion: '1.33.2' is not a Kubernetes minor version (example: 1.33)",
    ),
    (
        "region on existing",
        {"cluster": {"name": "x", "region": "us-central1"}},
        "determined:cluster.region: only for cloud gke or eks",
    ),
    (
        "master namespace",
        {"namespace": "Determined"},
        "determined:namespace: 'Determined' is not a valid DNS label",
    ),
    (
        "access key without secret key",
        {"checkpointStorage": {"type": "s3", "bucket": "ckpt", "accessKey": "AKIA"}},
        "determined:checkpointStorage.secretKey: accessKey and secretKey go together",
    ),
    (
        "negative retention",
        {"checkpointStorage": {"saveTrialLatest": -1}},
        "determined:checkpointStorage.saveTrialLatest: must be at least 0",
    ),
    (
        "root cert on in-cluster db",
        {"database": {"sslRootCert": "-----BEGIN CERTIFICATE-----"}},
        "determined:database.sslRootCert: only for database.mode external",
    ),
    ("no node pools", {"nodePools": []}, "determined:nodePools: needs at least 1 item(s)"),
    (
        "duplicate node pool",
        {"nodePools": [*node_pools, {"name": "system", "nodeSelector": {"a": "b"}}]},
        "determined:nodePools[2].name: duplicate node pool name 'system'",
    ),
    (
        "min above max",
        {
            "cloud": "eks",
            "cluster": {"name": "x", "region": "us-east-1"},
            "nodePools": [
                {"name": "system", "machineType": "m7i.2xlarge", "minNodes": 3, "maxNodes": 2},
                {"name": "a100", "machineType": "p4d.24xlarge", "gpu": {"type": "a100", "count": 8}},
            ],
        },
        "determined:nodePools[0].minNodes: 3 is greater than maxNodes (2)",
    ),
    (
        "gpu count zero",
        {"nodePools": [node_pools[0], {**node_pools[1], "gpu": {"count": 0}}]},
        "determined:nodePools[1].gpu.count: must be at least 1",
    ),
    (
        "taint effect",
        {"nodePools": [node_pools[0], {**node_pools[1], "taints": [{"key": "a", "effect": "NoSched"}]}]},
        "determined:nodePools[1].taints[0].effect: must be one of 'NoSchedule', 'PreferNoSchedule' or 'NoExecute' (got 'NoSched')",
    ),
    (
        "bad label key",
        {"nodePools": [node_pools[0], {**node_pools[1], "labels": {"-bad": "x"}}]},
        "determined:nodePools[1].labels: label key '-bad' is invalid",
    ),
    (
        "every pool tainted",
        {
            "nodePools": [
                {**node_pools[0], "taints": [{"key": "dedicated", "value": "x", "effect": "NoSchedule"}]},
                node_pools[1],
            ]
        },
        "determined:nodePools: at least one untainted CPU pool is needed",
    ),
    (
        "existing pool without selector",
        {"nodePools": [node_pools[0], {"name": "a100", "gpu": {"count": 4}}]},
        "determined:nodePools[1].nodeSelector: required on an existing cluster: resource pool 'a100'",
    ),
    (
        "dangling node pool reference",
        {"resourcePools": [{"name": "h100", "nodePool": "h100"}, resource_pools[1]]},
        "determined:resourcePools[0].nodePool: no node pool named 'h100' (node pools: system, a100)",
    ),
    (
        "duplicate resource pool",
        {"resourcePools": [*resource_pools, {"name": "aux", "nodePool": "system", "namespace": "det-aux2"}]},
        "determined:resourcePools[2].name: duplicate resource pool name 'aux'",
    ),
    (
        "namespace not DNS",
        {"resourcePools": [{**resource_pools[0], "namespace": "Det_A100"}, resource_pools[1]]},
        "determined:resourcePools[0].namespace: 'Det_A100' is not a valid DNS label",
    ),
    (
        "pool in the master namespace",
        {"resourcePools": [{**resource_pools[0], "namespace": "determined"}, resource_pools[1]]},
        "determined:resourcePools[0].namespace: 'determined' is the master's namespace",
    ),
    (
        "default compute pool",
        {"defaultComputePool": "h100"},
        "determined:defaultComputePool: no resource pool named 'h100' (resource pools: a100, aux)",
    ),
    (
        "default aux pool",
        {"defaultAuxPool": "cpu"},
        "determined:defaultAuxPool: no resource pool named 'cpu'",
    ),
    (
        "preemption scheduler",
        {"scheduler": "preemption"},
        "determined:scheduler: 'preemption' is not accepted by the Kubernetes resource manager",
    ),
    (
        "unknown scheduler",
        {"scheduler": "volcano"},
        "determined:scheduler: must be one of 'default' or 'kueue' (got 'volcano')",
    ),
    (
        "coscheduler refused",
        {"scheduler": "coscheduler"},
        "determined:scheduler: coscheduler is refused: Determined's coscheduler support needs scheduler-plugins v0.18.9",
    ),
    (
        "weak initial password",
        {"master": {"initialUserPassword": "alllowercase1"}},
        "determined:master.initialUserPassword: does not meet Determined's password rule: at least 8 characters "
        "with an upper-case letter, a lower-case letter and a digit",
    ),
    (
        "master version form",
        {"master": {"version": "latest"}},
        "determined:master.version: 'latest' is not a release version MAJOR.MINOR.PATCH without leading zeros (example: 0.38.1)",
    ),
    (
        "master too old",
        {"master": {"version": "0.19.0"}},
        "determined:master.version: Determined 0.19.0 is older than the oldest supported, 0.26.0",
    ),
    (
        "memory quantity",
        {"master": {"memory": "8GB"}},
        "determined:master.memory: '8GB' is not a Kubernetes quantity",
    ),
    ("unknown master key", {"master": {"replicas": 2}}, "determined:master.replicas: unknown key"),
    (
        "external db host",
        {"database": {"mode": "external", "user": "u", "password": "p"}},
        "determined:database.host: required for database.mode external",
    ),
    (
        "external db password",
        {"database": {"mode": "external", "host": "h", "user": "u"}},
        "determined:database.password: required for database.mode external",
    ),
    (
        "db mode",
        {"database": {"mode": "sqlite"}},
        "determined:database.mode: must be one of 'inCluster', 'external', 'managed' (got 'sqlite')",
    ),
    (
        "db port",
        {"database": {"mode": "external", "host": "h", "user": "u", "password": "p", "port": 70000}},
        "determined:database.port: must be at most 65535",
    ),
    (
        "verify-full without CA",
        {
            "database": {
                "mode": "external",
                "host": "h",
                "user": "u",
                "password": "p",
                "sslMode": "verify-full",
            }
        },
        "determined:database.sslRootCert: required for sslMode verify-full",
    ),
    (
        "host on in-cluster db",
        {"database": {"host": "10.0.0.5"}},
        "determined:database.host: only for database.mode external",
    ),
    (
        "managed needs tier",
        {"database": {"mode": "managed"}},
        "determined:database.tier: required for database.mode managed",
    ),
    (
        "storage type",
        {"checkpointStorage": {"type": "hdfs"}},
        "determined:checkpointStorage.type: must be one of 'sharedFs', 's3', 'gcs', 'azure', 'directory' (got 'hdfs')",
    ),
    (
        "bucket on existing",
        {"checkpointStorage": {"type": "s3"}},
        "determined:checkpointStorage.bucket: required for s3 storage on cloud existing",
    ),
    (
        "endpoint url form",
        {"checkpointStorage": {"type": "s3", "bucket": "ckpt", "endpointUrl": "minio:9000"}},
        "determined:checkpointStorage.endpointUrl: 'minio:9000' is not an http:// or https:// URL",
    ),
    (
        "azure container",
        {"checkpointStorage": {"type": "azure", "connectionString": "x"}},
        "determined:checkpointStorage.container: required for checkpointStorage.type azure",
    ),
    (
        "key for another type",
        {"checkpointStorage": {"type": "gcs", "bucket": "ckpt", "endpointUrl": "http://x"}},
        "determined:checkpointStorage.endpointUrl: only for checkpointStorage.type s3",
    ),
    (
        "tls host",
        {"tls": {"mode": "ingress", "certificate": {"email": "a@b.io"}}},
        "determined:tls.host: required for tls.mode ingress",
    ),
    (
        "tls email",
        {"tls": {"mode": "master", "host": "det.example.com", "certificate": {}}},
        "determined:tls.certificate.email: required for tls.certificate.source certManager",
    ),
    (
        "tls secret name",
        {"tls": {"mode": "ingress", "host": "det.example.com", "certificate": {"source": "secret"}}},
        "determined:tls.certificate.secretName: required for tls.certificate.source secret",
    ),
    (
        "source range",
        {
            "tls": {
                "mode": "ingress",
                "host": "det.example.com",
                "certificate": {"email": "a@b.io"},
                "sourceRanges": ["203.0.113.0/33"],
            }
        },
        "determined:tls.sourceRanges[0]: '203.0.113.0/33' is not a CIDR range",
    ),
    (
        "prod deletion",
        {"environment": "prod", "allowDataDeletion": True},
        "determined:allowDataDeletion: refused in prod",
    ),
    (
        "max slots misfit",
        {"slots": {"maxSlotsPerPod": 3}},
        "determined:slots.maxSlotsPerPod: 3 does not divide the GPUs per node of every GPU pool (4); values that fit: 1, 2, 4",
    ),
    (
        "cpu slots need max",
        {"slots": {"type": "cpu", "cpuPerSlot": 2}},
        "determined:slots.maxSlotsPerPod: required for cpu slots",
    ),
    (
        "cpuPerSlot with gpu slots",
        {"slots": {"cpuPerSlot": 2}},
        "determined:slots.cpuPerSlot: only for slots type cpu",
    ),
    (
        "gke needs region",
        {"cloud": "gke", "cluster": {"name": "x"}},
        "determined:cluster.region: required for cloud gke",
    ),
    (
        "operator not yet",
        {"gpuOperator": {"enabled": True}},
        "determined:gpuOperator.enabled: the GPU operator is installed on clusters the stack creates",
    ),
    (
        "operator version form",
        {"gpuOperator": {"version": "25.10.1"}},
        "determined:gpuOperator.version: '25.10.1' is not a chart version vMAJOR.MINOR.PATCH (example: v26.7.0)",
    ),
    (
        "quota gpu on cpu pool",
        {"resourcePools": [resource_pools[0], {**resource_pools[1], "quota": {"gpu": 2}}]},
        "determined:resourcePools[1].quota.gpu: node pool 'system' has no GPUs",
    ),
    (
        "pod spec with unknown pod keys",
        {"taskContainerDefaults": {"gpuPodSpec": {"kind": "Pod", "status": {}}}},
        "determined:taskContainerDefaults.gpuPodSpec: unexpected keys status in a Pod (allowed: apiVersion, kind, metadata, spec)",
    ),
]


# Values Kubernetes or the master would reject, refused here with what is allowed.
BAD_CASES += [
    (
        "trailing newline in a quantity",
        {"master": {"memory": "8Gi\n"}},
        "determined:master.memory: '8Gi\\n' is not a Kubernetes quantity",
    ),
    (
        "trailing newline in a namespace",
        {"resourcePools": [{**resource_pools[0], "namespace": "team-gpu\n"}, resource_pools[1]]},
        "determined:resourcePools[0].namespace: 'team-gpu\\n' is not a valid DNS label",
    ),
    (
        "trailing newline in a version",
        {"master": {"version": "0.38.1\n"}},
        "determined:master.version: '0.38.1\\n' is not a release version",
    ),
    (
        "boolean as a namespace",
        {"namespace": False},
        "determined:namespace: must be a string, not a boolean (quote it in YAML)",
    ),
    (
        "null as a nested string",
        {"cluster": {"name": None}},
        "determined:cluster.name: must be a string, not empty (null)",
    ),
    (
        "boolean as a pool name",
        {"resourcePools": [{**resource_pools[0], "name": False}, resource_pools[1]]},
        "determined:resourcePools[0].name: must be a string, not a boolean",
    ),
    (
        "zero storage",
        {"database": {"storageSize": "0"}},
        "determined:database.storageSize: '0' must be greater than zero",
    ),
    (
        "zero memory",
        {"master": {"memory": "0Gi"}},
        "determined:master.memory: '0Gi' must be greater than zero",
    ),
    (
        "storage class with a space",
        {"database": {"storageClass": "Standard RWO"}},
        "determined:database.storageClass: 'Standard RWO' is not a valid Kubernetes name",
    ),
    (
        "registry with a space",
        {"master": {"imageRegistry": "my registry"}},
        "determined:master.imageRegistry: 'my registry' is not an image registry or repository path",
    ),
    (
        "registry with upper case path",
        {"master": {"imageRegistry": "mirror.io/DeterminedAI"}},
        "determined:master.imageRegistry: 'mirror.io/DeterminedAI' is not an image registry",
    ),
    (
        "gpu count 2^64",
        {"nodePools": [node_pools[0], {**node_pools[1], "gpu": {"count": 2**64}}]},
        "determined:nodePools[1].gpu.count: must be at most 16",
    ),
    (
        "gpu count as boolean",
        {"nodePools": [node_pools[0], {**node_pools[1], "gpu": {"count": True}}]},
        "determined:nodePools[1].gpu.count: must be a whole number, not a boolean",
    ),
    (
        "version with a leading zero",
        {"master": {"version": "0.038.1"}},
        "determined:master.version: '0.038.1' is not a release version MAJOR.MINOR.PATCH without leading zeros",
    ),
    (
        "retention beyond int32",
        {"checkpointStorage": {"saveTrialBest": 2**31}},
        "determined:checkpointStorage.saveTrialBest: must be at most 2147483647",
    ),
    (
        "namespace kube-system",
        {"namespace": "kube-system"},
        "determined:namespace: 'kube-system' belongs to the cluster itself",
    ),
    (
        "pool namespace default",
        {"resourcePools": [{**resource_pools[0], "namespace": "default"}, resource_pools[1]]},
        "determined:resourcePools[0].namespace: 'default' belongs to the cluster itself",
    ),
    (
        "pool namespace kube-public",
        {"resourcePools": [{**resource_pools[0], "namespace": "kube-public"}, resource_pools[1]]},
        "determined:resourcePools[0].namespace: 'kube-public' belongs to the cluster itself",
    ),
    (
        "derived namespaces collide",
        {"resourcePools": [{"name": "gpu_a", "nodePool": "a100"}, {"name": "gpu-a", "nodePool": "system"}]},
        "determined:resourcePools[1].name: derives the namespace 'det-gpu-a', as resourcePools[0] does; set resourcePools[1].namespace",
    ),
    (
        "two quotas in one namespace (their derived names would collide too)",
        {
            "resourcePools": [
                {"name": "gpu_a", "nodePool": "a100", "namespace": "det-shared", "quota": {"gpu": 4}},
                {"name": "gpu-a", "nodePool": "a100", "namespace": "det-shared", "quota": {"gpu": 4}},
            ]
        },
        "determined:resourcePools[1].quota: namespace 'det-shared' already has the quota of resourcePools[0]",
    ),
    (
        "pod spec containers not a list",
        {"taskContainerDefaults": {"gpuPodSpec": {"containers": "abc"}}},
        "determined:taskContainerDefaults.gpuPodSpec.containers: must be a list",
    ),
    (
        "pod spec unknown field",
        {"taskContainerDefaults": {"cpuPodSpec": {"nodeSelectr": {"a": "b"}}}},
        "determined:taskContainerDefaults.cpuPodSpec: unknown field 'nodeSelectr'",
    ),
    (
        "pod spec container without name",
        {
            "resourcePools": [
                {**resource_pools[0], "podSpec": {"containers": [{"image": "x:1"}]}},
                resource_pools[1],
            ]
        },
        "determined:resourcePools[0].podSpec.containers[0]: 'name' required",
    ),
    (
        "pod spec in Pod form, wrong type deep inside",
        {
            "taskContainerDefaults": {
                "gpuPodSpec": {"spec": {"containers": [{"name": "c", "env": [{"name": "X", "value": 3}]}]}}
            }
        },
        "determined:taskContainerDefaults.gpuPodSpec.spec.containers[0].env[0].value: must be a string",
    ),
    (
        "pod spec not a mapping",
        {"taskContainerDefaults": {"gpuPodSpec": ["x"]}},
        "determined:taskContainerDefaults.gpuPodSpec: must be a mapping (a Pod or a PodSpec)",
    ),
    (
        "pod spec host network",
        {"taskContainerDefaults": {"cpuPodSpec": {"hostNetwork": True}}},
        "determined:taskContainerDefaults.cpuPodSpec.hostNetwork: not allowed: Determined does not run Kubernetes tasks on the host network",
    ),
    (
        "pod spec pod name",
        {
            "resourcePools": [
                {**resource_pools[0], "podSpec": {"metadata": {"name": "mine"}}},
                resource_pools[1],
            ]
        },
        "determined:resourcePools[0].podSpec.metadata.name: not allowed: the master names each task pod",
    ),
    (
        "pod spec namespace",
        {
            "resourcePools": [
                {**resource_pools[0], "podSpec": {"metadata": {"namespace": "x"}}},
                resource_pools[1],
            ]
        },
        "determined:resourcePools[0].podSpec.metadata.namespace: not allowed: the master puts each task pod",
    ),
    (
        "checkpoint GC pod spec on an old master",
        {
            "master": {"version": "0.33.0"},
            "taskContainerDefaults": {"checkpointGcPodSpec": {"priorityClassName": "x"}},
        },
        "determined:taskContainerDefaults.checkpointGcPodSpec: needs master.version 0.34.0 or newer (older masters ignore it)",
    ),
    (
        "initial password on a master without the key",
        {"master": {"version": "0.28.1", "initialUserPassword": "Passw0rdOK"}},
        "determined:master.initialUserPassword: needs master.version 0.29.0 or newer (older masters cannot set it",
    ),
    (
        "azure prefix has no effect",
        {"checkpointStorage": {"type": "azure", "container": "ckpt", "connectionString": "x", "prefix": "p"}},
        "determined:checkpointStorage.prefix: only for checkpointStorage.type s3 or gcs",
    ),
    (
        "task container image",
        {
            "resourcePools": [
                {
                    **resource_pools[0],
                    "podSpec": {"containers": [{"name": "determined-container", "image": "evil:1"}]},
                },
                resource_pools[1],
            ]
        },
        "determined:resourcePools[0].podSpec.containers[0].image: not allowed: Determined sets the image of its task container",
    ),
    (
        "task container command",
        {
            "taskContainerDefaults": {
                "gpuPodSpec": {"spec": {"containers": [{"name": "determined-container", "command": ["x"]}]}}
            }
        },
        "determined:taskContainerDefaults.gpuPodSpec.spec.containers[0].command: not allowed: Determined sets the command",
    ),
    (
        "resource amount that is not a quantity",
        {
            "taskContainerDefaults": {
                "gpuPodSpec": {
                    "containers": [
                        {"name": "determined-container", "resources": {"limits": {"memory": "lots"}}}
                    ]
                }
            }
        },
        "determined:taskContainerDefaults.gpuPodSpec.containers[0].resources.limits.memory: is not a Kubernetes quantity",
    ),
    (
        "list item without its merge key",
        {"taskContainerDefaults": {"cpuPodSpec": {"imagePullSecrets": [{}]}}},
        "determined:taskContainerDefaults.cpuPodSpec: cannot be merged over the defaults: a list item has no merge key 'name'",
    ),
    (
        "unknown merge directive",
        {"taskContainerDefaults": {"cpuPodSpec": {"volumes": [{"name": "x", "$patch": "merge-please"}]}}},
        "determined:taskContainerDefaults.cpuPodSpec: cannot be merged over the defaults: unsupported strategic merge patch list item",
    ),
    (
        "yes is not true",
        {"allowDataDeletion": "yes"},
        "determined:allowDataDeletion: must be true or false, not a string",
    ),
    (
        "spot as a string",
        {
            "cloud": "eks",
            "cluster": {"name": "x", "region": "us-east-1"},
            "nodePools": [{"name": "system", "machineType": "m7i.xlarge", "spot": "on"}],
        },
        "determined:nodePools[0].spot: must be true or false, not a string",
    ),
    (
        "cpuPerSlot as a boolean",
        {"slots": {"type": "cpu", "cpuPerSlot": True, "maxSlotsPerPod": 2}},
        "determined:slots.cpuPerSlot: must be a number, not a boolean",
    ),
    (
        "fractional GPU count",
        {"nodePools": [node_pools[0], {**node_pools[1], "gpu": {"count": 2.5}}]},
        "determined:nodePools[1].gpu.count: must be a whole number, not a fraction",
    ),
    (
        "empty choice",
        {"environment": [], "scheduler": "default"},
        "determined:environment: must be one of 'dev' or 'prod' (got a list)",
    ),
    (
        "snake_case key of another variant",
        {"checkpointStorage": {"type": "gcs", "bucket": "ckpt", "endpoint_url": "http://x"}},
        "determined:checkpointStorage.endpoint_url: unknown key 'endpoint_url'; 'endpointUrl' is only for checkpointStorage.type s3",
    ),
    (
        "taint value",
        {
            "nodePools": [
                node_pools[0],
                {**node_pools[1], "taints": [{"key": "a", "value": "b c", "effect": "NoSchedule"}]},
            ]
        },
        "determined:nodePools[1].taints[0].value: label value 'b c' for 'a' is invalid",
    ),
    (
        "tls exposure",
        {
            "tls": {
                "mode": "ingress",
                "host": "det.example.com",
                "certificate": {"email": "a@b.io"},
                "exposure": "private",
            }
        },
        "determined:tls.exposure: must be one of 'public' or 'internal' (got 'private')",
    ),
    (
        "tls key without tls",
        {"tls": {"host": "det.example.com"}},
        "determined:tls.host: only for tls.mode ingress or master",
    ),
    (
        "nodeSelector on a created pool",
        {
            "cloud": "eks",
            "cluster": {"name": "x", "region": "us-east-1"},
            "nodePools": [{**node_pools[0], "machineType": "m7i.xlarge"}],
        },
        "determined:nodePools[0].nodeSelector: only for cloud existing",
    ),
    (
        "minNodes on an existing pool",
        {"nodePools": [{**node_pools[0], "minNodes": 1}, node_pools[1]]},
        "determined:nodePools[0].minNodes: only for cloud gke or eks",
    ),
    (
        "S3 bucket name",
        {"checkpointStorage": {"type": "s3", "bucket": "My_Bucket"}},
        "determined:checkpointStorage.bucket: 'My_Bucket' is not an S3 bucket name",
    ),
    (
        "root cert not PEM",
        {"database": {"mode": "external", "host": "h", "user": "u", "password": "p", "sslRootCert": "abc"}},
        "determined:database.sslRootCert: must be a CA certificate in PEM form",
    ),
    (
        "empty password",
        {"database": {"mode": "external", "host": "h", "user": "u", "password": ""}},
        "determined:database.password: must not be empty",
    ),
]

# Cloud, pool, Kueue and TLS keys: a bad value is refused with what is allowed.
BAD_CASES += [
    (
        "cluster.privateNodes",
        {**GKE, "cluster": {**GKE["cluster"], "privateNodes": "yes"}},
        "determined:cluster.privateNodes: must be true or false, not a string",
    ),
    (
        "nodePools[1].imageType",
        {**GKE, "nodePools": [GKE["nodePools"][0], {**GKE["nodePools"][1], "imageType": "ubuntu"}]},
        "determined:nodePools[1].imageType: must be one of 'COS_CONTAINERD' or 'UBUNTU_CONTAINERD' (got 'ubuntu')",
    ),
    (
        "nodePools[1].diskSizeGb",
        {**GKE, "nodePools": [GKE["nodePools"][0], {**GKE["nodePools"][1], "diskSizeGb": 5}]},
        "determined:nodePools[1].diskSizeGb: must be at least 10",
    ),
    (
        "database.highAvailability",
        {**GKE, "database": {"mode": "managed", "tier": "db-custom-2-8192", "highAvailability": "true"}},
        "determined:database.highAvailability: must be true or false, not a string",
    ),
    (
        "resourcePools[0].quota.limits.cpu",
        {"resourcePools": [{**resource_pools[0], "quota": {"limits": {"cpu": "abc"}}}, resource_pools[1]]},
        "determined:resourcePools[0].quota.limits.cpu: 'abc' is not a Kubernetes quantity",
    ),
    (
        "kueue.podsReadyTimeoutSeconds",
        {"kueue": {"podsReadyTimeoutSeconds": 5}},
        "determined:kueue.podsReadyTimeoutSeconds: must be at least 30",
    ),
    (
        "kueue.cohort",
        {"kueue": {"cohort": "Bad_Name"}},
        "determined:kueue.cohort: 'Bad_Name' is not a valid DNS label",
    ),
    (
        "adoptPriorityClasses",
        {"adoptPriorityClasses": "yes"},
        "determined:adoptPriorityClasses: must be true or false, not a string",
    ),
    (
        "tls.gatewayClassName",
        {
            "tls": {
                "mode": "ingress",
                "host": "det.example.com",
                "certificate": {"source": "secret", "secretName": "x"},
                "gatewayClassName": "Bad Class",
            }
        },
        "determined:tls.gatewayClassName: 'Bad Class' is not a valid Kubernetes name",
    ),
    (
        "resourcePools[0].workspace",
        {"resourcePools": [{**resource_pools[0], "workspace": ""}, resource_pools[1]]},
        "determined:resourcePools[0].workspace:",
    ),
]


def test_no_message_shows_a_regex_or_a_python_class_name():
    for _, overrides, _ in BAD_CASES:
        for line in problems(raw_config(**overrides)):
            assert not any(
                marker in line
                for marker in ("^", "[a-z", "\\d", "(?", "Config", "Model", "SecretStr", "Annotated")
            ), line


def test_pod_specs_may_use_merge_directives_and_false_host_network():
    pools = [
        {
            **resource_pools[0],
            "podSpec": {
                "hostNetwork": False,
                "containers": [{"name": "sidecar", "$patch": "delete"}],
                "volumes": [{"name": "data", "$retainKeys": ["name", "emptyDir"], "emptyDir": {}}],
            },
        },
        resource_pools[1],
    ]
    make_config(resourcePools=pools)


def test_checkpoint_gc_pod_spec_is_accepted_from_0_34():
    make_config(
        master={"version": "0.34.0"},
        taskContainerDefaults={"checkpointGcPodSpec": {"priorityClassName": "x"}},
    )


def test_a_derived_namespace_never_ends_with_a_dash():
    name = "p" * 58 + "-x"  # "det-" + name is cut to 63 characters, right after the '-'
    cfg = make_config(resourcePools=[{"name": name, "nodePool": "a100"}, resource_pools[1]])
    assert cfg.resource_pools[0].namespace_name == "det-" + "p" * 58


def test_empty_and_boolean_values_from_pulumi_are_values_not_strings():
    assert decode_raw({"namespace": "null", "defaultAuxPool": "false", "cloud": "existing"}) == {
        "namespace": None,
        "defaultAuxPool": False,
        "cloud": "existing",
    }
    raw = {**raw_config(), **decode_raw({"namespace": "null"})}
    assert problems(raw) == [
        "determined:namespace: must be a string, not empty (null); leave the key out to use its default"
    ]


@pytest.mark.parametrize(("overrides", "expected"), [c[1:] for c in BAD_CASES], ids=[c[0] for c in BAD_CASES])
def test_bad_config_names_key_path_and_problem(overrides, expected):
    lines = problems(raw_config(**overrides))
    assert any(line.startswith(expected) for line in lines), lines


def test_every_problem_is_reported_at_once():
    raw = raw_config(
        resourcePools=[{"name": "h100", "nodePool": "h100"}, resource_pools[1]],
        defaultAuxPool="cpu",
        database={"mode": "external"},
    )
    lines = problems(raw)
    assert len(lines) == 5, lines  # nodePool, defaultAuxPool, host, user, password


def test_rules_never_judge_other_keys_against_a_broken_keys_default():
    # The master's namespace is broken: the rule comparing pool namespaces with it must not
    # compare them with the default 'determined' instead.
    pools = [{**resource_pools[0], "namespace": "determined"}, resource_pools[1]]
    assert problems(raw_config(namespace="Det", resourcePools=pools)) == [
        "determined:namespace: 'Det' is not a valid DNS label (lower-case letters, digits and '-', "
        "starting and ending with a letter or digit, at most 63 characters)"
    ]


def test_secret_values_are_never_repeated_in_errors():
    lines = problems(raw_config(master={"initialUserPassword": "weakpass"}, database={"password": {"x": 1}}))
    assert not any("weakpass" in line for line in lines)


def test_config_error_is_a_pulumi_run_error():
    # pulumi.RunError makes `pulumi up` print the message without a Python traceback.
    import pulumi

    assert issubclass(ConfigError, pulumi.RunError)
