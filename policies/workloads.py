"""Policies: what runs in pods (the project's workloads and the task pod specs of
master.yaml): pinned images, requests and limits, no secrets in plain sight, no privilege."""

from __future__ import annotations

from typing import Any

from policies import facts
from policies.rule import Context, Report, Rule


def images_pinned(context: Context, resource: Any, report: Report) -> None:
    spec = facts.pod_spec_of(resource)
    for container in facts.containers(spec):
        image = str(container.get("image", ""))
        if not facts.is_pinned(image):
            report(
                f"{facts.object_name(resource)}: container {container.get('name')!r} uses image {image!r}, "
                "which names no version"
            )
    master = facts.master_config_of(resource)
    if master is None:
        return
    for task in facts.task_pod_specs(master.config):
        for container in facts.containers(task.spec):
            image = container.get("image")
            if image is not None and not facts.is_pinned(str(image)):
                report(
                    f"master.yaml {task.where}: container {container.get('name')!r} uses image {image!r}, "
                    f"which names no version (from {task.key})"
                )
    for where, key, image in facts.task_images(master.config):
        if not facts.is_pinned(image):
            report(f"master.yaml {where}: task image {image!r} names no version (from {key})")


RULES: list[Rule] = [
    Rule(
        name="images-pinned",
        description="Every container image, in the project's workloads and in every task pod spec and "
        "task image of master.yaml, names a version tag or digest, never `latest` or none.",
        remediation="name a tag or digest in determined:master.image, "
        "determined:taskContainerDefaults.images, or the pod spec's containers "
        "(determined:resourcePools[].podSpec, determined:taskContainerDefaults.*PodSpec)",
        dev="mandatory",
        prod="mandatory",
        area="workloads",
        resource=images_pinned,
        why="An unpinned image changes under a running cluster: a restart pulls something nobody reviewed.",
    ),
]
