"""Add-ons installed from their official charts, each switched on by config."""

from __future__ import annotations

from deploy import versions
from deploy.config.base import ConfigModel
from deploy.config.syntax import ChartVersion, Flag


class GpuOperatorConfig(ConfigModel):
    enabled: Flag = False
    version: ChartVersion = versions.DEFAULT_GPU_OPERATOR_VERSION
