"""Private registries: the Secrets pods pull images with.

`imagePullSecrets` names Secrets the user keeps in every namespace pods run in;
`registryCredentials` is turned into one more (type kubernetes.io/dockerconfigjson) that the
project creates in each of those namespaces. Every pod the project runs, and every task pod
(through the pools' pod specs), names them all.
"""

from __future__ import annotations

import base64
import json
from typing import Any

from components import constants, kube
from components.determined.args import DeterminedArgs

COMPONENT = "registry"


def docker_config(server: str, username: str, password: str) -> str:
    """The .dockerconfigjson document for one registry login."""
    auth = base64.b64encode(f"{username}:{password}".encode()).decode()
    return json.dumps({"auths": {server: {"username": username, "password": password, "auth": auth}}})


def pull_secret(namespace: str, config_json: Any) -> dict[str, Any]:
    """The registry Secret in one namespace; `config_json` is the (secret) document."""
    meta = kube.metadata(constants.REGISTRY_SECRET, COMPONENT, namespace)
    return kube.manifest(
        "v1",
        "Secret",
        meta,
        type="kubernetes.io/dockerconfigjson",
        stringData={".dockerconfigjson": config_json},
    )


def pod_field(cfg: DeterminedArgs) -> dict[str, Any]:
    """`imagePullSecrets` of a pod spec, or nothing."""
    return {"imagePullSecrets": [{"name": name} for name in cfg.pull_secrets]} if cfg.pull_secrets else {}
