"""The components' Args repeat some of the stack config's top-level fields (the sections a
component needs): each such field has the stack config's type and default, so a program using
a component directly gets what a stack file gets when it leaves the key out."""

from __future__ import annotations

import pytest

from components.cluster.eks.args import EksClusterArgs
from components.cluster.existing import ExistingClusterArgs
from components.cluster.gke.args import GkeClusterArgs
from components.config import EksStack, ExistingStack, GkeStack
from components.determined.args import DeterminedArgs

PAIRS = [
    (GkeClusterArgs, GkeStack),
    (EksClusterArgs, EksStack),
    (ExistingClusterArgs, ExistingStack),
    (DeterminedArgs, GkeStack),
    (DeterminedArgs, EksStack),
    (DeterminedArgs, ExistingStack),
]


# Narrowed per component, by design: a cluster's own cloud, pools and bucket (its Args take
# only a bucket of its cloud, or none).
NARROWED = {"cloud", "node_pools", "cluster", "checkpoint_storage"}


def shared(args: type, stack: type) -> list[str]:
    return sorted((set(args.model_fields) & set(stack.model_fields)) - NARROWED)


@pytest.mark.parametrize(("args", "stack"), PAIRS, ids=lambda m: m.__name__)
def test_a_repeated_field_has_the_stack_configs_default(args, stack):
    for name in shared(args, stack):
        mine, theirs = args.model_fields[name], stack.model_fields[name]
        if theirs.is_required():
            continue  # a key the stack requires: the Args may default what the root fills in
        assert mine.get_default(call_default_factory=True) == theirs.get_default(call_default_factory=True), (
            name
        )


@pytest.mark.parametrize(("args", "stack"), PAIRS, ids=lambda m: m.__name__)
def test_a_repeated_field_takes_what_the_stack_config_takes(args, stack):
    for name in shared(args, stack):
        assert args.model_fields[name].annotation == stack.model_fields[name].annotation, name


def test_the_components_share_the_sections_they_need():
    assert "database" in shared(DeterminedArgs, GkeStack) and "tls" in shared(GkeClusterArgs, GkeStack)
