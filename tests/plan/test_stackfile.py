"""Reading stack files as Pulumi does (YAML 1.2 scalars), refusing what it cannot read."""

from __future__ import annotations

import json

import pytest

from components.config import ConfigError
from plan import stackfile
from plan.stackfile import StackFileError


def load(tmp_path, text: str | bytes):
    path = tmp_path / "Pulumi.t.yaml"
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text)
    return stackfile.load_stack_file(path)


def test_values_reach_the_program_as_pulumi_passes_them(tmp_path):
    config, secret_keys = load(
        tmp_path,
        "config:\n"
        "  determined:cloud: existing\n"
        "  determined:master: {version: 0.38.1, telemetry: true, cpu: 2}\n"
        "  kubernetes:context: kind-det\n",
    )
    assert config == {
        "determined:cloud": "existing",
        "determined:master": '{"version": "0.38.1", "telemetry": true, "cpu": 2}',
        # Keys of other namespaces (provider settings) are kept for the program.
        "kubernetes:context": "kind-det",
    }
    assert secret_keys == []


def test_dates_and_yaml_1_1_booleans_stay_strings(tmp_path):
    config, _ = load(
        tmp_path,
        "config:\n  determined:cluster: {name: no, tags: {since: 2024-01-01, on: yes, off: False}}\n",
    )
    assert json.loads(config["determined:cluster"]) == {
        "name": "no",
        "tags": {"since": "2024-01-01", "on": "yes", "off": False},
    }


def test_a_byte_order_mark_and_an_empty_file_are_read(tmp_path):
    assert load(tmp_path, "\ufeffconfig:\n  determined:cloud: existing\n".encode())[0] == {
        "determined:cloud": "existing"
    }
    assert load(tmp_path, "") == ({}, [])
    assert load(tmp_path, "config:\n") == ({}, [])


def test_encrypted_values_become_the_stand_in_and_mark_their_key(tmp_path):
    config, secret_keys = load(
        tmp_path,
        "config:\n  determined:master:\n    initialUserPassword:\n      secure: v1:abc\n"
        "  aws:secretKey:\n    secure: v1:def\n",
    )
    assert json.loads(config["determined:master"]) == {"initialUserPassword": stackfile.ENCRYPTED_STAND_IN}
    assert config["aws:secretKey"] == stackfile.ENCRYPTED_STAND_IN
    assert secret_keys == ["determined:master", "aws:secretKey"]


@pytest.mark.parametrize("name", ["local", "prod-1", "a.b_c"])
def test_stack_names_pulumi_accepts(name):
    assert stackfile.check_stack_name(name) == name


@pytest.mark.parametrize("name", ["", ".", "..", "../x", "a/b", "a b", "x" * 101, "local\n", "\nlocal"])
def test_stack_names_that_are_not(name):
    with pytest.raises(StackFileError, match="is not a stack name"):
        stackfile.check_stack_name(name)


def test_deep_nesting_is_a_configuration_error_naming_the_key(tmp_path):
    from components.config import ConfigError

    with pytest.raises(ConfigError, match=r"^determined:x\[0\]\[0\].*: nested more than 64 levels deep"):
        load(tmp_path, "config:\n  determined:x: " + "[" * 5000 + "]" * 5000 + "\n")


@pytest.mark.parametrize(
    ("error", "message"),
    [
        (PermissionError(13, "Permission denied"), "cannot read {}: permission denied"),
        (OSError(5, "Input/output error"), "cannot read {}: Input/output error"),
    ],
)
def test_a_file_that_cannot_be_read_is_a_usage_error(tmp_path, monkeypatch, error, message):
    path = tmp_path / "Pulumi.t.yaml"
    path.write_text("config: {}\n")

    def open_(*args, **kwargs):
        raise error

    monkeypatch.setattr(stackfile.os, "open", open_)
    with pytest.raises(StackFileError) as info:
        stackfile.load_stack_file(path)
    assert str(info.value) == message.format(path)


def test_a_config_key_ending_in_a_newline_is_refused(tmp_path):
    # A quoted key may hold a newline; `^...$` with re.match let a trailing one through.
    with pytest.raises(StackFileError, match=r"config key 'determined:cloud\\n' is not of the form"):
        load(tmp_path, 'config:\n  "determined:cloud\\n": existing\n')


@pytest.mark.parametrize(
    ("text", "where", "key"),
    [
        ("config:\n  determined:cloud: a\n  determined:cloud: b\n", "line 3, column 3", "determined:cloud"),
        ("config:\n  determined:cloud: a\nconfig: {}\n", "line 3, column 1", "config"),
        ("config:\n  determined:cluster:\n    name: a\n    name: b\n", "line 4, column 5", "name"),
        (
            "config:\n  determined:nodePools: [{name: a, gpu: {count: 1, count: 2}}]\n",
            "line 2, column 52",
            "count",
        ),
        # As go-yaml compares keys: by their text, however they are quoted.
        ("config:\n  determined:cloud: a\n  'determined:cloud': b\n", "line 3, column 3", "determined:cloud"),
    ],
)
def test_a_key_twice_in_one_mapping_is_refused_at_any_depth(tmp_path, text, where, key):
    with pytest.raises(StackFileError) as info:
        load(tmp_path, text)
    assert str(info.value) == (
        f"{tmp_path / 'Pulumi.t.yaml'} is not valid YAML at {where}: the key {key!r} appears twice"
    )


def test_the_same_key_in_different_mappings_and_over_a_merge_is_not_a_duplicate(tmp_path):
    config, _ = load(
        tmp_path,
        "defaults: &d {name: base, context: kind}\n"
        "config:\n"
        "  determined:cluster: {<<: *d, name: mine}\n"
        "  determined:nodePools: [{name: a}, {name: b}]\n",
    )
    assert json.loads(config["determined:cluster"]) == {"name": "mine", "context": "kind"}
    assert json.loads(config["determined:nodePools"]) == [{"name": "a"}, {"name": "b"}]


@pytest.mark.parametrize(
    ("environment", "names"),
    [
        ("", []),
        ("environment: []\n", []),
        ("environment: [org/common, org/dev]\n", ["org/common", "org/dev"]),
        # An inline definition: its imports (a name, or a name with options) and its own values.
        (
            "environment:\n  imports: [a, {b: {merge: false}}]\n  values: {pulumiConfig: {k: v}}\n",
            ["a", "b", "its inline values"],
        ),
        ("environment: {values: {x: 1}}\n", ["its inline values"]),
        # A name that could break the line or the terminal is quoted.
        ('environment: ["a\\nb", "\\e[31mred"]\n', ["'a\\nb'", "'\\x1b[31mred'"]),
        ("environment: 3\n", ["a value Pulumi would not read as environments"]),
    ],
)
def test_the_esc_environments_a_stack_imports_are_named(tmp_path, environment, names):
    path = tmp_path / "Pulumi.t.yaml"
    path.write_text(environment + "config:\n  determined:cloud: existing\n")
    loaded = stackfile.read_stack_file(path)
    assert loaded.environments == names
    assert loaded.config == {"determined:cloud": "existing"}


def test_the_esc_warning_names_five_environments_and_counts_the_rest():
    warning = stackfile.environments_warning([f"e{i}" for i in range(8)])
    assert "(e0, e1, e2, e3, e4 and 3 more)" in warning
    assert "\n" not in warning


# --- null keys: Pulumi passes them on as the text '<nil>' ------------------------------------
# (sdk/go/common/resource/config/object.go unmarshalObject, fmt.Sprintf("%v", k)); the stack
# file is refused at the mapping that holds one.


@pytest.mark.parametrize("key", ["null", "~", "Null", "!!null ''"])
def test_a_null_key_is_refused_at_its_mapping(tmp_path, key):
    body = f"  determined:taskContainerDefaults:\n    env:\n      {key}: '1'\n      NCCL_DEBUG: INFO\n"
    with pytest.raises(ConfigError) as refused:
        load(tmp_path, "config:\n" + body)
    assert [p.path for p in refused.value.problems] == ["taskContainerDefaults.env"]
    assert "'<nil>'" in refused.value.problems[0].message


def test_every_null_key_is_its_own_line(tmp_path):
    body = (
        "  determined:nodePools:\n"
        "    - {name: system, nodeSelector: {~: x}}\n"
        "  determined:resourcePools:\n"
        "    - {name: a, podSpec: {metadata: {labels: {null: a}}}}\n"
    )
    with pytest.raises(ConfigError) as refused:
        load(tmp_path, "config:\n" + body)
    assert [p.path for p in refused.value.problems] == [
        "nodePools[0].nodeSelector",
        "resourcePools[0].podSpec.metadata.labels",
    ]


def test_null_values_and_the_word_null_as_a_quoted_key_are_kept(tmp_path):
    config, _ = load(
        tmp_path, "config:\n  determined:taskContainerDefaults:\n    env: {'null': '1', A: null}\n"
    )
    assert config["determined:taskContainerDefaults"] == '{"env": {"null": "1", "A": null}}'


def test_other_namespaces_are_not_judged(tmp_path):
    config, _ = load(tmp_path, "config:\n  kubernetes:labels: {~: x}\n")
    assert "kubernetes:labels" in config
