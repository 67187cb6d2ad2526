"""The postgres exporter: values the chart reads, the master's connection per database mode,
the password only by Secret reference, its scrape's label and job, its NetworkPolicy peer."""

from __future__ import annotations

import pytest
from chart_checks import strings, value_problems
from component_args import make_args
from conftest import GKE

from components import constants
from components.determined import database
from components.determined.database import DatabaseEndpoint
from components.kube import pod_security
from components.observability import layout, postgres_exporter

PASSWORD = "n0t-in-values"
EXTERNAL = {
    "mode": "external",
    "host": "db.internal",
    "port": 6432,
    "name": "det",
    "user": "det_user",
    "password": PASSWORD,
    "sslMode": "verify-full",
    "sslRootCert": "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n",
}


@pytest.fixture(scope="module")
def args():
    return make_args(**GKE)


def test_in_cluster_database_as_the_masters_user(args):
    values = postgres_exporter.values(args, database.endpoint(args))
    source = values["config"]["datasource"]
    assert (source["host"], source["port"], source["database"], source["user"], source["sslmode"]) == (
        # The exporter runs in the monitoring namespace: the Service by its namespaced name.
        f"{constants.DB_SERVICE_NAME}.{args.namespace}.svc",
        str(constants.DB_PORT),
        constants.DB_DATABASE,
        constants.DB_USER,
        "disable",
    )
    assert value_problems(postgres_exporter.CHART, postgres_exporter.VERSION, values) == []
    assert postgres_exporter.ca_secret(args, database.endpoint(args)) is None


def test_external_database_with_its_ca():
    args = make_args(**GKE, database=EXTERNAL)
    endpoint = database.endpoint(args)
    values = postgres_exporter.values(args, endpoint)
    source = values["config"]["datasource"]
    assert (source["host"], source["port"], source["user"], source["sslmode"]) == (
        "db.internal",
        "6432",
        "det_user",
        "verify-full",
    )
    assert source["extraParams"] == "sslrootcert=/etc/postgres-exporter-ca/ca.crt"
    ca = postgres_exporter.ca_secret(args, endpoint)
    assert values["extraVolumes"] == [{"name": "ca", "secret": {"secretName": ca["metadata"]["name"]}}]
    assert value_problems(postgres_exporter.CHART, postgres_exporter.VERSION, values) == []


def test_managed_server_over_tls_with_an_output_host(args):
    endpoint = DatabaseEndpoint(
        host="10.0.0.5", port=5432, name="determined", user="determined", ssl_mode="require"
    )
    source = postgres_exporter.values(args, endpoint)["config"]["datasource"]
    assert source["sslmode"] == "require"


def test_the_password_is_only_in_the_secret():
    args = make_args(**GKE, database=EXTERNAL)
    release = postgres_exporter.release_args(args, database.endpoint(args))
    assert PASSWORD not in strings(release)
    source = release["values"]["config"]["datasource"]
    assert "password" not in source
    secret = postgres_exporter.password_secret(args, PASSWORD)
    assert source["passwordSecret"] == {
        "name": secret["metadata"]["name"],
        "key": next(iter(secret["stringData"])),
    }
    assert secret["metadata"]["namespace"] == release["namespace"] == layout.namespace(args.namespace)


def test_its_scrape_carries_the_release_label_and_job(args):
    monitor = postgres_exporter.values(args, database.endpoint(args))["serviceMonitor"]
    assert monitor["enabled"] is True
    assert monitor["labels"] == layout.SELECTOR_LABELS
    assert monitor["relabelings"] == [
        {"targetLabel": "job", "replacement": layout.POSTGRES_JOB, "action": "replace"}
    ]


def test_it_runs_restricted_on_the_masters_pool(args):
    values = postgres_exporter.values(args, database.endpoint(args))
    assert values["nodeSelector"] == {"determined.ai/node-pool": "system"}
    assert values["resources"]["limits"]["memory"]
    # The chart's defaults (podSecurityContext, securityContext: values.yaml), which are not
    # overridden here, make a restricted pod.
    assert "securityContext" not in values and "podSecurityContext" not in values
    chart_default = {
        "securityContext": {
            "runAsUser": 1001,
            "runAsNonRoot": True,
            "seccompProfile": {"type": "RuntimeDefault"},
        },
        "containers": [
            {
                "name": "exporter",
                "securityContext": {
                    "allowPrivilegeEscalation": False,
                    "capabilities": {"drop": ["ALL"]},
                    "privileged": False,
                    "readOnlyRootFilesystem": True,
                },
            }
        ],
    }
    assert pod_security.restricted_problems(chart_default) == []


def test_the_database_peer_selects_the_exporters_pods(args):
    peer = postgres_exporter.database_peer(args)
    assert peer["namespaceSelector"] == {
        "matchLabels": {"kubernetes.io/metadata.name": "determined-monitoring"}
    }
    assert peer["podSelector"]["matchLabels"] == {
        "app.kubernetes.io/name": "prometheus-postgres-exporter",
        "app.kubernetes.io/instance": postgres_exporter.RELEASE,
    }
