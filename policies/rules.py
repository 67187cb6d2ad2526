"""The project's CrossGuard policies, importable without starting a policy server.

`POLICIES` is what the pack (policies/__main__.py) serves and what the offline plan runs.
"""

from __future__ import annotations

from pulumi_policy import Policy

POLICIES: list[Policy] = []
