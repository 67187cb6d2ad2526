"""`determined:checkpointStorage`: where trials write checkpoints, by `type`."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import AfterValidator, BeforeValidator, Field

from deploy.config.base import ConfigModel, default_tag
from deploy.config.secrets import Secret
from deploy.config.syntax import AbsolutePath, HttpUrl, NonEmpty, pattern_check, whole_number

_S3_BUCKET = r"[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]"
_GCS_BUCKET = r"[a-z0-9][a-z0-9._-]{1,61}[a-z0-9]"


S3Bucket = Annotated[
    str,
    AfterValidator(
        pattern_check(_S3_BUCKET, "an S3 bucket name (3 to 63 lower-case letters, digits, '.' and '-')")
    ),
]
GcsBucket = Annotated[
    str,
    AfterValidator(
        pattern_check(_GCS_BUCKET, "a GCS bucket name (3 to 63 lower-case letters, digits, '.', '_' and '-')")
    ),
]
Count = whole_number(0)


class Retention(ConfigModel):
    """How many checkpoints the master keeps (master.yaml save_* keys)."""

    save_experiment_best: Count = 0
    save_trial_best: Count = 1
    save_trial_latest: Count = 1


class SharedFsStorage(Retention):
    """A host directory on each node: for single-node testing only."""

    type: Literal["sharedFs"]
    host_path: AbsolutePath = "/tmp/determined-checkpoints"


class S3Storage(Retention):
    type: Literal["s3"]
    bucket: S3Bucket | None = None  # created and named by the stack when absent (eks)
    prefix: str = ""
    endpoint_url: HttpUrl | None = None  # S3-compatible stores (MinIO)
    access_key: Secret | None = None
    secret_key: Secret | None = None


class GcsStorage(Retention):
    type: Literal["gcs"]
    bucket: GcsBucket | None = None  # created and named by the stack when absent (gke)
    prefix: str = ""


class AzureStorage(Retention):
    type: Literal["azure"]
    container: NonEmpty
    connection_string: Secret


CheckpointStorageConfig = Annotated[
    SharedFsStorage | S3Storage | GcsStorage | AzureStorage,
    BeforeValidator(default_tag("type", "sharedFs")),
    Field(discriminator="type"),
]
