"""Observability: what the GPUs, the cluster and Determined are doing (`observability.enabled`).

kube-prometheus-stack (Prometheus, Alertmanager, Grafana, kube-state-metrics, node
exporter), GPU metrics from DCGM, the database's from the postgres exporter, the master's
own (scraped with a Determined token a CronJob keeps fresh), the project's dashboards and
alerts. Pure functions build the objects (one module per part); the component wires them.
"""
