"""python -m plan: the offline plan's command line (see plan.cli)."""

from __future__ import annotations

import sys

from plan.cli import main

__all__ = ["main"]

if __name__ == "__main__":
    sys.exit(main())
