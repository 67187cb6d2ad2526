"""The Determined component's Args of test configurations, mapped as the composition root maps
a stack (stack_args.determined_args)."""

from __future__ import annotations

from typing import Any

from conftest import make_config

from components.determined.args import DeterminedArgs
from stack_args import determined_args


def make_args(**overrides: Any) -> DeterminedArgs:
    """DeterminedArgs of the test stack (conftest.BASE) with top-level keys replaced."""
    return determined_args(make_config(**overrides))
