"""Running from a mirror, pinned by digest (docs/operations/upstream.md): the
master's image and the default task images come from the configured references, digests
included, and the facts the docs rely on are read back from the master's source where a
copy is at hand (DETERMINED_SOURCE, default the workspace's mirror)."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest
import yaml
from conftest import raw_config
from planning import one, plan_for

from components import constants

SOURCE = Path(os.environ.get("DETERMINED_SOURCE", "/work/.mirror/determined-ai+determined/repo"))
DIGEST = "@sha256:" + "ab" * 32
MASTER = f"registry.example.com/determinedai/determined-master:0.38.1{DIGEST}"
TASK = f"registry.example.com/determinedai/pytorch-ngc:0.38.1{DIGEST}"


def test_the_master_runs_the_pinned_mirror_and_its_version_still_writes_master_yaml():
    result = plan_for(raw_config(master={"version": "0.34.0", "image": MASTER}))
    (container,) = one(result, "Deployment", constants.MASTER_NAME)["spec"]["template"]["spec"]["containers"]
    assert container["image"] == MASTER
    # 0.34 writes per-pool kubernetes_namespace (0.35 removed it): the version, not the image, decides.
    config = yaml.safe_load(result.master_yaml)
    assert all("kubernetes_namespace" in pool for pool in config["resource_pools"])


@pytest.mark.parametrize("version", ["0.33.0", "0.38.1"])
def test_every_task_without_an_image_of_its_own_pulls_the_pinned_mirror(version):
    images = {"cpu": TASK, "gpu": TASK}
    result = plan_for(raw_config(master={"version": version}, taskContainerDefaults={"images": images}))
    config = yaml.safe_load(result.master_yaml)
    assert config["task_container_defaults"]["image"] == images
    for pool in config["resource_pools"]:
        if "task_container_defaults" in pool:
            assert pool["task_container_defaults"]["image"] == images, pool["pool_name"]


def test_image_references_must_be_pinned():
    from components.config import ConfigError, load_config

    with pytest.raises(ConfigError) as err:
        load_config(raw_config(taskContainerDefaults={"images": {"gpu": "registry.example.com/pytorch-ngc"}}))
    assert "taskContainerDefaults.images.gpu" in str(err.value)


# --- the facts, read back from the master's source ----------------------------------------------------


def _lines(ref: str) -> list[str]:
    out = subprocess.run(["git", "-C", str(SOURCE), "show", ref], capture_output=True, text=True, check=True)
    return out.stdout.splitlines()


needs_source = pytest.mark.skipif(
    not ((SOURCE / "HEAD").exists() or (SOURCE / ".git").exists()), reason="no copy of the master's source"
)


@needs_source
@pytest.mark.parametrize("tag", ["0.26.0", "0.34.0", "v0.38.1"])
def test_the_master_reads_gpu_as_its_cuda_image(tag):
    lines = _lines(f"{tag}:master/pkg/model/environment_config.go")
    assert 'GPU string `json:"gpu,omitempty"`' in lines[87]
    assert "r.CUDA = compatItem.GPU" in lines[93]


@needs_source
def test_the_default_task_images_of_the_last_release_and_the_init_container():
    const = _lines("v0.38.1:master/pkg/schemas/expconf/const.go")
    assert '"determinedai/pytorch-ngc:0.38.1"' in const[10] and "CPUImage" in const[10]
    assert '"determinedai/pytorch-ngc:0.38.1"' in const[11] and "CUDAImage" in const[11]
    spec = _lines("v0.38.1:master/internal/rm/kubernetesrm/spec.go")
    assert "configureInitContainer(" in spec[703] and "env.Image().For(deviceType)" in spec[706]


@needs_source
def test_the_last_release_is_0_38_1():
    tags = subprocess.run(
        ["git", "-C", str(SOURCE), "tag", "--list", "v0.*", "0.*"], capture_output=True, text=True, check=True
    ).stdout.split()
    releases = [t.lstrip("v") for t in tags if re.fullmatch(r"v?[0-9]+\.[0-9]+\.[0-9]+", t)]
    newest = max(releases, key=lambda t: tuple(int(x) for x in t.split(".")))
    assert newest == "0.38.1"
    date = subprocess.run(
        ["git", "-C", str(SOURCE), "log", "-1", "--format=%cs", "v0.38.1"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    assert date == "2025-03-19"
