"""The stack configuration (docs/contract.md §1): the single source of truth for what a user sets.

One module per section (`cluster`, `node_pools`, `master`, `database`, `checkpoint_storage`,
`tls`, `resource_pools`, `addons`), each a pydantic model or a discriminated union of them;
`stack` puts them together per target and checks how sections relate; `errors` turns
every problem into one `determined:<key path>: <problem>` line; `pulumi_config` reads the
values the way Pulumi passes them.
"""

from components.config.base import PROJECT
from components.config.checkpoint_storage import (
    AzureStorage,
    DirectoryStorage,
    GcsStorage,
    NfsShare,
    S3Storage,
    SharedFsStorage,
)
from components.config.database import ExternalDatabase, InClusterDatabase, ManagedDatabase
from components.config.errors import ConfigError, Problem
from components.config.node_pools import GPU_TAINT, CloudNodePool, ExistingNodePool, NodePool, Taint
from components.config.pulumi_config import decode_raw, load_config, read_pulumi_config
from components.config.resource_pools import ResourcePoolConfig
from components.config.secrets import secret_fields, secret_values
from components.config.stack import EksStack, ExistingStack, GkeStack, StackConfig

__all__ = [
    "GPU_TAINT",
    "PROJECT",
    "AzureStorage",
    "CloudNodePool",
    "ConfigError",
    "DirectoryStorage",
    "EksStack",
    "ExistingNodePool",
    "ExistingStack",
    "ExternalDatabase",
    "GcsStorage",
    "GkeStack",
    "InClusterDatabase",
    "ManagedDatabase",
    "NfsShare",
    "NodePool",
    "Problem",
    "ResourcePoolConfig",
    "S3Storage",
    "SharedFsStorage",
    "StackConfig",
    "Taint",
    "decode_raw",
    "load_config",
    "read_pulumi_config",
    "secret_fields",
    "secret_values",
]
