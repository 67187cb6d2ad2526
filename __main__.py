"""The composition root: the program `pulumi up` runs (and the offline plan runs under mocks).

Reads and validates the whole stack configuration before registering anything, maps it to
each component's Args (stack_args), connects to (or creates) the cluster, deploys
Determined on it, and exports what a user needs next. Nothing below this module sees the
stack configuration.

Pulumi runs this file as a script, `__name__ == "__main__"` (its Python language host calls
`runpy.run_path(program, run_name="__main__")`: sdk/python/cmd/pulumi-language-python-exec in
pulumi/pulumi); plan/runner.py imports it under another name and calls `main()` itself.
"""

from __future__ import annotations

import pulumi

import stack_args
from components import config, constants, versions
from components.config.tls import ExposedTls
from components.determined import image_pre_pull, tls
from components.determined.determined import Determined
from components.observability import grafana


def main() -> Determined:
    """Register the stack's resources and exports; returns the Determined component."""
    cfg = stack_args.load_stack(config.read_pulumi_config())  # ConfigError: nothing registered
    args = stack_args.determined_args(cfg)

    cluster = stack_args.connect_cluster(cfg)
    det = Determined("determined", args, cluster)

    for name, value in cluster.exports.items():
        pulumi.export(name, value)
    pulumi.export("masterUrl", det.url)
    if isinstance(args.tls, ExposedTls):
        # Where to point the host's DNS record: the Gateway's load balancer, once it has one.
        address = "{.status.addresses[0].value}"
        pulumi.export(
            "dnsTarget", f"kubectl -n {args.namespace} get gateway {tls.GATEWAY} -o jsonpath='{address}'"
        )
    pulumi.export("namespace", det.namespace)
    pulumi.export(
        "portForward",
        f"kubectl -n {args.namespace} port-forward svc/{constants.MASTER_SERVICE_NAME} "
        f"{constants.MASTER_SERVICE_PORT}:{constants.MASTER_SERVICE_PORT}",
    )
    pulumi.export("resourcePools", det.resource_pool_namespaces)
    pulumi.export("taskImages", image_pre_pull.task_images(args))  # what tasks pull, to mirror
    if args.observed:
        pulumi.export("grafanaUrl", det.grafana_url)
        pulumi.export("grafanaPortForward", grafana.port_forward(args))
        pulumi.export("grafanaAdminPassword", det.grafana_admin_password)
    # What the next update reads back (the master version that ran, its upgrade dump).
    for name, value in det.state_outputs.items():
        pulumi.export(name, value)
    # Masters older than 0.29 cannot set it: nothing to export there.
    if (
        args.master.initial_user_password is None
        and args.master.version_tuple >= versions.INITIAL_PASSWORD_SINCE
    ):
        pulumi.export("initialUserPassword", det.initial_user_password)
    return det


if __name__ == "__main__":
    main()
