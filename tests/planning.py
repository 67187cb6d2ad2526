"""Running the program under the plan's recording mocks from tests."""

from __future__ import annotations

import contextlib
import functools
import hashlib
import importlib.metadata
import io
import os
import pickle
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from conftest import ROOT, pulumi_config
from google.protobuf import descriptor_pool, message, message_factory

from plan import runner, stackfile
from plan.runner import PlanResult

try:
    import fcntl
except ImportError:  # not POSIX: each process plans the stacks it needs itself
    fcntl = None

FIXTURE_STACKS = ROOT / "tests" / "fixtures" / "stacks"


def plan_for(
    raw: dict[str, Any], stack: str = "test", secret_keys=(), policies=(), preview: bool = False
) -> PlanResult:
    return runner.plan(pulumi_config(raw), list(secret_keys), stack, policies=list(policies), preview=preview)


def plan_file(path: Path, preview: bool = False, policies=()) -> PlanResult:
    """Plan a stack file as `python -m plan --config <path>` does."""
    config, secret_keys = stackfile.load_stack_file(path)
    return runner.plan(config, secret_keys, stack_name(path), policies=list(policies), preview=preview)


def stack_name(path: Path) -> str:
    return path.name.removeprefix("Pulumi.").rsplit(".", 1)[0]


def stack_files() -> Iterator[Path]:
    """Every stack in stacks/ and every fixture stack (found when the tests are collected)."""
    yield from sorted(stackfile.STACKS_DIR.glob("Pulumi.*.yaml"))
    yield from sorted(FIXTURE_STACKS.glob("*.yaml"))


def run_cli(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    """`python -m plan ARGS` in a fresh process, as a user runs it."""
    return subprocess.run(
        [sys.executable, "-m", "plan", *args], cwd=cwd, capture_output=True, text=True, check=False
    )


def by_kind(result: PlanResult, kind: str) -> list[dict[str, Any]]:
    return [m for m in result.manifests if m["kind"] == kind]


def one(result: PlanResult, kind: str, name: str) -> dict[str, Any]:
    (match,) = [m for m in by_kind(result, kind) if m["metadata"]["name"] == name]
    return match


def planned(name: str, preview: bool = False) -> PlanResult:
    """A stack of stacks/ or tests/fixtures/stacks/ by name, planned once per test session
    (however the arguments are spelled: the cache sees them normalized), and shared by the
    session's worker processes when conftest gives them a directory (share_plans)."""
    return _planned(name, bool(preview))


@functools.cache
def _planned(name: str, preview: bool) -> PlanResult:
    if _shared is None:
        return plan_file(_stack_path(name), preview=preview)
    return _shared.get(name, preview)


def _stack_path(name: str) -> Path:
    path = stackfile.STACKS_DIR / f"Pulumi.{name}.yaml"
    return path if path.exists() else FIXTURE_STACKS / f"Pulumi.{name}.yaml"


# --- plans shared by the processes of one test session --------------------------------------
#
# pytest-xdist runs the tests in one process per core, and most of them look at the same
# stacks: each process planned every stack itself. Instead the first process to need a stack
# plans it and leaves the result in a directory all of them read (conftest.py makes one per
# session and hands it to each worker). A file lock per plan keeps two processes from planning
# one stack at once; one that finds a stack being planned plans another nobody has started
# rather than wait idle. The file name is a digest of what the plan is made from (the stack
# file, the mode, the project's code and data, the installed packages), so a plan can never be
# read for other inputs than its own.


def _message(name: str, data: bytes) -> message.Message:
    """A protobuf message from its type name and wire bytes (the recorded registration
    requests: their generated classes cannot be pickled by reference)."""
    pool = descriptor_pool.Default()
    return message_factory.GetMessageClass(pool.FindMessageTypeByName(name)).FromString(data)


class _Pickler(pickle.Pickler):
    def reducer_override(self, obj: Any) -> Any:
        if isinstance(obj, message.Message):
            return _message, (obj.DESCRIPTOR.full_name, obj.SerializeToString())
        return NotImplemented


def dumps(result: PlanResult) -> bytes:
    """A plan as bytes another process can read back (loads): everything but the live
    component the program returned (recorder.deployment), which only the run itself uses."""
    recorder = result.recorder
    kept, recorder.deployment = recorder.deployment, None
    try:
        buffer = io.BytesIO()
        _Pickler(buffer, protocol=pickle.HIGHEST_PROTOCOL).dump(result)
    finally:
        recorder.deployment = kept
    return buffer.getvalue()


def loads(data: bytes) -> PlanResult:
    return pickle.loads(data)


# What a plan depends on besides its stack file: everything in the project but the tests (the
# fixtures and data they plan from excepted), docs and what tools write.
_NOT_CODE = {"tests", "docs", "build", "__pycache__", "node_modules", "site"}
_PLAN_INPUTS_IN_TESTS = ("fixtures", "data", "conftest.py", "planning.py")


def _project_files() -> Iterator[Path]:
    for top in sorted(ROOT.iterdir()):
        if top.name.startswith(".") or top.name.endswith(".egg-info") or top.name in _NOT_CODE:
            continue
        yield from [top] if top.is_file() else _files_under(top)
    for name in _PLAN_INPUTS_IN_TESTS:
        path = ROOT / "tests" / name
        yield from [path] if path.is_file() else _files_under(path)


def _files_under(directory: Path) -> list[Path]:
    return sorted(
        p for p in directory.rglob("*") if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".pyc"
    )


@functools.cache
def code_digest() -> str:
    """A digest of the project's code and data, by content, and of the Python and packages
    installed: any change to what a plan is computed from changes it."""
    digest = hashlib.sha256(sys.version.encode())
    for dist in sorted(f"{d.metadata['Name']}=={d.version}" for d in importlib.metadata.distributions()):
        digest.update(dist.encode() + b"\0")
    for path in _project_files():
        digest.update(path.relative_to(ROOT).as_posix().encode() + b"\0")
        digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()


class SharedPlans:
    """Plans of the stacks of stacks/ and tests/fixtures/stacks/ in `directory`, shared by
    every process of a test session that uses the same directory."""

    def __init__(self, directory: Path):
        self.directory = directory

    def _file(self, name: str, preview: bool) -> Path:
        stack = _stack_path(name).read_bytes()
        key = hashlib.sha256(f"{code_digest()}\0{name}\0{preview}\0".encode() + stack).hexdigest()
        return self.directory / f"{name}.{'preview' if preview else 'update'}.{key[:32]}.plan"

    def _read(self, path: Path) -> PlanResult | None:
        with contextlib.suppress(FileNotFoundError):
            return loads(path.read_bytes())
        return None

    @contextlib.contextmanager
    def _lock(self, path: Path, wait: bool) -> Iterator[bool]:
        """Holds the plan's lock (True), or yields False at once if another process holds it
        and `wait` is false."""
        with open(path.with_suffix(".lock"), "a") as lock:
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
            except BlockingIOError:
                yield False
                return
            try:
                yield True
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)

    def _plan_and_keep(self, name: str, preview: bool, path: Path) -> PlanResult:
        result = plan_file(_stack_path(name), preview=preview)
        # Written whole under another name, then renamed: a reader sees all of it or nothing.
        staging = path.with_suffix(f".{os.getpid()}.tmp")
        staging.write_bytes(dumps(result))
        os.replace(staging, path)
        return result

    def get(self, name: str, preview: bool) -> PlanResult:
        path = self._file(name, preview)
        while True:
            if (result := self._read(path)) is not None:
                return result
            with self._lock(path, wait=False) as mine:
                if mine:
                    return self._read(path) or self._plan_and_keep(name, preview, path)
            # Another process is planning it: plan a stack nobody has started meanwhile (from
            # the end of the list: the others work from its start), else wait for it.
            if not self._plan_another(preview):
                with self._lock(path, wait=True):
                    pass

    def _plan_another(self, preview: bool) -> bool:
        for other in reversed([stack_name(p) for p in stack_files()]):
            path = self._file(other, preview)
            if path.exists():
                continue
            with self._lock(path, wait=False) as mine:
                if mine and not path.exists():
                    # A stack that fails to plan is left to the test that asks for it.
                    with contextlib.suppress(Exception):
                        self._plan_and_keep(other, preview, path)
                    return True
        return False


_shared: SharedPlans | None = None


def share_plans(directory: Path | None) -> None:
    """Share the plans of planned() through `directory` with the other processes of this test
    session (None: plan in this process only)."""
    global _shared
    _shared = SharedPlans(directory) if directory is not None and fcntl is not None else None
    _planned.cache_clear()


def grants(rules: list[dict[str, Any]]) -> set[tuple[str, str, str]]:
    """(API group, resource, verb) of every right an RBAC role's rules give."""
    return {
        (group, resource, verb)
        for rule in rules
        for group in rule["apiGroups"]
        for resource in rule["resources"]
        for verb in rule["verbs"]
    }


def of_type(result: PlanResult, type_suffix: str) -> list[dict[str, Any]]:
    return [r for r in result.resources if r["type"].endswith(type_suffix)]


def resource(result: PlanResult, type_suffix: str, name: str) -> dict[str, Any]:
    (match,) = [r for r in result.resources if r["type"].endswith(type_suffix) and r["name"] == name]
    return match


def files(out: Path) -> dict[str, bytes]:
    """Every file of a plan directory by relative path, with its bytes."""
    return {p.relative_to(out).as_posix(): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()}
