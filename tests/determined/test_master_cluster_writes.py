"""The master's cluster-wide writes are opt-in (`master.clusterWrites`): node `patch` and
PriorityClass `create`/`delete` each serve one optional feature the master does without when
Kubernetes refuses the call. The facts, with their sources in the master's Go code, are
`components.determined.master.CLUSTER_WRITES`; where a copy of determined-ai/determined is at hand
(DETERMINED_SOURCE, default the workspace's mirror), the cited lines are read back."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest
from conftest import make_config, raw_config
from planning import grants, plan_for

from components import constants, versions
from components.config import ConfigError, load_config
from components.determined import master

SOURCE = Path(os.environ.get("DETERMINED_SOURCE", "/work/.mirror/determined-ai+determined/repo"))


NODE_PATCH = ("", "nodes", "patch")
CLASS_WRITES = {("scheduling.k8s.io", "priorityclasses", v) for v in ("create", "delete")}


@pytest.mark.parametrize("version", ["0.26.0", "0.34.0", "0.35.1", "0.38.1"])
def test_by_default_the_master_writes_nothing_cluster_wide(version):
    granted = grants(master.cluster_role(make_config(master={"version": version}))["rules"])
    assert NODE_PATCH not in granted
    assert not granted & CLASS_WRITES
    assert {verb for _, _, verb in granted} <= {"list", "watch"}


@pytest.mark.parametrize(
    ("asked", "expected"),
    [
        ({"nodes": True}, {NODE_PATCH}),
        ({"priorityClasses": True}, CLASS_WRITES),
        ({"nodes": True, "priorityClasses": True}, {NODE_PATCH} | CLASS_WRITES),
        ({"nodes": False, "priorityClasses": False}, set()),
    ],
)
def test_each_key_grants_its_write_and_nothing_else(asked, expected):
    base = grants(master.cluster_role(make_config())["rules"])
    cfg = make_config(master={"clusterWrites": asked})
    assert grants(master.cluster_role(cfg)["rules"]) - base == expected


def test_the_keys_are_checked():
    with pytest.raises(ConfigError) as err:
        load_config(raw_config(master={"clusterWrites": {"nodes": "sometimes", "pods": True}}))
    text = str(err.value)
    assert "master.clusterWrites.nodes" in text and "master.clusterWrites.pods" in text


def test_determined_own_priority_classes_do_not_depend_on_the_writes():
    # Created by the stack (or read, when another install owns them): the master, the database
    # and default tasks use them whatever the master may write.
    names = {constants.SYSTEM_PRIORITY_CLASS, constants.MEDIUM_PRIORITY_CLASS}
    kind = "kubernetes:scheduling.k8s.io/v1:PriorityClass"
    created = plan_for(raw_config(master={"clusterWrites": {"priorityClasses": False}}))
    assert {r["name"] for r in created.resources if r["type"] == kind} == names
    adopted = plan_for(raw_config(adoptPriorityClasses=True))
    assert not [r for r in adopted.resources if r["type"] == kind]
    assert {name for typ, name in adopted.recorder.reads if typ == kind} == names


def test_the_plan_grants_only_what_the_stack_asks_for():
    for asked, present in (({}, False), ({"nodes": True, "priorityClasses": True}, True)):
        result = plan_for(raw_config(master={"clusterWrites": asked}))
        (role,) = [
            r for r in result.resources if r["type"] == "kubernetes:rbac.authorization.k8s.io/v1:ClusterRole"
        ]
        granted = grants(role["inputs"]["rules"])
        assert (NODE_PATCH in granted) is present
        assert (granted >= CLASS_WRITES) is present


# --- the facts and their sources ------------------------------------------------------------------


def test_every_write_cites_the_oldest_and_the_newest_supported_master():
    oldest = ".".join(map(str, versions.MIN_DETERMINED_VERSION))
    newest = versions.DEFAULT_DETERMINED_VERSION
    for write in master.CLUSTER_WRITES:
        tags = {source.split(":", 1)[0].lstrip("v") for source in write.sources}
        assert {oldest, newest} <= tags, write.key
        assert write.enables and write.refused


# What each cited line must show: the call, or how the master treats a refusal.
CITED = (
    "Nodes()",
    "IsForbidden",
    "PriorityClasses()",
    "Delete(ctx, name",
    "PriorityClassName",
    "err == nil",
    "Warnf",
    "createPriorityClass(name",
)


def _line(source: str) -> str:
    tag, path, number = source.split(":")
    text = subprocess.run(
        ["git", "-C", str(SOURCE), "show", f"{tag}:{path}"], capture_output=True, text=True, check=True
    ).stdout
    return text.splitlines()[int(number) - 1]


@pytest.mark.skipif(
    not (SOURCE / ".git").exists() and not (SOURCE / "HEAD").exists(), reason="no copy of the master's source"
)
@pytest.mark.parametrize("source", [s for w in master.CLUSTER_WRITES for s in w.sources])
def test_each_cited_line_is_the_call_or_its_refusal(source):
    line = _line(source)
    assert any(token in line for token in CITED), f"{source}: {line.strip()}"


def _supported_tags() -> list[str]:
    tags = subprocess.run(
        ["git", "-C", str(SOURCE), "tag"], capture_output=True, text=True, check=True
    ).stdout.split()
    oldest = versions.MIN_DETERMINED_VERSION
    return [
        tag
        for tag in tags
        if re.fullmatch(r"v?\d+\.\d+\.\d+", tag) and versions.parse_version(tag.lstrip("v")) >= oldest
    ]


@pytest.mark.skipif(
    not (SOURCE / ".git").exists() and not (SOURCE / "HEAD").exists(), reason="no copy of the master's source"
)
def test_at_every_supported_tag_the_master_writes_nodes_and_priority_classes_only_there():
    tags = _supported_tags()
    assert "v0.38.1" in tags and "0.26.0" in tags
    for tag in tags:
        pattern = r"Nodes()\.\|PriorityClasses()"
        command = [
            "git",
            "-C",
            str(SOURCE),
            "grep",
            "-h",
            "-A3",
            pattern,
            tag,
            "--",
            "master/",
            ":!*_test.go",
        ]
        found = subprocess.run(
            command,
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        calls = [block for block in found.split("--\n") if block.strip()]
        nodes = [b for b in calls if "Nodes()." in b]
        classes = [b for b in calls if "PriorityClasses()" in b]
        # Two node patches (enable, disable), each answering a refusal with IsForbidden.
        assert len(nodes) == 2 and all("Patch(" in b and "IsForbidden" in b for b in nodes), tag
        # One PriorityClass create, one delete.
        assert sorted("Create(" in b for b in classes) == [False, True], tag
        assert any("Delete(" in b for b in classes), tag
