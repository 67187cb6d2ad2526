"""Which zones offer which GPUs (GKE node pools), as data: accelerator type -> region ->
zones, and, where a machine series is offered in fewer zones than its GPU, the series' own.

GPUs in a regional cluster need a region with at least one zone that offers them, and the
node pool's node locations must name such zones, else creation fails with `Accelerator type
"nvidia-l4" does not exist in zone europe-west3-a`
(https://cloud.google.com/kubernetes-engine/docs/concepts/regional-clusters, "Limitations",
read 2026-11-25). So a GPU pool's zones default to the zones of the cluster's region that
offer its GPU.

Source: the Compute Engine API's per-zone lists (accelerator types for the GPUs N1 machines
attach; machine types for the accelerator-optimized series, whose machine type brings the
GPU), as collected in SkyPilot's public catalog: github.com/skypilot-org/skypilot-catalog,
catalogs/v8/gcp/vms.csv at commit 006059e0f18acb1341e22a27751e9f80df6ba92f (read
2026-11-25). Google's own table is https://cloud.google.com/compute/docs/gpus/gpu-regions-zones
(not readable from where this table was built; compare with it when updating).
AI zones (`us-south1-ai1b`) are left out: they are not zones a pool names by default.

The table cannot know GPUs it has no rows for (`UNLISTED`) nor zones Google added after the
date above: such pools must name their zones (`nodePools[].zones`).
"""

from __future__ import annotations

READ = "2026-11-25"
SOURCE = (
    "github.com/skypilot-org/skypilot-catalog catalogs/v8/gcp/vms.csv "
    "(Compute Engine API zone lists), read 2026-11-25"
)

# Region -> zone letters: {"us-central1": "abcf"} is us-central1-a, -b, -c and -f.
_Letters = dict[str, str]

_A2_HIGHGPU: _Letters = {
    "asia-northeast1": "ac",
    "asia-northeast3": "ab",
    "asia-southeast1": "abc",
    "europe-west4": "ab",
    "me-west1": "ac",
    "us-central1": "abcf",
    "us-east1": "b",
    "us-west1": "b",
    "us-west3": "b",
    "us-west4": "b",
}
_A2_MEGAGPU: _Letters = {"asia-southeast1": "ac", "europe-west4": "ab", "us-central1": "abcf"}
_A2_ULTRAGPU: _Letters = {
    "asia-southeast1": "c",
    "europe-west4": "a",
    "us-central1": "ac",
    "us-east4": "c",
    "us-east5": "ab",
}
# a3-highgpu-1g/-2g/-4g also in europe-west8-c (a3-highgpu-8g is not: MACHINE_ZONES).
_A3_HIGHGPU: _Letters = {
    "asia-east1": "c",
    "asia-northeast1": "b",
    "asia-south1": "c",
    "asia-south2": "b",
    "asia-southeast1": "bc",
    "australia-southeast1": "c",
    "europe-north1": "c",
    "europe-west1": "bc",
    "europe-west3": "c",
    "europe-west4": "bc",
    "europe-west8": "c",
    "europe-west9": "c",
    "us-central1": "abc",
    "us-east4": "abc",
    "us-east5": "a",
    "us-west1": "ab",
    "us-west4": "a",
}
_A3_EDGEGPU: _Letters = {
    "asia-northeast1": "b",
    "asia-northeast3": "ac",
    "asia-south1": "c",
    "asia-southeast1": "bc",
    "europe-west2": "b",
    "europe-west3": "ac",
    "europe-west4": "bc",
    "europe-west9": "c",
    "northamerica-northeast2": "c",
    "us-central1": "abc",
    "us-east4": "abc",
    "us-east5": "a",
    "us-west1": "ab",
    "us-west4": "a",
}
_A3_MEGAGPU: _Letters = {
    "asia-east1": "c",
    "asia-northeast1": "b",
    "asia-southeast1": "bc",
    "australia-southeast1": "c",
    "europe-north1": "c",
    "europe-west1": "bc",
    "europe-west3": "c",
    "europe-west4": "bc",
    "us-central1": "abc",
    "us-east4": "abc",
    "us-east5": "a",
    "us-west1": "ab",
    "us-west4": "a",
}
_A3_ULTRAGPU: _Letters = {
    "asia-south1": "b",
    "asia-south2": "c",
    "europe-west1": "b",
    "europe-west4": "a",
    "us-central1": "b",
    "us-east4": "b",
    "us-east5": "a",
    "us-south1": "b",
    "us-west1": "c",
}
_A4_HIGHGPU: _Letters = {
    "asia-northeast1": "b",
    "asia-southeast1": "b",
    "europe-north1": "b",
    "europe-west4": "b",
    "us-central1": "b",
    "us-east1": "b",
    "us-east4": "b",
    "us-south1": "b",
    "us-west2": "c",
    "us-west3": "bc",
}
_G2_STANDARD: _Letters = {
    "asia-east1": "abc",
    "asia-northeast1": "abc",
    "asia-northeast3": "ab",
    "asia-south1": "abc",
    "asia-southeast1": "abc",
    "europe-west1": "bc",
    "europe-west2": "ab",
    "europe-west3": "ab",
    "europe-west4": "abc",
    "europe-west6": "bc",
    "me-central2": "ac",
    "northamerica-northeast1": "bc",
    "northamerica-northeast2": "ab",
    "us-central1": "abc",
    "us-east1": "bcd",
    "us-east4": "ac",
    "us-west1": "abc",
    "us-west4": "ac",
}
_T4: _Letters = {
    "asia-east1": "ac",
    "asia-east2": "ac",
    "asia-northeast1": "ac",
    "asia-northeast3": "bc",
    "asia-south1": "ab",
    "asia-southeast1": "abc",
    "asia-southeast2": "ab",
    "australia-southeast1": "ac",
    "europe-central2": "bc",
    "europe-west1": "bcd",
    "europe-west2": "ab",
    "europe-west3": "b",
    "europe-west4": "abc",
    "me-west1": "bc",
    "northamerica-northeast1": "c",
    "southamerica-east1": "abc",
    "us-central1": "abcf",
    "us-east1": "bcd",
    "us-east4": "abc",
    "us-west1": "ab",
    "us-west2": "bc",
    "us-west3": "b",
    "us-west4": "ab",
}
_V100: _Letters = {
    "asia-east1": "c",
    "europe-west4": "abc",
    "us-central1": "abcf",
    "us-east1": "bc",
    "us-west1": "ab",
}
_P100: _Letters = {
    "asia-east1": "ac",
    "australia-southeast1": "b",
    "europe-west1": "bd",
    "europe-west4": "a",
    "us-central1": "cf",
    "us-east1": "bc",
    "us-west1": "ab",
}
_P4: _Letters = {
    "asia-southeast1": "abc",
    "australia-southeast1": "ab",
    "europe-west4": "bc",
    "northamerica-northeast1": "abc",
    "us-central1": "ac",
    "us-east4": "abc",
    "us-west2": "bc",
}


def _zones(letters: _Letters) -> dict[str, tuple[str, ...]]:
    return {region: tuple(f"{region}-{z}" for z in zs) for region, zs in letters.items()}


def _union(*tables: _Letters) -> dict[str, tuple[str, ...]]:
    merged: dict[str, set[str]] = {}
    for table in tables:
        for region, zones in _zones(table).items():
            merged.setdefault(region, set()).update(zones)
    return {region: tuple(sorted(zones)) for region, zones in sorted(merged.items())}


# Accelerator type -> region -> zones that offer it (for the accelerator-optimized GPUs: the
# zones of every series that brings it).
ACCELERATOR_ZONES: dict[str, dict[str, tuple[str, ...]]] = {
    "nvidia-tesla-a100": _union(_A2_HIGHGPU, _A2_MEGAGPU),
    "nvidia-a100-80gb": _union(_A2_ULTRAGPU),
    "nvidia-h100-80gb": _union(_A3_HIGHGPU, _A3_EDGEGPU),
    "nvidia-h100-mega-80gb": _union(_A3_MEGAGPU),
    "nvidia-h200-141gb": _union(_A3_ULTRAGPU),
    "nvidia-b200": _union(_A4_HIGHGPU),
    "nvidia-l4": _union(_G2_STANDARD),
    "nvidia-tesla-t4": _union(_T4),
    "nvidia-tesla-v100": _union(_V100),
    "nvidia-tesla-p100": _union(_P100),
    "nvidia-tesla-p4": _union(_P4),
}

# Series offered in fewer zones than their GPU (a2-megagpu: fewer than a2-highgpu; A3 High
# and A3 Edge share the H100 but not their zones).
SERIES_ZONES: dict[str, dict[str, tuple[str, ...]]] = {
    "a2-highgpu": _zones(_A2_HIGHGPU),
    "a2-megagpu": _zones(_A2_MEGAGPU),
    "a3-highgpu": _zones(_A3_HIGHGPU),
    "a3-edgegpu": _zones(_A3_EDGEGPU),
}

# Machine types offered in fewer zones than their series, from the same source's rows per
# machine type: a3-highgpu-8g has no europe-west8 row, a3-highgpu-1g/-2g/-4g have
# europe-west8-c. Every other size of the series above, of a2-ultragpu and of g2-standard has
# the rows of its series (checked against the source, read 2026-11-25).
MACHINE_ZONES: dict[str, dict[str, tuple[str, ...]]] = {
    "a3-highgpu-8g": _zones({r: z for r, z in _A3_HIGHGPU.items() if r != "europe-west8"}),
}

# GPUs the source has no rows for: A4X (GB200) and G4 (RTX PRO 6000) machines. Their pools
# name their zones themselves.
UNLISTED = {"nvidia-gb200", "nvidia-rtx-pro-6000"}


def _table(accelerator: str, machine: str | None) -> dict[str, tuple[str, ...]]:
    """The narrowest table that knows `machine` (a machine type or its series): the machine
    type's, its series', else its GPU's."""
    machine = machine or ""
    series = "-".join(machine.split("-")[:2])
    return MACHINE_ZONES.get(machine) or SERIES_ZONES.get(series) or ACCELERATOR_ZONES.get(accelerator, {})


def regions(accelerator: str, machine: str | None = None) -> tuple[str, ...]:
    """The regions with at least one zone that offers `accelerator` (on `machine`, a machine
    type or series)."""
    return tuple(sorted(_table(accelerator, machine)))


def zones(accelerator: str, region: str, machine: str | None = None) -> tuple[str, ...] | None:
    """The zones of `region` where a pool of `machine` (a machine type or its series) with
    `accelerator` can run; () when the region has none; None when the table does not know
    the accelerator."""
    if accelerator not in ACCELERATOR_ZONES:
        return None
    return _table(accelerator, machine).get(region, ())
