"""Benchmark: wall time and peak memory of the offline plan (and optionally the tests).

    python scripts/bench.py [--runs N] [--tests]

Plans the `local` stack, the same with observability on, the `gke-dev` and `eks-dev`
stacks and a generated stack with 40 resource pools, each in a fresh process (as a user
runs it), and reports the median wall time and the peak RSS, and the cloud stacks against
local's. A cloud stack imports its cloud's SDK (pulumi_gcp: about 1.5-2 s and ~95 MiB on a
2-core machine; pulumi_aws less); only stacks of that cloud pay for it (no target: it is
reported to watch).
Every plan starts the policy pack as its own process, as the Pulumi CLI does; the time from
starting it to its first answer is reported on its own (part of each plan's time).
Targets on a 2-core machine: local < 3 s; 40 pools < 2x local; policy pack start < 1 s;
the test suite <= 40 s on two cores (issue 23).

With --tests, the suite runs once as `make test` runs it, on two workers and pinned to two
CPUs where the system allows (Linux), so the figure is the suite's wall time on two cores
whatever the machine has. Its CPU time (pytest, its workers and every process they start)
is reported beside it with the load average before and after: on a busy machine the wall
time grows, the CPU time much less, and half of it is about what two idle cores would take.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent


def generated_stack(pools: int) -> dict:
    """An existing cluster with 10 GPU node pools and `pools` resource pools over them."""
    node_pools = [{"name": "system", "nodeSelector": {"pool": "system"}}]
    node_pools += [
        {"name": f"gpu{i}", "gpu": {"count": 4 if i % 2 else 8}, "nodeSelector": {"pool": f"gpu{i}"}}
        for i in range(10)
    ]
    resource_pools = [
        {
            "name": f"pool{i:02d}",
            "nodePool": f"gpu{i % 10}",
            "namespace": f"det-pool{i:02d}",
            "quota": {"gpu": 16, "cpu": "64", "memory": "256Gi"},
            "podSpec": {"volumes": [{"name": "data", "hostPath": {"path": f"/data/{i}"}}]},
        }
        for i in range(pools - 1)
    ]
    resource_pools.append({"name": "aux", "nodePool": "system", "namespace": "det-aux"})
    return {
        "config": {
            "determined:cloud": "existing",
            "determined:cluster": {"name": "bench"},
            "determined:nodePools": node_pools,
            "determined:resourcePools": resource_pools,
        }
    }


def measure(cmd: list[str]) -> tuple[float, float]:
    """(wall seconds, peak RSS MiB) of one run of `cmd` in a fresh process."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"failed: {' '.join(cmd)}\n{proc.stderr.read().decode()}")
    return wall, usage.ru_maxrss / 1024


def two_cpus() -> set[int] | None:
    """Two CPUs this process may run on, if the system lets a process be pinned (Linux)."""
    if not hasattr(os, "sched_getaffinity"):
        return None
    allowed = sorted(os.sched_getaffinity(0))
    return set(allowed[:2]) if len(allowed) >= 2 else None


def measure_tests(python: str) -> tuple[float, float, float, set[int] | None]:
    """(wall seconds, CPU seconds, peak RSS MiB, the CPUs it was pinned to) of one run of the
    test suite on two workers."""
    cpus = two_cpus()
    start = time.perf_counter()
    proc = subprocess.Popen(
        [python, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", "2"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        # Every process the suite starts inherits the pinning ("a child created via fork(2)
        # inherits its parent's CPU affinity mask": man7.org/linux/man-pages/man2/sched_setaffinity.2.html).
        preexec_fn=(lambda: os.sched_setaffinity(0, cpus)) if cpus else None,
    )
    output = proc.stdout.read()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"the test suite failed:\n{output.decode()[-4000:]}")
    # A waited-for process's usage includes its descendants that were waited for
    # (man7.org/linux/man-pages/man2/getrusage.2.html, RUSAGE_CHILDREN).
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, cpus


def pack_start(runs: int) -> list[float]:
    """Seconds from starting the policy pack as the Pulumi CLI starts it (plan/analyzer.py)
    to its answer to the first call (ConfigureStack), then stopping it."""
    from plan import analyzer, policy_check  # the project is installed (pyproject.toml)

    session = analyzer.Session("determined", "local", {"determined:cloud": "existing"})
    spec = analyzer.launch(policy_check.PACK, session)
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        with analyzer.started(spec) as (port, _), analyzer.connected(port) as client:
            client.configure_stack(session)
            times.append(time.perf_counter() - start)
    return times


def report(label: str, runs: list[tuple[float, float]]) -> tuple[float, float]:
    """Prints and returns (median wall seconds, peak RSS MiB)."""
    wall = statistics.median(w for w, _ in runs)
    peak = max(m for _, m in runs)
    print(f"{label:<28} median {wall:6.2f} s   peak {peak:6.0f} MiB   ({len(runs)} runs)")
    return wall, peak


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--tests", action="store_true", help="also time the test suite once")
    args = parser.parse_args()
    python = sys.executable

    with tempfile.TemporaryDirectory() as tmp:
        big = Path(tmp) / "Pulumi.bench40.yaml"
        big.write_text(yaml.safe_dump(generated_stack(40)))
        # The local stack with observability on (metrics, dashboards, alerts).
        observed = Path(tmp) / "Pulumi.local-observed.yaml"
        raw = yaml.safe_load((ROOT / "stacks" / "Pulumi.local.yaml").read_text())
        raw["config"]["determined:observability"] = {"enabled": True}
        observed.write_text(yaml.safe_dump(raw))
        out = Path(tmp) / "out"
        local = [measure([python, "-m", "plan", "local", "--out", str(out)]) for _ in range(args.runs)]
        clouds = {
            stack: [measure([python, "-m", "plan", stack, "--out", str(out)]) for _ in range(args.runs)]
            for stack in ("gke-dev", "eks-dev")
        }
        with_observability = [
            measure([python, "-m", "plan", "--config", str(observed), "--out", str(out)])
            for _ in range(args.runs)
        ]
        forty = [
            measure([python, "-m", "plan", "--config", str(big), "--out", str(out)]) for _ in range(args.runs)
        ]

    starts = pack_start(max(args.runs, 5))
    local_wall, local_peak = report("plan: local stack", local)
    observed_wall, observed_peak = report("plan: local + observability", with_observability)
    print(
        f"{'observability / local':<28} {observed_wall / local_wall:6.2f}x   "
        f"(+{observed_wall - local_wall:.2f} s)   peak +{observed_peak - local_peak:.0f} MiB"
    )
    measured = {stack: report(f"plan: {stack} stack", runs) for stack, runs in clouds.items()}
    forty_wall, _ = report("plan: 40 resource pools", forty)
    for stack, (wall, peak) in measured.items():
        print(
            f"{stack + ' / local':<28} {wall / local_wall:6.2f}x   (+{wall - local_wall:.2f} s)   "
            f"peak {peak / local_peak:.2f}x   (+{peak - local_peak:.0f} MiB)"
        )
    ratio = forty_wall / local_wall
    print(f"{'40 pools / local':<28} {ratio:6.2f}x")
    pack = statistics.median(starts)
    print(
        f"{'policy pack start':<28} median {pack:6.2f} s   ({len(starts)} runs; "
        f"{pack / local_wall:.0%} of the local plan)"
    )
    verdicts = [
        ("local < 3 s", local_wall < 3.0),
        ("40 pools < 2x local", ratio < 2.0),
        ("policy pack start < 1 s", pack < 1.0),
    ]
    if args.tests:
        load_before = os.getloadavg()[0]
        wall, cpu, peak, cpus = measure_tests(python)
        load_after = os.getloadavg()[0]
        tests_wall, _ = report("tests (pytest)", [(wall, peak)])
        pinned = f"pinned to CPUs {sorted(cpus)}" if cpus else "not pinned"
        print(
            f"{'tests on two cores':<28} wall {wall:6.2f} s   CPU {cpu:6.2f} s ({cpu / 2:.2f} s per core)   "
            f"{pinned}; load average {load_before:.2f} before, {load_after:.2f} after"
        )
        verdicts.append(("tests <= 40 s on two cores", tests_wall <= 40.0))
    for name, met in verdicts:
        print(f"target {name}: {'met' if met else 'MISSED'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
