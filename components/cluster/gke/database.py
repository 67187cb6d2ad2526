"""`database.mode: managed` on GKE: Cloud SQL for PostgreSQL on a private IP only.

TLS is required of every client; the master connects with `ssl_mode: require`. Backups run
daily; prod adds point-in-time recovery, a standby in a second zone and deletion
protection (the instance's and the API's). The instance, its database and user are kept on
`pulumi destroy` unless `allowDataDeletion` (dev only).
"""

from __future__ import annotations

from typing import Any

import pulumi

from components import constants
from components.cluster import namer
from components.config import GkeStack, ManagedDatabase

DATABASE_VERSION = "POSTGRES_17"  # supported by Cloud SQL until 2029
BACKUP_START = "03:00"  # UTC
RETAINED_BACKUPS = {"dev": 7, "prod": 30}
LOG_RETENTION_DAYS = 7  # point-in-time recovery window (prod)

INSTANCE = "gcp:sql/databaseInstance:DatabaseInstance"


def instance_args(cfg: GkeStack, network: pulumi.Input[str]) -> dict[str, Any]:
    db = cfg.database
    assert isinstance(db, ManagedDatabase)
    prod = cfg.environment == "prod"
    high_availability = prod if db.high_availability is None else db.high_availability
    return {
        "name": namer(cfg).name(INSTANCE, "name", "db"),
        "region": cfg.cluster.region,
        "database_version": DATABASE_VERSION,
        # The provider defaults it to true: a dev stack could never be destroyed.
        "deletion_protection": prod,
        "settings": {
            "tier": db.tier,
            # PostgreSQL 16+ defaults to ENTERPRISE_PLUS, which takes db-perf-optimized tiers only.
            "edition": "ENTERPRISE",
            "availability_type": "REGIONAL" if high_availability else "ZONAL",
            "disk_type": "PD_SSD",
            "disk_size": db.storage_size_gb,
            "disk_autoresize": True,
            "ip_configuration": {
                "ipv4_enabled": False,
                "private_network": network,
                "ssl_mode": "ENCRYPTED_ONLY",
            },
            "backup_configuration": {
                "enabled": True,
                "start_time": BACKUP_START,
                "point_in_time_recovery_enabled": prod,
                **({"transaction_log_retention_days": LOG_RETENTION_DAYS} if prod else {}),
                "backup_retention_settings": {
                    "retained_backups": RETAINED_BACKUPS[cfg.environment],
                    "retention_unit": "COUNT",
                },
            },
            "deletion_protection_enabled": prod,
            "maintenance_window": {"day": 7, "hour": 4, "update_track": "stable"},
            "user_labels": dict(cfg.cluster.tags),
        },
    }


def database_args(instance: pulumi.Input[str], keep: bool) -> dict[str, Any]:
    return {
        "name": constants.DB_DATABASE,
        "instance": instance,
        # ABANDON: removing it from the stack never drops the database.
        "deletion_policy": "ABANDON" if keep else "DELETE",
    }


def user_args(instance: pulumi.Input[str], password: pulumi.Input[str], keep: bool) -> dict[str, Any]:
    return {
        "name": constants.DB_USER,
        "instance": instance,
        "password": password,
        "deletion_policy": "ABANDON" if keep else "DELETE",
    }
