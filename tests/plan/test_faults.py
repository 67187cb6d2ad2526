"""The plan survives hostile files, signals and paths, run as real processes where it counts.

- Signals (real runs: tests/plan/test_signals.py): the move of a plan into place is undone
  when a signal arrives meanwhile.
- Files: an alias bomb is refused in under 2 s and 200 MB; /dev/zero, a FIFO, a socket, a
  directory are refused without being read; deep YAML, too large a file, UTF-16/UTF-32,
  a null key are refused in one line.
- Paths: an --out through a symbolic link is refused; the staging a killed run left is
  removed by the next run, a live run's is not; an --out the kernel would refuse for the
  plan's files (NAME_MAX, PATH_MAX) is refused first; `--out /` is refused from its listing.
- A standard output that cannot be written: one line, exit 3 (a closed pipe: quietly).
- A plan that breaks a mandatory policy writes policy.json alone.
"""

from __future__ import annotations

import errno
import fcntl
import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import yaml
from conftest import ROOT

from components.config import ConfigError, decode_raw, nesting
from plan import cli, output, stackfile
from plan.output import MARKER, OutputError
from plan.stackfile import StackFileError

LOCAL = ROOT / "stacks" / "Pulumi.local.yaml"
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}
# How long a signalled run may take to end.
STOP_WITHIN = 1.0


def plan_process(args: list[str], cwd: Path) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "plan", *args],
        cwd=cwd,
        env=ENV,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def tree(directory: Path) -> dict[str, bytes]:
    return {
        p.relative_to(directory).as_posix(): p.read_bytes()
        for p in sorted(directory.rglob("*"))
        if p.is_file()
    }


def processes_of_stack(stack: str) -> list[int]:
    """Processes started for `stack` (the policy pack gets PULUMI_STACK in its environment)."""
    found = []
    needle = f"PULUMI_STACK={stack}\0".encode()
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                if needle in Path(f"/proc/{name}/environ").read_bytes():
                    found.append(int(name))
            except OSError:
                pass
    return found


def test_a_signal_while_the_plan_moves_into_place_undoes_the_move(tmp_path, monkeypatch):
    """The swap of plans is shielded: a signal then is acted on after the swap is undone."""
    from plan import interrupts

    out = tmp_path / "out"
    output.write(out, "s", "update", {"a.json": lambda p: p.write_text("old\n")}, set())
    before = tree(out)
    ended = []
    monkeypatch.setattr(interrupts, "_end", lambda signum: ended.append(signum))
    real_rename = os.rename

    def rename(src, dst):
        real_rename(src, dst)
        if Path(dst) == out:
            interrupts._handle(signal.SIGTERM, None)  # arrives just as the new plan is in place

    monkeypatch.setattr(os, "rename", rename)
    output.write(out, "s", "update", {"a.json": lambda p: p.write_text("new\n")}, set())
    assert ended == [signal.SIGTERM]
    assert tree(out) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


# --- hostile files --------------------------------------------------------------------------

BOMB = """\
config:
  determined:cloud: existing
  determined:master:
    a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]
    b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]
    c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]
    d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]
    e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]
    f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]
    g: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]
    h: &h [*g,*g,*g,*g,*g,*g,*g,*g,*g]
    i: &i [*h,*h,*h,*h,*h,*h,*h,*h,*h]
"""


def test_an_alias_bomb_is_refused_in_under_2_s_and_200_mb(tmp_path):
    path = tmp_path / "Pulumi.bomb.yaml"
    path.write_text(BOMB)
    started = time.monotonic()
    with pytest.raises(ConfigError) as info:
        stackfile.load_stack_file(path)
    assert time.monotonic() - started < 2.0
    (problem,) = info.value.problems
    assert problem.path == "master"
    assert problem.message.startswith(f"the stack file holds more than {stackfile.MAX_VALUES} values by here")
    # The whole process, as a user runs it: its peak memory from the kernel, measured by a
    # small parent (a child forked from this large one would start with its peak).
    process = subprocess.run(
        [sys.executable, "-c", MEASURED, "-m", "plan", "--config", path.name, "--out", "out"],
        cwd=tmp_path,
        env=ENV,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    peak_kib, code = map(int, process.stdout.split())
    assert code == 2, process.stderr
    assert peak_kib * 1024 < 200 * 1024 * 1024, f"{peak_kib} KiB"
    assert process.stderr.splitlines()[1].startswith(
        "  determined:master: the stack file holds more than 50000 values"
    )


# Runs its arguments as a Python command line and prints the run's peak resident memory
# (getrusage(2) ru_maxrss: KiB on Linux) and exit status.
MEASURED = """
import os, sys
pid = os.fork()
if pid == 0:
    os.execv(sys.executable, [sys.executable, *sys.argv[1:]])
_, status, usage = os.wait4(pid, 0)
print(usage.ru_maxrss, os.waitstatus_to_exitcode(status))
"""


def test_text_repeated_by_aliases_counts_as_the_text_it_repeats(tmp_path):
    path = tmp_path / "Pulumi.t.yaml"
    path.write_text(
        "config:\n  determined:master: {a: &a " + "x" * 200_000 + ", b: [" + ", ".join(["*a"] * 30) + "]}\n"
    )
    with pytest.raises(ConfigError, match="more than 4 MiB of text"):
        stackfile.load_stack_file(path)


def test_a_value_holding_itself_is_refused(tmp_path):
    path = tmp_path / "Pulumi.t.yaml"
    path.write_text("config:\n  determined:master: &m {x: [*m]}\n")
    with pytest.raises(ConfigError) as info:
        stackfile.load_stack_file(path)
    assert (
        str(info.value)
        == "determined:master.x[0]: a YAML alias inside the value it names (line 2, column 30)"
    )


@pytest.mark.parametrize("depth", [65, 330, 5000])
def test_yaml_nested_deeper_than_the_limit_is_refused_naming_the_key(tmp_path, depth):
    path = tmp_path / "Pulumi.t.yaml"
    path.write_text("config:\n  determined:tls: " + "{a: " * depth + "1" + "}" * depth + "\n")
    with pytest.raises(ConfigError) as info:
        stackfile.load_stack_file(path)
    (problem,) = info.value.problems
    assert (problem.path, problem.message.split(" (")[0]) == ("tls.a.a.a.a.a.a.a…", nesting.TOO_DEEP)


def test_yaml_nested_to_the_limit_is_read(tmp_path):
    depth = nesting.MAX_DEPTH
    path = tmp_path / "Pulumi.t.yaml"
    path.write_text("config:\n  determined:tls: " + "[" * depth + "]" * depth + "\n")
    config, _ = stackfile.load_stack_file(path)
    assert decode_raw({"tls": config["determined:tls"]})["tls"]  # and decode_raw agrees


def test_an_alias_that_nests_a_value_too_deep_is_refused(tmp_path):
    path = tmp_path / "Pulumi.t.yaml"
    half = 40
    path.write_text(
        "deep: &d "
        + "[" * half
        + "]" * half
        + "\nconfig:\n  determined:tls: "
        + "[" * half
        + "*d"
        + "]" * half
        + "\n"
    )
    with pytest.raises(ConfigError, match=r"nested more than 64 levels deep"):
        stackfile.load_stack_file(path)


def test_the_stack_files_limit_is_the_configurations(tmp_path):
    assert stackfile.MAX_DEPTH == nesting.MAX_DEPTH


def test_deep_yaml_outside_config_is_a_stack_file_error(tmp_path):
    path = tmp_path / "Pulumi.t.yaml"
    path.write_text("notes: " + "[" * 100 + "]" * 100 + "\nconfig: {}\n")
    with pytest.raises(
        StackFileError, match=r"notes\[0\]\[0\]\[0\].*: nested more than 64 levels deep \(line 1"
    ):
        stackfile.load_stack_file(path)


def test_decode_raw_refuses_json_nested_too_deep_for_every_key():
    deep = "[" * 70 + "]" * 70
    with pytest.raises(ConfigError) as info:
        decode_raw({"tls": deep, "cluster": "[" * 100_000 + "]" * 100_000, "cloud": "existing"})
    assert [str(p) for p in info.value.problems] == [
        "determined:tls[0][0][0][0][0][0][0]…: nested more than 64 levels deep",
        "determined:cluster: nested more than 64 levels deep",
    ]


def refused(tmp_path: Path, config: str, cwd: Path | None = None) -> tuple[int, str, float]:
    """A real run's exit status, stderr and time."""
    started = time.monotonic()
    process = subprocess.run(
        [sys.executable, "-m", "plan", "--config", config, "--out", "out"],
        cwd=cwd or tmp_path,
        env=ENV,
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    return process.returncode, process.stderr, time.monotonic() - started


def test_dev_zero_and_a_fifo_are_refused_without_being_read(tmp_path):
    fifo = tmp_path / "Pulumi.fifo.yaml"
    os.mkfifo(fifo)
    for config, kind in (("/dev/zero", "a character device"), (fifo.name, "a named pipe (FIFO)")):
        code, stderr, took = refused(tmp_path, config)
        assert (code, stderr) == (2, f"error: {config} is {kind}, not a stack file\n")
        assert took < 10  # the interpreter and the plan's imports; reading would never end
    assert not (tmp_path / "out").exists()


def test_a_fifo_swapped_in_after_the_check_is_not_read(tmp_path, monkeypatch):
    fifo = tmp_path / "Pulumi.t.yaml"
    os.mkfifo(fifo)
    monkeypatch.setattr(stackfile, "check_file", lambda path: None)
    with pytest.raises(StackFileError, match=r"is a named pipe \(FIFO\), not a stack file"):
        stackfile.load_stack_file(fifo)


def test_a_socket_and_a_directory_are_refused(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    server = socket.socket(socket.AF_UNIX)
    server.bind("Pulumi.sock.yaml")
    try:
        with pytest.raises(StackFileError, match=r"^Pulumi.sock.yaml is a socket, not a stack file$"):
            stackfile.load_stack_file(Path("Pulumi.sock.yaml"))
    finally:
        server.close()
    with pytest.raises(StackFileError, match=r"is a directory, not a stack file$"):
        stackfile.load_stack_file(tmp_path)


def test_a_file_over_the_size_limit_is_refused_before_it_is_read(tmp_path, monkeypatch):
    path = tmp_path / "Pulumi.t.yaml"
    with path.open("wb") as f:
        f.truncate(stackfile.MAX_FILE_BYTES + 1)
    read = []
    monkeypatch.setattr(os, "read", lambda *args: read.append(args))
    with pytest.raises(StackFileError) as info:
        stackfile.load_stack_file(path)
    assert str(info.value) == f"{path} is larger than a stack file may be (4 MiB; at most 4 MiB)"
    assert read == []


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-le", "utf-16-be", "utf-32", "utf-32-be"])
def test_only_utf_16_with_a_byte_order_mark_is_read_besides_utf_8(tmp_path, encoding):
    # As Pulumi's YAML reader (go-yaml v3) does: it decodes UTF-16 by its byte order mark
    # ("utf-16" writes one), and reads anything else as UTF-8.
    path = tmp_path / "Pulumi.t.yaml"
    path.write_bytes("config:\n  determined:cloud: existing\n".encode(encoding))
    if encoding == "utf-16":
        assert stackfile.load_stack_file(path) == ({"determined:cloud": "existing"}, [])
        return
    with pytest.raises(StackFileError) as info:
        stackfile.load_stack_file(path)
    name = "UTF-16" if encoding.startswith("utf-16") else "UTF-32"
    assert str(info.value) == (
        f"{path} is {name} text without the byte order mark Pulumi reads it by; save it as UTF-8"
    )


@pytest.mark.parametrize(
    ("key", "shown"),
    [
        ("~", "null (an empty key)"),
        ("1", "1 (a number)"),
        ("true", "true (a boolean)"),
        ("1.5", "1.5 (a number)"),
    ],
)
def test_a_config_key_that_is_not_a_string_is_named_in_words(tmp_path, key, shown):
    path = tmp_path / "Pulumi.t.yaml"
    path.write_text(f"config:\n  ? {key}\n  : existing\n")
    with pytest.raises(StackFileError) as info:
        stackfile.load_stack_file(path)
    assert str(info.value) == f"{path}: config key {shown} is not of the form <namespace>:<key>"


def test_a_number_too_long_to_read_and_nan_are_refused(tmp_path):
    path = tmp_path / "Pulumi.t.yaml"
    path.write_text("config:\n  determined:master: {cpu: " + "9" * 5000 + "}\n")
    with pytest.raises(StackFileError, match=r"line 2, column 28: a number too long to read$"):
        stackfile.load_stack_file(path)
    path.write_text("config:\n  determined:master: {cpu: .nan}\n")
    with pytest.raises(StackFileError, match=r"has no JSON form \(.*\.inf or \.nan"):
        stackfile.load_stack_file(path)


# --- paths ------------------------------------------------------------------------------------


def test_an_out_through_a_symbolic_link_is_refused_naming_the_link(tmp_path, capsys):
    real = tmp_path / "real"
    real.mkdir()
    (tmp_path / "link").symlink_to(real)
    for out in (
        tmp_path / "link" / "plan",
        tmp_path / "link" / "a" / "b",
        Path("..") / tmp_path / "link" / "x",
    ):
        assert cli.main(["local", "--out", str(out)]) == 2
        assert capsys.readouterr().err == (
            f"error: --out {out}: {tmp_path / 'link'} is a symbolic link; give a path without links\n"
        )
    assert list(real.iterdir()) == []


def test_dot_dot_is_taken_from_where_the_path_has_got(tmp_path, monkeypatch):
    (tmp_path / "a").mkdir()
    monkeypatch.chdir(tmp_path / "a")
    assert output.physical(Path("../b/../c")) == tmp_path / "c"


def test_the_staging_a_killed_run_left_is_removed_and_a_live_runs_is_not(tmp_path):
    out = tmp_path / "out"
    stale = tmp_path / ".out.plan-abcdefgh"
    (stale / "manifests").mkdir(parents=True)
    (stale / "manifests" / "a.yaml").write_text("x\n")
    live = tmp_path / ".out.plan-live1234"
    live.mkdir()
    lock = os.open(live, os.O_RDONLY | os.O_DIRECTORY)
    fcntl.flock(lock, fcntl.LOCK_EX)  # as the live run holds it
    # Another --out's staging, and a user's directory that only looks like one.
    other = tmp_path / ".other.plan-abcdefgh"
    other.mkdir()
    mine = tmp_path / ".out.plan-notmine-at-all"
    mine.mkdir()
    try:
        output.write(out, "s", "update", {"a.json": lambda p: p.write_text("new\n")}, set())
    finally:
        os.close(lock)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([out.name, live.name, other.name, mine.name])


def test_an_earlier_plan_a_killed_run_moved_aside_is_put_back(tmp_path):
    out = tmp_path / "out"
    output.write(out, "s", "update", {"a.json": lambda p: p.write_text("old\n")}, set())
    before = tree(out)
    holder = tmp_path / ".out.old-abcdefgh"
    holder.mkdir()
    os.rename(out, holder / "plan")  # killed between the two renames
    output.remove_leftovers(out)
    assert tree(out) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


# --- a mandatory policy violated -------------------------------------------------------------


def test_a_mandatory_violation_writes_policy_json_alone(tmp_path):
    planted = "Planted-Pass-77"
    raw = yaml.safe_load(LOCAL.read_text())
    raw["config"]["determined:master"]["env"] = {"DB_PASSWORD": planted}
    path = tmp_path / "Pulumi.envpw.yaml"
    path.write_text(yaml.safe_dump(raw))
    previous = tmp_path / "out"
    output.write(previous, "envpw", "update", {"resources.json": lambda p: p.write_text("[]\n")}, set())
    process = subprocess.run(
        [sys.executable, "-m", "plan", "--config", path.name, "--out", "out"],
        cwd=tmp_path,
        env=ENV,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert process.returncode == 1, process.stderr
    assert "[mandatory] no-secrets-in-plain-sight" in process.stdout
    assert f"Wrote only {Path('out') / 'policy.json'}: a mandatory policy is violated" in process.stdout
    written = tree(tmp_path / "out")
    assert sorted(written) == [MARKER, "policy.json"]
    assert json.loads(written[MARKER])["files"] == ["policy.json"]
    assert planted not in process.stdout + process.stderr
    assert not any(planted.encode() in content for content in written.values())


def test_a_plan_says_where_it_went_and_what_each_file_holds(tmp_path, capsys):
    out = tmp_path / "out"
    assert cli.main(["local", "--out", str(out)]) == 0
    printed = capsys.readouterr().out.splitlines()
    start = printed.index(f"Wrote {out}:")
    listed = [line.split()[0] for line in printed[start + 1 :]]
    assert listed == ["resources.json", "manifests/", "master.yaml", "policy.json", "outputs.json", MARKER]
    on_disk = {p.name + ("/" if p.is_dir() else "") for p in out.iterdir()}
    assert set(listed) == on_disk
    manifests = len(list((out / "manifests").iterdir()))
    assert f"({manifests} files)" in printed[start + 2]


def test_the_signal_handler_is_not_left_behind_in_process(tmp_path):
    before = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)}
    assert cli.main(["local", "--out", str(tmp_path / "o")]) == 0
    assert {sig: signal.getsignal(sig) for sig in before} == before


# --- --out the kernel would refuse, a root directory, a standard output that cannot be written ---


def kernel_refuses_name(path: Path) -> None:
    """The kernel's own answer to `path`: ENAMETOOLONG (the limit the plan checks for)."""
    with pytest.raises(OSError) as refused:
        path.mkdir()
    assert refused.value.errno == errno.ENAMETOOLONG


def one_file(path: Path) -> None:
    path.write_text("[]\n")


def test_an_out_name_is_at_most_name_max_less_the_staging_suffix(tmp_path):
    longest = tmp_path / ("x" * (output.NAME_MAX - output.STAGING_EXTRA))
    output.write(longest, "s", "update", {"resources.json": one_file}, set())
    assert (longest / "resources.json").read_text() == "[]\n"
    over = tmp_path / ("y" * (output.NAME_MAX - output.STAGING_EXTRA + 1))
    with pytest.raises(OutputError, match=r": its name is 241 bytes long; it may have at most 240 \("):
        output.check(over)
    # Its staging directory would have a name one byte over the kernel's limit.
    kernel_refuses_name(tmp_path / f".{over.name}.plan-{'z' * 8}")
    # Bytes, not characters: 121 times 'é' is 242 bytes.
    with pytest.raises(OutputError, match=r"its name is 242 bytes long"):
        output.check(tmp_path / ("é" * 121))


def test_a_name_on_the_way_over_name_max_is_refused_in_one_line(tmp_path, capsys):
    output.check(tmp_path / ("d" * output.NAME_MAX) / "plan")  # the kernel takes 255
    over = tmp_path / ("d" * (output.NAME_MAX + 1)) / "plan"
    kernel_refuses_name(over.parent)
    assert cli.main(["local", "--out", str(over)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("error: --out ")
    assert err.endswith(": a name in it is 256 bytes long; the most a file name may have is 255 bytes\n")


def deep_directory(base: Path, length: int) -> Path:
    """A directory path of exactly `length` bytes below `base` (names of at most 200)."""
    path = base
    while len(str(path)) < length:
        room = length - len(str(path)) - 1  # bytes for the next name, after its "/"
        # Never leave a single byte: a further name needs "/" and one character.
        path = path / ("d" * (room if room <= 200 else 150 if room < 202 else 200))
    assert len(str(path)) == length
    path.mkdir(parents=True)
    return path


def test_an_out_whose_plan_files_would_pass_path_max_is_refused(tmp_path):
    # The deepest path the plan writes: <parent>/.p.plan-XXXXXXXX/.determined-plan.json,
    # 39 bytes more than <parent>; a path may have PATH_MAX - 1 bytes.
    parent = deep_directory(tmp_path, output.PATH_MAX - 1 - 39)
    output.write(parent / "p", "s", "update", {"resources.json": one_file}, set())
    assert (parent / "p" / MARKER).exists()
    deeper = deep_directory(tmp_path / "b", output.PATH_MAX - 39)
    with pytest.raises(OutputError, match=r"is 4059 bytes long as a full path; .* at most 4058 \("):
        output.check(deeper / "p")
    staging = deeper / f".p.plan-{'z' * 8}"
    staging.mkdir()
    with pytest.raises(OSError) as refused:
        (staging / MARKER).write_text("{}")
    assert refused.value.errno == errno.ENAMETOOLONG


def test_the_root_directory_is_refused_from_its_listing_alone(tmp_path, monkeypatch, capsys):
    def never(*args, **kwargs):
        raise AssertionError("walked a directory without a marker")

    monkeypatch.setattr(output.os, "fwalk", never)
    assert cli.main(["local", "--out", "/"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert err.startswith("error: --out / holds files the plan did not write (")


def test_a_foreign_directory_in_an_earlier_plan_is_named_not_walked(tmp_path, monkeypatch):
    out = tmp_path / "out"
    output.write(out, "s", "update", {"manifests/a.yaml": one_file}, set())
    (out / "notes" / "deep").mkdir(parents=True)
    (out / "notes" / "deep" / "x").write_text("the user's\n")
    walk = os.fwalk
    seen: list[str] = []

    def recording(*args, **kwargs):
        for entry in walk(*args, **kwargs):
            seen.append(entry[0])
            yield entry

    monkeypatch.setattr(output.os, "fwalk", recording)
    with pytest.raises(OutputError, match=r"did not write \(notes\)"):
        output.check(out)
    assert sorted(seen) == [".", "./manifests"]


def _plan_local_into(out: Path, stdout: Any) -> subprocess.CompletedProcess:
    """`python -m plan local --out OUT` as a real process, its standard output `stdout`."""
    return subprocess.run(
        [sys.executable, "-m", "plan", "local", "--out", str(out)],
        cwd=ROOT,
        env=ENV,
        stdout=stdout,
        stderr=subprocess.PIPE,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="no /dev/full")
def test_a_standard_output_that_cannot_be_written_is_one_line_and_exit_3(tmp_path):
    with open("/dev/full", "w") as full:
        process = _plan_local_into(tmp_path / "out", stdout=full)
    assert process.returncode == cli.INTERNAL_ERROR
    assert process.stderr == (
        f"error: the plan is written to {tmp_path / 'out'}, but its summary could not be printed "
        "(No space left on device)\n"
    )
    assert (tmp_path / "out" / MARKER).exists()


def test_a_reader_that_went_away_ends_the_run_quietly(tmp_path):
    read, write = os.pipe()
    os.close(read)
    try:
        process = _plan_local_into(tmp_path / "out", stdout=write)
    finally:
        os.close(write)
    assert (process.returncode, process.stderr) == (0, "")
    assert (tmp_path / "out" / MARKER).exists()
