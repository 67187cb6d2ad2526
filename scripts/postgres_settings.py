"""Write the table of a PostgreSQL major version's settings that `database.parameters` is
checked against (components/config/data/postgresql-<major>-settings.json), from the server itself:

    .venv/bin/python scripts/postgres_settings.py [--with-lz4-zstd] /usr/lib/postgresql/17/bin [OUT]

It runs initdb in a scratch directory (as `nobody` when run as root: PostgreSQL refuses
root), starts the server on a Unix socket only, reads `pg_settings` (every setting with its
context, type, unit, range and visible enum options), stops it, and asks `postgres -C` which
of the values PostgreSQL accepts without listing them (hidden enum aliases such as `true` for
`synchronous_commit`) each enum really takes. The tests use it to build the same table for
the machine's own PostgreSQL.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

NOBODY = 65534
# Values enum settings may accept without listing them in pg_settings.enumvals: the
# "likely variants of on and off" and the older level names guc_tables.c keeps hidden
# (src/backend/utils/misc/guc_tables.c, e.g. synchronous_commit_options, server_message_level_options;
# wal_level_options in src/backend/access/rmgrdesc/xlogdesc.c).
HIDDEN_CANDIDATES = (
    "on",
    "off",
    "true",
    "false",
    "yes",
    "no",
    "1",
    "0",
    "debug",
    "info",
    "archive",
    "hot_standby",
)
# Options the official image's server has and a build without lz4/zstd lacks: the image
# installs PostgreSQL from apt.postgresql.org, whose Debian packaging configures
# --with-lz4 --with-zstd (as `pg_config --configure` of Debian's own postgresql-15 shows).
# Given `--with-lz4-zstd`, they are added where such a build leaves them out.
LZ4_ZSTD = {"default_toast_compression": ("lz4",), "wal_compression": ("lz4", "zstd")}
QUERY = (
    "SELECT json_agg(json_build_object('name', name, 'context', context, 'type', vartype, "
    "'unit', unit, 'min', min_val, 'max', max_val, 'options', enumvals) ORDER BY name) FROM pg_settings"
)


def _as_server_user() -> list[str]:
    return (
        ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups"] if os.geteuid() == 0 else []
    )


def _run(args: list[str], env: dict[str, str], check: bool = True) -> subprocess.CompletedProcess:
    return subprocess.run(
        [*_as_server_user(), *args], env=env, capture_output=True, text=True, timeout=120, check=check
    )


def major(bin_dir: Path) -> int:
    out = subprocess.run([str(bin_dir / "postgres"), "--version"], capture_output=True, text=True, check=True)
    return int(out.stdout.split()[-1].split(".")[0].split("beta")[0].split("rc")[0])


def version(bin_dir: Path) -> str:
    out = subprocess.run([str(bin_dir / "postgres"), "--version"], capture_output=True, text=True, check=True)
    return out.stdout.split()[2]


def accepts(bin_dir: Path, data: Path, env: dict[str, str], name: str, value: str) -> bool:
    """Whether the server would start with `-c name=value` (postgres -C parses the setting as
    a start does, then prints it and exits)."""
    result = _run(
        [str(bin_dir / "postgres"), "-D", str(data), "-C", name, "-c", f"{name}={value}"], env, False
    )
    return result.returncode == 0


class Scratch:
    """An initdb'd data directory owned by the server's user; removed on exit."""

    def __init__(self, bin_dir: Path):
        self.bin_dir = bin_dir
        self.root = Path(tempfile.mkdtemp(prefix="pg-settings-", dir="/tmp"))
        os.chmod(self.root, 0o755)
        if os.geteuid() == 0:
            os.chown(self.root, NOBODY, NOBODY)
        self.data = self.root / "data"
        lib = bin_dir.parent / "lib"
        self.env = {
            "PATH": f"{bin_dir}:/usr/bin:/bin",
            "LC_ALL": "C.UTF-8",
            "HOME": str(self.root),
            "LD_LIBRARY_PATH": str(lib),
        }

    def __enter__(self) -> Scratch:
        _run([str(self.bin_dir / "initdb"), "-D", str(self.data), "-U", "postgres", "--auth=trust"], self.env)
        return self

    def __exit__(self, *exc) -> None:
        shutil.rmtree(self.root, ignore_errors=True)

    def start(self, *args: str) -> subprocess.CompletedProcess:
        """pg_ctl start with `args` as server options, on the scratch directory's socket only."""
        options = " ".join(["-c", "listen_addresses=", "-k", str(self.root), "-p", "54999", *args])
        return _run(
            [
                str(self.bin_dir / "pg_ctl"),
                "-D",
                str(self.data),
                "-o",
                options,
                "-l",
                str(self.root / "log"),
                "-w",
                "-t",
                "60",
                "start",
            ],
            self.env,
            check=False,
        )

    def stop(self) -> None:
        _run(
            [str(self.bin_dir / "pg_ctl"), "-D", str(self.data), "-m", "fast", "-w", "stop"], self.env, False
        )

    def query(self, sql: str) -> str:
        psql = shutil.which("psql", path=self.env["PATH"]) or "psql"
        args = [
            psql,
            "-XAtq",
            "-h",
            str(self.root),
            "-p",
            "54999",
            "-U",
            "postgres",
            "-d",
            "postgres",
            "-c",
            sql,
        ]
        return _run(args, self.env).stdout


def table(bin_dir: Path) -> dict:
    """{name: {context, type, unit, min, max, options}} of the server in `bin_dir`."""
    with Scratch(bin_dir) as scratch:
        started = scratch.start()
        if started.returncode != 0:
            raise RuntimeError(started.stdout + started.stderr)
        try:
            rows = json.loads(scratch.query(QUERY))
        finally:
            scratch.stop()
        settings = {}
        for row in rows:
            entry = {"context": row["context"], "type": row["type"]}
            if row["unit"]:
                entry["unit"] = row["unit"]
            if row["type"] in ("integer", "real"):
                entry["min"], entry["max"] = row["min"], row["max"]
            if row["type"] == "enum":
                listed = row["options"]
                hidden = [
                    value
                    for value in HIDDEN_CANDIDATES
                    if value.lower() not in {o.lower() for o in listed}
                    and row["context"] != "internal"
                    and accepts(bin_dir, scratch.data, scratch.env, row["name"], value)
                ]
                entry["options"] = listed
                if hidden:
                    entry["hidden"] = hidden
            settings[row["name"]] = entry
    return settings


def with_lz4_zstd(settings: dict) -> dict:
    for name, added in LZ4_ZSTD.items():
        options = settings[name]["options"]
        at = options.index("pglz") + 1
        options[at:at] = [value for value in added if value not in options]
    return settings


def main(argv: list[str]) -> int:
    flags = [arg for arg in argv if arg.startswith("--")]
    argv = [arg for arg in argv if not arg.startswith("--")]
    bin_dir = Path(argv[0])
    out = Path(argv[1]) if len(argv) > 1 else None
    settings = table(bin_dir)
    if "--with-lz4-zstd" in flags:
        settings = with_lz4_zstd(settings)
    document = {
        "version": version(bin_dir),
        "source": " ".join(
            ["pg_settings of PostgreSQL", version(bin_dir), "(scripts/postgres_settings.py", *flags]
        )
        + ")",
        "settings": settings,
    }
    lines = [f"    {json.dumps(name)}: {json.dumps(entry)}" for name, entry in document["settings"].items()]
    text = (
        "{\n"
        f'  "version": {json.dumps(document["version"])},\n'
        f'  "source": {json.dumps(document["source"])},\n'
        '  "settings": {\n' + ",\n".join(lines) + "\n  }\n}\n"
    )
    if out:
        out.write_text(text)
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
