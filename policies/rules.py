"""The project's CrossGuard policies, importable without starting a policy server.

`POLICIES` is what the pack (policies/__main__.py) serves and what the offline plan runs.
Validations receive resource inputs in camelCase, as the Pulumi engine passes them.
"""

from __future__ import annotations

from typing import Any

from pulumi_policy import (
    EnforcementLevel,
    Policy,
    ReportViolation,
    ResourceValidationArgs,
    ResourceValidationPolicy,
)

_WORKLOADS = {
    "kubernetes:apps/v1:Deployment",
    "kubernetes:apps/v1:StatefulSet",
    "kubernetes:apps/v1:DaemonSet",
    "kubernetes:batch/v1:Job",
}


def pod_spec_of(resource_type: str, props: dict[str, Any]) -> dict[str, Any] | None:
    """The pod spec inside a workload or Pod resource, or None for other types."""
    if resource_type in _WORKLOADS:
        return (props.get("spec") or {}).get("template", {}).get("spec")
    if resource_type == "kubernetes:core/v1:Pod":
        return props.get("spec")
    return None


def _is_pinned(image: str) -> bool:
    if "@sha256:" in image:
        return True
    name = image.rsplit("/", 1)[-1]
    return ":" in name and name.rsplit(":", 1)[1] not in ("", "latest")


def images_pinned(args: ResourceValidationArgs, report: ReportViolation) -> None:
    spec = pod_spec_of(args.resource_type, args.props)
    if not spec:
        return
    for container in [*spec.get("initContainers", []), *spec.get("containers", [])]:
        image = container.get("image", "")
        if not _is_pinned(image):
            report(f"container {container.get('name')!r} uses image {image!r}: pin a version tag or digest")


POLICIES: list[Policy] = [
    ResourceValidationPolicy(
        name="images-pinned",
        description="Container images name an explicit version tag or digest, never 'latest'.",
        validate=images_pinned,
        enforcement_level=EnforcementLevel.MANDATORY,
    ),
]
