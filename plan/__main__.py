"""python -m plan: the offline plan's command line (see plan.cli)."""

from __future__ import annotations

import contextlib
import os
import sys

from plan import interrupts

if __name__ == "__main__":
    # Before the plan's modules load (a second or so): a signal meanwhile ends the run too.
    interrupts.install_early()

from plan.cli import main

__all__ = ["main"]

if __name__ == "__main__":
    code = main()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    # Leave without the interpreter's finalization: it first puts every signal back to its
    # default action (a signal then would kill, unreported, a run whose plan is written) and
    # then waits for threads the engine left behind.
    os._exit(code)
