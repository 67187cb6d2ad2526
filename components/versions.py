"""Pinned versions, images and version-dependent behaviour.

Values only: every image tag and version boundary the project relies on lives here, so an
upgrade is a one-line change that the tests then check.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, date, datetime
from typing import Any, Literal

# The Determined release deployed when `master.version` is not set.
DEFAULT_DETERMINED_VERSION = "0.38.1"

# Oldest master this project renders configuration for. Older masters lack the
# Kubernetes job-based task launch and RBAC this project grants.
MIN_DETERMINED_VERSION = (0, 26, 0)

# Version boundaries below are where the master's config structs gain or lose a key
# (components/config/data/master-yaml-keys.json; tests/invariants check each one against it).

# 0.26.1 and newer: `task_container_defaults.kubernetes.max_slots_per_pod`, globally and per
# resource pool (upstream PR #7923); exactly one of it and `resource_manager.max_slots_per_pod`
# may be set. 0.26.0 only knows the global `resource_manager.max_slots_per_pod`.
PER_POOL_MAX_SLOTS_SINCE = (0, 26, 1)

# 0.29.0 and newer: `security.initial_user_password` sets the passwords of the built-in
# `admin` and `determined` users of a new database (older masters refuse the key). Always
# set where it exists: the chart refuses to install without one, and 0.33+ masters can be
# switched to refuse blank passwords.
INITIAL_PASSWORD_SINCE = (0, 29, 0)

# 0.34.0 and newer: `task_container_defaults.checkpoint_gc_pod_spec` (older masters ignore it).
CHECKPOINT_GC_POD_SPEC_SINCE = (0, 34, 0)

# 0.34.0 and newer launch each task as a batch/v1 Job (older masters create bare pods).
JOB_TASKS_SINCE = (0, 34, 0)

# 0.35.1 and newer (PR #10202) list every namespace's Jobs at start-up and do not start
# without that cluster-wide list (0.36.0/0.37.0 lack the change; granting it there is harmless).
CLUSTER_JOB_LIST_SINCE = (0, 35, 1)

# Where tasks reach the master (resource_manager keys): 0.29.1+ `determined_master_ip` and
# `determined_master_port` (both or neither), 0.35.0+ also `determined_master_scheme`,
# 0.38.0+ `determined_master_host` in place of `_ip`.
TASK_MASTER_ADDRESS_SINCE = (0, 29, 1)
TASK_MASTER_SCHEME_SINCE = (0, 35, 0)
TASK_MASTER_HOST_SINCE = (0, 38, 0)

# 0.35.0 removed `resource_pools[].kubernetes_namespace` (namespaces are bound to
# workspaces instead) and renamed `resource_manager.namespace` to `default_namespace`.
WORKSPACE_NAMESPACES_SINCE = (0, 35, 0)

# 0.35.0 and newer look for their own Service in the namespace the DET_RELEASE_NAMESPACE
# environment variable names, else in `default_namespace` (jobs.go, ReleaseNamespaceEnvVar
# and getInitialNamespace: lines 69-71 and 2403-2408 at 0.35.0, 73-75 and 2533-2539 at
# v0.38.1); 0.34.0 reads `resource_manager.namespace` only (jobs.go:370 at 0.34.0). So from
# 0.35.0 tasks may default to a namespace of their own while the master stays in its own.
RELEASE_NAMESPACE_SINCE = (0, 35, 0)

# 0.31.0 and newer: `retention_policy` (task log retention) and
# `task_container_defaults.startup_hook`.
LOG_RETENTION_SINCE = (0, 31, 0)
STARTUP_HOOK_SINCE = (0, 31, 0)
# `task_container_defaults.log_policies`: 0.26.4 and newer; a policy's `name` 0.38.0 and newer.
LOG_POLICIES_SINCE = (0, 26, 4)
LOG_POLICY_NAME_SINCE = (0, 38, 0)

# --- Determined's default task images ------------------------------------------------------
# The images a task runs when neither its experiment nor taskContainerDefaults.images names one:
# the master's compiled-in constants `CPUImage` and `CUDAImage` (its DefaultEnvConfig,
# master/pkg/model/defaults.go), read at every release tag of determined-ai/determined from
# master/pkg/schemas/expconf/const.go:11-12 (the same two lines at every tag below). The project
# writes no `task_container_defaults.image` unless the user sets one, so these are what tasks
# pull; listed so users can mirror them (stack output `taskImages`) and so the pre-pull
# DaemonSet (components/determined/image_pre_pull.py) knows them.
# (first release of a row, its CPU image, its CUDA image); a release uses the last row at or
# below it. From 0.34.0 one image serves both: `determinedai/pytorch-ngc:<version>`
# (determined@v0.38.1:master/pkg/schemas/expconf/const.go:11-12), so newer rows follow a rule.
_ENVIRONMENTS = "determinedai/environments:"
DEFAULT_TASK_IMAGES_BEFORE_NGC: tuple[tuple[tuple[int, int, int], str, str], ...] = (
    # determined@0.26.0..0.26.3:master/pkg/schemas/expconf/const.go:11-12
    (
        (0, 26, 0),
        f"{_ENVIRONMENTS}py-3.8-pytorch-1.12-tf-2.11-cpu-2b7e2a1",
        f"{_ENVIRONMENTS}cuda-11.3-pytorch-1.12-tf-2.11-gpu-2b7e2a1",
    ),
    # determined@0.26.4..0.27.0:master/pkg/schemas/expconf/const.go:11-12
    (
        (0, 26, 4),
        f"{_ENVIRONMENTS}py-3.9-pytorch-1.12-tf-2.11-cpu-622d512",
        f"{_ENVIRONMENTS}cuda-11.3-pytorch-1.12-tf-2.11-gpu-622d512",
    ),
    # determined@0.27.1..0.29.0:master/pkg/schemas/expconf/const.go:11-12
    (
        (0, 27, 1),
        f"{_ENVIRONMENTS}py-3.9-pytorch-1.12-tf-2.11-cpu-f66cbce",
        f"{_ENVIRONMENTS}cuda-11.3-pytorch-1.12-tf-2.11-gpu-f66cbce",
    ),
    # determined@0.29.1..0.30.0:master/pkg/schemas/expconf/const.go:11-12
    (
        (0, 29, 1),
        f"{_ENVIRONMENTS}py-3.9-pytorch-1.12-tf-2.11-cpu-03ae7d7",
        f"{_ENVIRONMENTS}cuda-11.3-pytorch-1.12-tf-2.11-gpu-03ae7d7",
    ),
    # determined@0.31.0:master/pkg/schemas/expconf/const.go:11-12
    (
        (0, 31, 0),
        f"{_ENVIRONMENTS}py-3.9-pytorch-1.12-tf-2.11-cpu-079eb6d",
        f"{_ENVIRONMENTS}cuda-11.3-pytorch-1.12-tf-2.11-gpu-079eb6d",
    ),
    # determined@0.32.0..0.32.1:master/pkg/schemas/expconf/const.go:11-12
    (
        (0, 32, 0),
        f"{_ENVIRONMENTS}py-3.9-pytorch-1.12-tf-2.11-cpu-748dda4",
        f"{_ENVIRONMENTS}cuda-11.3-pytorch-1.12-tf-2.11-gpu-748dda4",
    ),
    # determined@0.33.0:master/pkg/schemas/expconf/const.go:11-12
    (
        (0, 33, 0),
        "determinedai/pytorch-tensorflow-cpu:0.33.0",
        "determinedai/pytorch-tensorflow-cuda:0.33.0",
    ),
)
# 0.34.0 and newer: one NGC-based image for CPU and GPU tasks, tagged with the master's version
# (determined@0.34.0..v0.38.1:master/pkg/schemas/expconf/const.go:11-12).
NGC_TASK_IMAGE_SINCE = (0, 34, 0)
NGC_TASK_IMAGE = "determinedai/pytorch-ngc"


def default_task_image(version: str) -> dict[str, str]:
    """{"cpu": ..., "gpu": ...}: the images a master of `version` gives tasks that name none
    (its CPUImage and CUDAImage). Versions below MIN_DETERMINED_VERSION are not known."""
    wanted = parse_version(version)
    if wanted < MIN_DETERMINED_VERSION:
        raise ValueError(f"no default task images known for Determined {version}")
    if wanted >= NGC_TASK_IMAGE_SINCE:
        image = f"{NGC_TASK_IMAGE}:{version}"
        return {"cpu": image, "gpu": image}
    _, cpu, gpu = [row for row in DEFAULT_TASK_IMAGES_BEFORE_NGC if row[0] <= wanted][-1]
    return {"cpu": cpu, "gpu": gpu}


# The pre-pull DaemonSet's only long-running container: it does nothing while the init
# containers' images stay cached on the node. registry.k8s.io/pause 3.10 is the sandbox image
# EKS AL2023 nodes configure (awslabs/amazon-eks-ami@HEAD nodeadm/test/e2e/cases/
# containerdv2-config/expected-containerd-configv3.toml:13, read 2026-11); the digest of its
# multi-arch index as several public repositories pin it (read 2026-11; not resolved from the
# registry here). It writes nothing, so it runs as any user on a read-only root.
PAUSE_IMAGE = (
    "registry.k8s.io/pause:3.10@sha256:ee6521f290b2168b6e0935a181d4cff9be1ac3f505666ef0e3c98fae8199917a"
)

# In-cluster database. The chart ships postgres:10.14 (out of support since 2022);
# PostgreSQL 17 is supported upstream until November 2029. The tag for readers, the digest
# (the multi-arch index) for the kubelet: a re-pushed tag cannot change what runs.
POSTGRES_IMAGE = "postgres:17.6@sha256:00bc86618629af00d2937fdc5a5d63db3ff8450acf52f0636ec813c7f4902929"

# NVIDIA GPU operator chart (repo https://helm.ngc.nvidia.com/nvidia), newest release; its
# value keys are checked by tests/invariants against tests/data/chart-keys.
GPU_OPERATOR_CHART = "gpu-operator"
GPU_OPERATOR_REPOSITORY = "https://helm.ngc.nvidia.com/nvidia"
DEFAULT_GPU_OPERATOR_VERSION = "v26.7.0"


# --- Kubernetes versions (EKS and GKE) -------------------------------------------------
# docs/clouds/versions.md shows these tables; tests/cluster/test_kubernetes_versions.py fails when a
# date below has passed since the tables were read, so that someone reads the sources again.


@dataclass(frozen=True)
class EksVersion:
    """One Kubernetes minor on EKS: when EKS released it, when its standard support (14
    months) and extended support (12 more, at a higher price per cluster hour) end, and the
    cluster-autoscaler release for that minor (the autoscaler follows the cluster's minor;
    its chart defaults to its own newest)."""

    released: date
    end_of_standard_support: date
    end_of_extended_support: date
    cluster_autoscaler: str


# Source: "Understand the Kubernetes version lifecycle on EKS", Amazon EKS release calendar,
# https://docs.aws.amazon.com/eks/latest/userguide/kubernetes-versions.html (read 2026-11-25:
# 1.32-1.34 rows from the page's source, awsdocs/amazon-eks-user-guide
# latest/ug/versioning/kubernetes-versions.adoc; the 1.35 and 1.36 end dates as endoflife.date's
# scrape of that table records them on 2026-08-22, their release dates 14 months before the end of
# standard support, as the page defines it; 1.36 is listed on the page's standard-support release
# notes, kubernetes-versions-standard.html). 1.31 is left out: its extended support ends
# 2026-11-25, so a cluster made on it would be upgraded at once.
# Autoscaler images: the newest cluster-autoscaler-1.N.x tag of github.com/kubernetes/autoscaler
# per minor (read 2026-11-25 from a snapshot of 2026-08-22), published as
# registry.k8s.io/autoscaling/cluster-autoscaler:v1.N.x.
EKS_VERSIONS: dict[str, EksVersion] = {
    "1.36": EksVersion(date(2026, 6, 2), date(2027, 8, 2), date(2028, 8, 2), "v1.36.1"),
    "1.35": EksVersion(date(2026, 1, 27), date(2027, 3, 27), date(2028, 3, 27), "v1.35.2"),
    "1.34": EksVersion(date(2025, 10, 2), date(2026, 12, 2), date(2027, 12, 2), "v1.34.5"),
    "1.33": EksVersion(date(2025, 5, 29), date(2026, 7, 29), date(2027, 7, 29), "v1.33.6"),
    "1.32": EksVersion(date(2025, 1, 23), date(2026, 3, 23), date(2027, 3, 23), "v1.32.7"),
}
EKS_VERSIONS_READ = date(2026, 11, 25)
# The minor a new cluster gets when `cluster.kubernetesVersion` is not set: the newest in
# standard support. An existing cluster without a pinned version keeps the one it has.
DEFAULT_EKS_KUBERNETES_VERSION = "1.36"


def minor_tuple(version: str) -> tuple[int, int]:
    """'1.35' -> (1, 35)."""
    major, minor = version.split(".")[:2]
    return int(major), int(minor)


def today() -> date:
    """The date the version tables are judged by (UTC, as EKS's dates are)."""
    return datetime.now(UTC).date()


def eks_support(version: str, today: date) -> Literal["standard", "extended"] | None:
    """Whether EKS runs `version` in standard or extended support on `today`; None when it
    does not offer it (extended support over, or a minor the table does not know)."""
    row = EKS_VERSIONS.get(version)
    if row is None or today >= row.end_of_extended_support:
        return None
    return "standard" if today < row.end_of_standard_support else "extended"


def cluster_autoscaler_image(version: str) -> str:
    """The cluster-autoscaler image tag for a cluster's minor; for a minor the table does not
    hold (an unpinned cluster older than the table), the nearest one it does."""
    if version in EKS_VERSIONS:
        return EKS_VERSIONS[version].cluster_autoscaler
    nearest = min(EKS_VERSIONS, key=lambda v: abs(minor_tuple(v)[1] - minor_tuple(version)[1]))
    return EKS_VERSIONS[nearest].cluster_autoscaler


@dataclass(frozen=True)
class GkeChannel:
    """What a GKE release channel gives a cluster created without a version."""

    default_version: str  # "Default patch version for cluster creation"
    end_of_standard_support: date  # of that default's minor


# Source: GKE release notes, "Current versions" table ("Default patch version for cluster
# creation"), https://cloud.google.com/kubernetes-engine/docs/release-notes (read 2026-11-25 from
# a stored copy of the page, undated but later than 2026-08-20: it names 1.35.7-gke.1222000,
# released then); end of standard support per minor from the GKE release schedule,
# https://cloud.google.com/kubernetes-engine/docs/release-schedule (1.35: 2027-04-11, 1.36:
# 2027-08-09, as endoflife.date's copy of the schedule records them on 2026-08-22). GKE moves
# these defaults weekly; the stack passes only the channel (and a minimum version when
# `cluster.kubernetesVersion` is set), so the table documents what a new cluster gets.
GKE_CHANNELS: dict[str, GkeChannel] = {
    "RAPID": GkeChannel("1.36.4-gke.1082000", date(2027, 8, 9)),
    "REGULAR": GkeChannel("1.35.7-gke.1222000", date(2027, 4, 11)),
    "STABLE": GkeChannel("1.35.6-gke.1250000", date(2027, 4, 11)),
    "EXTENDED": GkeChannel("1.35.7-gke.1222000", date(2027, 4, 11)),
}
GKE_CHANNELS_READ = date(2026, 11, 25)


@dataclass(frozen=True)
class GkeVersion:
    """One Kubernetes minor on GKE: when it became available for new clusters in the Regular
    channel and when its standard support ends. GKE supports a minor "up to a total of 24
    months ... after the version has been made available for new cluster creation in the
    Regular channel" (about 14 months standard, then extended support on the Extended
    channel); after that no channel creates a cluster on it."""

    regular_available: date
    end_of_standard_support: date

    @property
    def end_of_extended_support(self) -> date:
        start = self.regular_available
        return start.replace(year=start.year + GKE_SUPPORT_MONTHS // 12)


# Source: GKE versioning and support, "How GKE supports a minor version" (24 months from
# availability in Regular), https://cloud.google.com/kubernetes-engine/versioning (read
# 2026-11-25); per-minor dates from the GKE release schedule,
# https://cloud.google.com/kubernetes-engine/docs/release-schedule, as endoflife.date's copy of
# it records them (https://endoflife.date/google-kubernetes-engine: release = Regular
# availability, "Maintenance Support" end = end of standard support; read 2026-11-25 from its
# copies of 2026-02 and 2026-04). 1.36's end of standard support is GKE_CHANNELS' (2026-08-22
# copy); its Regular availability is taken as 14 months before it, as GKE defines standard
# support. Minors before 1.32 are out of extended support by 2026-11-25 (1.31: Regular
# 2024-10-25, +24 months). A minor newer than the table is not known to this release.
GKE_SUPPORT_MONTHS = 24
GKE_VERSIONS: dict[str, GkeVersion] = {
    "1.36": GkeVersion(date(2026, 6, 9), date(2027, 8, 9)),
    "1.35": GkeVersion(date(2026, 2, 11), date(2027, 4, 11)),
    "1.34": GkeVersion(date(2025, 9, 30), date(2026, 10, 1)),
    "1.33": GkeVersion(date(2025, 6, 3), date(2026, 8, 3)),
    "1.32": GkeVersion(date(2025, 2, 11), date(2026, 4, 11)),
}
GKE_VERSIONS_READ = date(2026, 11, 25)


def gke_support(version: str, today: date) -> Literal["standard", "extended"] | None:
    """Whether GKE creates clusters of `version` on `today` in standard support (every
    channel that offers it) or only in extended support (the Extended channel); None when no
    channel does (past its 24 months, or a minor the table does not know)."""
    row = GKE_VERSIONS.get(version)
    if row is None or today >= row.end_of_extended_support:
        return None
    return "standard" if today < row.end_of_standard_support else "extended"


CLUSTER_AUTOSCALER_CHART = "cluster-autoscaler"
CLUSTER_AUTOSCALER_REPOSITORY = "https://kubernetes.github.io/autoscaler"
# Chart 9.59.0 defaults to image v1.35.0 (tests/data/chart-keys); the stack sets the image of
# the cluster's minor from EKS_VERSIONS instead.
CLUSTER_AUTOSCALER_VERSION = "9.59.0"

# Official Python image the workspace-binding Job runs its script with (docker-library/python
# versions.json: 3.13.14 since June 2026; `-slim` is Debian trixie slim). Pinned to the patch
# and, like POSTGRES_IMAGE, to the digest of its multi-arch index (the tag is rebuilt).
PYTHON_IMAGE = "python:3.13.14-slim@sha256:9662417aace5ae7b8e2609cce472b72a8958e134ba372808abe9cc1a0c0125e6"

# Envoy Gateway chart (oci://docker.io/envoyproxy/gateway-helm): the Gateway API
# implementation installed when the cluster names none; it brings the Gateway API CRDs.
ENVOY_GATEWAY_VERSION = "v1.9.0"

# Stakater Reloader chart (https://stakater.github.io/stakater-charts, app v1.4.21): restarts
# the master when its certificate Secret changes (tls.mode master); key set in
# tests/data/chart-keys.
RELOADER_REPOSITORY = "https://stakater.github.io/stakater-charts"
RELOADER_VERSION = "2.2.16"

# cert-manager chart (oci://quay.io/jetstack/charts/cert-manager): ACME certificates.
CERT_MANAGER_VERSION = "v1.21.1"

# Kueue chart (oci://registry.k8s.io/kueue/charts/kueue): gang admission of task Jobs.
KUEUE_VERSION = "0.19.2"

# NVIDIA device plugin chart (EKS GPU nodes without the GPU operator).
NVIDIA_DEVICE_PLUGIN_CHART = "nvidia-device-plugin"
NVIDIA_DEVICE_PLUGIN_REPOSITORY = "https://nvidia.github.io/k8s-device-plugin"
NVIDIA_DEVICE_PLUGIN_VERSION = "0.20.0"


def parse_version(version: str) -> tuple[int, int, int]:
    """'0.38.1' -> (0, 38, 1)."""
    major, minor, patch = (int(part) for part in version.split("."))
    return major, minor, patch


# --- database backups ------------------------------------------------------------------
# rclone (official image, Alpine with busybox sh; tags without the leading v): uploads dumps
# to GCS, S3 and Azure Blob with the pod's workload identity (env_auth) or given keys. 1.75.1
# is the release of September 2026; pinned to the digest of its multi-arch index.
RCLONE_IMAGE = "rclone/rclone:1.75.1@sha256:45401ad7410db1d67ffdb58e19059ad20b0d8e0285a60e38bbec55cc1019c7a5"
# The PostgreSQL major version of the managed servers (Cloud SQL POSTGRES_17, RDS 17; a test
# checks both): their dumps and restores use a client of that version.
MANAGED_POSTGRES_MAJOR = 17
MANAGED_POSTGRES_CLIENT_IMAGE = POSTGRES_IMAGE
# External servers: the newest pinned client (pg_dump reads servers back to 9.2).
EXTERNAL_POSTGRES_CLIENT_IMAGE = POSTGRES_IMAGE
# Determined's Helm chart runs postgres:10.14; a copy of its data directory is started with
# PostgreSQL 10's last release (10.23, November 2022) to dump it.
HELM_CHART_POSTGRES_IMAGE = "postgres:10.23"


def offered(
    table: dict[str, Any], support: Callable[[str, date], str | None], today: date
) -> dict[str, list[str]]:
    """{"standard": [...], "extended": [...]}: the minors of `table` that `support` (eks_support,
    gke_support) says a cluster can be made on `today`, by kind of support."""
    found: dict[str, list[str]] = {"standard": [], "extended": []}
    for minor in table:
        if kind := support(minor, today):
            found[kind].append(minor)
    return found


def not_offered(cloud: str, version: str, table: dict[str, Any], read: date, gone: str) -> str:
    """Why `cloud` makes no cluster on `version`, a minor its support function refuses:
    extended support over, newer than `table` (read on `read`), or else `gone`."""
    row = table.get(version)
    if row is not None:
        return f"its {cloud} extended support ended on {row.end_of_extended_support}"
    if minor_tuple(version) > minor_tuple(max(table, key=minor_tuple)):
        return f"this release does not know it yet (its {cloud} table was read on {read})"
    return gone


# Observability (components/observability). kube-prometheus-stack 88.5.3 (Prometheus Operator
# v0.93.1, kube-state-metrics 2.20.0, node exporter 1.12.1, Grafana 12.11.1) and the
# postgres exporter chart 8.2.0 (postgres_exporter v0.20.1): newest releases
# (prometheus-community/helm-charts tags kube-prometheus-stack-88.5.3,
# prometheus-postgres-exporter-8.2.0, read 2026-11-26). dcgm-exporter chart 4.8.2
# (image 4.5.3-4.8.2): NVIDIA/dcgm-exporter tag 4.5.3-4.8.2, deployment/Chart.yaml.
PROMETHEUS_COMMUNITY_REPOSITORY = "https://prometheus-community.github.io/helm-charts"
KUBE_PROMETHEUS_STACK_CHART = "kube-prometheus-stack"
KUBE_PROMETHEUS_STACK_VERSION = "88.5.3"
POSTGRES_EXPORTER_CHART = "prometheus-postgres-exporter"
POSTGRES_EXPORTER_VERSION = "8.2.0"
DCGM_EXPORTER_CHART = "dcgm-exporter"
DCGM_EXPORTER_REPOSITORY = "https://nvidia.github.io/dcgm-exporter/helm-charts"
DCGM_EXPORTER_VERSION = "4.8.2"

# Karpenter (EKS, cluster.autoscaler karpenter): the official chart, oci://public.ecr.aws/karpenter/karpenter,
# newest tag of aws/karpenter-provider-aws (v1.14.1, bde0065; key set in tests/data/chart-keys). The
# chart carries its CRDs in crds/ (NodePool, EC2NodeClass, NodeClaim...), which Helm installs on the
# first install only and never upgrades (charts/karpenter/crds at the tag): skipped, see below.
KARPENTER_CHART = "oci://public.ecr.aws/karpenter/karpenter"
# Its CRDs from their own chart (charts/karpenter-crd at the tag: the same CRDs as templates),
# which Helm upgrades with each release; the main chart's are skipped (upstream's upgrade
# guide: "install the karpenter-crd chart ... to manage the CRDs").
KARPENTER_CRD_CHART = "oci://public.ecr.aws/karpenter/karpenter-crd"
KARPENTER_VERSION = "1.14.1"
