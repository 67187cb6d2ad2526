"""The program `pulumi up` runs (and the offline plan runs under mocks).

Reads and validates the whole configuration before registering anything, then connects to
(or creates) the cluster, deploys Determined on it, and exports what a user needs next.
"""

from __future__ import annotations

import pulumi

from components import cluster as clusters
from components import config, constants, versions
from components.config.tls import ExposedTls
from components.determined import exposure
from components.determined.determined import Determined


def main() -> Determined:
    cfg = config.load_config(config.read_pulumi_config())  # ConfigError: nothing registered

    cluster = clusters.connect(cfg)
    det = Determined("determined", cfg, cluster)

    for name, value in cluster.exports.items():
        pulumi.export(name, value)
    if isinstance(cfg.tls, ExposedTls):
        pulumi.export("masterUrl", f"https://{cfg.tls.host}")
        # Where to point the host's DNS record: the Gateway's load balancer, once it has one.
        address = "{.status.addresses[0].value}"
        pulumi.export(
            "dnsTarget", f"kubectl -n {cfg.namespace} get gateway {exposure.GATEWAY} -o jsonpath='{address}'"
        )
    else:
        pulumi.export("masterUrl", det.master.url)
    pulumi.export("namespace", cfg.namespace)
    pulumi.export(
        "portForward",
        f"kubectl -n {cfg.namespace} port-forward svc/{constants.MASTER_SERVICE_NAME} "
        f"{constants.MASTER_SERVICE_PORT}:{constants.MASTER_SERVICE_PORT}",
    )
    pulumi.export("resourcePools", {rp.name: rp.namespace_name for rp in cfg.resource_pools})
    # What the next update reads back (the master version that ran, its upgrade dump).
    for name, value in det.outputs.items():
        pulumi.export(name, value)
    # Masters older than 0.29 cannot set it: nothing to export there.
    if (
        cfg.master.initial_user_password is None
        and cfg.master.version_tuple >= versions.INITIAL_PASSWORD_SINCE
    ):
        pulumi.export("initialUserPassword", det.master.initial_user_password)
    return det
