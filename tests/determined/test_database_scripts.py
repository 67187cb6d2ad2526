"""The backup Jobs' scripts (components/determined/data/db_*.sh) run against a real PostgreSQL on this
machine: dump, store and prune (with rclone, where installed), restore in one transaction,
and the Helm chart migration's copy of a stopped server's data directory. Skipped where
PostgreSQL's server binaries are missing; run as an unprivileged user (PostgreSQL refuses root).
"""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

from components.determined import database_jobs

PASSWORD = "Scr1pt-Test-pw"
NOBODY = 65534


def _bin_dir() -> Path | None:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    if found:
        return Path(found[-1]).parent
    initdb = shutil.which("initdb")
    return Path(initdb).parent if initdb else None


BIN = _bin_dir()
pytestmark = pytest.mark.skipif(
    BIN is None or (os.geteuid() == 0 and not shutil.which("setpriv")),
    reason="needs PostgreSQL's server binaries (and setpriv when run as root)",
)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Sandbox:
    """A directory and a PostgreSQL server owned by an unprivileged user."""

    def __init__(self):
        self.root = Path(tempfile.mkdtemp(prefix="db-scripts-", dir="/tmp"))
        self.port = _free_port()
        self.uid = NOBODY if os.geteuid() == 0 else os.geteuid()
        os.chmod(self.root, 0o755)
        if os.geteuid() == 0:
            os.chown(self.root, NOBODY, NOBODY)
        self.credentials = self.path("credentials")
        self.credentials.mkdir()
        (self.credentials / database_jobs.PASSWORD_FILE).write_text(PASSWORD)

    def path(self, name: str) -> Path:
        return self.root / name

    def run(self, args, env=None, check=True, input_text=None) -> subprocess.CompletedProcess:
        base = {
            "PATH": f"{BIN}:/usr/local/bin:/usr/bin:/bin",
            "HOME": str(self.root),
            "LC_ALL": "C.UTF-8",
            "PGHOST": "127.0.0.1",
            "PGPORT": str(self.port),
            "PGUSER": "determined",
            "PGDATABASE": "determined",
            "DB_CREDENTIALS_DIR": str(self.credentials),
            "TMPDIR": str(self.root),
        }
        prefix = []
        if os.geteuid() == 0:
            prefix = ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups"]
        result = subprocess.run(
            [*prefix, *args],
            env={**base, **(env or {})},
            cwd=self.root,
            capture_output=True,
            text=True,
            input=input_text,
            timeout=120,
        )
        if check:
            assert result.returncode == 0, result.stdout + result.stderr
        return result

    def chown(self, path: Path):
        if os.geteuid() == 0:
            for p in [path, *path.rglob("*")]:
                os.chown(p, NOBODY, NOBODY)

    def sql(self, statement: str, database: str = "determined") -> str:
        env = {"PGPASSWORD": PASSWORD, "PGDATABASE": database}
        return self.run(["psql", "-XAtq", "-v", "ON_ERROR_STOP=1", "-c", statement], env).stdout.strip()

    def script(
        self, name: str, env: dict[str, str], check=True, shell=("sh",)
    ) -> subprocess.CompletedProcess:
        """Run a script as its container does (the client scripts after db_connect.sh)."""
        path = self.path(name)
        names = ["db_connect.sh", name] if name in CLIENT_SCRIPTS else [name]
        path.write_text("".join(database_jobs.script(n) for n in names))
        return self.run([*shell, str(path)], env, check=check)


# Scripts the containers run after db_connect.sh (the password, then waiting for the server).
CLIENT_SCRIPTS = ("db_dump.sh", "db_restore.sh")

SCHEMA = """
CREATE TABLE gopg_migrations (id serial PRIMARY KEY, version bigint, created_at timestamptz);
INSERT INTO gopg_migrations (version, created_at) VALUES (20240101000000, now());
CREATE TYPE experiment_state AS ENUM ('ACTIVE', 'COMPLETED');
CREATE DOMAIN positive AS integer CHECK (VALUE > 0);
CREATE TABLE experiments (id serial PRIMARY KEY, state experiment_state, n positive, config jsonb);
INSERT INTO experiments (state, n, config) VALUES ('ACTIVE', 1, '{"a": 1}'), ('COMPLETED', 2, '{}');
CREATE VIEW active AS SELECT * FROM experiments WHERE state = 'ACTIVE';
CREATE MATERIALIZED VIEW counts AS SELECT state, count(*) FROM experiments GROUP BY state;
CREATE FUNCTION touch() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RETURN NEW; END $$;
CREATE TRIGGER t BEFORE UPDATE ON experiments FOR EACH ROW EXECUTE FUNCTION touch();
CREATE TABLE parts (id int, k int) PARTITION BY RANGE (k);
CREATE TABLE parts_1 PARTITION OF parts FOR VALUES FROM (0) TO (10);
CREATE TYPE pair AS (a int, b int);
-- Determined's migrations use identity columns: their sequences cannot be dropped on their own.
CREATE TABLE trials (id int GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY, experiment_id int);
INSERT INTO trials (experiment_id) VALUES (1), (2);
"""


@pytest.fixture(scope="module")
def box():
    sandbox = Sandbox()
    data = sandbox.path("data")
    pwfile = sandbox.path("pw")
    pwfile.write_text(PASSWORD)
    sandbox.chown(pwfile)
    sandbox.run(
        ["initdb", "-D", str(data), "-U", "determined", f"--pwfile={pwfile}", "--auth-host=scram-sha-256"]
    )
    options = f"-c listen_addresses=127.0.0.1 -p {sandbox.port} -k {sandbox.root}"
    sandbox.run(["pg_ctl", "-D", str(data), "-o", options, "-l", str(sandbox.path("log")), "-w", "start"])
    try:
        sandbox.sql("CREATE DATABASE determined", database="postgres")
        sandbox.run(["psql", "-XAq", "-v", "ON_ERROR_STOP=1"], {"PGPASSWORD": PASSWORD}, input_text=SCHEMA)
        yield sandbox
    finally:
        sandbox.run(["pg_ctl", "-D", str(data), "-m", "immediate", "stop"], check=False)
        shutil.rmtree(sandbox.root, ignore_errors=True)


def dump(box: Sandbox, pod: str) -> Path:
    work = box.path("work")
    work.mkdir(exist_ok=True)
    box.chown(work)
    result = box.script("db_dump.sh", {"WORK": str(work), "POD_NAME": pod})
    assert "dumped database determined" in result.stdout
    assert PASSWORD not in result.stdout + result.stderr
    assert (work / pod / "stamp").read_text().strip().endswith("Z")
    return work / pod / "dump"


def restore(box: Sandbox, path: Path, mode: str, check=True, database="determined", wait="10"):
    env = {"DUMP": str(path), "MODE": mode, "WAIT_SECONDS": wait, "PGDATABASE": database}
    return box.script("db_restore.sh", env, check=check)


def tables(box: Sandbox, database="determined") -> set[str]:
    names = box.sql("SELECT tablename FROM pg_tables WHERE schemaname = 'public'", database)
    return set(names.split())


def test_a_dump_restores_over_a_newer_schema_in_one_transaction(box):
    saved = dump(box, "pod-a")
    box.sql("CREATE TABLE newer (x int); CREATE TYPE newer_kind AS ENUM ('x'); DELETE FROM experiments")
    result = restore(box, saved, "replace")
    assert "restored dump into database determined" in result.stdout
    # The newer master's table is gone, the records are back, views and functions with them.
    assert "newer" not in tables(box)
    assert box.sql("SELECT count(*) FROM experiments") == "2"
    assert box.sql("SELECT count(*) FROM active") == "1"
    assert box.sql("SELECT count(*) FROM pg_type WHERE typname = 'newer_kind'") == "0"


def test_a_broken_dump_changes_nothing(box):
    saved = dump(box, "pod-b")
    box.sql("CREATE TABLE kept (x int)")
    data = saved.read_bytes()
    for size in (len(data) // 2, len(data) - 40):
        broken = box.path(f"broken-{size}.dump")
        broken.write_bytes(data[:size])
        box.chown(broken)
        result = restore(box, broken, "replace", check=False)
        assert result.returncode != 0
        assert "kept" in tables(box)
    box.sql("DROP TABLE kept")


def test_a_restore_waits_for_other_sessions_and_refuses_while_they_last(box):
    saved = dump(box, "pod-c")
    sleeper = subprocess.Popen(
        [
            *(
                ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups"]
                if os.geteuid() == 0
                else []
            ),
            f"{BIN}/psql",
            "-XAtq",
            "-c",
            "SELECT pg_sleep(30)",
        ],
        env={"PGHOST": "127.0.0.1", "PGPORT": str(box.port), "PGUSER": "determined", "PGPASSWORD": PASSWORD},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        time.sleep(1)
        result = restore(box, saved, "replace", check=False, wait="0")
        assert result.returncode != 0
        assert "is the master running?" in result.stderr
    finally:
        sleeper.kill()
        sleeper.wait()
        # The server's side of the killed client sleeps on: end it for the next tests.
        box.sql(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
            "WHERE query LIKE '%pg_sleep(30)%' AND pid <> pg_backend_pid()"
        )


def test_data_moves_only_into_an_empty_database(box):
    saved = dump(box, "pod-d")
    box.sql("CREATE DATABASE fresh", database="postgres")
    restore(box, saved, "into-empty", database="fresh")
    assert box.sql("SELECT count(*) FROM experiments", database="fresh") == "2"
    again = restore(box, saved, "into-empty", check=False, database="fresh")
    assert again.returncode != 0 and "only copied into an empty database" in again.stderr


def test_a_new_install_has_nothing_to_dump(box):
    box.sql("CREATE DATABASE empty", database="postgres")
    work = box.path("work")
    work.mkdir(exist_ok=True)
    box.chown(work)
    result = box.script("db_dump.sh", {"WORK": str(work), "POD_NAME": "pod-e", "PGDATABASE": "empty"})
    assert "nothing to dump" in result.stdout
    assert (work / "pod-e" / "empty").exists() and not (work / "pod-e" / "dump").exists()


def test_the_charts_data_directory_is_copied_never_written_and_dumped(box):
    chart = box.path("chart")
    chart.mkdir()
    box.chown(chart)
    data = chart / "pgdata"
    box.run(["initdb", "-D", str(data), "-U", "postgres", "--auth-local=trust"])
    options = f"-c listen_addresses= -p 5432 -k {chart}"
    box.run(["pg_ctl", "-D", str(data), "-o", options, "-l", str(box.path("chart.log")), "-w", "start"])
    socket_env = {"PGHOST": str(chart), "PGUSER": "postgres", "PGPORT": "5432"}
    box.run(["psql", "-XAq", "-d", "postgres", "-c", "CREATE DATABASE determined"], socket_env)
    box.run(["psql", "-XAq", "-v", "ON_ERROR_STOP=1", "-d", "determined"], socket_env, input_text=SCHEMA)
    box.run(["pg_ctl", "-D", str(data), "-m", "fast", "-w", "stop"])
    before = {p: p.stat().st_mtime_ns for p in data.rglob("*") if p.is_file()}
    work = box.path("migration")
    work.mkdir()
    box.chown(work)
    env = {
        "CHART_VOLUME": str(chart),
        "CHART_DATA_DIR": "pgdata",
        "CHART_CLAIM": "determined-db-pvc-determined",
        "CHART_USER": "postgres",
        "CHART_DATABASE": "determined",
        "WORK": str(work),
        "CHART_SERVICE": "127.0.0.1",
    }
    # While the chart's server answers, nothing is copied.
    refused = box.script("db_chart_dump.sh", {**env, "CHART_PORT": str(box.port)}, check=False)
    assert refused.returncode != 0 and "still answers" in refused.stderr
    result = box.script("db_chart_dump.sh", {**env, "CHART_PORT": str(_free_port())})
    assert "dumped database determined of the chart" in result.stdout
    assert {p: p.stat().st_mtime_ns for p in data.rglob("*") if p.is_file()} == before
    box.sql("CREATE DATABASE moved", database="postgres")
    restore(box, work / "restore.dump", "into-empty", database="moved")
    assert box.sql("SELECT count(*) FROM experiments", database="moved") == "2"


@pytest.mark.skipif(
    not (shutil.which("rclone") and shutil.which("busybox")), reason="needs rclone and busybox"
)
def test_dumps_are_stored_by_time_named_after_upgrades_and_pruned(box):
    dest = box.path("backups")
    dest.mkdir()
    box.chown(dest)
    common = {"DEST": str(dest), "MARKER": "master-version", "RCLONE_CONFIG": "/dev/null"}

    def store(pod, **env):
        dump(box, pod)
        env = {**common, "WORK": str(box.path("work")), "POD_NAME": pod, **env}
        return box.script("db_store.sh", env, shell=("busybox", "sh"))

    store("pod-f", MASTER_VERSION="0.38.0")
    time.sleep(1.1)
    store("pod-g", MASTER_VERSION="0.38.1")
    names = sorted(p.name for p in dest.glob("*.dump"))
    assert [n.split("Z-", 1)[1] for n in names] == [
        "upgrade-unknown-to-0.38.0.dump",
        "upgrade-0.38.0-to-0.38.1.dump",
    ]
    assert (dest / "master-version").read_text().strip() == "0.38.1"
    old = dest / names[0]
    stamp = time.time() - 20 * 86400
    os.utime(old, (stamp, stamp))
    time.sleep(1.1)
    result = store("pod-h", KEEP_DAYS="14")
    assert not old.exists()
    scheduled = [p.name for p in dest.glob("*.dump") if "upgrade" not in p.name]
    assert len(scheduled) == 1 and scheduled[0].startswith("determined-") and scheduled[0] in result.stdout


def test_a_pg_restore_that_fails_after_valid_statements_commits_nothing(box):
    # pg_restore writes what it read before failing; without COMMIT the server rolls it back.
    saved = dump(box, "pod-i")
    fake = box.path("fake-bin")
    fake.mkdir()
    wrapper = fake / "pg_restore"
    wrapper.write_text(
        f'#!/bin/sh\ncase "$*" in *--list*) exec {BIN}/pg_restore "$@" ;; esac\n'
        'echo "CREATE TABLE partial_restore (x int);"\nexit 1\n'
    )
    wrapper.chmod(0o755)
    box.chown(fake)
    env = {
        "DUMP": str(saved),
        "MODE": "replace",
        "WAIT_SECONDS": "10",
        "PATH": f"{fake}:{BIN}:/usr/local/bin:/usr/bin:/bin",
    }
    result = box.script("db_restore.sh", env, check=False)
    assert result.returncode != 0 and "nothing was changed" in result.stderr
    assert "partial_restore" not in tables(box)
    assert box.sql("SELECT count(*) FROM experiments") == "2"
