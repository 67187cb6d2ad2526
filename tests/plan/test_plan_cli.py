"""The offline plan's interface (docs/contract.md §2): files written, exit codes, messages.

Exit status: 0 clean, 1 a mandatory policy is violated, 2 a configuration or usage error
(one line per problem), 3 an internal error (one line; the traceback only with --debug).
No traceback is ever printed otherwise: every bad input is run as a user runs it."""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import sys
import textwrap
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml
from conftest import ROOT, raw_config
from planning import files, planned, stack_files, stack_name
from pulumi_policy import EnforcementLevel, ResourceValidationPolicy

import plan.__main__ as cli
from plan import runner, stackfile
from plan.output import MARKER
from plan.redaction import UNKNOWN


def write_stack(tmp_path: Path, raw: dict, name: str = "t") -> Path:
    path = tmp_path / f"Pulumi.{name}.yaml"
    path.write_text(yaml.safe_dump({"config": {f"determined:{k}": v for k, v in raw.items()}}))
    return path


# --- what a plan writes --------------------------------------------------------------------


def test_default_stack_plan_writes_every_output(tmp_path, capsys):
    out = tmp_path / "out"
    assert cli.main(["local", "--out", str(out)]) == 0
    resources = json.loads((out / "resources.json").read_text())
    assert resources and all(
        set(r) >= {"type", "name", "parent", "inputs", "dependsOn", "options"} for r in resources
    )
    assert list((out / "manifests").glob("*.yaml"))
    assert yaml.safe_load((out / "master.yaml").read_text())["port"] == 8081
    assert json.loads((out / "policy.json").read_text()) == []
    assert json.loads((out / "outputs.json").read_text())["namespace"] == "determined"
    marker = json.loads((out / MARKER).read_text())
    assert (marker["stack"], marker["mode"]) == ("local", "update")
    assert sorted(marker["files"]) == sorted(name for name in files(out) if name != MARKER)
    printed = capsys.readouterr().out
    assert "Plan for stack 'local': " in printed
    assert "kubernetes:apps/v1:Deployment" in printed
    assert UNKNOWN not in "".join(p.decode() for p in files(out).values())


def test_a_first_preview_writes_unknown_values_as_such(tmp_path, capsys):
    out = tmp_path / "out"
    assert cli.main(["local", "--out", str(out), "--preview"]) == 0
    assert "Plan for stack 'local' (first preview): " in capsys.readouterr().out
    assert json.loads((out / MARKER).read_text())["mode"] == "preview"
    deployment = yaml.safe_load(
        (out / "manifests" / "determined--deployment--determined-master.yaml").read_text()
    )
    assert deployment["spec"]["template"]["metadata"]["annotations"]["checksum/config"] == UNKNOWN
    assert f'"checksum/config": "{UNKNOWN}"' in (out / "resources.json").read_text()
    assert json.loads((out / "outputs.json").read_text())["initialUserPassword"] == "[secret]"


def test_config_path_and_stack_name_from_the_file_name(tmp_path):
    path = write_stack(tmp_path, raw_config(), name="mine")
    assert cli.main(["--config", str(path), "--out", str(tmp_path / "o")]) == 0
    resources = json.loads((tmp_path / "o" / "resources.json").read_text())
    assert any("determined-mine" in r["parent"] for r in resources if r["parent"])


def test_the_default_out_is_build_plan_stack(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert cli.main(["local"]) == 0
    assert (tmp_path / "build" / "plan" / "local" / "resources.json").is_file()


def test_config_error_exits_2_with_one_line_per_problem(tmp_path, capsys):
    path = write_stack(tmp_path, raw_config(scheduler="preemption", defaultAuxPool="nope"))
    assert cli.main(["--config", str(path), "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert err.splitlines()[0] == f"Configuration errors in {path}:"
    lines = [line.strip() for line in err.splitlines()[1:]]
    assert len(lines) == 2
    assert lines[0].startswith("determined:scheduler: ")
    assert lines[1].startswith("determined:defaultAuxPool: ")
    assert not (tmp_path / "o").exists()


def test_an_out_holding_the_users_files_is_refused_before_planning(tmp_path, monkeypatch, capsys):
    def never(*args, **kwargs):
        raise AssertionError("planned before checking --out")

    monkeypatch.setattr(runner, "prepare", never)
    path = write_stack(tmp_path, raw_config())
    before = path.read_bytes()
    assert cli.main(["--config", str(path), "--out", str(tmp_path)]) == 2
    assert capsys.readouterr().err == (
        f"error: --out {tmp_path} holds files the plan did not write (Pulumi.t.yaml); "
        "give a new or empty directory, or an earlier plan's\n"
    )
    assert [p.name for p in tmp_path.iterdir()] == ["Pulumi.t.yaml"]
    assert path.read_bytes() == before


# A pack started as the CLI starts one, with one policy: at DENY_LEVEL, async with DENY_ASYNC.
DENY_PACK = ROOT / "tests" / "plan" / "policy_packs" / "deny-deployments"


@pytest.mark.parametrize(("level", "code"), [(EnforcementLevel.MANDATORY, 1), (EnforcementLevel.ADVISORY, 0)])
def test_policy_violations_decide_the_exit_code(tmp_path, monkeypatch, level, code):
    from plan import policy_check

    monkeypatch.setattr(policy_check, "PACK", DENY_PACK)
    monkeypatch.setenv("DENY_LEVEL", level.value)
    out = tmp_path / "o"
    assert cli.main(["local", "--out", str(out)]) == code
    (violation,) = json.loads((out / "policy.json").read_text())
    assert violation["policy"] == "deny-deployments"
    assert violation["level"] == level.value
    assert violation["message"] == "no deployments allowed"
    assert violation["resource"].endswith("::determined/determined-master")


def test_generated_passwords_are_redacted(tmp_path):
    out = tmp_path / "o"
    assert cli.main(["local", "--out", str(out)]) == 0
    master = yaml.safe_load((out / "master.yaml").read_text())
    assert master["db"]["password"] == "[secret]"
    assert master["security"]["initial_user_password"] == "[secret]"
    assert "MockSecret" not in "".join(p.read_text() for p in out.rglob("*") if p.is_file())


def test_manifests_keep_whole_numbers_as_integers(tmp_path):
    out = tmp_path / "o"
    assert cli.main(["local", "--out", str(out)]) == 0
    sts = yaml.safe_load((out / "manifests" / "determined--statefulset--determined-db.yaml").read_text())
    assert sts["spec"]["replicas"] == 1 and isinstance(sts["spec"]["replicas"], int)
    port = sts["spec"]["template"]["spec"]["containers"][0]["ports"][0]["containerPort"]
    assert port == 5432 and isinstance(port, int)
    assert list(sts)[:3] == ["apiVersion", "kind", "metadata"]


# --- a clean exit ----------------------------------------------------------------------------


def test_every_event_loop_the_plan_causes_to_be_created_is_closed(tmp_path, monkeypatch):
    # The run's own, one per thread Pulumi runs the mock monitor on, one per async policy:
    # an unclosed loop is finalized at exit in no set order with its self-pipe, and now and
    # then prints "Exception ignored in BaseEventLoop.__del__" after a successful plan.
    import policies.catalog

    created = []
    loop_policy = asyncio.get_event_loop_policy()
    new_event_loop = loop_policy.new_event_loop

    def tracked():
        loop = new_event_loop()
        created.append(loop)
        return loop

    monkeypatch.setattr(loop_policy, "new_event_loop", tracked)

    async def validate(args, report):
        await asyncio.sleep(0)

    monkeypatch.setattr(
        policies.catalog,
        "policies",
        lambda context: [ResourceValidationPolicy("async", "async", validate, EnforcementLevel.ADVISORY)],
    )
    for preview in ([], ["--preview"]):
        before = len(created)
        assert cli.main(["local", "--out", str(tmp_path / "o"), *preview]) == 0
        # The run's loop, at least one in the executor, one per resource for the policy.
        assert len(created) - before > 2
    assert [loop for loop in created if not loop.is_closed()] == []


# --- internal errors -----------------------------------------------------------------------


def test_an_internal_error_is_one_line_naming_it(tmp_path, monkeypatch, capsys):
    program = runner.program()

    def boom():
        raise RuntimeError("boom\nsecond line")

    monkeypatch.setattr(program, "main", boom)
    assert cli.main(["local", "--out", str(tmp_path / "o")]) == 3
    assert capsys.readouterr().err == (
        "internal error: RuntimeError: boom second line; rerun with --debug for the traceback\n"
    )
    assert cli.main(["local", "--out", str(tmp_path / "o"), "--debug"]) == 3
    err = capsys.readouterr().err
    assert err.startswith("Traceback (most recent call last):")
    assert err.endswith("internal error: RuntimeError: boom second line\n")
    assert not (tmp_path / "o").exists()


def test_an_internal_error_while_handling_the_users_values_shows_only_its_type(tmp_path, monkeypatch, capsys):
    def prepare(config, secret_keys):
        raise ValueError(f"cannot handle {config['determined:master']}")

    monkeypatch.setattr(runner, "prepare", prepare)
    path = write_stack(tmp_path, raw_config(master={"initialUserPassword": "Real-Init-Pass-1"}))
    assert cli.main(["--config", str(path), "--out", str(tmp_path / "o")]) == 3
    assert capsys.readouterr().err == "internal error: ValueError; rerun with --debug for the traceback\n"


def test_an_internal_error_quoting_a_real_secret_shows_only_its_type(tmp_path, monkeypatch, capsys):
    def run(prepared, stack, preview=False):
        raise KeyError(f"lost {prepared.cfg.master.initial_user_password.get_secret_value()}")

    monkeypatch.setattr(runner, "run", run)
    path = write_stack(tmp_path, raw_config(master={"initialUserPassword": "Real-Init-Pass-1"}))
    assert cli.main(["--config", str(path), "--out", str(tmp_path / "o")]) == 3
    assert capsys.readouterr().err == "internal error: KeyError; rerun with --debug for the traceback\n"


# --- every bad input, as a user runs it ----------------------------------------------------


@dataclass(frozen=True)
class Case:
    args: Callable[[Path], list[str]]
    code: int
    # The whole of stderr (a regular expression), or None to check only what is below.
    stderr: str | None
    # Text that must appear nowhere in the output (a secret the input holds).
    hidden: str | None = None
    # Python run before the command line (`-c`), to break the program on purpose.
    patch: str = ""
    # Options of the Python interpreter, besides `-W always::ResourceWarning`.
    python: tuple[str, ...] = ()


def stack(text: str, name: str = "Pulumi.t.yaml") -> Callable[[Path], list[str]]:
    def args(directory: Path) -> list[str]:
        (directory / name).write_text(textwrap.dedent(text))
        return ["--config", name, "--out", "out"]

    return args


def stack_bytes(data: bytes) -> Callable[[Path], list[str]]:
    def args(directory: Path) -> list[str]:
        (directory / "Pulumi.t.yaml").write_bytes(data)
        return ["--config", "Pulumi.t.yaml", "--out", "out"]

    return args


def valid(out: str = "out") -> Callable[[Path], list[str]]:
    def args(directory: Path) -> list[str]:
        write_stack(directory, raw_config(database={"password": "Real-Db-Pass-1"}))
        (directory / "file").write_text("x")
        return ["--config", "Pulumi.t.yaml", "--out", out]

    return args


def with_environment(environment: object) -> Callable[[Path], list[str]]:
    """A valid stack that also imports Pulumi ESC environments."""

    def args(directory: Path) -> list[str]:
        config = {f"determined:{k}": v for k, v in raw_config().items()}
        document = {"environment": environment, "config": config}
        (directory / "Pulumi.t.yaml").write_text(yaml.safe_dump(document))
        return ["--config", "Pulumi.t.yaml", "--out", "out"]

    return args


ERROR = r"^error: {}\n$"
ESC_WARNING = (
    r"^warning: the stack imports Pulumi ESC environments \({}\) that the offline plan cannot open: "
    r"config they supply \(pulumiConfig\) is not in this plan, and `pulumi up` would use it\n$"
)
BREAK_PROGRAM = """
from plan import runner
program = runner.program()
def main():
    raise RuntimeError("boom")
program.main = main
"""
LEAK_SECRET = """
from plan import runner
program = runner.program()
original = program.main
def main():
    import pulumi_kubernetes as k8s
    from components.config import load_config, read_pulumi_config
    det = original()
    password = load_config(read_pulumi_config()).database.password.get_secret_value()
    k8s.core.v1.ConfigMap("leak", metadata={"name": "leak"}, data={"p": password})
    return det
program.main = main
"""
BOGUS_MASTER_KEY = """
import components.determined.master_yaml as master_yaml
original = master_yaml.master_config
def master_config(*args, **kwargs):
    return {**original(*args, **kwargs), "bogus_key": 1}
master_yaml.master_config = master_config
"""
DENY_PACK_PATCH = f"""
import os
import plan.policy_check
plan.policy_check.PACK = plan.policy_check.PACK.parent / {str(DENY_PACK.relative_to(ROOT))!r}
"""
ASYNC_POLICY = DENY_PACK_PATCH + "os.environ['DENY_ASYNC'] = '1'\n"
MANDATORY_POLICY = DENY_PACK_PATCH + "os.environ['DENY_LEVEL'] = 'mandatory'\n"

CASES: dict[str, Case] = {
    # Success, a mandatory policy violated.
    "a valid stack": Case(valid(), 0, r"^$"),
    "a mandatory policy violated": Case(valid(), 1, r"^$", patch=MANDATORY_POLICY),
    # Every event loop closed: in development mode an unclosed one is reported (asyncio's
    # debug mode adds its own notes on slow steps, so stderr is not checked as a whole).
    "a valid stack in development mode": Case(valid(), 0, None, python=("-X", "dev")),
    "a first preview in development mode": Case(
        lambda d: [*valid()(d), "--preview"], 0, None, python=("-X", "dev")
    ),
    "an async policy": Case(valid(), 0, r"^$", patch=ASYNC_POLICY),
    # Usage errors (argparse prints its usage and one error line).
    "no arguments": Case(
        lambda d: [], 2, r"(?s)^usage: .*\npython -m plan: error: one of the arguments .*\n$"
    ),
    "an unknown option": Case(
        lambda d: ["local", "--bogus"], 2, r"(?s)^usage: .*error: unrecognized arguments: --bogus\n$"
    ),
    "a stack name and --config": Case(
        lambda d: ["local", "--config", "x"], 2, r"(?s)^usage: .*not allowed with.*\n$"
    ),
    # The stack file.
    "a missing stack": Case(
        lambda d: ["nosuch", "--out", "out"],
        2,
        ERROR.format(r"no stack file /\S+/stacks/Pulumi\.nosuch\.yaml"),
    ),
    "a stack name that is a path": Case(
        lambda d: ["../x", "--out", "out"], 2, ERROR.format(r"'\.\./x' is not a stack name .*")
    ),
    "a stack name ending in a newline": Case(
        lambda d: ["local\n", "--out", "out"], 2, ERROR.format(r"'local\\n' is not a stack name \(.*\)")
    ),
    "a --config file name whose stack name ends in a newline": Case(
        lambda d: [
            (d / "Pulumi.x\n.yaml").write_text((ROOT / "stacks" / "Pulumi.local.yaml").read_text()),
            "--config",
            "Pulumi.x\n.yaml",
        ][1:],
        2,
        ERROR.format(r"'x\\n' is not a stack name \(.*\); it comes from the file name 'Pulumi\.x\\n\.yaml'"),
    ),
    "a missing --config file": Case(
        lambda d: ["--config", "nope.yaml", "--out", "out"], 2, ERROR.format(r"no stack file nope\.yaml")
    ),
    "a directory as --config": Case(
        lambda d: [(d / "Pulumi.dir.yaml").mkdir(), "--config", "Pulumi.dir.yaml", "--out", "out"][1:],
        2,
        ERROR.format(r"Pulumi\.dir\.yaml is a directory, not a stack file"),
    ),
    "a binary file": Case(
        stack_bytes(b"\x7fELF\x02\x01\x01\x00\x00\x00"),
        2,
        ERROR.format(r"Pulumi\.t\.yaml is not a text file \(it holds NUL bytes\)"),
    ),
    "a file that is not UTF-8": Case(
        stack_bytes(b"config:\n  determined:cloud: existing\n  determined:x: Sup3r-S\xe9cret\n"),
        2,
        ERROR.format(r"Pulumi\.t\.yaml is not UTF-8 text \(an invalid byte on line 3\)"),
        hidden="Sup3r",
    ),
    "a YAML syntax error on a line holding a password": Case(
        stack("""\
            config:
              determined:cloud: existing
              determined:database: {password: "Sup3r-Secret-1, host: db}
            """),
        2,
        ERROR.format(
            r"Pulumi\.t\.yaml is not valid YAML at line 4, column 1: found unexpected end of stream"
        ),
        hidden="Sup3r",
    ),
    "an unclosed flow mapping holding a password": Case(
        stack("""\
            config:
              determined:cloud: existing
              determined:database: {password: Sup3r-Secret-1
            """),
        2,
        ERROR.format(
            r"Pulumi\.t\.yaml is not valid YAML at line 4, column 1: expected ',' or '}', but got '<stream end>'"
        ),
        hidden="Sup3r",
    ),
    "a password YAML reads as a tag": Case(
        stack("""\
            config:
              determined:database:
                password: !Sup3r-Secret-1
            """),
        2,
        ERROR.format(
            r"Pulumi\.t\.yaml is not valid YAML at line 3, column 15: could not determine a constructor for the tag"
        ),
        hidden="Sup3r",
    ),
    "a control character": Case(
        stack_bytes(b"config:\n  determined:cloud: exi\x01sting\n"),
        2,
        ERROR.format(
            r"Pulumi\.t\.yaml is not valid YAML: a character YAML does not allow at line 2, column 24"
        ),
    ),
    "a key twice": Case(
        stack("""\
            config:
              determined:cloud: existing
              determined:namespace: Sup3r-a
              determined:namespace: Sup3r-b
            """),
        2,
        ERROR.format(
            r"Pulumi\.t\.yaml is not valid YAML at line 4, column 3: the key 'determined:namespace' appears twice"
        ),
        hidden="Sup3r",
    ),
    "a key twice deep in a value": Case(
        stack("""\
            config:
              determined:cloud: existing
              determined:database:
                mode: external
                credentials: [{user: u, password: Sup3r-a, password: Sup3r-b}]
            """),
        2,
        ERROR.format(
            r"Pulumi\.t\.yaml is not valid YAML at line 5, column 48: the key 'password' appears twice"
        ),
        hidden="Sup3r",
    ),
    "a top level that is not a mapping": Case(
        stack("- config\n"),
        2,
        ERROR.format(r"Pulumi\.t\.yaml: expected a mapping at the top level \(with a 'config' mapping\)"),
    ),
    "a config that is not a mapping": Case(
        stack("config: [determined:cloud]\n"),
        2,
        ERROR.format(r"Pulumi\.t\.yaml: 'config' must be a mapping of '<namespace>:<key>' to values"),
    ),
    "a key without its project": Case(
        stack("config:\n  cloud: existing\n"),
        2,
        ERROR.format(
            r"Pulumi\.t\.yaml: config key 'cloud' is not of the form <namespace>:<key> \(for example determined:cloud\)"
        ),
    ),
    "a key that is not a string": Case(
        stack("config:\n  1: existing\n"),
        2,
        ERROR.format(r"Pulumi\.t\.yaml: config key 1 \(a number\) is not of the form <namespace>:<key>"),
    ),
    "a value with no JSON form": Case(
        stack("config:\n  determined:cluster: !!binary aGVsbG8=\n"),
        2,
        ERROR.format(r"Pulumi\.t\.yaml: the value of determined:cluster holds YAML that has no JSON form .*"),
    ),
    # The configuration (one line per problem after the header).
    "configuration errors": Case(
        stack("config:\n  determined:cloud: existing\n  determined:nope: 1\n  determined:scheduler: x\n"),
        2,
        r"^Configuration errors in Pulumi\.t\.yaml:\n(  determined:\S+: [^\n]+\n){3,}$",
    ),
    "an empty stack file": Case(
        stack(""), 2, r"^Configuration errors in Pulumi\.t\.yaml:\n(  determined:\S+: [^\n]+\n)+$"
    ),
    "a date where a version belongs": Case(
        stack("config:\n  determined:cloud: existing\n  determined:master: {version: 2024-01-01}\n"),
        2,
        r"^Configuration errors in Pulumi\.t\.yaml:\n(  determined:\S+: [^\n]+\n)+$",
    ),
    "a password that breaks Determined's rule": Case(
        stack(
            "config:\n  determined:cloud: existing\n  determined:master: {initialUserPassword: weakpass}\n"
        ),
        2,
        r"(?m)^  determined:master\.initialUserPassword: does not meet Determined's password rule",
        hidden="weakpass",
    ),
    # The output directory.
    "--out that is a file": Case(
        valid(out="file"), 2, ERROR.format(r"--out file is a file, not a directory")
    ),
    "--out below a file": Case(
        valid(out="file/sub"), 2, ERROR.format(r"--out file/sub: file is a file, not a directory")
    ),
    "--out empty (not the working directory)": Case(
        valid(out=""), 2, ERROR.format(r"--out is empty; give a path")
    ),
    "--config empty": Case(
        lambda d: ["--config", "", "--out", "out"], 2, ERROR.format(r"--config is empty; give a path")
    ),
    "--out the root directory (refused from its listing)": Case(
        valid(out="/"),
        2,
        ERROR.format(r"--out / holds files the plan did not write \([^/)]+\); .*"),
    ),
    "--out with a name too long for its staging directory": Case(
        valid(out="o" * 241),
        2,
        ERROR.format(r"--out o{30}\.\.\.o{20}: its name is 241 bytes long; it may have at most 240 \(.*\)"),
    ),
    # Pulumi ESC: planned without what the environments supply, and said so.
    "a stack importing ESC environments": Case(
        with_environment(["ml-platform/prod-secrets", "shared/creds"]),
        0,
        ESC_WARNING.format("ml-platform/prod-secrets, shared/creds"),
    ),
    "a stack with an inline ESC environment": Case(
        with_environment({"imports": ["base"], "values": {"pulumiConfig": {"determined:x": 1}}}),
        0,
        ESC_WARNING.format("base, its inline values"),
    ),
    "--out holding the stack file": Case(
        valid(out="."),
        2,
        ERROR.format(r"--out \. holds files the plan did not write \(Pulumi\.t\.yaml\); .*"),
    ),
    # Bugs: one line, exit 3.
    "an internal error": Case(
        valid(),
        3,
        r"^internal error: RuntimeError: boom; rerun with --debug for the traceback\n$",
        patch=BREAK_PROGRAM,
    ),
    "a master.yaml the master would not accept": Case(
        valid(),
        3,
        ERROR.format(
            r"master\.yaml would not be accepted by Determined 0\.38\.1: bogus_key: unknown key: .*"
        ),
        patch=BOGUS_MASTER_KEY,
    ),
    "a secret on its way into an output": Case(
        valid(),
        3,
        ERROR.format(
            r"a secret value would be written to manifests/cluster--configmap--leak\.yaml; nothing was written"
        ),
        patch=LEAK_SECRET,
        hidden="PlanSecret",
    ),
}


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """Every case in a fresh process, all at once, each in a directory of its own."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    started = {}
    for name, case in CASES.items():
        directory = tmp_path_factory.mktemp("case")
        args = case.args(directory)
        # An unclosed event loop or file is reported, not silently collected.
        python = [sys.executable, "-W", "always::ResourceWarning", *case.python]
        command = [
            *python,
            "-c",
            case.patch + "\nimport sys\nfrom plan.cli import main\nsys.exit(main(sys.argv[1:]))",
        ]
        if not case.patch:
            command = [*python, "-m", "plan"]
        before = {p.name: p.read_bytes() for p in directory.iterdir() if p.is_file()}
        process = subprocess.Popen(
            [*command, *args],
            cwd=directory,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        started[name] = (directory, before, process)
    done = {}
    for name, (directory, before, process) in started.items():
        stdout, stderr = process.communicate(timeout=120)
        done[name] = (directory, before, process.returncode, stdout, stderr)
    return done


@pytest.mark.parametrize("name", list(CASES))
def test_every_input_gets_its_exit_status_and_message_and_never_a_traceback(runs, name):
    case = CASES[name]
    directory, before, code, stdout, stderr = runs[name]
    assert code == case.code, stderr
    for noise in ("Traceback", "Exception ignored", "ResourceWarning", "never awaited", "was destroyed"):
        assert noise not in stdout + stderr, stderr
    if case.stderr is not None:
        assert re.search(case.stderr, stderr), stderr
    if case.hidden:
        assert case.hidden not in stdout + stderr
    # The user's files are untouched, whatever happened.
    assert {p.name: p.read_bytes() for p in directory.iterdir() if p.is_file()} == before
    if code >= 2:
        assert not (directory / "out").exists() and not (directory / "build").exists() and stdout == ""
        assert [p for p in directory.iterdir() if p.name.startswith(".")] == []
    else:
        assert (directory / "out" / MARKER).is_file()
        assert stdout.startswith("Plan for stack 't'")


# --- master.yaml against the master's own key set ------------------------------------------


def test_a_master_yaml_the_master_would_not_accept_fails_the_plan(tmp_path, monkeypatch, capsys):
    import components.determined.master_yaml as master_yaml

    original = master_yaml.master_config

    def master_config(*args, **kwargs):
        config = original(*args, **kwargs)
        config["db"]["sslmode"] = "disable"  # the key is ssl_mode
        return {**config, "bogus_key": 1}

    monkeypatch.setattr(master_yaml, "master_config", master_config)
    out = tmp_path / "o"
    assert cli.main(["local", "--out", str(out)]) == 3
    assert capsys.readouterr().err == (
        "error: master.yaml would not be accepted by Determined 0.38.1: db.sslmode: unknown key: "
        "the master refuses to start (and 1 more)\n"
    )
    assert not out.exists()


def test_a_release_the_key_set_does_not_describe_is_refused_and_never_planned_unchecked(tmp_path, capsys):
    # The config refuses a release beyond the key data (components/config/master_rules.py, version_problems);
    # the plan's own check still only warns if one ever reaches it.
    path = write_stack(tmp_path, raw_config(master={"version": "0.99.0"}))
    assert cli.main(["--config", str(path), "--out", str(tmp_path / "o")]) == 2
    assert "determined:master.version: Determined 0.99.0 is newer than" in capsys.readouterr().err
    assert runner.check_master_yaml("{}", "0.99.0", set()) == [
        "master.yaml not checked against Determined 0.99.0: its key set is known for 0.26.0 to 0.38.1"
    ]


def test_the_plan_checks_master_yaml_against_its_versions_key_set(monkeypatch):
    from components.config import master_yaml_schema

    checked = []
    original = master_yaml_schema.check

    def check(document, version, **kwargs):
        problems = original(document, version, **kwargs)
        checked.append((document, version, problems))
        return problems

    monkeypatch.setattr(master_yaml_schema, "check", check)
    path = stackfile.STACKS_DIR / "Pulumi.local.yaml"
    config, secret_keys = stackfile.load_stack_file(path)
    prepared = runner.prepare(config, secret_keys)
    result = runner.run(prepared, stack_name(path), policies=[])
    assert checked == [(yaml.safe_load(result.master_yaml), prepared.cfg.master.version, [])]


@pytest.mark.parametrize("path", list(stack_files()), ids=stack_name)
def test_every_stacks_master_yaml_is_accepted_by_its_version(path):
    from components.config import master_yaml_schema

    config, secret_keys = stackfile.load_stack_file(path)
    version = runner.prepare(config, secret_keys).cfg.master.version
    result = planned(stack_name(path))  # planned once per session, the check above included
    assert master_yaml_schema.check(yaml.safe_load(result.master_yaml), version) == []
    assert result.warnings == []


def test_the_esc_warning_comes_before_the_problems_an_environment_might_have_solved(tmp_path, capsys):
    path = tmp_path / "Pulumi.t.yaml"
    path.write_text("environment: [org/creds]\nconfig: {}\n")
    assert cli.main(["--config", str(path), "--out", str(tmp_path / "o")]) == 2
    lines = capsys.readouterr().err.splitlines()
    assert lines[0].startswith("warning: the stack imports Pulumi ESC environments (org/creds) ")
    assert lines[1] == f"Configuration errors in {path}:"
    assert "  determined:cloud: required" in lines
