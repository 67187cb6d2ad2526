"""A renewed certificate restarts the master (tls.mode master): Stakater Reloader, pinned,
scoped to the Determined namespace, acting on the master's Deployment, which names its
certificate Secret. Facts from the sources (components/addons/reloader.py) are read back where a
copy of them is at hand (RELOADER_SOURCE, DETERMINED_SOURCE; default the workspace's mirrors)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from conftest import raw_config
from planning import one, plan_for

from components import constants, versions
from components.addons import reloader
from components.determined import master
from components.kube import api_rules

RELEASE = "kubernetes:helm.sh/v3:Release"
RELOADER_SOURCE = Path(os.environ.get("RELOADER_SOURCE", "/work/.mirror/stakater+Reloader/repo"))
DETERMINED_SOURCE = Path(os.environ.get("DETERMINED_SOURCE", "/work/.mirror/determined-ai+determined/repo"))
HOST = "det.example.net"
ISSUED = {
    "mode": "master",
    "host": HOST,
    "certificate": {"source": "certManager", "email": "ops@mail.example.net"},
}
OWN = {"mode": "master", "host": HOST, "certificate": {"source": "secret", "secretName": "my-cert"}}


def releases(result, name):
    return [r for r in result.resources if r["type"] == RELEASE and r["name"] == name]


@pytest.mark.parametrize(("tls", "secret"), [(ISSUED, "determined-tls"), (OWN, "my-cert")])
def test_a_master_that_ends_tls_restarts_when_its_certificate_secret_changes(tls, secret):
    result = plan_for(raw_config(tls=tls))
    deployment = one(result, "Deployment", constants.MASTER_NAME)
    assert deployment["metadata"]["annotations"][reloader.SECRET_ANNOTATION] == secret
    # The Secret the annotation names is the one the master mounts.
    volumes = {v["name"]: v for v in deployment["spec"]["template"]["spec"]["volumes"]}
    assert volumes["tls"]["secret"]["secretName"] == secret
    (release,) = releases(result, reloader.RELEASE)
    inputs = release["inputs"]
    assert (inputs["chart"], inputs["version"]) == ("reloader", versions.RELOADER_VERSION)
    assert inputs["repositoryOpts"] == {"repo": "https://stakater.github.io/stakater-charts"}
    assert inputs["namespace"] == "determined-reloader" != "determined"  # outside the fencing
    # Scoped: Roles in the Determined namespace (and its own), no ClusterRole.
    values = inputs["values"]["reloader"]
    assert values["watchGlobally"] is False and values["namespaces"] == ["determined"]
    assert values["ignoreConfigMaps"] is True and values["autoReloadAll"] is False
    assert values["reloadStrategy"] == "annotations"


@pytest.mark.parametrize(
    "tls", [{"mode": "none"}, {"mode": "ingress", "host": HOST, "certificate": ISSUED["certificate"]}]
)
def test_without_tls_in_the_master_there_is_nothing_to_restart(tls):
    result = plan_for(raw_config(tls=tls))
    assert not releases(result, reloader.RELEASE)
    annotations = one(result, "Deployment", constants.MASTER_NAME)["metadata"].get("annotations", {})
    assert reloader.SECRET_ANNOTATION not in annotations


def test_reloader_waits_for_the_namespace_it_watches_and_the_master_not_for_it():
    result = plan_for(raw_config(tls=ISSUED))
    (release,) = releases(result, reloader.RELEASE)
    (namespace,) = [
        r
        for r in result.resources
        if r["type"] == "kubernetes:core/v1:Namespace" and r["name"] == "determined"
    ]
    assert namespace["urn"] in release["dependsOn"]
    (deployment,) = [
        r
        for r in result.resources
        if r["type"] == "kubernetes:apps/v1:Deployment" and r["name"].endswith(constants.MASTER_NAME)
    ]
    assert release["urn"] not in deployment["dependsOn"]


def test_two_installs_get_a_reloader_each():
    assert reloader.namespace("determined") != reloader.namespace("det-team-b")
    assert reloader.release_args("det-team-b")["values"]["reloader"]["namespaces"] == ["det-team-b"]


def test_the_deployment_builder_names_the_secret_only_in_master_mode():
    from conftest import make_config

    cfg = make_config(tls=OWN)
    assert master.deployment(cfg, "x")["metadata"]["annotations"] == {reloader.SECRET_ANNOTATION: "my-cert"}
    assert "annotations" not in master.deployment(make_config(), "x")["metadata"]


# --- the facts, read back from the sources -----------------------------------------------------------


def _show(repo: Path, ref: str) -> list[str]:
    out = subprocess.run(["git", "-C", str(repo), "show", ref], capture_output=True, text=True, check=True)
    return out.stdout.splitlines()


def _have(repo: Path) -> bool:
    return (repo / "HEAD").exists() or (repo / ".git").exists()


@pytest.mark.skipif(not _have(RELOADER_SOURCE), reason="no copy of Reloader's source")
def test_reloader_reads_this_annotation_and_scoped_mode_makes_no_cluster_role():
    flags = _show(RELOADER_SOURCE, "v1.4.21:internal/pkg/options/flags.go")
    assert f'SecretUpdateOnChangeAnnotation = "{reloader.SECRET_ANNOTATION}"' in flags[21]
    constants = _show(RELOADER_SOURCE, "v1.4.21:internal/pkg/constants/constants.go")
    assert f'AnnotationsReloadStrategy = "{reloader.RELOAD_STRATEGY}"' in constants[25]
    tag = f"chart-v{versions.RELOADER_VERSION}"
    chart = "\n".join(_show(RELOADER_SOURCE, f"{tag}:deployments/kubernetes/chart/reloader/Chart.yaml"))
    assert f"version: {versions.RELOADER_VERSION}" in chart and "appVersion: v1.4.21" in chart
    cluster_role = _show(
        RELOADER_SOURCE, f"{tag}:deployments/kubernetes/chart/reloader/templates/clusterrole.yaml"
    )
    assert ".Values.reloader.watchGlobally" in cluster_role[0]  # only when watching globally


@pytest.mark.skipif(not _have(DETERMINED_SOURCE), reason="no copy of the master's source")
def test_the_master_reads_its_certificate_once_at_start():
    core = _show(DETERMINED_SOURCE, "v0.38.1:master/internal/core.go")
    assert "Security.TLS.ReadCertificate()" in core[1235]
    assert "Certificates:" in core[740] and "*cert" in core[740]
    config = _show(DETERMINED_SOURCE, "v0.38.1:master/internal/config/config.go")
    assert "func (t *TLSConfig) ReadCertificate()" in config[575]
    assert "tls.LoadX509KeyPair" in config[579]
    old = _show(DETERMINED_SOURCE, "0.26.0:master/internal/core.go")
    assert "Security.TLS.ReadCertificate()" in old[882]


@pytest.mark.parametrize("length", [10, 54, 55, 62, 63])
def test_reloaders_namespace_is_a_dns_label_apart_from_the_one_it_watches(length):
    watched = ("determined-ai-research-" * 3)[: length - 1] + "x"
    name = reloader.namespace(watched)
    assert api_rules.dns_label_problem(name) is None
    assert name != watched and name.endswith("-reloader")
    assert name != reloader.namespace(watched[:-1] + "y")  # two long namespaces, two Reloaders
