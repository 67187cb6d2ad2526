"""Checkpoint storage: the `checkpoint_storage` section of master.yaml.

Buckets themselves (GCS/S3, with workload identity) are created by the cluster components
(`components/cluster/`); on an existing cluster the bucket is given by name. A directory's
share is mounted into the pods by `checkpoint_volumes`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pydantic import SecretStr

from components.config import AzureStorage, DirectoryStorage, GcsStorage, S3Storage, SharedFsStorage
from components.config.checkpoint_storage import CheckpointStorageConfig


def master_checkpoint_storage(
    cs: CheckpointStorageConfig, reveal: Callable[[SecretStr], str], bucket: str | None = None
) -> dict[str, Any]:
    """The section as the master reads it. `bucket` overrides the configured bucket name
    (for a bucket the stack creates). `reveal` writes a secret value (or its placeholder):
    the result only ever goes into the master's Secret."""
    match cs:
        case SharedFsStorage():
            section: dict[str, Any] = {"type": "shared_fs", "host_path": cs.host_path}
        case GcsStorage():
            section = {"type": "gcs", "bucket": bucket or cs.bucket, "prefix": cs.prefix}
        case S3Storage():
            section = {"type": "s3", "bucket": bucket or cs.bucket, "prefix": cs.prefix}
            if cs.endpoint_url:
                section["endpoint_url"] = cs.endpoint_url
            if cs.access_key and cs.secret_key:
                section["access_key"] = reveal(cs.access_key)
                section["secret_key"] = reveal(cs.secret_key)
        case AzureStorage():
            section = {"type": "azure", "container": cs.container}
            if cs.connection_string is not None:
                section["connection_string"] = reveal(cs.connection_string)
            else:
                section["account_url"] = cs.account_url
                if cs.credential is not None:
                    section["credential"] = reveal(cs.credential)
        case DirectoryStorage():
            # Where tasks see the share; the project mounts it there (checkpoint_volumes).
            section = {"type": "directory", "container_path": cs.container_path}
    section |= {
        "save_experiment_best": cs.save_experiment_best,
        "save_trial_best": cs.save_trial_best,
        "save_trial_latest": cs.save_trial_latest,
    }
    return section
