"""Secrets in the plan: redacted by their Pulumi marking, never by what their text looks
like; the program runs with stand-ins, so the user's secrets never enter it; a stand-in or
generated secret on its way into an output stops the plan before anything is written."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from conftest import pulumi_config, raw_config
from planning import files, one, plan_for

import plan.__main__ as cli
from components.config import ConfigError
from plan import runner, stackfile, standins
from plan.redaction import SECRET, redact

# Words that are also parts of the plan's ordinary text: image names, hosts, user names.
COMMON_WORDS = ["password", "postgres", "determined", "example", "[secret]", "det"]


def write_stack(directory: Path, raw: dict, name: str = "t") -> Path:
    path = directory / f"Pulumi.{name}.yaml"
    path.write_text(yaml.safe_dump({"config": {f"determined:{k}": v for k, v in raw.items()}}))
    return path


def plan_dir(tmp_path: Path, raw: dict, label: str) -> dict[str, bytes]:
    """Plan `raw` as the command line does (stack 't') and return the files written."""
    stack_dir = tmp_path / label
    stack_dir.mkdir()
    out = tmp_path / f"out-{label}"
    assert cli.main(["--config", str(write_stack(stack_dir, raw)), "--out", str(out)]) == 0
    return files(out)


def in_cluster(password: str, initial: str) -> dict:
    return raw_config(database={"password": password}, master={"initialUserPassword": initial})


def external(password: str) -> dict:
    return raw_config(
        database={
            "mode": "external",
            "host": "db.example.com",
            "name": "determined",
            "user": "determined",
            "password": password,
        }
    )


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("reference")
    return {
        "in-cluster": plan_dir(tmp, in_cluster("Other-Db-Pass-1", "Other-Init-Pass-1"), "in-cluster"),
        "external": plan_dir(tmp, external("Other-Db-Pass-1"), "external"),
    }


@pytest.mark.parametrize("word", COMMON_WORDS)
def test_a_common_word_as_password_plans_exactly_as_any_other_password(tmp_path, reference, word):
    # The initial user's password must meet Determined's rule: the word, made to.
    got = plan_dir(tmp_path, in_cluster(word, f"{word.title()}-Pass-1"), "in-cluster")
    assert got == reference["in-cluster"]
    master = yaml.safe_load(got["master.yaml"])
    assert master["db"]["password"] == SECRET
    assert master["db"]["user"] == "determined"
    sts = yaml.safe_load(got["manifests/determined--statefulset--determined-db.yaml"])
    assert sts["spec"]["template"]["spec"]["containers"][0]["image"].startswith("postgres:")

    got = plan_dir(tmp_path, external(word), "external")
    assert got == reference["external"]
    master = yaml.safe_load(got["master.yaml"])
    assert (master["db"]["host"], master["db"]["name"], master["db"]["user"]) == (
        "db.example.com",
        "determined",
        "determined",
    )


def test_the_password_rule_is_checked_on_the_password_the_user_wrote():
    with pytest.raises(ConfigError) as info:
        plan_for(raw_config(master={"initialUserPassword": "password"}))
    (problem,) = info.value.problems
    assert str(problem).startswith("determined:master.initialUserPassword: does not meet")
    assert "password'" not in str(problem) and "'password" not in str(problem)


def test_the_program_runs_with_stand_ins_only():
    raw = raw_config(
        master={"initialUserPassword": "Init-User-Pass-7"},
        checkpointStorage={
            "type": "s3",
            "bucket": "ckpt",
            "accessKey": "minio-access-key-7",
            "secretKey": "minio-secret-key-7",
        },
    )
    prepared = standins.prepare(pulumi_config(raw), [])
    assert prepared.stand_ins == {
        ("master", "initialUserPassword"): standins.stand_in(("master", "initialUserPassword")),
        ("checkpointStorage", "accessKey"): standins.stand_in(("checkpointStorage", "accessKey")),
        ("checkpointStorage", "secretKey"): standins.stand_in(("checkpointStorage", "secretKey")),
    }
    assert len(set(prepared.stand_ins.values())) == 3
    text = json.dumps(prepared.config)
    for secret in ("Init-User-Pass-7", "minio-access-key-7", "minio-secret-key-7"):
        assert secret not in text
    assert (
        json.loads(prepared.config["determined:checkpointStorage"])["accessKey"]
        == prepared.stand_ins[("checkpointStorage", "accessKey")]
    )
    # The stand-ins meet the rules the values met.
    standins.stack_config.load_config(standins.decode(prepared.config))


def test_no_stand_in_or_generated_secret_reaches_any_output(tmp_path):
    raw = raw_config(
        checkpointStorage={
            "type": "s3",
            "bucket": "ckpt",
            "endpointUrl": "http://minio:9000",
            "accessKey": "minio-access-key-7",
            "secretKey": "minio-secret-key-7",
        },
    )
    result = plan_for(raw)
    assert result.recorder.generated_secrets  # both passwords generated
    written = plan_dir(tmp_path, raw, "s3")
    for name, content in written.items():
        for needle in result.secrets | {"minio-access-key-7", "minio-secret-key-7"}:
            assert needle.encode() not in content, f"{needle} in {name}"
    master = yaml.safe_load(written["master.yaml"])
    assert master["checkpoint_storage"]["secret_key"] == SECRET
    assert master["checkpoint_storage"]["access_key"] == SECRET
    assert master["checkpoint_storage"]["endpoint_url"] == "http://minio:9000"


def test_secrets_are_redacted_field_by_field_keeping_their_shape():
    result = plan_for(raw_config())
    assert one(result, "Secret", "determined-master-config")["stringData"] == {"master.yaml": SECRET}
    assert one(result, "Secret", "determined-db")["stringData"] == {"POSTGRES_PASSWORD": SECRET}
    marked = {"4dabf18193072939515e22adb298388d": "1b47061264138c4ac30d75fd1eb44270"}
    assert redact({"a": {**marked, "value": {"k": ["x", 1]}}, "b": "password"}) == {
        "a": {"k": [SECRET, SECRET]},
        "b": "password",
    }


def test_encrypted_values_are_replaced_by_their_paths_stand_in(tmp_path):
    raw = raw_config(master={"initialUserPassword": {"secure": "v1:abcdef"}})
    path = write_stack(tmp_path, raw)
    config, secret_keys = stackfile.load_stack_file(path)
    assert secret_keys == ["determined:master"]
    assert json.loads(config["determined:master"])["initialUserPassword"] == stackfile.ENCRYPTED_STAND_IN
    prepared = standins.prepare(config, secret_keys)
    stand_in = prepared.stand_ins[("master", "initialUserPassword")]
    assert json.loads(prepared.config["determined:master"])["initialUserPassword"] == stand_in
    out = tmp_path / "o"
    assert cli.main(["--config", str(path), "--out", str(out)]) == 0
    for content in files(out).values():
        assert stackfile.ENCRYPTED_STAND_IN.encode() not in content and stand_in.encode() not in content


def _leaking(original):
    """The program, plus an object that carries a secret stand-in unmarked (a bug)."""

    def main():
        import pulumi_kubernetes as k8s

        from components.config import load_config, read_pulumi_config

        det = original()
        cfg = load_config(read_pulumi_config())
        password = cfg.database.password.get_secret_value()
        k8s.core.v1.ConfigMap(
            "leak", metadata={"name": "leak", "namespace": "determined"}, data={"p": password}
        )
        return det

    return main


def test_a_secret_on_its_way_into_an_output_fails_the_plan_and_writes_nothing(tmp_path, monkeypatch, capsys):
    program = runner.program()

    path = write_stack(tmp_path, raw_config(database={"password": "Real-Db-Pass-1"}))
    out = tmp_path / "o"
    assert cli.main(["--config", str(path), "--out", str(out)]) == 0
    before = files(out)
    capsys.readouterr()
    monkeypatch.setattr(program, "main", _leaking(program.main))
    assert cli.main(["--config", str(path), "--out", str(out)]) == 3
    err = capsys.readouterr().err
    assert err == (
        "error: a secret value would be written to manifests/determined--configmap--leak.yaml; nothing was written\n"
    )
    assert files(out) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["Pulumi.t.yaml", "o"]


def test_the_plans_own_result_names_what_must_never_be_written():
    result = plan_for(raw_config(database={"password": "Real-Db-Pass-1"}))
    stand_in = result.stand_ins[("database", "password")]
    assert stand_in in result.secrets
    assert stackfile.ENCRYPTED_STAND_IN in result.secrets
    assert result.recorder.generated_secrets <= result.secrets
    assert "Real-Db-Pass-1" not in result.secrets  # never entered the run
    assert runner.PlanResult is type(result)


def test_an_encrypted_value_that_is_not_a_secret_by_nature_is_refused(tmp_path, capsys):
    # Pulumi hands it over decrypted and unmarked: the project would write it in clear.
    raw = raw_config(
        database={"mode": "external", "host": {"secure": "v1:aaa"}, "user": "u", "password": "p"}
    )
    path = write_stack(tmp_path, raw)
    assert cli.main(["--config", str(path), "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert "determined:database.host: stored encrypted (secure:), but only passwords, keys and" in err
    assert "Traceback" not in err and not (tmp_path / "o").exists()


@pytest.mark.parametrize(
    ("raw", "path"),
    [
        # A rule on the value: the stand-in is not a DNS label.
        (raw_config(namespace={"secure": "v1:aaa"}), "namespace"),
        # A relation to other keys: no resource pool has the stand-in's name.
        (raw_config(defaultComputePool={"secure": "v1:aaa"}), "defaultComputePool"),
        # Nested.
        (raw_config(cluster={"name": {"secure": "v1:aaa"}}), "cluster.name"),
    ],
)
def test_an_encrypted_value_that_fails_validation_is_reported_as_encrypted(tmp_path, capsys, raw, path):
    # Validated as the stand-in, its problems would be about the stand-in, not the value
    # the user encrypted; what there is to fix is that it is stored encrypted.
    stack_file = write_stack(tmp_path, raw)
    assert cli.main(["--config", str(stack_file), "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert err.splitlines()[1:] == [f"  determined:{path}: {standins.ENCRYPTED_NOT_SECRET}"]
    assert stackfile.ENCRYPTED_STAND_IN not in err
    assert not (tmp_path / "o").exists()


def test_a_mistyped_key_holding_an_encrypted_value_is_reported_as_mistyped(tmp_path):
    # Not "store it in plain text": the key is meant to be a password.
    raw = raw_config(database={"mode": "inCluster", "passwrd": {"secure": "v1:aaa"}})
    config, secret_keys = stackfile.load_stack_file(write_stack(tmp_path, raw))
    with pytest.raises(ConfigError) as info:
        standins.prepare(config, secret_keys)
    assert [str(p) for p in info.value.problems] == [
        "determined:database.passwrd: unknown key; did you mean 'password'?"
    ]


def test_no_configuration_problem_shows_the_encrypted_values_stand_in(monkeypatch):
    # A problem elsewhere that quotes the value (a relation between keys) shows it as such.
    stand_in = stackfile.ENCRYPTED_STAND_IN

    def load_config(raw, task_pods=None):
        raise ConfigError(
            [
                standins.stack_config.Problem("namespace", f"{stand_in!r} is not a valid DNS label"),
                standins.stack_config.Problem("resourcePools[0].namespace", f"{stand_in!r} is taken"),
                standins.stack_config.Problem("defaultAuxPool", f'no pool "{stand_in}" or {stand_in}-x'),
            ]
        )

    monkeypatch.setattr(standins.stack_config, "load_config", load_config)
    config = pulumi_config(raw_config()) | {"determined:namespace": stand_in}
    with pytest.raises(ConfigError) as info:
        standins.prepare(config, ["determined:namespace"])
    assert [str(p) for p in info.value.problems] == [
        f"determined:namespace: {standins.ENCRYPTED_NOT_SECRET}",
        "determined:resourcePools[0].namespace: (encrypted value) is taken",
        "determined:defaultAuxPool: no pool (encrypted value) or (encrypted value)-x",
    ]
