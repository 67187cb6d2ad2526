"""Stakater Reloader, from its official chart: a renewed certificate restarts the master.

With `tls.mode: master` the master reads its certificate and key once, when it starts
(determined-ai/determined v0.38.1: master/internal/core.go:1236 calls
`Security.TLS.ReadCertificate`, config.go:576-580, tls.LoadX509KeyPair; core.go:741 serves
that one certificate, `tls.Config.Certificates`; the same at 0.26.0, core.go:883), so a
renewal by cert-manager (or a new Secret of yours) reaches it only at its next start.
Reloader watches Secrets and, when one that a workload names in
`secret.reloader.stakater.com/reload` changes, patches the workload's pod template so that
Kubernetes replaces its pods: the master restarts within seconds of the renewal, onto the new
certificate.

Why Reloader rather than a CronJob comparing the Secret with what the master serves: a
restart follows the change at once instead of up to a schedule later; no script of the
project runs with rights to the API; the controller is pinned like the other add-ons and its
values are checked against the chart's keys. It runs in a namespace of its own (outside the
Determined namespace's NetworkPolicies, like the other add-ons) in the chart's scoped mode:
a Role in the Determined namespace (and its own), no ClusterRole. What that Role allows is
the chart's: read Secrets and patch Deployments, StatefulSets and DaemonSets of the
Determined namespace (templates/_helpers.tpl `reloader-namespaced-rules`); ConfigMaps are
left out (`ignoreConfigMaps`). It acts only on the master, the one workload annotated.

Facts, from github.com/stakater/Reloader (read 2026-11): chart 2.2.16 (tag chart-v2.2.16,
app v1.4.21): `reloader.namespaces` with `watchGlobally: false` makes Roles in the listed
namespaces and the release's and no ClusterRole (templates/role.yaml, clusterrole.yaml,
values.yaml); v1.4.21: the annotation `secret.reloader.stakater.com/reload`
(internal/pkg/options/flags.go:22), read from the Deployment's own metadata
(internal/pkg/handler/upgrade.go:309, callbacks/rolling_upgrade.go:268); strategy
`annotations` records the reload as a pod template annotation instead of an environment
variable in the master's container (internal/pkg/constants/constants.go:26).

Pure functions only: the Release is registered elsewhere.
"""

from __future__ import annotations

from typing import Any

from components import constants, versions
from components.addons import release

# One copy: the config refuses this namespace as one of the stack's own.
from components.config.namespaces import reloader_namespace as namespace

CHART = "reloader"
REPOSITORY = versions.RELOADER_REPOSITORY
VERSION = versions.RELOADER_VERSION
# The Release's name; its namespace is the install's own (`namespace`).
RELEASE = constants.RELOADER_RELEASE
# On a workload: the Secrets (comma-separated names) whose change restarts it.
SECRET_ANNOTATION = "secret.reloader.stakater.com/reload"
RELOAD_STRATEGY = "annotations"
# Small: it watches the Secrets of one namespace. The chart sets no resources; these are
# chosen, not sourced.
RESOURCES = {"requests": {"cpu": "10m", "memory": "64Mi"}, "limits": {"memory": "256Mi"}}


def workload_annotations(secret: str) -> dict[str, str]:
    """On the master's Deployment: restart it when `secret` (its certificate) changes."""
    return {SECRET_ANNOTATION: secret}


def values(watched: str) -> dict[str, Any]:
    """Scoped to the Determined namespace `watched`, Secrets only, workloads only as
    annotated, restarts recorded as pod template annotations, a restricted container."""
    return {
        "reloader": {
            "watchGlobally": False,
            "namespaces": [watched],
            "autoReloadAll": False,
            "ignoreConfigMaps": True,
            "ignoreJobs": True,
            "ignoreCronJobs": True,
            "reloadStrategy": RELOAD_STRATEGY,
            "readOnlyRootFileSystem": True,
            "deployment": {
                "containerSecurityContext": {
                    "allowPrivilegeEscalation": False,
                    "capabilities": {"drop": ["ALL"]},
                },
                "resources": RESOURCES,
            },
        }
    }


def release_args(watched: str, version: str = VERSION) -> dict[str, Any]:
    """Arguments of the `kubernetes:helm.sh/v3:Release` (a Helm repository chart)."""
    return release.release_args(
        RELEASE,
        CHART,
        version,
        namespace(watched),
        values(watched),
        repository=REPOSITORY,
        create_namespace=True,
    )
