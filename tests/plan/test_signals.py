"""SIGINT and SIGTERM at random points of a real run (loading, the engine loop, the policy
pack, writing) stop it within a second with 130/143: the previous plan intact, no staging
directory and no policy pack process left. (A file of its own: the suite runs files in
parallel, and these runs take a while.)"""

from __future__ import annotations

import os
import random
import shutil
import signal
import subprocess
import threading
import time
import uuid
from pathlib import Path

import pytest
from test_faults import LOCAL, STOP_WITHIN, plan_process, processes_of_stack, tree


@pytest.fixture(scope="module")
def previous_plan(tmp_path_factory) -> tuple[Path, float]:
    """A first-preview plan of the local stack (its marker says so: a plan written by an
    interrupted run would differ), and how long a run takes."""
    directory = tmp_path_factory.mktemp("previous")
    started = time.monotonic()
    process = plan_process(["--config", str(LOCAL), "--out", "plan", "--preview"], directory)
    _, stderr = process.communicate(timeout=120)
    assert process.returncode == 0, stderr
    return directory / "plan", time.monotonic() - started


RUNS = 20


def handles(process: subprocess.Popen, sig: signal.Signals, timeout: float = 60) -> None:
    """Wait until `process` catches `sig` (Linux: the SigCgt mask of /proc/<pid>/status): the
    plan installs its handler as its first step, and a loaded machine can take seconds to get
    the interpreter that far (a signal before it takes the default action, as for any program)."""
    deadline = time.monotonic() + timeout
    while process.poll() is None and time.monotonic() < deadline:
        try:
            status = Path(f"/proc/{process.pid}/status").read_text()
        except OSError:
            return
        caught = next((line.split()[1] for line in status.splitlines() if line.startswith("SigCgt:")), "0")
        if int(caught, 16) & (1 << (sig - 1)):
            return
        time.sleep(0.005)


# Delays count from when the plan's handler is in place (`handles`).
EARLIEST = 0.0


def test_a_signal_at_any_point_stops_the_run_at_once_and_writes_nothing(tmp_path, previous_plan):
    previous, duration = previous_plan
    expected = tree(previous)
    rng = random.Random(os.environ.get("FAULT_SEED", "22"))
    runs = []
    for index in range(RUNS):
        stack = f"fault-{uuid.uuid4().hex[:8]}"
        directory = tmp_path / str(index)
        directory.mkdir()
        shutil.copy(LOCAL, directory / f"Pulumi.{stack}.yaml")
        shutil.copytree(previous, directory / "plan")
        sig = signal.SIGINT if index % 2 == 0 else signal.SIGTERM
        # Anywhere from the start to near the end of a run as long as the reference one.
        runs.append((directory, stack, sig, rng.uniform(EARLIEST, 0.9 * duration)))
    # As many at once as there are cores, each in a thread of its own.
    slots = threading.Semaphore(os.cpu_count() or 2)
    results = []

    def attempt(directory: Path, stack: str, sig: signal.Signals, delay: float) -> tuple:
        for _ in range(6):
            process = plan_process(["--config", f"Pulumi.{stack}.yaml", "--out", "plan"], directory)
            handles(process, sig)
            time.sleep(delay)
            sent = time.monotonic()
            if process.poll() is None:
                process.send_signal(sig)
            try:
                _, stderr = process.communicate(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
                _, stderr = process.communicate()
                stderr = f"hung: {stderr}"
            if process.returncode == 0 or "the plan had been written" in stderr:
                # Done before the signal (a slower reference run), or the plan was in place
                # when it came: again, signalled earlier.
                shutil.rmtree(directory / "plan")
                shutil.copytree(previous, directory / "plan")
                delay = max(EARLIEST, delay / 2)
                continue
            break
        return (process.returncode, time.monotonic() - sent, stderr, directory, stack, sig, delay)

    def run(directory: Path, stack: str, sig: signal.Signals, delay: float) -> None:
        with slots:
            result = attempt(directory, stack, sig, delay)
            if result[0] == 128 + sig and result[1] >= STOP_WITHIN:
                # A loaded machine can hold a process off the CPU for a moment: a slow stop
                # must repeat at the same point to count.
                result = attempt(directory, stack, sig, result[-1])
            results.append(result)

    threads = [threading.Thread(target=run, args=item) for item in runs]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(results) == RUNS
    for code, took, stderr, directory, stack, sig, delay in results:
        where = f"{sig.name} after {delay:.2f} s"
        assert code == 128 + sig, f"{where}: exit {code}: {stderr}"
        assert took < STOP_WITHIN, f"{where}: ended {took:.2f} s after the signal"
        assert "Traceback" not in stderr, stderr
        assert stderr.endswith(": no plan written\n"), f"{where}: {stderr}"
        assert tree(directory / "plan") == expected, where
        assert sorted(p.name for p in directory.iterdir()) == ["Pulumi." + stack + ".yaml", "plan"], where
        assert processes_of_stack(stack) == [], f"{where}: a process of the run is left"


def test_a_signal_while_the_policy_pack_runs_ends_the_pack_too(tmp_path, previous_plan):
    previous, _ = previous_plan
    for sig in (signal.SIGINT, signal.SIGTERM):
        stack = f"fault-{uuid.uuid4().hex[:8]}"
        directory = tmp_path / sig.name
        directory.mkdir()
        shutil.copy(LOCAL, directory / f"Pulumi.{stack}.yaml")
        shutil.copytree(previous, directory / "plan")
        process = plan_process(["--config", f"Pulumi.{stack}.yaml", "--out", "plan"], directory)
        deadline = time.monotonic() + 60
        while not processes_of_stack(stack) and process.poll() is None and time.monotonic() < deadline:
            time.sleep(0.01)
        assert processes_of_stack(stack), "the pack never started"
        process.send_signal(sig)
        _, stderr = process.communicate(timeout=30)
        assert process.returncode == 128 + sig, stderr
        time.sleep(0.1)  # a killed process group is gone at once; its entries a moment later
        assert processes_of_stack(stack) == []
        assert tree(directory / "plan") == tree(previous)
