"""Null keys inside `determined:` values: Pulumi passes them on as the text '<nil>'
(sdk/go/common/resource/config/object.go unmarshalObject, fmt.Sprintf("%v", k)); the stack
file is refused at the mapping that holds one."""

from __future__ import annotations

import pytest

from components.config import ConfigError
from plan import stackfile


def _load(tmp_path, body: str):
    path = tmp_path / "Pulumi.t.yaml"
    path.write_text("config:\n" + body)
    return stackfile.load_stack_file(path)


@pytest.mark.parametrize("key", ["null", "~", "Null", "!!null ''"])
def test_a_null_key_is_refused_at_its_mapping(tmp_path, key):
    body = f"  determined:taskContainerDefaults:\n    env:\n      {key}: '1'\n      NCCL_DEBUG: INFO\n"
    with pytest.raises(ConfigError) as refused:
        _load(tmp_path, body)
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
        _load(tmp_path, body)
    assert [p.path for p in refused.value.problems] == [
        "nodePools[0].nodeSelector",
        "resourcePools[0].podSpec.metadata.labels",
    ]


def test_null_values_and_the_word_null_as_a_quoted_key_are_kept(tmp_path):
    config, _ = _load(tmp_path, "  determined:taskContainerDefaults:\n    env: {'null': '1', A: null}\n")
    assert config["determined:taskContainerDefaults"] == '{"env": {"null": "1", "A": null}}'


def test_other_namespaces_are_not_judged(tmp_path):
    config, _ = _load(tmp_path, "  kubernetes:labels: {~: x}\n")
    assert "kubernetes:labels" in config
