"""The arguments every add-on's `kubernetes:helm.sh/v3:Release` shares: a pinned chart from
a Helm repository or an OCI registry (`chart` an oci:// URL), values visible to the plan and
the policies, and a failed install or upgrade rolled back (atomic) instead of left half applied."""

from __future__ import annotations

from typing import Any


def release_args(
    name: str,
    chart: str,
    version: str,
    namespace: str,
    values: dict[str, Any],
    repository: str | None = None,
    create_namespace: bool = False,
    **extra: Any,
) -> dict[str, Any]:
    args: dict[str, Any] = {"name": name, "chart": chart, "version": version}
    if repository:
        args["repository_opts"] = {"repo": repository}
    args["namespace"] = namespace
    if create_namespace:
        args["create_namespace"] = True
    return {**args, "values": values, "atomic": True, "cleanup_on_fail": True, **extra}
