"""SIGINT, SIGTERM and SIGHUP end a plan at once, whatever it is doing, and write nothing.

This module loads little (it is imported first, to install the handler early). The
handler does not raise into the run: an exception raised inside the Pulumi engine's
event loop can leave the loop waiting on its monitor threads for ever (or be swallowed by
a callback, letting the plan finish). It ends the process itself: it kills the process
groups of the plan's child processes (the policy pack runs in a session of its own, so a
terminal's Ctrl-C never reaches it), removes the staging directory the plan was writing,
says so on stderr and exits 128 + the signal's number (130, 143, 129).

Only the moment a finished plan is moved into place is shielded (`deferred`): a signal
then is acted on once the move is done, and the move is undone first (see plan.output).
"""

from __future__ import annotations

import contextlib
import os
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any

SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
# How each signal is named to the user.
_NAMES = {signal.SIGINT: "interrupted", signal.SIGTERM: "terminated", signal.SIGHUP: "hung up"}

# Directories to remove when a signal ends the run (the plan's unfinished staging).
_staging: set[Path] = set()
# While above 0, a signal is recorded in _received and acted on when the count drops to 0.
_deferring = 0
_received: int | None = None
_installed = False
# Where the plan was put in place: a signal after that ends a run whose plan is written.
_written: Path | None = None


def exit_status(signum: int) -> int:
    return 128 + signum


def _children() -> list[int]:
    """The process ids of this process's children (Linux /proc: each thread's children)."""
    me = os.getpid()
    try:
        found: list[int] = []
        for task in os.listdir(f"/proc/{me}/task"):
            with open(f"/proc/{me}/task/{task}/children") as f:
                found += [int(pid) for pid in f.read().split()]
        return found
    except (OSError, ValueError):
        return _children_by_scan(me)


def _children_by_scan(me: int) -> list[int]:
    found = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            with contextlib.suppress(OSError, ValueError, IndexError), open(f"/proc/{name}/stat") as f:
                # pid (comm) state ppid ...: comm may hold spaces and parentheses.
                if int(f.read().rsplit(")", 1)[1].split()[1]) == me:
                    found.append(int(name))
    return found


def _kill_children() -> None:
    for pid in _children():
        with contextlib.suppress(OSError):
            # A child that leads its own group (the policy pack) goes with everything it started.
            if os.getpgid(pid) == pid:
                os.killpg(pid, signal.SIGKILL)
            else:
                os.kill(pid, signal.SIGKILL)


def _end(signum: int) -> None:
    import shutil

    _kill_children()
    for path in list(_staging):
        shutil.rmtree(path, ignore_errors=True)
    name = _NAMES.get(signum, f"signal {signum}")
    what = f"the plan had been written to {_written}" if _written else "no plan written"
    with contextlib.suppress(OSError):
        os.write(2, f"{name}: {what}\n".encode())
    os._exit(exit_status(signum))


def _handle(signum: int, _frame: Any) -> None:
    global _received
    if _deferring:
        _received = _received or signum
        return
    _end(signum)


@contextlib.contextmanager
def installed() -> Iterator[None]:
    """The handler in place for SIGINT, SIGTERM and SIGHUP while the run lasts (only from
    the main thread, where Python runs signal handlers); the previous ones restored after."""
    import threading

    global _installed
    if threading.current_thread() is not threading.main_thread() or _installed:
        yield
        return
    global _received, _written
    _received = _written = None
    previous = {sig: signal.signal(sig, _handle) for sig in SIGNALS}
    _installed = True
    try:
        yield
    finally:
        _installed = False
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def handling() -> bool:
    """Whether this module's handler ends the run on SIGTERM."""
    return signal.getsignal(signal.SIGTERM) is _handle


def install_early() -> None:
    """The handler from the first line of `python -m plan`, before the plan's modules load."""
    for sig in SIGNALS:
        signal.signal(sig, _handle)


@contextlib.contextmanager
def removed_on_signal(path: Path) -> Iterator[None]:
    """`path` (a staging directory) is removed if a signal ends the run meanwhile."""
    _staging.add(path)
    try:
        yield
    finally:
        _staging.discard(path)


def written(path: Path) -> None:
    """The plan is in place at `path` (said if a signal ends the run after all)."""
    global _written
    _written = path


def received() -> int | None:
    """The signal received during `deferred`, if any."""
    return _received


@contextlib.contextmanager
def deferred() -> Iterator[None]:
    """A signal arriving inside is recorded (see `received`) and ends the run on the way out."""
    global _deferring, _received
    _deferring += 1
    try:
        yield
    finally:
        _deferring -= 1
        if not _deferring and _received is not None:
            signum, _received = _received, None
            _end(signum)
