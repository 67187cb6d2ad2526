"""The master's configuration must fit the Secret it is written into.

master.yaml (with the database's root certificate beside it) is the data of one Secret, and
the API server refuses a Secret whose data exceeds 1 MiB (components.kube.api_rules.
MAX_DATA_BYTES). What fills it comes from the stack config: every pool's description and
pod specs, the task container defaults, configuration overrides. So the config is refused
when the file would not fit, naming the key that takes the most room (or the number of
pools, when it is the pools themselves that fill it).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

import yaml

from components.config.errors import Add
from components.kube import api_rules

# What master.yaml holds besides the user's bulk values, measured on every shipped stack and
# fixture (at most ~8 KB, tests/invariants/test_kube_api_rules.py checks the bound): the
# fixed sections, and per resource pool its defaults and placement.
_BASE = 16384
_PER_POOL = 8192
# master.yaml nests a pool's pod specs about six mappings deep: two spaces a level per line.
_INDENT = 12


def _parts(cfg: Any) -> Iterable[tuple[str, Any, int]]:
    """(key path, value, how many times master.yaml holds it) for what the user writes into
    master.yaml in bulk. The task container defaults' pod specs are merged into every pool's
    (and kept once on their own); a pool's pod spec into its CPU and GPU pod specs."""
    tcd = cfg.task_container_defaults
    pools = len(cfg.resource_pools)
    for key in ("cpu_pod_spec", "gpu_pod_spec", "checkpoint_gc_pod_spec"):
        camel = key.replace("_pod_spec", "PodSpec").replace("checkpoint_gc", "checkpointGc")
        yield f"taskContainerDefaults.{camel}", getattr(tcd, key), pools + 1
    for i, rp in enumerate(cfg.resource_pools):
        yield f"resourcePools[{i}].description", rp.description, 1
        yield f"resourcePools[{i}].podSpec", rp.pod_spec, 2
    yield "master.configOverrides", cfg.master.config_overrides, 1
    yield "master.caBundle", getattr(cfg.master, "ca_bundle", None), 1
    yield "database.sslRootCert", getattr(cfg.database, "ssl_root_cert", None), 1


def _size(value: Any) -> int:
    """Bytes `value` takes in master.yaml, at most."""
    if not value:
        return 0
    text = yaml.safe_dump(json.loads(json.dumps(value, default=str)), width=2**31, allow_unicode=False)
    return len(text.encode()) + _INDENT * text.count("\n")


def master_config_size(cfg: Any) -> int:
    """Bytes of the master's configuration Secret for `cfg`, at most: master.yaml as the
    app renders it, estimated from the config alone (the config knows nothing of the app)."""
    bulk = sum(_size(value) * times for _, value, times in _parts(cfg))
    return _BASE + _PER_POOL * len(cfg.resource_pools) + bulk


def master_config_size_problems(cfg: Any, add: Add) -> None:
    """Refuse a config whose master.yaml would not fit in its Secret: at the largest part when
    shortening it could make the file fit, at `resourcePools` when the pools' own share (their
    constants and placement) outweighs every value, else at the largest part still."""
    size = master_config_size(cfg)
    if size <= api_rules.MAX_DATA_BYTES:
        return
    path, part, times = max(_parts(cfg), key=lambda item: _size(item[1]) * item[2])
    largest = _size(part) * times
    pools = len(cfg.resource_pools)
    if size - largest > api_rules.MAX_DATA_BYTES and _PER_POOL * pools > largest:
        add(
            "resourcePools",
            f"{pools} resource pools make the master's configuration about {size} bytes (each pool takes "
            f"about {_PER_POOL} in master.yaml); the Secret it is written into holds at most "
            f"{api_rules.MAX_DATA_BYTES} (1 MiB): use fewer pools",
        )
        return
    add(
        path,
        f"makes the master's configuration about {size} bytes (this value: {largest}); the "
        f"Secret it is written into holds at most {api_rules.MAX_DATA_BYTES} (1 MiB): shorten it",
    )
