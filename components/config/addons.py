"""Add-ons installed from their official charts, each switched on by config."""

from __future__ import annotations

from pydantic import Field

from components import versions
from components.config.base import ConfigModel
from components.config.syntax import ChartVersion, DnsLabel, Flag, whole_number

# waitForPodsReady.timeout when `kueue.podsReadyTimeoutSeconds` is not set: what an admitted
# task's pods may take to all be ready before the eviction fails the task. It must hold a GPU
# node's scale-up and a multi-GB task image pull on the new node:
# - node scale-up: the cluster autoscaler waits up to 15 minutes for a node it asked for
#   (`max-node-provision-time`, default 15m: https://github.com/kubernetes/autoscaler/blob/master/cluster-autoscaler/FAQ.md#what-are-the-parameters-to-ca,
#   read 2026-11): a scale-up the autoscaler still waits for may take that long;
# - then GPU drivers and the device plugin start on the node (it advertises `nvidia.com/gpu`
#   only after), and the task image is pulled. No official figure was found for these; 15
#   minutes are budgeted for them and the init container (CUDA task images are several GB).
# Kueue's own default is 5 minutes (https://kueue.sigs.k8s.io/docs/tasks/manage/setup_sequential_admission/,
# read 2026-11), too short for either.
NODE_PROVISION_SECONDS = 15 * 60
IMAGE_PULL_SECONDS = 15 * 60
KUEUE_PODS_READY_TIMEOUT_SECONDS = NODE_PROVISION_SECONDS + IMAGE_PULL_SECONDS


class GpuOperatorConfig(ConfigModel):
    enabled: Flag = Field(
        False,
        description="`true` installs NVIDIA's gpu-operator chart (namespace `gpu-operator`); gke and eks "
        "only. Default false.",
    )
    version: ChartVersion = Field(
        versions.DEFAULT_GPU_OPERATOR_VERSION,
        description="The gpu-operator chart version (`vX.Y.Z`); default: the version the project pins.",
    )


class KueueConfig(ConfigModel):
    """Gang admission (`scheduler: kueue`): how long an admitted task's pods may take to all
    be ready before Kueue evicts them (which fails the task's allocation: the master deletes
    the Job; a trial restarts within `max_restarts`), and an optional cohort the pools' queues
    share (so one may borrow what another does not use)."""

    pods_ready_timeout_seconds: whole_number(30, 86400) = Field(
        KUEUE_PODS_READY_TIMEOUT_SECONDS,
        description="Seconds (30 to 86400) an admitted task's pods may take to all be ready before Kueue "
        "evicts them, which fails the task's allocation; default 1800 (a node scale-up plus a large image "
        "pull). With `scheduler: kueue`.",
    )
    cohort: DnsLabel | None = Field(
        None,
        description="A DNS label: a cohort every pool's ClusterQueue joins, so idle quota can be "
        "borrowed; unset: no cohort. With `scheduler: kueue`.",
    )
