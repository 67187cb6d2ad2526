"""A kubeconfig as data: one cluster, one user that gets its token from an exec plugin
(the cloud's CLI), so the file itself holds no credentials."""

from __future__ import annotations

from typing import Any

import yaml


def kubeconfig(context: str, server: str, ca_data: str, exec_entry: dict[str, Any]) -> str:
    """`exec_entry`: the user's `exec` section without its apiVersion."""
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": context, "cluster": {"server": server, "certificate-authority-data": ca_data}}],
        "contexts": [{"name": context, "context": {"cluster": context, "user": context}}],
        "current-context": context,
        "users": [
            {
                "name": context,
                "user": {
                    "exec": {
                        "apiVersion": "client.authentication.k8s.io/v1beta1",
                        **exec_entry,
                        "interactiveMode": "IfAvailable",
                    }
                },
            }
        ],
    }
    return yaml.safe_dump(config, sort_keys=False)
