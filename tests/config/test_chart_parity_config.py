"""Keys added for Determined Helm-chart parity (images and pull Secrets, master settings, the
master's node pool and Service, database image and parameters, task defaults): what each
constants to, and each bad value refused in one line naming its key path and what is allowed."""

from __future__ import annotations

import copy

import pytest
from conftest import BASE, ROOT, make_config, raw_config

from components import constants
from components.config import ConfigError, load_config

# A real CA certificate: master.caBundle must parse as X.509 (components/config/syntax.py).
PEM = (ROOT / "tests" / "data" / "test-ca.pem").read_text()
CREDENTIALS = {"server": "mirror.example.com", "username": "robot", "password": "Registry-Token-1"}
TLS_SECRET = {"source": "secret", "secretName": "det-tls"}
TLS_MASTER = {"mode": "master", "host": "det.example.com", "certificate": TLS_SECRET}
TLS_INGRESS = {"mode": "ingress", "host": "det.example.com", "certificate": TLS_SECRET}

# A GKE stack whose first CPU pool is spot: the master must skip it.
SPOT = {"name": "spot-cpu", "machineType": "e2-standard-8", "spot": True}
SYSTEM = {"name": "system", "machineType": "e2-standard-8"}
A100 = {"name": "a100", "machineType": "a2-highgpu-4g", "gpu": {"type": "nvidia-tesla-a100", "count": 4}}
GKE = {
    "cloud": "gke",
    "cluster": {"name": "det", "region": "us-central1", "project": "p"},
    "nodePools": [SPOT, SYSTEM, A100],
    "resourcePools": [{"name": "a100", "nodePool": "a100"}, {"name": "aux", "nodePool": "system"}],
}


def problems(raw) -> list[str]:
    with pytest.raises(ConfigError) as info:
        load_config(raw)
    return [str(p) for p in info.value.problems]


def gke(**overrides):
    raw = copy.deepcopy(GKE)
    raw.update(overrides)
    return raw


def with_master(**master):
    return raw_config(master=master)


def with_tcd(version="0.38.1", **tcd):
    return raw_config(master={"version": version}, taskContainerDefaults=tcd)


# --- defaults ----------------------------------------------------------------------------------


def test_defaults_match_the_chart_and_the_master():
    cfg = make_config()
    master = cfg.master
    assert master.log_level == "info"
    assert master.notebook_timeout == 3600
    assert master.tensorboard_timeout == 300
    assert master.image is None
    assert master.image_reference == f"determinedai/determined-master:{master.version}"
    assert master.retention is None
    assert master.webhooks.base_url is None and master.webhooks.signing_key is None
    assert master.default_task_user is None
    assert master.observability.enable_prometheus is False
    assert master.logging.type == "default"
    assert not master.has_ca_bundle
    assert master.proxy is None
    assert master.service.type == "ClusterIP" and master.service.annotations == {}
    assert master.pod_annotations == {} and master.env == {}
    assert master.container_resources["requests"] == {"cpu": master.cpu, "memory": master.memory}
    assert cfg.image_pull_secrets == [] and cfg.registry_credentials is None and cfg.pull_secrets == []
    tcd = cfg.task_container_defaults
    assert (tcd.shm_size_bytes, tcd.network_mode, tcd.force_pull_image) == (4294967296, "bridge", False)
    assert tcd.startup_hook is None and tcd.log_policies is None
    assert cfg.database.image is None and cfg.database.parameters == {}
    assert cfg.database.settings == constants.DB_SETTINGS
    assert cfg.database.container_resources == constants.DB_RESOURCES


def test_master_image_replaces_registry_and_version_and_may_be_pinned_by_digest():
    image = "mirror.example.com/determinedai/determined-master:0.38.1"
    assert make_config(master={"image": image}).master.image_reference == image
    digest = "mirror.example.com/det/determined-master@sha256:" + "a" * 64
    assert make_config(master={"image": digest}).master.image_reference == digest
    assert make_config(database={"image": "mirror.example.com/pg:17.6"}).database.image == (
        "mirror.example.com/pg:17.6"
    )


def test_pull_secrets_are_the_named_ones_then_the_projects_own():
    # A name given twice is refused (tests/fixtures/bad-config/cross-section.yaml).
    cfg = make_config(imagePullSecrets=["regcred", "other"], registryCredentials=CREDENTIALS)
    assert cfg.pull_secrets == ["regcred", "other", constants.REGISTRY_SECRET]
    assert make_config(registryCredentials=CREDENTIALS).pull_secrets == [constants.REGISTRY_SECRET]
    assert make_config(imagePullSecrets=["regcred"]).pull_secrets == ["regcred"]
    # Without credentials the project makes no Secret of that name: the user may name theirs so.
    assert make_config(imagePullSecrets=[constants.REGISTRY_SECRET]).pull_secrets == [
        constants.REGISTRY_SECRET
    ]


def test_registry_password_is_kept_secret():
    cfg = make_config(registryCredentials=CREDENTIALS)
    assert "Registry-Token-1" not in repr(cfg.registry_credentials)
    assert cfg.registry_credentials.password.get_secret_value() == "Registry-Token-1"


def test_database_parameters_go_over_the_defaults_as_postgres_reads_them():
    cfg = make_config(database={"parameters": {"max_connections": 200, "jit": False, "work_mem": "64MB"}})
    settings = cfg.database.settings
    assert settings["max_connections"] == "200"
    # A YAML boolean: a value PostgreSQL reads as a boolean (it takes off/false/0 alike).
    assert settings["jit"] in ("off", "false", "0")
    assert settings["work_mem"] == "64MB"
    # The other defaults stay.
    for key, value in constants.DB_SETTINGS.items():
        if key != "max_connections":
            assert settings[key] == value


# --- the master's node pool ----------------------------------------------------------------------


def test_the_master_runs_on_the_first_untainted_on_demand_cpu_pool_skipping_spot_pools():
    cfg = load_config(gke())
    assert cfg.master_node_pool.name == "system"


def test_the_default_master_pool_skips_tainted_and_gpu_pools():
    tainted = {
        "name": "tainted",
        "nodeSelector": {"pool": "tainted"},
        "taints": [{"key": "dedicated", "value": "x", "effect": "NoSchedule"}],
    }
    a100, system = BASE["nodePools"][1], BASE["nodePools"][0]
    cfg = make_config(nodePools=[a100, tainted, system])
    assert cfg.master_node_pool.name == "system"


def test_a_named_master_pool_is_used():
    other = {"name": "other", "nodeSelector": {"pool": "other"}}
    cfg = make_config(nodePools=[*BASE["nodePools"], other], master={"nodePool": "other"})
    assert cfg.master_node_pool.name == "other"


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (
            raw_config(master={"nodePool": "a100"}),
            "determined:master.nodePool: node pool 'a100' is tainted, has GPUs or is spot: the master "
            "and database need an untainted on-demand CPU pool",
        ),
        (
            gke(master={"nodePool": "spot-cpu"}),
            "determined:master.nodePool: node pool 'spot-cpu' is tainted, has GPUs or is spot: the master "
            "and database need an untainted on-demand CPU pool",
        ),
        (
            raw_config(
                nodePools=[
                    *BASE["nodePools"],
                    {
                        "name": "tainted",
                        "nodeSelector": {"pool": "tainted"},
                        "taints": [{"key": "dedicated", "value": "x", "effect": "NoSchedule"}],
                    },
                ],
                master={"nodePool": "tainted"},
            ),
            "determined:master.nodePool: node pool 'tainted' is tainted, has GPUs or is spot: the master "
            "and database need an untainted on-demand CPU pool",
        ),
        (
            raw_config(master={"nodePool": "nope"}),
            "determined:master.nodePool: no node pool named 'nope'",
        ),
        (
            gke(nodePools=[SPOT, A100], resourcePools=[{"name": "a100", "nodePool": "a100"}]),
            "determined:master.nodePool: no untainted on-demand CPU node pool for the master and database: "
            "add one (spot: false) or name one here",
        ),
    ],
    ids=["gpu", "spot", "tainted", "unknown", "none-on-demand"],
)
def test_a_master_pool_unfit_for_the_master_is_refused(raw, expected):
    assert problems(raw) == [expected]


def test_without_any_untainted_pool_the_problem_is_reported_once():
    only_gpu = raw_config(nodePools=[BASE["nodePools"][1]], resourcePools=[BASE["resourcePools"][0]])
    lines = problems(only_gpu)
    assert [line.split(":")[1] for line in lines] == ["nodePools"], lines


# --- the master's Service ------------------------------------------------------------------------


@pytest.mark.parametrize("service_type", ["LoadBalancer", "NodePort"])
@pytest.mark.parametrize("tls", [None, TLS_INGRESS], ids=["tls-none", "tls-ingress"])
def test_exposing_the_master_service_is_refused_unless_the_master_ends_tls(service_type, tls):
    raw = raw_config(master={"service": {"type": service_type}}, tls=tls)
    assert problems(raw) == [
        f"determined:master.service.type: {service_type} would expose the master without TLS: allowed "
        "only with tls.mode master (with tls.mode ingress the Gateway is the way in)"
    ]


@pytest.mark.parametrize("service_type", ["LoadBalancer", "NodePort"])
def test_exposing_the_master_service_is_accepted_with_tls_mode_master(service_type):
    cfg = make_config(master={"service": {"type": service_type, "annotations": {"a": "b"}}}, tls=TLS_MASTER)
    assert cfg.master.service.type == service_type


# --- version gating ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (
            with_tcd("0.30.2", startupHook="echo hi"),
            "determined:taskContainerDefaults.startupHook: needs master.version 0.31.0 or newer "
            "(older masters have no startup hook)",
        ),
        (
            raw_config(master={"version": "0.30.0", "retention": {"logRetentionDays": 30}}),
            "determined:master.retention: needs master.version 0.31.0 or newer (older masters have no log "
            "retention)",
        ),
        (
            with_tcd("0.26.3", logPolicies=[{"pattern": "OOM"}]),
            "determined:taskContainerDefaults.logPolicies: needs master.version 0.26.4 or newer (older "
            "masters have no log policies)",
        ),
        (
            with_tcd("0.37.0", logPolicies=[{"pattern": "OOM"}, {"name": "ecc", "pattern": "ECC"}]),
            "determined:taskContainerDefaults.logPolicies[1].name: needs master.version 0.38.0 or newer "
            "(older masters have unnamed log policies)",
        ),
    ],
    ids=["startupHook-0.30", "retention-0.30", "logPolicies-0.26.3", "logPolicies-name-0.37"],
)
def test_a_key_the_master_version_lacks_is_refused(raw, expected):
    assert problems(raw) == [expected]


@pytest.mark.parametrize(
    "raw",
    [
        with_tcd("0.31.0", startupHook="echo hi"),
        raw_config(master={"version": "0.31.0", "retention": {"logRetentionDays": 30}}),
        with_tcd("0.26.4", logPolicies=[{"pattern": "OOM", "action": "cancel_retries"}]),
        with_tcd("0.37.0", logPolicies=[{"pattern": "OOM", "action": "exclude_node"}]),
        with_tcd("0.38.0", logPolicies=[{"name": "oom", "pattern": "OOM"}]),
    ],
    ids=["startupHook-0.31", "retention-0.31", "logPolicies-0.26.4", "unnamed-0.37", "named-0.38"],
)
def test_the_same_keys_are_accepted_from_the_version_that_has_them(raw):
    load_config(raw)


# --- one line per bad value, naming its key path ---------------------------------------------------

BAD = [
    (
        raw_config(imagePullSecrets=["Bad_Name"]),
        "determined:imagePullSecrets[0]: 'Bad_Name' is not a valid Kubernetes name",
    ),
    (raw_config(imagePullSecrets="regcred"), "determined:imagePullSecrets: must be a list, not a string"),
    (
        raw_config(registryCredentials={"server": "mirror.example.com", "username": "robot"}),
        "determined:registryCredentials.password: required",
    ),
    (
        raw_config(registryCredentials={**CREDENTIALS, "server": ""}),
        "determined:registryCredentials.server: must not be empty",
    ),
    (
        raw_config(registryCredentials=CREDENTIALS, imagePullSecrets=["regcred", "determined-registry"]),
        "determined:imagePullSecrets: 'determined-registry' is the Secret made from registryCredentials: "
        "name another Secret, or leave it out",
    ),
    (
        with_master(image="mirror.example.com/determinedai/determined-master"),
        "determined:master.image: 'mirror.example.com/determinedai/determined-master' has no tag or "
        "digest: pin the image",
    ),
    (
        with_master(image="localhost:5000/determined-master"),
        "determined:master.image: 'localhost:5000/determined-master' has no tag or digest",
    ),
    (
        with_master(image="Not An Image:1"),
        "determined:master.image: 'Not An Image:1' is not an image reference (repository with a tag or "
        "digest",
    ),
    (
        with_master(logLevel="verbose"),
        "determined:master.logLevel: must be one of 'trace', 'debug', 'info', 'warn' or 'error' "
        "(got 'verbose')",
    ),
    (with_master(notebookTimeout=-1), "determined:master.notebookTimeout: must be at least 0"),
    (with_master(tensorboardTimeout=10), "determined:master.tensorboardTimeout: must be at least 60"),
    (
        with_master(retention={"logRetentionDays": -2}),
        "determined:master.retention.logRetentionDays: must be at least -1",
    ),
    (
        with_master(retention={"schedule": "daily"}),
        "determined:master.retention.schedule: 'daily' is not a cron schedule of five fields (example: "
        "'0 3 * * *') or a duration (24h)",
    ),
    (
        with_master(webhooks={"baseUrl": "det.example.com"}),
        "determined:master.webhooks.baseUrl: 'det.example.com' is not an http:// or https:// URL",
    ),
    (
        with_master(defaultTaskUser={"uid": -1, "gid": 0, "user": "det", "group": "det"}),
        "determined:master.defaultTaskUser.uid: must be at least 0",
    ),
    (
        with_master(defaultTaskUser={"uid": 1000, "gid": 1000, "user": "det"}),
        "determined:master.defaultTaskUser.group: required",
    ),
    (
        with_master(observability={"enablePrometheus": "yes"}),
        "determined:master.observability.enablePrometheus: must be true or false, not a string",
    ),
    (
        with_master(logging={"type": "splunk"}),
        "determined:master.logging.type: must be one of 'default', 'elastic' (got 'splunk')",
    ),
    (
        with_master(logging={"type": "elastic"}),
        "determined:master.logging.host: required for master.logging.type elastic",
    ),
    (
        with_master(logging={"type": "elastic", "host": "es", "port": 70000}),
        "determined:master.logging.port: must be at most 65535",
    ),
    (
        with_master(logging={"type": "elastic", "host": "es", "security": {"username": "det"}}),
        "determined:master.logging.security.password: required",
    ),
    (
        with_master(caBundle="not a certificate"),
        "determined:master.caBundle: must be CA certificates in PEM form (-----BEGIN CERTIFICATE----- ...)",
    ),
    (
        with_master(caBundle=PEM, caBundleSecret="extra-cas"),
        "determined:master: give caBundle (PEM) or caBundleSecret (a Secret name), not both",
    ),
    (
        with_master(caBundleSecret="Bad_Name"),
        "determined:master.caBundleSecret: 'Bad_Name' is not a valid Kubernetes name",
    ),
    (
        with_master(proxy={"noProxy": ".internal"}),
        "determined:master.proxy: set httpProxy, httpsProxy or both",
    ),
    (
        with_master(proxy={"httpsProxy": "proxy:3128"}),
        "determined:master.proxy.httpsProxy: 'proxy:3128' is not an http:// or https:// URL",
    ),
    (
        with_master(resources={"requests": {"cpu": "abc"}}),
        "determined:master.resources.requests.cpu: 'abc' is not a Kubernetes quantity",
    ),
    (
        with_master(resources={"request": {"cpu": "1"}}),
        "determined:master.resources.request: unknown key; did you mean 'requests'?",
    ),
    (
        with_master(service={"type": "ExternalName"}),
        "determined:master.service.type: must be one of 'ClusterIP', 'LoadBalancer' or 'NodePort' "
        "(got 'ExternalName')",
    ),
    (
        with_master(podAnnotations={"team": 1}),
        "determined:master.podAnnotations.team: must be a string, not a number",
    ),
    (
        with_master(env={"1BAD": "x"}),
        "determined:master.env.1BAD: '1BAD' is not an environment variable name",
    ),
    (
        raw_config(database={"image": "postgres"}),
        "determined:database.image: 'postgres' has no tag or digest: pin the image",
    ),
    (
        raw_config(database={"resources": {"limits": {"memory": "lots"}}}),
        "determined:database.resources.limits.memory: 'lots' is not a Kubernetes quantity",
    ),
    (
        raw_config(database={"parameters": {"data_directory": "/x", "port": 5433}}),
        "determined:database.parameters: data_directory, port cannot be set here: the project sets the "
        "data directory, port and listen addresses the Service and volume rely on",
    ),
    (
        raw_config(database={"parameters": {"listen_addresses": "*"}}),
        "determined:database.parameters: listen_addresses cannot be set here",
    ),
    (
        raw_config(database={"parameters": {"Max-Connections": 5}}),
        "determined:database.parameters.Max-Connections: 'Max-Connections' is not a PostgreSQL setting name",
    ),
    (
        with_tcd(images={"cpu": "pytorch"}),
        "determined:taskContainerDefaults.images.cpu: 'pytorch' has no tag or digest: pin the image",
    ),
    (
        with_tcd(images={"tpu": "pytorch:1"}),
        "determined:taskContainerDefaults.images.tpu: unknown key; did you mean 'gpu'?",
    ),
    (
        with_tcd(forcePullImage="yes"),
        "determined:taskContainerDefaults.forcePullImage: must be true or false, not a string",
    ),
    (
        with_tcd(env={"9X": "y"}),
        "determined:taskContainerDefaults.env.9X: '9X' is not an environment variable name",
    ),
    (with_tcd(shmSizeBytes=0), "determined:taskContainerDefaults.shmSizeBytes: must be at least 1"),
    (
        with_tcd(networkMode="none"),
        "determined:taskContainerDefaults.networkMode: must be one of 'bridge' or 'host' (got 'none')",
    ),
    (
        with_tcd(dtrainNetworkInterface=""),
        "determined:taskContainerDefaults.dtrainNetworkInterface: must not be empty",
    ),
    (
        with_tcd(logPolicies=[{"pattern": "("}]),
        "determined:taskContainerDefaults.logPolicies[0].pattern: is not a regular expression",
    ),
    (
        with_tcd(logPolicies=[{"pattern": "OOM", "action": "retry"}]),
        "determined:taskContainerDefaults.logPolicies[0].action: must be one of 'cancel_retries' or "
        "'exclude_node' (got 'retry')",
    ),
    (
        with_tcd(logPolicies=[{"name": "oom"}]),
        "determined:taskContainerDefaults.logPolicies[0].pattern: required",
    ),
]


@pytest.mark.parametrize(("raw", "expected"), BAD, ids=[c[1].split(":")[1] for c in BAD])
def test_a_bad_value_is_refused_in_one_line_naming_its_key_path(raw, expected):
    lines = problems(raw)
    assert len(lines) == 1 and lines[0].startswith(expected), lines


def test_no_message_shows_a_regex_or_a_python_class_name():
    for raw, _ in BAD:
        for line in problems(raw):
            assert not any(
                marker in line for marker in ("^", "[a-z", "\\d", "(?", "Config", "Model", "SecretStr")
            ), line


def test_secret_values_never_appear_in_messages():
    lines = problems(
        raw_config(
            registryCredentials={**CREDENTIALS, "server": ""},
            imagePullSecrets=["Bad_Name"],
            master={
                "logging": {
                    "type": "elastic",
                    "host": "es",
                    "port": 0,
                    "security": {"username": "det", "password": "Elastic-Pass-1"},
                },
                "webhooks": {"baseUrl": "nope", "signingKey": "Signing-Key-1"},
            },
        )
    )
    assert len(lines) == 4, lines
    assert not any(
        s in line for line in lines for s in ("Registry-Token-1", "Elastic-Pass-1", "Signing-Key-1")
    )


def test_the_chart_parity_fixture_sets_the_keys_this_file_covers():
    """The fixture stack the plan tests use stays a chart-parity stack: every key above is in it."""
    import yaml
    from conftest import ROOT

    path = ROOT / "tests" / "fixtures" / "stacks" / "Pulumi.chart-parity.yaml"
    config = yaml.safe_load(path.read_text())["config"]
    assert {"determined:imagePullSecrets", "determined:registryCredentials"} <= set(config)
    master = config["determined:master"]
    for key in (
        "image",
        "logLevel",
        "notebookTimeout",
        "tensorboardTimeout",
        "retention",
        "webhooks",
        "defaultTaskUser",
        "observability",
        "logging",
        "caBundle",
        "proxy",
        "nodePool",
        "resources",
        "podAnnotations",
        "env",
    ):
        assert key in master, key
    assert {"image", "resources", "parameters"} <= set(config["determined:database"])
    tcd = config["determined:taskContainerDefaults"]
    for key in ("images", "forcePullImage", "env", "shmSizeBytes", "networkMode", "dtrainNetworkInterface"):
        assert key in tcd, key
    assert {"startupHook", "logPolicies"} <= set(tcd)


# --- known problems (reported, not fixed here) ---------------------------------------------------


@pytest.mark.parametrize("value", [[1], {"a": 1}, None], ids=["list", "mapping", "null"])
def test_a_database_parameter_of_the_wrong_type_is_one_line_naming_the_key(value):
    lines = problems(raw_config(database={"parameters": {"max_connections": value}}))
    assert len(lines) == 1 and lines[0].startswith("determined:database.parameters.max_connections: "), lines
