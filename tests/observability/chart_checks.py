"""What the observability tests share: the chart key sets (tests/invariants/test_chart_values.py's
reader) and every manifest-like dict's strings."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

_INVARIANTS = Path(__file__).resolve().parent.parent / "invariants"
if str(_INVARIANTS) not in sys.path:
    sys.path.insert(0, str(_INVARIANTS))

import test_chart_values  # noqa: E402


def value_problems(chart: str, version: str, values: dict[str, Any]) -> list[str]:
    """What in `values` the chart's key set does not know (empty: every key is read)."""
    keys = test_chart_values.keys_for(chart, version, test_chart_values.all_keys())
    assert keys is not None, f"no key set for {chart} {version}"
    return test_chart_values.unknown_paths(values, keys)


def strings(obj: Any) -> list[str]:
    """Every string in a nested structure (keys and values)."""
    if isinstance(obj, dict):
        return [s for k, v in obj.items() for s in (*strings(k), *strings(v))]
    if isinstance(obj, (list, tuple)):
        return [s for item in obj for s in strings(item)]
    return [obj] if isinstance(obj, str) else []
