"""`database.mode: managed` on GKE: Cloud SQL for PostgreSQL on a private IP only.

TLS is required of every client; the master connects with `ssl_mode: require`. Backups run
daily; prod adds point-in-time recovery, a standby in a second zone and deletion
protection (the instance's and the API's). The instance, its database and user are kept on
`pulumi destroy` unless `allowDataDeletion` (dev only).
"""

from __future__ import annotations

from typing import Any

import pulumi
import pulumi_gcp as gcp

from components import constants, passwords
from components.cluster import DatabaseServer, name_kept, namer
from components.cluster.gke.args import GkeClusterArgs
from components.cluster.gke.network import Network
from components.config import ManagedDatabase

DATABASE_VERSION = "POSTGRES_17"  # supported by Cloud SQL until 2029
BACKUP_START = "03:00"  # UTC
RETAINED_BACKUPS = {"dev": 7, "prod": 30}
LOG_RETENTION_DAYS = 7  # point-in-time recovery window (prod)

INSTANCE = "gcp:sql/databaseInstance:DatabaseInstance"


def instance_args(args: GkeClusterArgs, network: pulumi.Input[str]) -> dict[str, Any]:
    db = args.database
    assert isinstance(db, ManagedDatabase)
    prod = args.environment == "prod"
    high_availability = prod if db.high_availability is None else db.high_availability
    return {
        "name": namer(args.cluster).name(INSTANCE, "name", "db"),
        "region": args.cluster.region,
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
                    "retained_backups": RETAINED_BACKUPS[args.environment],
                    "retention_unit": "COUNT",
                },
            },
            "deletion_protection_enabled": prod,
            "maintenance_window": {"day": 7, "hour": 4, "update_track": "stable"},
            "user_labels": dict(args.cluster.tags),
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


def cloud_sql(
    args: GkeClusterArgs,
    net: Network,
    parent: pulumi.Resource,
    data: pulumi.ResourceOptions,
    keep: bool,
) -> DatabaseServer:
    """The instance, its database and user (`data`: their options as data; `keep`: abandoned,
    not dropped, when removed), and how the master reaches them."""
    instance = gcp.sql.DatabaseInstance(
        "database",
        opts=name_kept(
            pulumi.ResourceOptions.merge(
                data,
                pulumi.ResourceOptions(
                    depends_on=net.sql_ready,
                    protect=args.environment == "prod",
                    # The disk grows by itself; the configured size is where it starts.
                    ignore_changes=["settings.diskSize"],
                ),
            ),
            INSTANCE,
            "name",
        ),
        **instance_args(args, net.network),
    )
    secret = passwords.configured_or_generated("database-password", None, parent)
    db = gcp.sql.Database("determined", opts=data, **database_args(instance.name, keep))
    user = gcp.sql.User("determined", opts=data, **user_args(instance.name, secret, keep))
    # The address, carrying the database and user as dependencies: the master's config
    # (built from it) is only applied once it can log in.
    host = pulumi.Output.all(instance.private_ip_address, db.name, user.name).apply(lambda v: v[0])
    return DatabaseServer(
        host=host,
        port=constants.DB_PORT,
        name=constants.DB_DATABASE,
        user=constants.DB_USER,
        password=secret,
        ssl_mode="require",
    )
