"""The in-cluster database adopts the password in its Secret at every start, so a volume kept
by a destroy is reattached by the next install whatever password that install generates.

Run against a real PostgreSQL server where this machine has one (Debian's packages); the
rendered container is checked everywhere.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path

import pytest
from conftest import make_config

from components import constants
from components.determined import database

PG_BIN = next(iter(sorted(Path("/usr/lib/postgresql").glob("*/bin"), reverse=True)), None)
OLD_PASSWORD = "Old-password-1"
NEW_PASSWORD = "New'password\"2 $(x)"  # quotes and shell syntax: adopted literally


def _container() -> dict:
    return database.statefulset(make_config())["spec"]["template"]["spec"]["containers"][0]


def test_the_container_adopts_its_secret_password_at_every_start():
    container = _container()
    assert container["lifecycle"]["postStart"]["exec"]["command"] == ["sh", "-c", database.ADOPT_PASSWORD]
    # The script reads the file the Secret is mounted as.
    env = {e["name"]: e.get("value") for e in container["env"]}
    directory, key = env["POSTGRES_PASSWORD_FILE"].rsplit("/", 1)
    volumes = {
        v["name"]: v for v in database.statefulset(make_config())["spec"]["template"]["spec"]["volumes"]
    }
    mounts = {m["mountPath"]: m["name"] for m in container["volumeMounts"]}
    assert volumes[mounts[directory]]["secret"]["secretName"] == constants.DB_SECRET_NAME
    assert key == "POSTGRES_PASSWORD"
    assert '"$POSTGRES_PASSWORD_FILE"' in database.ADOPT_PASSWORD
    # The socket directory the script connects through is writable in a read-only root.
    assert constants.DB_SOCKET_DIR in mounts and container["securityContext"]["readOnlyRootFilesystem"]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _as_postgres(args: list[str], **kwargs) -> subprocess.CompletedProcess:
    prefix = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
    return subprocess.run(prefix + args, capture_output=True, text=True, timeout=60, **kwargs)


def _connects(port: int, password: str) -> bool:
    result = subprocess.run(
        [str(PG_BIN / "psql"), "--no-psqlrc", "-tAc", "select 1"],
        env={
            **os.environ,
            "PGHOST": "127.0.0.1",
            "PGPORT": str(port),
            "PGUSER": constants.DB_USER,
            "PGDATABASE": "postgres",
            "PGPASSWORD": password,
        },
        capture_output=True,
        text=True,
        timeout=30,
    )
    return result.returncode == 0


@pytest.mark.skipif(PG_BIN is None or shutil.which("runuser") is None, reason="no PostgreSQL server here")
def test_a_kept_data_directory_takes_the_new_password():
    # Not under pytest's tmp_path: the server's user must reach it (pytest's root is 0700).
    root = Path(tempfile.mkdtemp(prefix="determined-pg-"))
    root.chmod(0o755)
    data, sockets = root / "data", root / "run"
    sockets.mkdir()
    (root / "pw").write_text(OLD_PASSWORD + "\n")
    if os.geteuid() == 0:
        for path in (root, sockets, root / "pw"):
            shutil.chown(path, "postgres")
    # As the image's entrypoint initialises it: the role, the old password, local trust.
    init = _as_postgres(
        [
            str(PG_BIN / "initdb"),
            f"--pgdata={data}",
            f"--username={constants.DB_USER}",
            f"--pwfile={root / 'pw'}",
            "--auth-local=trust",
            "--auth-host=scram-sha-256",
        ]
    )
    assert init.returncode == 0, init.stderr
    port = _free_port()
    server = subprocess.Popen(
        (["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else [])
        + [
            str(PG_BIN / "postgres"),
            "-D",
            str(data),
            "-p",
            str(port),
            "-k",
            str(sockets),
            "-c",
            "listen_addresses=127.0.0.1",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 30
        while not _connects(port, OLD_PASSWORD):
            assert time.monotonic() < deadline, "the server did not start"
            time.sleep(0.2)
        script = database.ADOPT_PASSWORD.replace(constants.DB_SOCKET_DIR, str(sockets))
        secret_file = root / "POSTGRES_PASSWORD"
        secret_file.write_text(NEW_PASSWORD)  # as a Secret's file: no trailing newline
        env = {
            "PATH": f"{PG_BIN}:/usr/bin:/bin",
            "PGPORT": str(port),
            "POSTGRES_PASSWORD_FILE": str(secret_file),
        }
        adopted = _as_postgres(["env", *(f"{k}={v}" for k, v in env.items()), "sh", "-c", script])
        assert adopted.returncode == 0, adopted.stderr
        assert NEW_PASSWORD not in adopted.stdout + adopted.stderr
        assert _connects(port, NEW_PASSWORD)
        assert not _connects(port, OLD_PASSWORD)
    finally:
        server.terminate()
        server.wait(timeout=30)
        shutil.rmtree(root, ignore_errors=True)
