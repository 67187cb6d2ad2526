"""Pinned versions, images and version-dependent behaviour.

Values only: every image tag and version boundary the project relies on lives here, so an
upgrade is a one-line change that the tests then check.
"""

from __future__ import annotations

# The Determined release deployed when `master.version` is not set.
DEFAULT_DETERMINED_VERSION = "0.38.1"

# Oldest master this project renders configuration for. Older masters lack the
# Kubernetes job-based task launch and RBAC this project grants.
MIN_DETERMINED_VERSION = (0, 26, 0)

# 0.27.0 and newer: `task_container_defaults.kubernetes.max_slots_per_pod` may be set per
# resource pool (upstream PR #7923, autumn 2023; the boundary is taken conservatively).
# Older masters only know the global `resource_manager.max_slots_per_pod`.
PER_POOL_MAX_SLOTS_SINCE = (0, 27, 0)

# 0.33.0 and newer refuse to start without `security.initial_user_password`.
INITIAL_PASSWORD_SINCE = (0, 33, 0)

# 0.35.0 removed `resource_pools[].kubernetes_namespace` (namespaces are bound to
# workspaces instead) and renamed `resource_manager.namespace` to `default_namespace`.
WORKSPACE_NAMESPACES_SINCE = (0, 35, 0)

# In-cluster database. The chart ships postgres:10.14 (out of support since 2022);
# PostgreSQL 17 is supported upstream until November 2029.
POSTGRES_IMAGE = "postgres:17.6"

# NVIDIA GPU operator chart (installed by a later component).
DEFAULT_GPU_OPERATOR_VERSION = "v25.10.1"


def parse_version(version: str) -> tuple[int, int, int]:
    """'0.38.1' -> (0, 38, 1)."""
    major, minor, patch = (int(part) for part in version.split("."))
    return major, minor, patch
