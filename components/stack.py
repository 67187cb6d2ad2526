"""The program `pulumi up` runs (and the offline plan runs under mocks).

Reads and validates the whole configuration before registering anything, then creates
the cluster connection and Determined on it, and exports what a user needs next.
"""

from __future__ import annotations

import pulumi

from components import cluster, config, defaults, determined


def main() -> None:
    cfg = config.load_config(config.read_pulumi_config())  # ConfigError: nothing registered

    provider = cluster.provider(cfg)
    det = determined.Determined(
        "determined", cfg, opts=pulumi.ResourceOptions(providers={"kubernetes": provider})
    )

    pulumi.export("masterUrl", det.master.url)
    pulumi.export("namespace", cfg.namespace)
    pulumi.export(
        "portForward",
        f"kubectl -n {cfg.namespace} port-forward svc/{defaults.MASTER_SERVICE_NAME} 8080:8080",
    )
    pulumi.export("resourcePools", {rp.name: rp.namespace_name for rp in cfg.resource_pools})
    if cfg.master.initial_user_password is None:
        pulumi.export("initialUserPassword", det.master.initial_user_password)
