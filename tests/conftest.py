"""Shared test helpers: a valid base configuration and a way to vary it."""

from __future__ import annotations

import copy
import json
import shutil
import tempfile
from pathlib import Path
from typing import Any

import pytest

import stack_args
from components.config import StackConfig, load_config

ROOT = Path(__file__).resolve().parent.parent

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

# A node pool of each GPU fabric (nodePools[].fabric), in a zone that has the machine; tests
# add or change keys over them.
P5_POOL = {
    "name": "p5",
    "machineType": "p5.48xlarge",
    "gpu": {"type": "h100", "count": 8},
    "fabric": "efa",
    "zones": ["us-east-1a"],
}
MEGA_POOL = {
    "name": "mega",
    "machineType": "a3-megagpu-8g",
    "gpu": {"type": "h100-mega", "count": 8},
    "fabric": "tcpxo",
    "zones": ["us-central1-a"],
}
ULTRA_POOL = {
    "name": "ultra",
    "machineType": "a3-ultragpu-8g",
    "gpu": {"type": "h200", "count": 8},
    "fabric": "rdma",
    "spot": True,
    "zones": ["us-central1-b"],
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


def with_pool(base: dict[str, Any], index: int, **changes: Any) -> dict[str, Any]:
    """`base` (top-level keys, as GKE or EKS) with node pool `index` changed."""
    raw = copy.deepcopy(base)
    raw["nodePools"][index] = {**raw["nodePools"][index], **changes}
    return raw


def config_problems(overrides: dict[str, Any]) -> list[str]:
    """What loading BASE with these top-level keys says, one problem a line, key paths without
    the project prefix; [] when it loads."""
    from components.config import ConfigError

    try:
        load_config(raw_config(**overrides))
    except ConfigError as exc:
        return [line.removeprefix("determined:") for line in str(exc).splitlines()]
    return []


def make_config(**overrides: Any) -> StackConfig:
    # As the program loads it: with the rules over the task pods Determined renders.
    return stack_args.load_stack(raw_config(**overrides))


def pulumi_config(raw: dict[str, Any]) -> dict[str, str]:
    """The raw config as Pulumi hands it to a program: `determined:` keys, JSON objects."""
    return {
        f"determined:{key}": value if isinstance(value, str) else json.dumps(value)
        for key, value in raw.items()
    }


# --- the session's stack plans, shared by its worker processes (tests/planning.py) ----------

_SHARED_PLANS = pytest.StashKey[Path]()


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node) -> None:
    """pytest-xdist, in the controller, for each worker it starts: one directory for them all,
    handed over in `workerinput` (xdist's hook for it: xdist/newhooks.py, pytest-xdist 3.8.0)."""
    stash = node.config.stash
    if _SHARED_PLANS not in stash:
        stash[_SHARED_PLANS] = Path(tempfile.mkdtemp(prefix="shared-plans-"))
    node.workerinput["shared_plans"] = str(stash[_SHARED_PLANS])


def pytest_configure(config: pytest.Config) -> None:
    workerinput = getattr(config, "workerinput", None)
    if workerinput is not None:
        import planning  # planning imports this module: not at its top

        planning.share_plans(Path(workerinput["shared_plans"]))


def pytest_unconfigure(config: pytest.Config) -> None:
    if _SHARED_PLANS in config.stash:
        shutil.rmtree(config.stash[_SHARED_PLANS], ignore_errors=True)


# --- the order files go to the workers in ----------------------------------------------------

# Files that take longest (dozens of plans, each in a process of its own or with a policy
# pack process, or a database server), by name wherever they live: handed out first so that no
# worker is left running one while the other has nothing to do (pyproject.toml turns off
# xdist's own order, which puts the files with the fewest tests last: --loadscope-reorder in
# xdist/scheduler/loadscope.py, pytest-xdist 3.8.0). test_signals.py is not among them: it
# keeps both cores busy on its own, and its timings are best kept away from test_plan_cli.py's
# dozens of processes at once.
SLOW_FIRST = (
    "test_plan_cli.py",
    "test_policy_protocol.py",
    "test_plan_secrets.py",
    "test_database_parameters.py",
    "test_faults.py",
    "test_checkov.py",
    "test_policy_pack.py",
    "test_workspaces.py",
    "test_database_scripts.py",
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    rank = {name: index for index, name in enumerate(SLOW_FIRST)}
    items.sort(key=lambda item: rank.get(item.path.name, len(rank)))  # stable: the rest keep their order
