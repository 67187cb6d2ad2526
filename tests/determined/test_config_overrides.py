"""master.configOverrides: the deep merge into master.yaml, the keys the project keeps, and
the check of the rest against the configured master version's key set."""

from __future__ import annotations

import copy

import pytest
from component_args import make_args

from components.config import config_overrides, master_yaml_schema
from components.config.config_overrides import OWNED, merge, problems
from components.config.tls import MasterTls
from components.determined import database
from components.determined import master_yaml as master_yaml_module
from components.determined.master_yaml import MasterSecrets

SECRETS = MasterSecrets(
    db_password="Db-Pass-1", initial_user_password="Init-Pass-1", webhook_signing_key="Sign-Key-1"
)
REFUSED = master_yaml_schema.REFUSED
IGNORED = master_yaml_schema.IGNORED


def generated(cfg=None, **raw):
    cfg = cfg or make_args(**raw)
    return master_yaml_module.master_config(cfg, database.endpoint(cfg), SECRETS, "ckpt-bucket", "det-task")


def nested(path: str, value):
    """{'a': {'b': value}} for 'a.b'."""
    for key in reversed(path.split(".")):
        value = {key: value}
    return value


# --- merge -----------------------------------------------------------------------------------


def test_merge_merges_maps_and_replaces_everything_else():
    config = {
        "log": {"level": "info", "color": False},
        "security": {"initial_user_password": "x"},
        "reserved_ports": [1, 2],
        "port": 8080,
        "telemetry": {"enabled": False},
        "cache": "a string",
    }
    overrides = {
        "log": {"level": "debug"},
        "security": {"ssh": {"rsa_key_size": 2048}},
        "reserved_ports": [3],
        "telemetry": "off",
        "cache": {"cache_dir": "/x"},
        "tensorboard_timeout": 60,
    }
    assert merge(config, overrides) == {
        "log": {"level": "debug", "color": False},
        "security": {"initial_user_password": "x", "ssh": {"rsa_key_size": 2048}},
        "reserved_ports": [3],  # lists are replaced, not appended to
        "port": 8080,
        "telemetry": "off",  # a map replaced by a non-map
        "cache": {"cache_dir": "/x"},  # a non-map replaced by a map
        "tensorboard_timeout": 60,
    }


def test_merge_keeps_the_order_of_existing_keys_and_appends_new_ones():
    config = {"a": 1, "b": {"x": 1, "y": 2}, "c": 3}
    merged = merge(config, {"z": 0, "b": {"w": 0, "x": 9}, "a": 5})
    assert list(merged) == ["a", "b", "c", "z"]
    assert list(merged["b"]) == ["x", "y", "w"]
    assert merged == {"a": 5, "b": {"x": 9, "y": 2, "w": 0}, "c": 3, "z": 0}


def test_merge_changes_neither_input_and_shares_nothing_with_them():
    config = {"a": {"b": [1, {"c": 1}]}, "d": {"e": 1}}
    overrides = {"d": {"f": [1]}, "g": {"h": 1}}
    before = copy.deepcopy((config, overrides))
    merged = merge(config, overrides)
    assert (config, overrides) == before
    merged["a"]["b"][1]["c"] = 2
    merged["d"]["f"].append(2)
    merged["g"]["h"] = 2
    assert (config, overrides) == before


def test_merge_of_nothing_is_a_copy():
    config = {"a": {"b": 1}}
    merged = merge(config, {})
    assert merged == config and merged is not config and merged["a"] is not config["a"]


# --- owned keys ------------------------------------------------------------------------------

# What the deployment depends on, with a word of where each comes from.
REQUIRED_OWNED = {
    "db": "database",
    "security.initial_user_password": "master.initialUserPassword",
    "security.tls": "tls.mode",
    "webhooks.signing_key": "signingKey",
    "resource_pools": "resourcePools",
    "resource_manager": "resourcePools",
    "port": "port",
    "checkpoint_storage": "checkpointStorage",
    "cluster_name": "cluster.name",
    "task_container_defaults.cpu_pod_spec": "taskContainerDefaults.cpuPodSpec",
    "task_container_defaults.gpu_pod_spec": "taskContainerDefaults.gpuPodSpec",
    "task_container_defaults.checkpoint_gc_pod_spec": "taskContainerDefaults.checkpointGcPodSpec",
    "task_container_defaults.kubernetes": "slots",
}


@pytest.mark.parametrize("path", sorted(REQUIRED_OWNED))
def test_the_project_keeps_what_the_deployment_depends_on(path):
    assert path in OWNED
    assert REQUIRED_OWNED[path] in OWNED[path].source
    assert OWNED[path].reason


def test_every_owned_key_exists_in_master_yaml():
    for path in OWNED:
        assert master_yaml_schema.last_version(path) is not None, path


@pytest.mark.parametrize("path", sorted(OWNED))
def test_each_owned_key_is_refused_with_where_it_comes_from_and_why(path):
    owned = OWNED[path]
    expected = [(path, f"set by the project from {owned.source}: {owned.reason}")]
    # Whatever the value, and in any release.
    for value in ("anything", {"x": 1}, None):
        assert problems(nested(path, value), "0.38.1") == expected
    assert problems(nested(path, 1), "0.26.0") == expected


def test_a_parent_map_is_refused_only_for_the_owned_keys_it_holds():
    overrides = {
        "security": {"tls": {"cert": "/c", "key": "/k"}, "ssh": {"rsa_key_size": 4096}},
        "task_container_defaults": {"work_dir": "/w", "kubernetes": {"max_slots_per_pod": 8}},
        "telemetry": {"enabled": True, "otel_enabled": True},
    }
    assert [path for path, _ in problems(overrides, "0.38.1")] == [
        "security.tls",
        "task_container_defaults.kubernetes",
        "telemetry.enabled",
    ]
    # A whole task_container_defaults (or security) map without an owned key is fine.
    assert (
        problems(
            {"task_container_defaults": {"work_dir": "/w", "add_capabilities": ["SYS_PTRACE"]}}, "0.38.1"
        )
        == []
    )
    assert problems({"security": {"ssh": {"rsa_key_size": 4096}}}, "0.38.1") == []


def test_owned_keys_are_found_in_any_case_the_master_reads():
    # Go's JSON decoding matches keys case-insensitively: `Port` would set the port.
    found = problems({"Port": 9000, "Security": {"TLS": {}}}, "0.38.1")
    assert [path for path, _ in found] == ["Port", "Security.TLS", "Security"]
    assert found[0][1] == problems({"port": 9000}, "0.38.1")[0][1]
    assert found[2][1] == "write it as 'security', the master's spelling"


def test_an_owned_key_is_not_checked_further():
    # Only "owned", not also the master's complaints about the value.
    owned = OWNED["resource_manager"]
    assert problems({"resource_manager": {"type": "nonsense"}}, "0.38.1") == [
        ("resource_manager", f"set by the project from {owned.source}: {owned.reason}")
    ]


def tls_master_config(**raw):
    # The stack's validation still refuses tls.mode master; its settings go in directly.
    cfg = make_args(
        tls={"mode": "ingress", "host": "det.example.com", "certificate": {"email": "a@b.io"}}, **raw
    )
    tls = MasterTls.model_validate(
        {"mode": "master", "host": "det.example.com", "certificate": {"email": "a@b.io"}}
    )
    return cfg.model_copy(update={"tls": tls})


# Stack configs that between them make the project write every key it can.
EVERYTHING = {
    "master": {
        "logLevel": "debug",
        "telemetry": True,
        "notebookTimeout": 600,
        "tensorboardTimeout": 600,
        "retention": {"logRetentionDays": 30},
        "webhooks": {"baseUrl": "https://hooks.example.com", "signingKey": "Sign-Key-2"},
        "defaultTaskUser": {"uid": 1000, "gid": 1000, "user": "det", "group": "det"},
        "observability": {"enablePrometheus": True},
        "logging": {"type": "elastic", "host": "es", "security": {"username": "u", "password": "p"}},
    },
    "taskContainerDefaults": {
        "images": {"cpu": "registry.example.com/cpu:1", "gpu": "registry.example.com/gpu:1"},
        "forcePullImage": True,
        "env": {"HTTP_TIMEOUT": "30"},
        "dtrainNetworkInterface": "eth0",
        "startupHook": "echo hi",
        "logPolicies": [{"name": "oom", "pattern": "OOM", "action": "cancel_retries"}],
        "cpuPodSpec": {"nodeSelector": {"a": "b"}},
        "gpuPodSpec": {"nodeSelector": {"a": "b"}},
        "checkpointGcPodSpec": {"nodeSelector": {"a": "b"}},
    },
    "checkpointStorage": {"type": "s3", "bucket": "ckpt", "accessKey": "a", "secretKey": "s"},
}


@pytest.mark.parametrize("version", ["0.26.0", "0.29.1", "0.34.0", "0.38.1"])
@pytest.mark.parametrize(
    "make",
    [
        lambda: make_args(),
        lambda: make_args(slots={"type": "cpu", "cpuPerSlot": 2, "maxSlotsPerPod": 4}),
        lambda: make_args(**EVERYTHING),
        lambda: tls_master_config(**EVERYTHING),
    ],
    ids=["base", "cpu-slots", "everything", "tls-master"],
)
def test_everything_master_yaml_gets_from_the_stack_is_owned(version, make):
    """The generated file given back as overrides: every key but log.color (a fixed
    default) is refused as owned, so no override quietly undoes what the stack says (and
    every union the project writes, whose `type` a partial override would lack, is owned)."""
    cfg = make()
    cfg = cfg.model_copy(update={"master": cfg.master.model_copy(update={"version": version})})
    config = generated(cfg)
    found = problems(config, version)
    assert all(message.startswith("set by the project from ") for _, message in found), found
    left = copy.deepcopy(config)
    for path, _ in found:
        *parents, key = path.split(".")
        section = left
        for parent in parents:
            section = section[parent]
        del section[key]
    assert {key: value for key, value in left.items() if value} == {"log": {"color": False}}


# --- the master's key set --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("overrides", "kind"), [(None, "empty (null)"), ([], "a list"), ("log: {}", "a string"), (5, "a number")]
)
def test_overrides_must_be_a_mapping(overrides, kind):
    assert problems(overrides, "0.38.1") == [("", f"must be a mapping of master.yaml keys, got {kind}")]


def test_nothing_to_override_is_fine():
    assert problems({}, "0.38.1") == []


def test_unknown_keys():
    assert problems({"enable_cros": True}, "0.38.1") == [("enable_cros", f"unknown key: {REFUSED}")]
    assert problems({"security": {"ssh": {"rsa_key_bits": 4096}}}, "0.38.1") == [
        ("security.ssh.rsa_key_bits", f"unknown key: {REFUSED}")
    ]
    assert problems({"scim": {"auth": {"type": "basic", "user": "u"}}}, "0.38.1") == [
        ("scim.auth.user", f"unknown key for type basic: {REFUSED}")
    ]
    # task_container_defaults is decoded leniently: an unknown key there is ignored.
    assert problems({"task_container_defaults": {"workdir": "/w"}}, "0.38.1") == [
        ("task_container_defaults.workdir", f"unknown key: {IGNORED}")
    ]


def test_wrong_types_with_list_indexes_in_the_path():
    assert problems({"enable_cors": "yes", "reserved_ports": [8080, "x"]}, "0.38.1") == [
        ("enable_cors", f"expected true or false, got a string: {REFUSED}"),
        ("reserved_ports[1]", f"expected an integer, got a string: {REFUSED}"),
    ]
    assert problems({"log": {"color": "yes"}}, "0.38.1") == [
        ("log.color", "expected true or false, got a string (the master's flag parser makes it false)")
    ]
    assert problems({"task_container_defaults": {"bind_mounts": [{"host_path": 5}]}}, "0.38.1") == [
        (
            "task_container_defaults.bind_mounts[0].host_path",
            f"expected a string, got an integer (5): {REFUSED}",
        )
    ]


def test_null_is_reported():
    assert problems(
        {"enable_cors": None, "security": {"ssh": None}, "feature_switches": [None]}, "0.38.1"
    ) == [
        ("enable_cors", "null sets nothing: omit the key or give a value"),
        ("security.ssh", f"expected a mapping (config.SSHConfig), got null: {REFUSED}"),
        ("feature_switches[0]", "null sets nothing: omit the key or give a value"),
    ]


def test_a_union_without_its_type_is_reported_at_the_missing_key():
    assert problems({"scim": {"auth": {"username": "u"}}}, "0.38.1") == [
        ("scim.auth.type", "required: one of basic, oauth")
    ]


def test_a_key_holding_colon_space_keeps_its_path():
    # Quoted in brackets: a key path cannot show ': ' plainly (it ends the path in a message).
    assert problems({"a: b": {"c": 1}}, "0.38.1") == [("['a: b']", f"unknown key: {REFUSED}")]
    # Below a key that is a prefix of it ('security' of 'security.ssh: x').
    assert problems({"security": {"ssh: x": 1}}, "0.38.1") == [
        ("security['ssh: x']", f"unknown key: {REFUSED}")
    ]


@pytest.mark.parametrize(
    ("overrides", "version", "path", "range_text"),
    [
        # The key data's version ranges: oidc "0.26.5-0.26.7,0.32.0-" (in, out, and in again).
        ({"oidc": {"enabled": True}}, "0.26.4", "oidc", "from 0.26.5, before 0.26.7; from 0.32.0 on"),
        ({"oidc": {"enabled": True}}, "0.30.0", "oidc", "from 0.26.5, before 0.26.7; from 0.32.0 on"),
        # __internal.preemption_timeout "0.29.1-0.37.0": moved to task_container_defaults.
        (
            {"__internal": {"preemption_timeout": "1h"}},
            "0.37.0",
            "__internal.preemption_timeout",
            "from 0.29.1, before 0.37.0",
        ),
        (
            {"__internal": {"preemption_timeout": "1h"}},
            "0.29.0",
            "__internal.preemption_timeout",
            "from 0.29.1, before 0.37.0",
        ),
        # security.token "0.38.0-"; ui_customization "0.36.0-".
        ({"security": {"token": {"max_lifespan_days": 30}}}, "0.37.0", "security.token", "from 0.38.0 on"),
        ({"ui_customization": {}}, "0.35.1", "ui_customization", "from 0.36.0 on"),
    ],
)
def test_a_key_of_another_release_is_refused(overrides, version, path, range_text):
    assert problems(overrides, version) == [
        (path, f"not a key of Determined {version} (it exists {range_text}): {REFUSED}")
    ]


@pytest.mark.parametrize(
    ("overrides", "version"),
    [
        ({"oidc": {"enabled": True}}, "0.26.5"),
        ({"oidc": {"enabled": True}}, "0.32.0"),
        ({"__internal": {"preemption_timeout": "1h"}}, "0.36.0"),
        ({"security": {"token": {"max_lifespan_days": 30}}}, "0.38.0"),
        ({"ui_customization": {}}, "0.36.0"),
    ],
)
def test_the_same_keys_pass_in_their_releases(overrides, version):
    assert problems(overrides, version) == []


def test_a_release_the_key_data_does_not_describe_cannot_be_checked():
    oldest, newest = master_yaml_schema.known_range()
    newer = f"{newest[0]}.{newest[1] + 1}.0"
    known = f"{master_yaml_schema.format_version(oldest)} to {master_yaml_schema.format_version(newest)}"
    assert problems({"enable_cors": True}, newer) == [
        (
            "",
            f"cannot be checked for Determined {newer}: the project knows master.yaml's keys for {known} only",
        )
    ]
    # Owned keys are still named; nothing to check is fine.
    assert [path for path, _ in problems({"port": 1, "enable_cors": True}, newer)] == ["port", ""]
    assert problems({"port": 1}, newer) == [("port", problems({"port": 1}, "0.38.1")[0][1])]
    assert problems({}, newer) == []


# --- task defaults reach every pool ----------------------------------------------------------


@pytest.mark.parametrize("version", ["0.26.0", "0.31.0", "0.38.1"])
def test_task_defaults_are_checked_like_any_key(version):
    overrides = {"task_container_defaults": {"work_dir": "/w", "add_capabilities": ["SYS_PTRACE"]}}
    assert problems(overrides, version) == []


def test_task_defaults_are_merged_into_every_pool():
    """Each pool's own section replaces the top one before 0.32 and brings the master's
    preemption_timeout over it after: overrides go into every pool as well as the top."""
    config = {
        "task_container_defaults": {"shm_size_bytes": 1},
        "resource_pools": [
            {"pool_name": "a", "task_container_defaults": {"shm_size_bytes": 1, "cpu_pod_spec": {"x": 1}}},
            {"pool_name": "b"},
        ],
    }
    merged = config_overrides.apply(
        config, {"task_container_defaults": {"preemption_timeout": 600, "shm_size_bytes": 2}}
    )
    assert merged["task_container_defaults"] == {"shm_size_bytes": 2, "preemption_timeout": 600}
    assert merged["resource_pools"][0]["task_container_defaults"] == {
        "shm_size_bytes": 2,
        "cpu_pod_spec": {"x": 1},
        "preemption_timeout": 600,
    }
    assert merged["resource_pools"][1]["task_container_defaults"] == {
        "preemption_timeout": 600,
        "shm_size_bytes": 2,
    }
    assert config["resource_pools"][1] == {"pool_name": "b"}  # inputs untouched


def test_overrides_without_task_defaults_leave_the_pools_alone():
    config = {"resource_pools": [{"pool_name": "a", "task_container_defaults": {"shm_size_bytes": 1}}]}
    assert (
        config_overrides.apply(config, {"log": {"color": True}})["resource_pools"] == config["resource_pools"]
    )


# --- valid overrides and the merged file ------------------------------------------------------

# A realistic set of overrides for 0.38.1: sign-in, SCIM, tokens, tracing, task mounts.
VALID = {
    "log": {"color": True},
    "oidc": {
        "enabled": True,
        "provider": "Okta",
        "client_id": "determined",
        "client_secret": "s3cret",
        "idp_recipient_url": "https://det.example.com",
        "idp_sso_url": "https://example.okta.com",
        "authentication_claim": "email",
        "scim_authentication_attribute": "userName",
    },
    "scim": {"enabled": True, "auth": {"type": "basic", "username": "scim", "password": "s3cret"}},
    "security": {"ssh": {"rsa_key_size": 4096}, "token": {"max_lifespan_days": 30}},
    "telemetry": {"otel_enabled": True, "otel_endpoint": "otel-collector:4317"},
    "task_container_defaults": {
        "work_dir": "/workspace",
        "bind_mounts": [{"host_path": "/data", "container_path": "/data", "read_only": True}],
    },
    "reserved_ports": [12350],
    "__internal": {"audit_logging_enabled": True},
}


def test_a_valid_set_of_overrides_passes():
    assert problems(VALID, "0.38.1") == []


@pytest.mark.parametrize(
    ("version", "overrides"),
    [
        ("0.38.1", VALID),
        (
            "0.34.0",
            {
                "log": {"color": True},
                "oidc": {"enabled": True},
                "task_container_defaults": {"work_dir": "/w"},
            },
        ),
        (
            "0.26.0",
            {"log": {"color": True}, "security": {"ssh": {"rsa_key_size": 2048}}, "enable_cors": True},
        ),
    ],
)
def test_the_merged_master_yaml_still_passes_the_masters_checks(version, overrides):
    assert problems(overrides, version) == []
    config = generated(master={"version": version})
    assert master_yaml_schema.check(config, version) == []
    merged = merge(config, overrides)
    assert master_yaml_schema.check(merged, version) == []
    # The project's own keys are untouched; the overrides are in.
    for key in ("db", "port", "resource_manager", "resource_pools", "checkpoint_storage", "cluster_name"):
        assert merged[key] == config[key]
    assert merged["log"] == {"level": "info", "color": True}
    assert merge(merged, overrides) == merged


def test_owned_parents_cover_every_owned_key():
    # Every owned key's parents are looked into (a map given there is searched).
    for path in OWNED:
        parts = path.lower().split(".")
        for i in range(1, len(parts)):
            assert ".".join(parts[:i]) in config_overrides._OWNED_PARENTS


def test_previews_hide_secret_named_override_values():
    overrides = {
        "oidc": {"client_id": "determined", "client_secret": "s3cret"},
        "scim": {"auth": {"type": "basic", "username": "u", "password": "p4ss"}},
        "security": {"token": {"private_key": "k"}},
        "integrations": [{"api_token": "t"}],
    }
    assert config_overrides.redacted(overrides, "[secret]") == {
        "oidc": {"client_id": "determined", "client_secret": "[secret]"},
        "scim": {"auth": {"type": "basic", "username": "u", "password": "[secret]"}},
        "security": {"token": {"private_key": "[secret]"}},
        "integrations": [{"api_token": "[secret]"}],
    }
    cfg = make_args(master={"configOverrides": {"oidc": {"client_secret": "s3cret"}}})
    db = database.endpoint(cfg)
    preview = master_yaml_module.master_config(cfg, db, MasterSecrets.redacted())
    assert preview["oidc"] == {"client_secret": "[secret]"}
    real = master_yaml_module.master_config(cfg, db, MasterSecrets("a", "b", "c"))
    assert real["oidc"] == {"client_secret": "s3cret"}
