"""Extra CA certificates (master.caBundle / caBundleSecret) for the master and tasks.

The master (Go) reads every file of each directory in SSL_CERT_DIR on top of the system
bundle, so mounting the bundle and naming its directory adds to the public CAs without
replacing them. Python tools in tasks (requests, boto3, urllib) have no such additive
setting: they read one bundle file. So an init container in each task pod writes the
system bundle of the master's image (a Debian-family image with ca-certificates, already
pulled wherever the master runs) followed by the extra certificates into a shared volume,
and the task container's SSL_CERT_FILE, REQUESTS_CA_BUNDLE, AWS_CA_BUNDLE and
CURL_CA_BUNDLE name that file.

PEM text becomes a ConfigMap in every namespace tasks run in (CA certificates are
public); a named Secret must exist in each of those namespaces.
"""

from __future__ import annotations

from typing import Any

from components import constants, kube
from components.determined.args import DeterminedArgs

COMPONENT = "ca-bundle"
FILE = "ca.crt"
MOUNT_DIR = "/etc/determined/ca"
TRUST_DIR = "/etc/determined/trust"
TRUST_FILE = f"{TRUST_DIR}/ca-certificates.crt"
SYSTEM_BUNDLE = "/etc/ssl/certs/ca-certificates.crt"
TASK_ENV = ("SSL_CERT_FILE", "REQUESTS_CA_BUNDLE", "AWS_CA_BUNDLE", "CURL_CA_BUNDLE")
RUN_AS = 65534  # nobody: the file it writes is world-readable for any task user
INIT_RESOURCES = {"requests": {"cpu": "10m", "memory": "16Mi"}, "limits": {"memory": "64Mi"}}


def config_map(cfg: DeterminedArgs, namespace: str) -> dict[str, Any] | None:
    """The ConfigMap holding master.caBundle in one namespace; None without PEM text."""
    if not cfg.master.ca_bundle:
        return None
    meta = kube.metadata(constants.CA_BUNDLE_CONFIG_MAP, COMPONENT, namespace)
    return kube.manifest("v1", "ConfigMap", meta, data={FILE: cfg.master.ca_bundle})


def volume(cfg: DeterminedArgs) -> dict[str, Any]:
    if cfg.master.ca_bundle_secret:
        return {"name": COMPONENT, "secret": {"secretName": cfg.master.ca_bundle_secret}}
    return {"name": COMPONENT, "configMap": {"name": constants.CA_BUNDLE_CONFIG_MAP}}


def master_volume(cfg: DeterminedArgs) -> tuple[dict[str, Any], dict[str, Any]] | None:
    """(volume, volumeMount) of the extra CAs for the master, or None without them."""
    if not cfg.master.has_ca_bundle:
        return None
    return volume(cfg), {"name": COMPONENT, "mountPath": MOUNT_DIR, "readOnly": True}


def master_env(cfg: DeterminedArgs) -> list[dict[str, Any]]:
    """The master's env that adds the mounted CAs to the system ones."""
    if not cfg.master.has_ca_bundle:
        return []
    return [{"name": "SSL_CERT_DIR", "value": f"/etc/ssl/certs:{MOUNT_DIR}"}]


def task_layer(cfg: DeterminedArgs, image: str) -> dict[str, Any]:
    """A pod layer giving the task container the system CAs plus the extra ones; `image`
    is the master's (see the module docstring). Nothing without extra CAs."""
    if not cfg.master.has_ca_bundle:
        return {}
    init = {
        "name": "determined-ca-bundle",
        "image": image,
        "command": ["sh", "-c", f"cat {SYSTEM_BUNDLE} {MOUNT_DIR}/* > {TRUST_FILE}"],
        "resources": INIT_RESOURCES,
        "volumeMounts": [
            {"name": COMPONENT, "mountPath": MOUNT_DIR, "readOnly": True},
            {"name": "ca-trust", "mountPath": TRUST_DIR},
        ],
        "securityContext": kube.restricted_container(RUN_AS),
    }
    container = {
        "name": constants.TASK_CONTAINER,
        "env": [{"name": name, "value": TRUST_FILE} for name in TASK_ENV],
        "volumeMounts": [{"name": "ca-trust", "mountPath": TRUST_DIR, "readOnly": True}],
    }
    return {
        "spec": {
            "initContainers": [init],
            "containers": [container],
            "volumes": [volume(cfg), {"name": "ca-trust", "emptyDir": {"sizeLimit": "16Mi"}}],
        }
    }
