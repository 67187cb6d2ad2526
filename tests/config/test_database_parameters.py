"""`database.parameters`, `database.image`: what the pinned PostgreSQL would refuse is refused
at config time, and the verdicts are a real server's.

The real-server tests run the machine's PostgreSQL (POSTGRES_BIN_DIR, else the newest
/usr/lib/postgresql/*/bin; skipped without one): the settings table of its own major version
is built from it the way scripts/postgres_settings.py built the shipped one, the checker's
verdict on each sample value is compared with what `postgres -C` says of it, a stack's
rendered `-c` arguments start the server, and refused ones stop it (or leave it running with
the setting unused).
"""

from __future__ import annotations

import glob
import json
import os
import shutil
import socket
import subprocess
import time
from pathlib import Path

import pytest
import yaml
from conftest import ROOT, raw_config

from components import versions
from components.config import load_config
from components.config import postgres_settings as pg
from components.config.database import POSTGRES_MAJOR, image_major
from components.config.errors import ConfigError
from components.determined import database as app_database
from scripts import postgres_settings as generator


def problems(database: dict) -> list[str]:
    try:
        load_config(raw_config(database=database))
    except ConfigError as exc:
        return [str(p) for p in exc.problems]
    return []


# --- the table and the checker ---------------------------------------------------------------


def test_the_table_is_the_pinned_images_major_version():
    assert POSTGRES_MAJOR == image_major(versions.POSTGRES_IMAGE) == 17
    document = json.loads((pg.DATA / f"postgresql-{POSTGRES_MAJOR}-settings.json").read_text())
    assert document["version"].split(".")[0] == str(POSTGRES_MAJOR)
    assert document["version"] == versions.POSTGRES_IMAGE.split(":")[1].split("@")[0]
    settings = pg.table(POSTGRES_MAJOR)
    # The project's defaults are settings of that version, with values it takes.
    from components import constants

    for name, value in constants.DB_SETTINGS.items():
        assert pg.setting_problem(POSTGRES_MAJOR, name, value, []) is None
    assert settings["max_connections"] == {
        "context": "postmaster",
        "type": "integer",
        "min": "1",
        "max": "262143",
    }
    # The official image's build has lz4 and zstd (the table's source build did not).
    assert "lz4" in settings["default_toast_compression"]["options"]
    assert {"lz4", "zstd"} <= set(settings["wal_compression"]["options"])


@pytest.mark.parametrize(
    ("name", "value", "expected"),
    [
        ("max_connections", "200", None),
        ("max_connections", "96 -c listen_addresses=localhost", "is not a whole number"),
        ("max_connections", "0", "is outside 1 to 262143"),
        ("max_connections", "0x10", None),
        ("max_connections", "010", None),
        ("max_connections", "08", "is not a whole number"),
        ("max_connections", "1e2", None),
        ("shared_buffers", "1GB", None),
        ("shared_buffers", "1 GB", None),
        ("shared_buffers", "1gb", "is not a whole number with an optional unit"),
        ("shared_buffers", "0.5GB", None),
        ("work_mem", "63kB", "is outside 64 to 2147483647 kB"),
        ("statement_timeout", "30min", None),
        ("statement_timeout", "30 minutes", "is not a whole number with an optional unit"),
        ("statement_timeout", "1GB", "is not a whole number with an optional unit"),
        # 0.004h is 14.4 s, rounded to whole minutes (the next smaller unit) first: 0.
        ("authentication_timeout", "0.004h", "is outside 1 to 600 s"),
        ("authentication_timeout", "0.01h", None),
        ("random_page_cost", "1.1", None),
        ("random_page_cost", "nan", "is not a number"),
        ("random_page_cost", "1e400", "is not a number"),
        ("fsync", "tr", None),
        ("fsync", "o", "is not a boolean"),
        ("fsync", "of", None),
        ("fsync", "enabled", "is not a boolean"),
        ("synchronous_commit", "TRUE", None),
        ("synchronous_commit", "always", "is not one of local, remote_write"),
        ("wal_level", "hot_standby", None),
        ("timezone", "UTC", None),
        ("log_line_prefix", "%m [%p] 'quoted' \"double\"", None),
        ("no_such_guc", "1", "is not a setting of PostgreSQL 17"),
        ("block_size", "8192", "is fixed when PostgreSQL is built"),
        ("auto_explain.log_min_duration", "0", "belongs to no library loaded at start"),
    ],
)
def test_a_value_is_refused_as_the_server_would(name, value, expected):
    found = pg.setting_problem(POSTGRES_MAJOR, name, value, [])
    if expected is None:
        assert found is None
    else:
        assert found is not None and expected in found


def test_a_library_loaded_at_start_makes_its_settings_known():
    assert (
        problems(
            {"parameters": {"shared_preload_libraries": "auto_explain", "auto_explain.log_min_duration": 0}}
        )
        == []
    )
    assert (
        problems(
            {
                "parameters": {
                    "shared_preload_libraries": '"$libdir/pg_stat_statements.so", auto_explain',
                    "pg_stat_statements.max": 5000,
                }
            }
        )
        == []
    )
    assert problems(
        {"parameters": {"shared_preload_libraries": "pg_stat_statements", "auto_explain.log_min_duration": 0}}
    ) == [
        "determined:database.parameters.auto_explain.log_min_duration: 'auto_explain.log_min_duration' belongs to no "
        "library loaded at start: add 'auto_explain' to shared_preload_libraries, or PostgreSQL keeps the setting "
        "unused without a word"
    ]


def test_every_bad_parameter_is_reported_at_its_own_key():
    assert problems({"parameters": {"no_such_guc": 1, "max_connections": "lots", "fsync": True}}) == [
        "determined:database.parameters.no_such_guc: 'no_such_guc' is not a setting of PostgreSQL 17",
        "determined:database.parameters.max_connections: 'lots' is not a whole number",
    ]


@pytest.mark.parametrize("value", ["64MB\n", "caf\u00e9", "a\x1bb"])
def test_a_value_off_one_line_of_ascii_is_refused(value):
    assert problems({"parameters": {"application_name": value}}) == [
        "determined:database.parameters.application_name: must be on one line of printable ASCII (no newline or "
        "other control character)"
    ]


@pytest.mark.parametrize(
    ("image", "expected"),
    [
        ("postgres:17.6", None),
        ("mirror.example.com:5000/library/postgres:17", None),
        ("postgres:17.6-bookworm@sha256:" + "0" * 64, None),
        ("postgres:16.4", "is PostgreSQL 16: the data directory is PostgreSQL 17's, which only 17 can open"),
        ("postgres:18.1", "is PostgreSQL 18: the data directory is PostgreSQL 17's"),
        ("postgres:latest", "names no PostgreSQL major version in its tag"),
        ("postgres@sha256:" + "0" * 64, "names no PostgreSQL major version in its tag"),
    ],
)
def test_the_image_must_be_the_data_directorys_major_version(image, expected):
    found = problems({"image": image})
    if expected is None:
        assert found == []
    else:
        assert len(found) == 1 and found[0].startswith("determined:database.image: ") and expected in found[0]


def test_the_chart_migration_server_must_be_the_charts_major_and_the_backup_client_not_older():
    assert problems({"fromHelmChart": {"image": "mirror.example.com/postgres:10.23"}}) == []
    (found,) = problems({"fromHelmChart": {"image": "postgres:17.6"}})
    assert found.startswith("determined:database.fromHelmChart.image: 'postgres:17.6' is PostgreSQL 17")
    assert problems({"backup": {"clientImage": "postgres:18.1"}}) == []
    (found,) = problems({"backup": {"clientImage": "postgres:16.4"}})
    assert found.startswith(
        "determined:database.backup.clientImage: 'postgres:16.4' must be PostgreSQL 17 or newer"
    )
    # An external server's version is not known: any client is taken.
    external = {"mode": "external", "host": "db.example.com", "user": "det", "password": "pw-123456"}
    assert problems({**external, "backup": {"clientImage": "postgres:16.4"}}) == []


@pytest.mark.parametrize(
    ("key", "value"), [("user", "determined\n"), ("name", "det\x1b[2J"), ("user", "det\u202e")]
)
def test_an_external_servers_user_and_name_are_one_line(key, value):
    external = {"mode": "external", "host": "db.example.com", "user": "det", "password": "pw-123456"}
    (found,) = problems({**external, key: value})
    assert found.startswith(f"determined:database.{key}: ")


# --- against a real server ---------------------------------------------------------------------


def _bin_dir() -> Path | None:
    if os.environ.get("POSTGRES_BIN_DIR"):
        return Path(os.environ["POSTGRES_BIN_DIR"])
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/postgres"), key=lambda p: int(p.split("/")[-3]))
    return Path(found[-1]).parent if found else None


BIN = _bin_dir()
real_server = pytest.mark.skipif(
    BIN is None or not shutil.which("psql") or (os.geteuid() == 0 and not shutil.which("setpriv")),
    reason="needs PostgreSQL's server binaries and psql (and setpriv when run as root)",
)


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """(major, scratch data directory) of the machine's PostgreSQL, with the checker reading
    a table built from that server (the shipped one when it is the pinned major)."""
    major = generator.major(BIN)
    built = generator.table(BIN)
    if major == POSTGRES_MAJOR:
        shipped = pg.table(POSTGRES_MAJOR)
        assert set(built) == set(shipped), "the shipped table is not this server's"
    else:
        folder = tmp_path_factory.mktemp("pg-table")
        (folder / f"postgresql-{major}-settings.json").write_text(json.dumps({"settings": built}))
        original = pg.DATA
        for name in ("postgresql-17-settings.json",):
            shutil.copy(original / name, folder / name)
        pg.DATA = folder
        pg.table.cache_clear()
        pg._by_lower_name.cache_clear()
    with generator.Scratch(BIN) as scratch:
        yield major, scratch
    pg.DATA = Path(pg.__file__).resolve().parent / "data"
    pg.table.cache_clear()
    pg._by_lower_name.cache_clear()


# Values of every kind, in the server's own spelling and in ways it may or may not take.
SAMPLES = (
    [
        ("max_connections", value)
        for value in [
            "96",
            " 96",
            "96 ",
            "+96",
            "0x60",
            "0140",
            "096",
            "08",
            "96.4",
            "96.5",
            "1e2",
            "1e",
            "0",
            "262144",
            "96 -c listen_addresses=localhost",
            "",
            "ninety",
            "9999999999999999999",
        ]
    ]
    + [
        ("shared_buffers", value)
        for value in [
            "512MB",
            "512 MB",
            "512MB ",
            "512mb",
            "1GB",
            "0.5GB",
            "1.5",
            "16",
            "15",
            "128kB",
            "131072B",
            "1TB",
            "1PB",
            "8kB",
            "512M",
            "-1",
        ]
    ]
    + [
        ("statement_timeout", value)
        for value in [
            "0",
            "30s",
            "30 s",
            "1min",
            "1.5min",
            "2h",
            "1d",
            "100us",
            "1000000000000",
            "5 minutes",
            "1ms ",
        ]
    ]
    + [("authentication_timeout", value) for value in ["0.004h", "0.01h", "0.5min", "0.001d", "601", "10min"]]
    + [("random_page_cost", value) for value in ["1.1", "1e3", ".5", "-1", "inf", "nan", "0x1p3", "1,5"]]
    + [
        ("fsync", value)
        for value in [
            "on",
            "off",
            "ON",
            "t",
            "tr",
            "true",
            "f",
            "ye",
            "n",
            "1",
            "0",
            "2",
            "o",
            "of",
            "enable",
            "",
        ]
    ]
    + [
        ("synchronous_commit", value)
        for value in ["on", "local", "LOCAL", "true", "yes", "1", "always", "of"]
    ]
    + [("wal_level", value) for value in ["replica", "logical", "hot_standby", "archive", "full"]]
    + [("log_min_messages", value) for value in ["warning", "info", "debug", "debug6"]]
    + [
        ("application_name", "det 'quoted' \"double\" -c fsync=off"),
        ("no_such_guc", "1"),
        ("block_size", "8192"),
        ("server_version", "99"),
        ("Max_Connections", "96"),
    ]
)


@real_server
def test_the_checkers_verdicts_are_the_servers(server):
    major, scratch = server
    differ = []
    for name, value in SAMPLES:
        ours = pg.setting_problem(major, name.lower(), value, []) is None
        theirs = generator.accepts(BIN, scratch.data, scratch.env, name, value)
        if ours != theirs:
            differ.append(
                f"{name}={value!r}: server {'takes' if theirs else 'refuses'} it, checker does not agree"
            )
    assert differ == []


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _run_server(scratch, args: list[str], wait: float = 30) -> tuple[subprocess.Popen, int, bool]:
    """`postgres` started as the container starts it (its args an argv, no shell), on a
    socket of its own; (process, port, whether it became ready)."""
    port = _free_port()
    command = [
        str(BIN / "postgres"), "-D", str(scratch.data), *args,
        "-c", "listen_addresses=", "-c", f"unix_socket_directories={scratch.root}", "-c", f"port={port}",
    ]  # fmt: skip
    process = subprocess.Popen(
        [*generator._as_server_user(), *command],
        env=scratch.env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline:
        if process.poll() is not None:
            return process, port, False
        ready = subprocess.run(
            ["pg_isready", "-q", "-h", str(scratch.root), "-p", str(port)], env=scratch.env, check=False
        )
        if ready.returncode == 0:
            return process, port, True
        time.sleep(0.2)
    return process, port, False


def _stop(process: subprocess.Popen) -> str:
    if process.poll() is None:
        process.terminate()  # the server's smart shutdown
    _, err = process.communicate(timeout=60)
    return err


def _show(scratch, port: int, sql: str) -> str:
    args = [
        "psql",
        "-XAtq",
        "-h",
        str(scratch.root),
        "-p",
        str(port),
        "-U",
        "postgres",
        "-d",
        "postgres",
        "-c",
        sql,
    ]
    return subprocess.run(args, env=scratch.env, capture_output=True, text=True, check=True).stdout.strip()


@real_server
def test_a_stacks_rendered_settings_start_the_server(server):
    major, scratch = server
    raw = yaml.safe_load((ROOT / "tests/fixtures/stacks/Pulumi.chart-parity.yaml").read_text())["config"]
    cfg = load_config(
        {
            key.removeprefix("determined:"): value
            for key, value in raw.items()
            if key.startswith("determined:")
        }
    )
    container = app_database.statefulset(cfg)["spec"]["template"]["spec"]["containers"][0]
    args = container["args"]
    assert args == ["-c", "max_connections=200", "-c", "shared_buffers=1GB"]
    for name, value in cfg.database.settings.items():
        assert pg.setting_problem(major, name, value, []) is None
    process, port, ready = _run_server(scratch, args)
    try:
        assert ready, process.stderr.read() if process.poll() is not None else "not ready in time"
        assert _show(scratch, port, "SHOW max_connections") == "200"
        assert _show(scratch, port, "SHOW shared_buffers") == "1GB"
    finally:
        _stop(process)


@real_server
@pytest.mark.parametrize(
    ("setting", "says"),
    [
        ("max_connections=96 -c listen_addresses=localhost", 'invalid value for parameter "max_connections"'),
        ("no_such_guc=1", 'unrecognized configuration parameter "no_such_guc"'),
        ("block_size=16384", 'parameter "block_size" cannot be changed'),
    ],
)
def test_a_refused_value_would_stop_the_server(server, setting, says):
    major, scratch = server
    name, value = setting.split("=", 1)
    assert pg.setting_problem(major, name, value, []) is not None
    process, _, ready = _run_server(scratch, ["-c", setting])
    err = _stop(process)
    assert not ready and process.returncode != 0
    assert says in err


@real_server
def test_a_setting_of_a_library_not_loaded_is_kept_unused(server):
    _, scratch = server
    if not glob.glob(f"{BIN.parent}/lib/**/auto_explain.so", recursive=True):
        pytest.skip("no auto_explain in this PostgreSQL")
    query = "SELECT count(*) FROM pg_settings WHERE name = 'auto_explain.log_min_duration'"
    process, port, ready = _run_server(scratch, ["-c", "auto_explain.log_min_duration=0"])
    try:
        assert ready  # the server starts, and the setting does nothing
        assert _show(scratch, port, query) == "0"
    finally:
        _stop(process)
    loaded = ["-c", "shared_preload_libraries=auto_explain", "-c", "auto_explain.log_min_duration=0"]
    process, port, ready = _run_server(scratch, loaded)
    try:
        assert ready
        assert _show(scratch, port, query) == "1"
    finally:
        _stop(process)


@real_server
@pytest.mark.parametrize(
    ("settings", "says"),
    [
        ({"max_connections": "3"}, "max_connections"),  # superuser_reserved_connections is 3
        ({"wal_level": "minimal"}, "wal_level"),  # max_wal_senders is 10
    ],
)
def test_settings_refused_together_would_stop_the_server(server, settings, says):
    _, scratch = server
    assert pg.startup_problems(settings, set(settings))
    args = [arg for name, value in settings.items() for arg in ("-c", f"{name}={value}")]
    process, _, ready = _run_server(scratch, args)
    err = _stop(process)
    assert not ready and process.returncode != 0
    assert says in err


@real_server
def test_settings_accepted_together_start_the_server(server):
    _, scratch = server
    settings = {"max_connections": "4", "wal_level": "minimal", "max_wal_senders": "0"}
    assert pg.startup_problems(settings, set(settings)) == []
    args = [arg for name, value in settings.items() for arg in ("-c", f"{name}={value}")]
    process, _, ready = _run_server(scratch, args)
    try:
        assert ready, process.stderr.read() if process.poll() is not None else "not ready in time"
    finally:
        _stop(process)


@real_server
def test_ssl_on_would_stop_the_server(server):
    # The refusal's ground (components.config.database.SSL_WITHOUT_CERTIFICATE): a data directory
    # without server.crt and server.key, as the in-cluster volume is.
    _, scratch = server
    assert not (scratch.data / "server.crt").exists()
    assert problems({"parameters": {"ssl": "on"}})
    process, _, ready = _run_server(scratch, ["-c", "ssl=on"])
    err = _stop(process)
    assert not ready and process.returncode != 0
    assert 'could not load server certificate file "server.crt"' in err


@real_server
def test_parameter_names_in_any_case_start_the_server_as_rendered(server):
    _, scratch = server
    cfg = load_config(raw_config(database={"parameters": {"Work_Mem": "64MB", "Max_Connections": "120"}}))
    args = app_database.statefulset(cfg)["spec"]["template"]["spec"]["containers"][0]["args"]
    process, port, ready = _run_server(scratch, args)
    try:
        assert ready, process.stderr.read() if process.poll() is not None else "not ready in time"
        assert _show(scratch, port, "SHOW work_mem") == "64MB"
        assert _show(scratch, port, "SHOW max_connections") == "120"
    finally:
        _stop(process)
    # The server itself reads a name in any case (the rendered lower case is a choice).
    process, port, ready = _run_server(scratch, ["-c", "Work_Mem=32MB"])
    try:
        assert ready
        assert _show(scratch, port, "SHOW work_mem") == "32MB"
    finally:
        _stop(process)
