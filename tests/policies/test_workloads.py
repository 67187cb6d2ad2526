"""Policies on what runs in pods: the project's workloads and master.yaml's task pod specs."""

from __future__ import annotations

import yaml

from tests.policies.support import args, check


def deployment(*images: str) -> dict:
    containers = [{"name": f"c{i}", "image": image} for i, image in enumerate(images)]
    return {
        "metadata": {"name": "m", "namespace": "determined"},
        "spec": {"template": {"spec": {"containers": containers}}},
    }


def master_config(config: dict) -> dict:
    return {
        "metadata": {
            "name": "determined-master-config",
            "namespace": "determined",
            "labels": {"app.kubernetes.io/part-of": "determined"},
        },
        "stringData": {"master.yaml": yaml.safe_dump(config)},
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
