"""The plan's own failures, by exit status.

`UsageError` (exit 2) is the user's to fix: a stack file that cannot be read, an output
directory the plan may not use. `PlanFailure` (exit 3) is a bug the plan caught itself: a
secret on its way into an output, a value still unknown after a simulated apply. Both carry
a one-line message that never holds a configuration value.
"""

from __future__ import annotations


class UsageError(Exception):
    """A user error other than the configuration's own (exit status 2)."""


class PlanFailure(Exception):
    """The plan found itself about to write something wrong (exit status 3)."""
