"""Policies: exposure."""

from __future__ import annotations

from policies.rule import Rule

RULES: list[Rule] = []
