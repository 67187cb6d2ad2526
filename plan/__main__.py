"""python -m plan: the offline plan's command line (see plan.cli)."""

from __future__ import annotations

import sys

from plan import interrupts

if __name__ == "__main__":
    # Before the plan's modules load (a second or so): a signal meanwhile ends the run too.
    interrupts.install_early()

from plan.cli import main

__all__ = ["main"]

if __name__ == "__main__":
    sys.exit(main())
