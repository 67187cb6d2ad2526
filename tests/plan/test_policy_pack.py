"""Policy packs started as the Pulumi CLI starts them (plan/analyzer.py): the command, the
directory and the environment; the port read from stdout; nothing left running, whatever
the pack does."""

from __future__ import annotations

import importlib.metadata as metadata
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml
from conftest import ROOT
from packaging.requirements import Requirement
from packs import alive, claims, ended, write_pack
from pulumi.runtime.proto import analyzer_pb2

from plan import analyzer, policy_check
from plan.errors import PlanFailure
from plan.policy_check import Deployment
from policies import catalog
from policies.rule import context_from_config

VENV = ROOT / ".venv"
RESOURCES = claims()
SESSION = analyzer.Session(
    project="determined",
    stack="gke-dev",
    config={"determined:environment": "prod", "determined:cloud": "gke"},
    secret_keys=("determined:master.initialUserPassword",),
)


def test_the_cli_runs_the_pack_with_its_virtualenvs_python_in_its_directory():
    spec = analyzer.launch(ROOT / "policies", SESSION, environ={"PATH": "/usr/bin", "HOME": "/h"})
    assert spec.argv == [
        str(VENV / "bin" / "python"),
        "-u",
        "-m",
        "pulumi.policy",
        "127.0.0.1:1",
        str(ROOT / "policies"),
    ]
    assert spec.cwd == ROOT / "policies"


def test_the_pack_gets_the_clis_environment_activated_and_the_stacks_variables():
    shell = {
        "PATH": "/usr/bin",
        "HOME": "/h",
        "PYTHONHOME": "/elsewhere",
        "VIRTUAL_ENV": "/other",
        # What a shell may carry for real runs: the plan's stack file decides.
        "PULUMI_CONFIG": '{"determined:environment": "dev"}',
        "PULUMI_CONFIG_SECRET_KEYS": "[]",
        "PULUMI_STACK": "other",
    }
    env = analyzer.launch(ROOT / "policies", SESSION, environ=shell).env
    assert env == {
        "PATH": f"{VENV / 'bin'}:/usr/bin",
        "HOME": "/h",
        "VIRTUAL_ENV": str(VENV),
        "PULUMI_PROJECT": "determined",
        "PULUMI_STACK": "gke-dev",
        "PULUMI_DRY_RUN": "false",
        "PULUMI_CONFIG": '{"determined:cloud":"gke","determined:environment":"prod"}',
    }
    preview = analyzer.Session("determined", "s", {}, dry_run=True, organization="acme")
    env = analyzer.launch(ROOT / "policies", preview, environ={}).env
    assert env["PULUMI_DRY_RUN"] == "true" and env["PULUMI_ORGANIZATION"] == "acme"
    assert "PULUMI_CONFIG" not in env  # empty: not set, as the language host does


def test_a_pack_of_another_runtime_is_refused(tmp_path):
    (tmp_path / "PulumiPolicy.yaml").write_text("runtime: nodejs\n")
    with pytest.raises(analyzer.PackError, match="runtime 'nodejs', not python"):
        analyzer.launch(tmp_path, SESSION)


def test_the_pack_process_sees_what_the_cli_gives_it(tmp_path):
    pack = write_pack(
        tmp_path / "pack",
        """
        def validate(args, report):
            names = ("PULUMI_PROJECT", "PULUMI_STACK", "PULUMI_DRY_RUN", "PULUMI_CONFIG", "VIRTUAL_ENV")
            seen = {"cwd": os.getcwd(), "argv": sys.argv[1:], "python": sys.prefix}
            report(json.dumps(seen | {n: os.environ.get(n) for n in names}))

        PolicyPack("seen", [StackValidationPolicy("seen", "d", validate, EnforcementLevel.ADVISORY)])
        """,
    )
    deployment = Deployment("s", RESOURCES, config={"determined:cloud": "gke"}, preview=True)
    (violation,) = policy_check.run_pack(deployment, pack=pack)
    assert json.loads(violation["message"]) == {
        "cwd": str(pack),
        "argv": ["127.0.0.1:1", str(pack)],
        "python": str(VENV),
        "PULUMI_PROJECT": "determined",
        "PULUMI_STACK": "s",
        "PULUMI_DRY_RUN": "true",
        "PULUMI_CONFIG": '{"determined:cloud":"gke"}',
        "VIRTUAL_ENV": str(VENV),
    }


@pytest.mark.parametrize("environment", ["dev", "prod"])
def test_the_projects_pack_serves_every_rule_at_its_environments_level(environment):
    session = analyzer.Session("determined", "s", {"determined:environment": environment})
    with (
        analyzer.started(analyzer.launch(policy_check.PACK, session)) as (port, _),
        analyzer.connected(port) as client,
    ):
        client.configure_stack(session)
        info = client.info()
    levels = {
        analyzer_pb2.ADVISORY: "advisory",
        analyzer_pb2.MANDATORY: "mandatory",
        analyzer_pb2.DISABLED: "off",
    }
    assert info.name == policy_check.PACK_NAME
    assert [(p.name, levels[p.enforcementLevel]) for p in info.policies] == [
        (r.name, r.level(context_from_config(session.config))) for r in catalog.RULES
    ]


# --- a pack that misbehaves ends, and so does everything it started ------------------------


def _pids(path: Path) -> list[int]:
    return [int(p) for p in path.read_text().split()] if path.exists() else []


@pytest.fixture
def pids(tmp_path):
    """A file the test's pack writes its pids to; whatever still runs is killed after the
    test (a failing test must not leave a pack behind)."""
    path = tmp_path / "pids"
    yield path
    for pid in _pids(path):
        if alive(pid):
            os.kill(pid, signal.SIGKILL)


def test_a_pack_that_writes_no_port_is_given_up_and_ended_with_its_children(tmp_path, monkeypatch, pids):
    monkeypatch.setattr(analyzer, "START_TIMEOUT", 2.0)
    pack = write_pack(
        tmp_path / "pack",
        f"""
        child = subprocess.Popen(["sleep", "60"])
        open({str(pids)!r}, "w").write(f"{{os.getpid()}} {{child.pid}}")
        time.sleep(60)
        """,
    )
    start = time.monotonic()
    with pytest.raises(PlanFailure, match="wrote no port within 2 s"):
        policy_check.run_pack(Deployment("s", RESOURCES), pack=pack)
    assert time.monotonic() - start < 10
    assert len(_pids(pids)) == 2 and ended(_pids(pids))


def test_a_pack_that_fails_to_start_says_why(tmp_path):
    pack = write_pack(tmp_path / "pack", 'raise RuntimeError("the pack is broken")\n')
    with pytest.raises(
        PlanFailure, match=r"exited \(status 1\) before writing its port: RuntimeError: the pack is broken$"
    ):
        policy_check.run_pack(Deployment("s", RESOURCES), pack=pack)


def test_a_pack_that_writes_something_else_than_a_port_is_refused(tmp_path):
    pack = write_pack(tmp_path / "pack", 'print("ready!")\ntime.sleep(60)\n')
    with pytest.raises(PlanFailure, match="invalid port to stdout: 'ready!'"):
        policy_check.run_pack(Deployment("s", RESOURCES), pack=pack)


def test_a_stuck_pack_is_timed_out_and_ended(tmp_path, monkeypatch, pids):
    monkeypatch.setattr(analyzer, "CALL_TIMEOUT", 2.0)
    pack = write_pack(
        tmp_path / "pack",
        f"""
        open({str(pids)!r}, "w").write(str(os.getpid()))

        def validate(args, report):
            time.sleep(60)

        PolicyPack("stuck", [ResourceValidationPolicy("stuck", "d", validate, EnforcementLevel.ADVISORY)])
        """,
    )
    start = time.monotonic()
    with pytest.raises(PlanFailure, match="did not answer Analyze within 2 s"):
        policy_check.run_pack(Deployment("s", RESOURCES), pack=pack)
    assert time.monotonic() - start < 15
    assert ended(_pids(pids))


def test_a_pack_that_ignores_being_told_to_stop_is_killed(tmp_path, monkeypatch, pids):
    monkeypatch.setattr(analyzer, "STOP_GRACE", 0.5)
    pack = write_pack(
        tmp_path / "pack",
        f"""
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        open({str(pids)!r}, "w").write(str(os.getpid()))
        PolicyPack("deaf", [ResourceValidationPolicy("deaf", "d", lambda a, r: None, EnforcementLevel.ADVISORY)])
        """,
    )
    assert policy_check.run_pack(Deployment("s", RESOURCES), pack=pack) == []
    assert _pids(pids) and ended(_pids(pids)[:1])


def test_a_pack_that_writes_a_lot_does_not_block(tmp_path):
    pack = write_pack(
        tmp_path / "pack",
        """
        def validate(args, report):
            sys.stdout.write("x" * 1_000_000)
            sys.stderr.write("y" * 1_000_000)
            report("done")

        PolicyPack("loud", [StackValidationPolicy("loud", "d", validate, EnforcementLevel.ADVISORY)])
        """,
    )
    (violation,) = policy_check.run_pack(Deployment("s", RESOURCES), pack=pack)
    assert violation["message"] == "done"


def test_a_plan_told_to_terminate_ends_its_pack(tmp_path, pids):
    pack = write_pack(
        tmp_path / "pack",
        f"""
        def validate(args, report):
            open({str(pids)!r}, "w").write(str(os.getpid()))
            time.sleep(60)

        PolicyPack("slow", [StackValidationPolicy("slow", "d", validate, EnforcementLevel.ADVISORY)])
        """,
    )
    script = (
        "import sys; from pathlib import Path\n"
        "from packs import claims; from plan import policy_check\n"
        "policy_check.run_pack(policy_check.Deployment('s', claims()), pack=Path(sys.argv[1]))\n"
    )
    # The project is installed (pyproject.toml); the test helpers (packs, conftest) are not.
    helpers = os.pathsep.join(str(ROOT / d) for d in ("tests", "tests/plan"))
    plan = subprocess.Popen(
        [sys.executable, "-c", script, str(pack)],
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": helpers},
    )
    deadline = time.monotonic() + 30
    while not _pids(pids) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _pids(pids), "the pack never ran its policy"
    plan.send_signal(signal.SIGTERM)
    _, stderr = plan.communicate(timeout=15)
    assert plan.returncode == 128 + signal.SIGTERM, stderr
    assert ended(_pids(pids)[:1])


# The program's cloud and Kubernetes SDKs: the pack installs without them.
APP_DISTRIBUTIONS = {"pulumi-gcp", "pulumi-aws", "pulumi-kubernetes", "pulumi-random"}
PUBLISH_DOC = ROOT / "docs" / "concepts" / "policies.md"


def normalize(name: str) -> str:
    return name.lower().replace("_", "-").replace(".", "-")


def pins(path: Path) -> dict[str, str]:
    """name (normalized) -> version of each `name==version` line of a requirements file."""
    found = {}
    for line in path.read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            assert "==" in line and not line.startswith("-"), f"{path.name}: {line!r} is not an exact pin"
            name, version = line.split("==")
            found[normalize(name)] = version
    return found


def installed_closure(names: set[str]) -> set[str]:
    """The distributions `names` need, with theirs, as installed here."""
    seen: set[str] = set()
    todo = list(names)
    while todo:
        name = normalize(todo.pop())
        if name in seen:
            continue
        seen.add(name)
        for spec in metadata.requires(name) or []:
            requirement = Requirement(spec)
            if requirement.marker is None or requirement.marker.evaluate({"extra": ""}):
                todo.append(requirement.name)
    return seen


def test_the_packs_requirements_leave_out_the_programs():
    pack = pins(ROOT / "policies" / "requirements.txt")
    program = pins(ROOT / "requirements.txt")
    assert "pulumi-policy" in pack
    assert {name: program.get(name) for name in pack} == pack  # at the program's pins
    assert not APP_DISTRIBUTIONS & installed_closure(set(pack))


def publish(tmp_path: Path) -> Path:
    """The directory the policies page has `pulumi policy publish` upload, made by its script."""
    doc = PUBLISH_DOC.read_text()
    start = doc.index("```sh\nrm -rf build/policy-pack")
    script = doc[start + len("```sh\n") : doc.index("```", start + 3)]
    assert "pulumi policy publish" in script
    for name in ("policies", "components"):
        shutil.copytree(ROOT / name, tmp_path / name, ignore=shutil.ignore_patterns("__pycache__"))
    commands = "\n".join(line for line in script.replace("\\\n", "").splitlines() if "pulumi " not in line)
    subprocess.run(["bash", "-euc", commands], cwd=tmp_path, check=True)
    return tmp_path / "build" / "policy-pack"


def test_the_docs_publishable_pack_starts_with_every_rule(tmp_path):
    """The directory the policies page has `pulumi policy publish` upload holds what the pack reads."""
    bundle = publish(tmp_path)
    assert sorted(p.name for p in bundle.iterdir()) == [
        "PulumiPolicy.yaml",
        "__main__.py",
        "components",
        "policies",
        "requirements.txt",
    ]
    assert (bundle / "requirements.txt").read_text() == (ROOT / "policies" / "requirements.txt").read_text()
    project = yaml.safe_load((bundle / "PulumiPolicy.yaml").read_text())
    assert project["runtime"] == {"name": "python", "options": {"virtualenv": "venv"}} and project["version"]
    # Run it here with the project's virtualenv, as the CLI would run it with the one it creates.
    project["runtime"]["options"]["virtualenv"] = str(VENV)
    (bundle / "PulumiPolicy.yaml").write_text(yaml.safe_dump(project))
    with analyzer.started(analyzer.launch(bundle, SESSION)) as (port, _), analyzer.connected(port) as client:
        client.configure_stack(SESSION)
        info = client.info()
    assert info.name == policy_check.PACK_NAME
    assert [p.name for p in info.policies] == [r.name for r in catalog.RULES]


# What the published pack's modules load, printed as JSON by a Python without site hooks.
LOADED = """
import importlib.metadata as md, json, sys
import policies.catalog, policies.rule
tops = {name.split(".")[0] for name, module in list(sys.modules.items()) if module is not None}
tops -= {"components", "policies"}  # the pack's own (their files are checked apart)
dists = md.packages_distributions()
ours = [m for m in sys.modules if m.split(".")[0] in ("components", "policies")]
print(json.dumps({
    "modules": sorted(m for m in ours if m.startswith("components")),
    "files": sorted({getattr(sys.modules[m], "__file__", None) or "" for m in ours} - {""}),
    "distributions": sorted({d for t in tops for d in dists.get(t, [])}),
}))
"""


def test_the_published_pack_reads_only_what_it_carries_and_requires(tmp_path):
    """The pack's modules imported from the published directory alone (`-S`: no .pth hooks, so
    the project's editable install is not seen) load nothing of the components and no
    distribution outside the pack's requirements."""
    bundle = publish(tmp_path)
    site_packages = next((VENV / "lib").glob("python3*/site-packages"))
    result = subprocess.run(
        [str(VENV / "bin" / "python"), "-S", "-c", LOADED],
        cwd=bundle,
        env={
            "PATH": os.environ.get("PATH", ""),
            "PYTHONPATH": os.pathsep.join([str(bundle), str(site_packages)]),
        },
        capture_output=True,
        text=True,
        check=True,
    )
    loaded = json.loads(result.stdout)
    components = ("components.cluster", "components.determined", "components.addons")
    assert "components.config" in loaded["modules"]
    assert not [m for m in loaded["modules"] if m.startswith(components)]
    assert loaded["files"] and all(f.startswith(str(bundle)) for f in loaded["files"]), loaded["files"]
    allowed = installed_closure(set(pins(bundle / "requirements.txt")))
    assert {normalize(d) for d in loaded["distributions"]} - allowed == set()


def test_a_pack_that_fails_is_one_line_and_exit_3_from_the_cli(tmp_path, monkeypatch, capsys):
    import plan.__main__ as cli

    monkeypatch.setattr(policy_check, "PACK", write_pack(tmp_path / "pack", 'raise RuntimeError("broken")\n'))
    assert cli.main(["local", "--out", str(tmp_path / "o")]) == 3
    assert capsys.readouterr().err == (
        "error: the policy pack exited (status 1) before writing its port: RuntimeError: broken\n"
    )
    assert not (tmp_path / "o").exists()
