"""Cloud SQL tiers: the ENTERPRISE PostgreSQL instance the stack creates takes shared-core or
custom tiers only (components.config.database.cloud_sql_tier_problem, with its sources)."""

from __future__ import annotations

import pytest
from conftest import GKE

from components.config import ConfigError, load_config
from components.config.database import cloud_sql_tier_problem


def managed(tier):
    return GKE | {"database": {"mode": "managed", "tier": tier}}


@pytest.mark.parametrize(
    "tier",
    [
        "db-f1-micro",
        "db-g1-small",
        "db-custom-1-3840",  # 1 vCPU, 3.75 GB: the smallest
        "db-custom-1-6656",  # 6.5 GB per vCPU
        "db-custom-2-7680",
        "db-custom-2-8192",
        "db-custom-2-13312",  # the provider's own example
        "db-custom-16-14848",  # 0.9 GB per vCPU, rounded up to 256 MB
        "db-custom-96-638976",  # 96 vCPUs, 6.5 GB each
    ],
)
def test_tiers_cloud_sql_for_postgresql_takes(tier):
    assert cloud_sql_tier_problem(tier) is None
    load_config(managed(tier))


@pytest.mark.parametrize(
    ("tier", "expected"),
    [
        (
            "db-n1-standard-2",
            "'db-n1-standard-2' is not a Cloud SQL for PostgreSQL tier: it takes db-f1-micro",
        ),
        ("db-perf-optimized-N-2", "'db-perf-optimized-N-2' is an Enterprise Plus tier; the stack creates"),
        ("db-custom-3-7680", "3 vCPUs: Cloud SQL takes 1 or an even number up to 96"),
        ("db-custom-98-638976", "98 vCPUs: Cloud SQL takes 1 or an even number up to 96"),
        ("db-custom-1-3584", "3584 MB for 1 vCPU(s): Cloud SQL takes a multiple of 256 MB from 3840 to 6656"),
        ("db-custom-1-6912", "6912 MB for 1 vCPU(s)"),
        (
            "db-custom-2-8000",
            "8000 MB for 2 vCPU(s): Cloud SQL takes a multiple of 256 MB from 3840 to 13312",
        ),
        ("db-custom-16-14592", "14592 MB for 16 vCPU(s): Cloud SQL takes a multiple of 256 MB from 14848"),
    ],
)
def test_tiers_cloud_sql_refuses_are_refused_at_database_tier(tier, expected):
    with pytest.raises(ConfigError) as info:
        load_config(managed(tier))
    lines = [str(p) for p in info.value.problems]
    assert any(line.startswith(f"determined:database.tier: {expected}") for line in lines), lines


def test_every_shipped_managed_tier_is_one_cloud_sql_takes():
    for tier in ("db-custom-2-8192", "db-custom-1-3840"):  # gke-prod, gke-shared-vpc
        assert cloud_sql_tier_problem(tier) is None
