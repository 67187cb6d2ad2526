"""Shared test helpers: a valid base configuration and a way to vary it."""

from __future__ import annotations

import copy
import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from components.config import StackConfig, load_config  # noqa: E402

# An existing cluster with one CPU and one 4-GPU node pool and two resource pools.
BASE: dict[str, Any] = {
    "cloud": "existing",
    "cluster": {"name": "det-test"},
    "nodePools": [
        {"name": "system", "nodeSelector": {"pool": "system"}},
        {"name": "a100", "gpu": {"type": "nvidia-tesla-a100", "count": 4}, "nodeSelector": {"pool": "a100"}},
    ],
    "resourcePools": [
        {"name": "a100", "nodePool": "a100", "namespace": "det-a100"},
        {"name": "aux", "nodePool": "system", "namespace": "det-aux"},
    ],
}


# Smallest valid stacks of each cloud (top-level keys over BASE), for tests of cloud rules.
GKE = {
    "cloud": "gke",
    "cluster": {"name": "det", "region": "us-central1", "project": "p"},
    "nodePools": [
        {"name": "system", "machineType": "e2-standard-8"},
        {"name": "a100", "machineType": "a2-highgpu-4g", "gpu": {"type": "nvidia-tesla-a100", "count": 4}},
    ],
    "resourcePools": [{"name": "a100", "nodePool": "a100"}, {"name": "aux", "nodePool": "system"}],
}
EKS = {
    "cloud": "eks",
    "cluster": {"name": "det", "region": "us-east-1"},
    "nodePools": [
        {"name": "system", "machineType": "m6i.2xlarge"},
        {"name": "a100", "machineType": "p4d.24xlarge", "gpu": {"type": "nvidia-tesla-a100", "count": 8}},
    ],
    "resourcePools": [{"name": "a100", "nodePool": "a100"}, {"name": "aux", "nodePool": "system"}],
}


def raw_config(**overrides: Any) -> dict[str, Any]:
    """BASE with top-level keys replaced (a value of None removes the key)."""
    raw = copy.deepcopy(BASE)
    for key, value in overrides.items():
        if value is None:
            raw.pop(key, None)
        else:
            raw[key] = value
    return raw


def make_config(**overrides: Any) -> StackConfig:
    return load_config(raw_config(**overrides))


def pulumi_config(raw: dict[str, Any]) -> dict[str, str]:
    """The raw config as Pulumi hands it to a program: `determined:` keys, JSON objects."""
    return {
        f"determined:{key}": value if isinstance(value, str) else json.dumps(value)
        for key, value in raw.items()
    }
