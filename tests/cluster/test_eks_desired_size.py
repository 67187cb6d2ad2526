"""The desired size of a node group is the cluster-autoscaler's: `pulumi up` ignores it, and
refreshes first (Pulumi.yaml `options.refresh: always`), so that what it sends back with a
changed minNodes or maxNodes is the live size, not the one the group was created with."""

from __future__ import annotations

import pytest
import yaml
from conftest import ROOT
from planning import of_type, planned

from components.cluster.eks import node_groups

PROJECT = yaml.safe_load((ROOT / "Pulumi.yaml").read_text())


def test_the_project_refreshes_before_every_operation():
    # The project file schema (pulumi/pulumi sdk/go/common/workspace/project.json): `options`
    # takes `refresh` only, whose one value is "always".
    assert PROJECT["options"] == {"refresh": node_groups.PROJECT_REFRESH}
    assert node_groups.PROJECT_REFRESH == "always"


@pytest.mark.parametrize("stack", ["eks-dev", "eks-prod", "eks-existing-vpc"])
def test_every_group_leaves_its_desired_size_to_the_autoscaler_from_a_refreshed_state(stack):
    groups = of_type(planned(stack), "eks/nodeGroup:NodeGroup")
    assert groups
    for group in groups:
        assert node_groups.DESIRED_SIZE in group["options"]["ignoreChanges"], group["name"]
        # Created at minNodes; later sizes come from the state, refreshed before each update.
        scaling = group["inputs"]["scalingConfig"]
        assert scaling["desiredSize"] == scaling["minSize"]
    assert PROJECT.get("options", {}).get("refresh") == "always"
