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
# From when Python runs the plan's first line (the interpreter's own start-up, before it,
# ends the process by the signal's default action).
EARLIEST = 0.3


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

    def run(directory: Path, stack: str, sig: signal.Signals, delay: float) -> None:
        with slots:
            for _ in range(4):
                process = plan_process(["--config", f"Pulumi.{stack}.yaml", "--out", "plan"], directory)
                time.sleep(delay)
                if process.poll() is None:
                    break
                # Done before the signal (a slower reference run): again, signalled earlier.
                process.communicate()
                shutil.rmtree(directory / "plan")
                shutil.copytree(previous, directory / "plan")
                delay = max(EARLIEST, delay / 2)
            sent = time.monotonic()
            process.send_signal(sig)
            try:
                _, stderr = process.communicate(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
                _, stderr = process.communicate()
                stderr = f"hung: {stderr}"
            results.append(
                (process.returncode, time.monotonic() - sent, stderr, directory, stack, sig, delay)
            )

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
