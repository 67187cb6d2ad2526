"""The tags each node group's Auto Scaling group carries, as config validation counts them
(Auto Scaling takes at most 50 per group): what the plan puts there is what it counted."""

from __future__ import annotations

import pytest
import yaml
from planning import FIXTURE_STACKS, of_type, planned

from components.config import eks as eks_config
from components.config import load_config
from plan import stackfile


def _config(stack):
    path = stackfile.STACKS_DIR / f"Pulumi.{stack}.yaml"
    if not path.exists():
        path = FIXTURE_STACKS / f"Pulumi.{stack}.yaml"
    raw = yaml.safe_load(path.read_text())["config"]
    return load_config(
        {key.split(":", 1)[1]: value for key, value in raw.items() if key.startswith("determined:")}
    )


@pytest.mark.parametrize("stack", ["eks-dev", "eks-prod", "eks-existing-vpc", "tls-dns01-eks"])
def test_the_tags_counted_at_config_are_the_tags_the_plan_puts_on_each_group(stack):
    cfg = _config(stack)
    tags: dict[str, dict[str, int]] = {}
    for tag in of_type(planned(stack), "autoscaling/tag:Tag"):
        pool, kind, _ = tag["name"].rsplit("-", 2)
        tags.setdefault(pool, {"template": 0, "tag": 0})[kind] += 1
    # Managed node groups only: with cluster.autoscaler karpenter, the system pool alone.
    system = cfg.master_node_pool
    karpenter = cfg.cluster.autoscaler == "karpenter"
    pools = {p.name: p for p in cfg.node_pools if not karpenter or p.name == system.name}
    assert tags and set(tags) == set(pools)
    for name, counted in tags.items():
        assert counted["template"] == eks_config.template_tag_count(pools[name]), name
        on_group = counted["tag"] + counted["template"] + len(eks_config.EKS_ASG_TAGS)
        assert on_group == eks_config.asg_tags(cfg, pools[name]) <= eks_config.ASG_TAGS_MAX, name


def test_the_auto_scaling_limit_is_50_tags_per_group_five_of_them_eks_own():
    assert eks_config.ASG_TAGS_MAX == 50
    assert len(eks_config.EKS_ASG_TAGS) == 5
