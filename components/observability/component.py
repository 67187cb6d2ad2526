"""The Observability component: registers what the observability modules build.

A child of the Determined component (`observability.enabled`): it needs the master's
namespace, database endpoint and passwords, and the Gateway the master is reached through.

Order: the two namespaces, then kube-prometheus-stack (its CRDs: ServiceMonitor, PodMonitor,
PrometheusRule), then every custom resource and exporter; the master's token Job after the
master. The master does not wait for any of it.
"""

from collections.abc import Callable, Mapping
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from components import kube, passwords
from components.determined.args import DeterminedArgs
from components.determined.database import DatabaseEndpoint
from components.observability import (
    alerts,
    cert_manager_metrics,
    dashboards,
    dcgm,
    grafana,
    kueue_metrics,
    master_metrics,
    network_policies,
    postgres_exporter,
    prometheus_stack,
)


class Observability(pulumi.ComponentResource):
    """Metrics, dashboards and alerts of one Determined install."""

    grafana_url: pulumi.Output[str]
    """Where Grafana is: https://<tls.host>/grafana/ with tls mode ingress, else its Service
    inside the cluster (reach it with kubectl port-forward)."""
    grafana_admin_password: pulumi.Output[str]
    """Secret: the password of Grafana's `admin` user (generated)."""

    def __init__(
        self,
        name: str,
        args: DeterminedArgs,
        *,
        database: DatabaseEndpoint,
        database_password: pulumi.Input[str],
        admin_password: pulumi.Input[str],
        master: pulumi.Resource,
        determined_namespace: pulumi.Resource,
        gateway_ready: list[pulumi.Resource] | None = None,
        previous: Mapping[str, Any] | None = None,
        opts: pulumi.ResourceOptions | None = None,
    ):
        super().__init__("determined:components:Observability", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)

        def after(*resources: pulumi.Resource, **extra: Any) -> pulumi.ResourceOptions:
            return pulumi.ResourceOptions.merge(
                child, pulumi.ResourceOptions(depends_on=list(resources), **extra)
            )

        # Prometheus' and Alertmanager's volumes live in the monitoring namespace: kept like
        # the master's namespace (components/determined/determined.py) unless deletion is allowed.
        namespaces = [
            kube.register(obj, after(retain_on_delete=not args.data_deletion_allowed))
            for obj in prometheus_stack.namespaces(args)
        ]
        self.grafana_admin_password = passwords.configured_or_generated("grafana-admin", None, self)
        admin_secret = kube.register(
            prometheus_stack.grafana_admin_secret(args, self.grafana_admin_password), after(*namespaces)
        )
        stack = k8s.helm.v3.Release(
            "kube-prometheus-stack",
            opts=after(*namespaces, admin_secret),
            **prometheus_stack.release_args(args),
        )
        # Custom resources of the stack's CRDs come after it.
        for obj in [
            dcgm.service_monitor(args),
            alerts.prometheus_rule(args),
            cert_manager_metrics.service_monitor(args),
            kueue_metrics.service_monitor(args),
        ]:
            if obj is not None:
                kube.register(obj, after(stack))
        for obj in dashboards.config_maps(args):
            kube.register(obj, after(*namespaces))
        dcgm_release = dcgm.release_args(args)
        if dcgm_release is not None:
            quota = dcgm.critical_pods_quota(args)
            ready = [*namespaces, *([kube.register(quota, after(*namespaces))] if quota else [])]
            k8s.helm.v3.Release("dcgm-exporter", opts=after(*ready), **dcgm_release)

        db_secrets = [
            kube.register(obj, after(*namespaces))
            for obj in (
                postgres_exporter.password_secret(args, database_password),
                postgres_exporter.ca_secret(args, database),
            )
            if obj is not None
        ]
        # After the stack: the chart's own ServiceMonitor needs its CRD.
        k8s.helm.v3.Release(
            "postgres-exporter",
            opts=after(stack, *db_secrets),
            **postgres_exporter.release_args(args, database),
        )

        self._refresh_master_token(
            args,
            admin_password,
            master,
            stack,
            previous,
            lambda *r, **o: after(*namespaces, determined_namespace, *r, **o),
        )

        # After the Gateway API's CRDs and the Gateway's class (`gateway_ready`: what the
        # master's routes wait for).
        for obj in grafana.route_objects(args):
            kube.register(obj, after(*namespaces, determined_namespace, *(gateway_ready or [])))
        for obj in network_policies.objects(args):
            kube.register(obj, after(*namespaces))

        self.grafana_url = pulumi.Output.from_input(grafana.url(args))
        self.register_outputs({"grafanaUrl": self.grafana_url})

    def _refresh_master_token(
        self,
        args: DeterminedArgs,
        admin_password: pulumi.Input[str],
        master: pulumi.Resource,
        stack: pulumi.Resource,
        previous: Mapping[str, Any] | None,
        after: Callable[..., pulumi.ResourceOptions],
    ) -> None:
        """The master's scrape and the Jobs that keep its token fresh: a Determined user of
        its own (created with the admin's password), a token Secret only the Jobs write (a
        later `up` leaves its data alone), the run at `up` after the master. `after(...)`:
        options that wait for both namespaces it writes to and `...`."""
        metrics_password = passwords.configured_or_generated("metrics-user", None, self)
        before: list[pulumi.Resource] = []
        later: list[dict[str, Any]] = []
        monitors: list[dict[str, Any]] = []
        for obj in master_metrics.objects(args, metrics_password, admin_password, previous):
            kind = obj["kind"]
            if kind == "ServiceMonitor":
                monitors.append(obj)
            elif kind in ("Job", "CronJob"):
                later.append(obj)
            elif obj["metadata"]["name"] == master_metrics.TOKEN_SECRET and kind == "Secret":
                before.append(kube.register(obj, after(ignore_changes=["data", "stringData"])))
            else:
                before.append(kube.register(obj, after()))
        for obj in later:
            if obj["kind"] == "Job":
                # A finished Job's spec cannot change: a new script or setting is a new Job.
                kube.register(obj, after(master, *before, delete_before_replace=True))
            else:
                kube.register(obj, after(*before))
        for obj in monitors:  # a CR of the stack's CRDs
            kube.register(obj, after(stack))
