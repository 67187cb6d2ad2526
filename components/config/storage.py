"""Where the data lives: allowDataDeletion (refused in prod), the external database's TLS,
the checkpoint bucket each target needs and its keys."""

from __future__ import annotations

from components.config.checkpoint_storage import GcsStorage, S3Storage
from components.config.database import ExternalDatabase
from components.config.errors import Add
from components.config.stack import EksStack, GkeStack, StackConfig


def storage_problems(cfg: StackConfig, add: Add) -> None:
    """allowDataDeletion refused in prod; sslRootCert for verifying sslModes; a bucket where
    the stack creates none; S3 keys in pairs."""
    if cfg.allow_data_deletion and cfg.environment == "prod":
        add("allowDataDeletion", "refused in prod: the database and checkpoint bucket are always kept")
    db = cfg.database
    if (
        isinstance(db, ExternalDatabase)
        and db.ssl_mode in ("verify-ca", "verify-full")
        and not db.ssl_root_cert
    ):
        add("database.sslRootCert", f"required for sslMode {db.ssl_mode} (the CA certificate in PEM form)")
    cs = cfg.checkpoint_storage
    creates = (GcsStorage, GkeStack), (S3Storage, EksStack)
    if (
        isinstance(cs, (S3Storage, GcsStorage))
        and not cs.bucket
        and not any(isinstance(cs, storage) and isinstance(cfg, stack) for storage, stack in creates)
    ):
        add(
            "checkpointStorage.bucket",
            f"required for {cs.type} storage on cloud {cfg.cloud} (the stack creates gcs buckets on gke "
            "and s3 buckets on eks)",
        )
    elif isinstance(cs, S3Storage) and not cs.bucket and (cs.endpoint_url or cs.access_key):
        add(
            "checkpointStorage.bucket",
            "required with endpointUrl or static keys (a bucket is created only on AWS S3, reached through "
            "Pod Identity)",
        )
    if isinstance(cs, S3Storage) and (cs.access_key is None) != (cs.secret_key is None):
        add(
            "checkpointStorage.secretKey" if cs.secret_key is None else "checkpointStorage.accessKey",
            "accessKey and secretKey go together",
        )
