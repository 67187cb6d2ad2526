"""Policy packs written for a test: a directory the plan starts as the Pulumi CLI would."""

from __future__ import annotations

import os
import textwrap
import time
from pathlib import Path

from conftest import ROOT

from plan.mocks import Registration

HEAD = """\
import json, os, signal, subprocess, sys, time
from pulumi_policy import EnforcementLevel, PolicyPack, ResourceValidationPolicy, StackValidationPolicy
"""


def write_pack(directory: Path, body: str) -> Path:
    """A Python pack in `directory` running `body` (after HEAD's imports) with the project's
    virtualenv, named by its absolute path."""
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "PulumiPolicy.yaml").write_text(
        f"runtime:\n  name: python\n  options:\n    virtualenv: {ROOT / '.venv'}\n"
    )
    (directory / "__main__.py").write_text(HEAD + textwrap.dedent(body))
    return directory


def ended(pids: list[int], within: float = 5.0) -> bool:
    """Whether every process of `pids` has ended, waiting up to `within` seconds: a SIGKILL
    is delivered and acted on asynchronously, later still on a loaded machine."""
    deadline = time.monotonic() + within
    while any(alive(pid) for pid in pids):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def alive(pid: int) -> bool:
    """Whether a process runs (a zombie nobody reaped yet does not)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    stat = Path(f"/proc/{pid}/stat")
    return not stat.exists() or stat.read_text().rsplit(")", 1)[1].split()[0] != "Z"


def claims(stack: str = "s") -> list[Registration]:
    """Two PersistentVolumeClaims, the one protected, as the program registers them."""
    return [
        Registration(
            urn=f"urn:pulumi:{stack}::determined::kubernetes:core/v1:PersistentVolumeClaim::{name}",
            type="kubernetes:core/v1:PersistentVolumeClaim",
            name=name,
            parent=None,
            custom=True,
            provider=None,
            inputs={"metadata": {"name": name}},
            depends_on=[],
            options={"protect": True} if name == "data" else {},
        )
        for name in ("data", "scratch")
    ]
