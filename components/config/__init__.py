"""The stack configuration (docs/contract.md §1): the single source of truth for what a user sets.

One module per section (`cluster`, `node_pools`, `master`, `database`, `checkpoint_storage`,
`tls`, `resource_pools`, `addons`), each a pydantic model or a discriminated union of them;
`stack` puts them together per target; `rules` lists the checks of how sections relate,
each in a module named after what it checks (`namespaces`, `pools`, `quotas`, `pod_specs`,
`slots`, `kueue`, `master_rules`, `storage`); `errors` turns every problem into one
`determined:<key path>: <problem>` line; `pulumi_config` reads the values the way Pulumi
passes them. Leaf data the app shares with the config lives here too (`master_yaml_schema`,
`config_overrides`, `namespaces`); nothing here imports the app (components.cluster,
components.determined, components.addons).
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
from components.config.task_pods import TaskPods

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
    "TaskPods",
    "decode_raw",
    "load_config",
    "read_pulumi_config",
    "secret_fields",
    "secret_values",
]
