"""The offline plan's interface (CONTRACT.md §2): files written, exit codes, secrets."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from conftest import ROOT, raw_config
from pulumi_policy import EnforcementLevel, ResourceValidationPolicy

import plan.__main__ as cli
from plan import stackfile

SECRETS = {
    "master": "Init-User-Pass-7",
    "db": "Ext-Db-Password-7",
    "s3": "minio-secret-key-7",
    "access": "minio-access-key-7",
}


def write_stack(tmp_path: Path, raw: dict, name: str = "t") -> Path:
    path = tmp_path / f"Pulumi.{name}.yaml"
    path.write_text(yaml.safe_dump({"config": {f"determined:{k}": v for k, v in raw.items()}}))
    return path


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
    printed = capsys.readouterr().out
    assert "Plan for stack 'local'" in printed
    assert "kubernetes:apps/v1:Deployment" in printed


def test_config_path_and_stack_name_from_the_file_name(tmp_path):
    path = write_stack(tmp_path, raw_config(), name="mine")
    assert cli.main(["--config", str(path), "--out", str(tmp_path / "o")]) == 0
    resources = json.loads((tmp_path / "o" / "resources.json").read_text())
    assert any("determined-mine" in r["parent"] for r in resources if r["parent"])


def test_config_error_exits_2_with_one_line_per_problem(tmp_path, capsys):
    path = write_stack(tmp_path, raw_config(scheduler="preemption", defaultAuxPool="nope"))
    assert cli.main(["--config", str(path), "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    lines = [line.strip() for line in err.splitlines()[1:]]
    assert len(lines) == 2
    assert lines[0].startswith("determined:scheduler: 'preemption' is not accepted")
    assert not (tmp_path / "o").exists()


def test_config_error_from_the_command_line_has_no_traceback(tmp_path):
    path = write_stack(tmp_path, raw_config(cloud="aks"))
    proc = subprocess.run(
        [sys.executable, "-m", "plan", "--config", str(path), "--out", str(tmp_path / "o")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 2
    assert "determined:cloud: must be one of 'gke', 'eks' or 'existing' (got 'aks')" in proc.stderr
    assert "Traceback" not in proc.stderr + proc.stdout


def test_missing_stack_file_exits_2(tmp_path, capsys):
    assert cli.main(["no-such-stack", "--out", str(tmp_path)]) == 2
    assert "no stack file" in capsys.readouterr().err


def _deny_deployments(level: EnforcementLevel) -> ResourceValidationPolicy:
    def validate(args, report):
        if args.resource_type == "kubernetes:apps/v1:Deployment":
            report("no deployments allowed")

    return ResourceValidationPolicy("deny-deployments", "test policy", validate, level)


@pytest.mark.parametrize(("level", "code"), [(EnforcementLevel.MANDATORY, 1), (EnforcementLevel.ADVISORY, 0)])
def test_policy_violations_decide_the_exit_code(tmp_path, monkeypatch, level, code):
    import policies.rules

    monkeypatch.setattr(policies.rules, "POLICIES", [_deny_deployments(level)])
    out = tmp_path / "o"
    assert cli.main(["local", "--out", str(out)]) == code
    (violation,) = json.loads((out / "policy.json").read_text())
    assert violation["policy"] == "deny-deployments"
    assert violation["level"] == level.value
    assert violation["message"] == "no deployments allowed"
    assert violation["resource"].endswith("::determined/determined-master")


def test_no_secret_value_appears_in_any_plan_output(tmp_path):
    raw = raw_config(
        master={"initialUserPassword": SECRETS["master"]},
        database={"mode": "external", "host": "pg", "user": "det", "password": SECRETS["db"]},
        checkpointStorage={
            "type": "s3",
            "bucket": "ckpt",
            "endpointUrl": "http://minio:9000",
            "accessKey": SECRETS["access"],
            "secretKey": SECRETS["s3"],
        },
    )
    out = tmp_path / "o"
    assert cli.main(["--config", str(write_stack(tmp_path, raw)), "--out", str(out)]) == 0
    files = [p for p in out.rglob("*") if p.is_file()]
    assert len(files) > 5
    for path in files:
        text = path.read_text()
        for secret in SECRETS.values():
            assert secret not in text, f"{secret} leaked into {path}"
    master = yaml.safe_load((out / "master.yaml").read_text())
    assert master["db"]["password"] == "[secret]"
    assert master["security"]["initial_user_password"] == "[secret]"
    assert master["checkpoint_storage"]["secret_key"] == "[secret]"
    assert master["checkpoint_storage"]["endpoint_url"] == "http://minio:9000"


def test_generated_passwords_are_redacted_too(tmp_path):
    out = tmp_path / "o"
    assert cli.main(["local", "--out", str(out)]) == 0
    master = yaml.safe_load((out / "master.yaml").read_text())
    assert master["db"]["password"] == "[secret]"
    assert master["security"]["initial_user_password"] == "[secret]"
    assert "MockSecret" not in "".join(p.read_text() for p in out.rglob("*") if p.is_file())


def test_encrypted_stack_values_are_accepted_and_marked_secret(tmp_path):
    raw = raw_config(master={"initialUserPassword": {"secure": "v1:abcdef"}})
    config, secret_keys = stackfile.load_stack_file(write_stack(tmp_path, raw))
    assert secret_keys == ["determined:master"]
    assert json.loads(config["determined:master"])["initialUserPassword"] == stackfile.ENCRYPTED_STAND_IN
    out = tmp_path / "o"
    assert cli.main(["--config", str(tmp_path / "Pulumi.t.yaml"), "--out", str(out)]) == 0
    assert stackfile.ENCRYPTED_STAND_IN not in (out / "master.yaml").read_text()


def test_manifests_keep_whole_numbers_as_integers(tmp_path):
    out = tmp_path / "o"
    assert cli.main(["local", "--out", str(out)]) == 0
    sts = yaml.safe_load((out / "manifests" / "determined--statefulset--determined-db.yaml").read_text())
    assert sts["spec"]["replicas"] == 1 and isinstance(sts["spec"]["replicas"], int)
    port = sts["spec"]["template"]["spec"]["containers"][0]["ports"][0]["containerPort"]
    assert port == 5432 and isinstance(port, int)
    assert list(sts)[:3] == ["apiVersion", "kind", "metadata"]
