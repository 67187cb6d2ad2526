"""The Determined component's Args of test configurations, mapped as the composition root maps
a stack (stack_args.determined_args)."""

from __future__ import annotations

import ast
import inspect
from typing import Any

from conftest import make_config

from components.determined.args import DeterminedArgs
from stack_args import determined_args


def make_args(**overrides: Any) -> DeterminedArgs:
    """DeterminedArgs of the test stack (conftest.BASE) with top-level keys replaced."""
    return determined_args(make_config(**overrides))


def undescribed_outputs(component: type) -> list[str]:
    """The public attributes of a component class not annotated at class level as a
    pulumi.Output with a docstring after it: what the SDK's schema analyzer reads
    (pulumi/provider/experimental/analyzer.py `analyze_type`, `get_docstring`; pulumi 3.272.0)."""
    annotations = {k: v for k, v in component.__annotations__.items() if not k.startswith("_")}
    source = ast.parse(inspect.getsource(inspect.getmodule(component)))
    (cls,) = [n for n in ast.walk(source) if isinstance(n, ast.ClassDef) and n.name == component.__name__]
    described = {
        stmt.target.id
        for stmt, after in zip(cls.body, cls.body[1:], strict=False)
        if isinstance(stmt, ast.AnnAssign)
        and isinstance(after, ast.Expr)
        and isinstance(after.value, ast.Constant)
        and isinstance(after.value.value, str)
    }
    return sorted(
        name
        for name, annotation in annotations.items()
        if isinstance(annotation, str) or "Output" not in repr(annotation) or name not in described
    )
