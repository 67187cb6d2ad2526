"""`determined:database`: where the master keeps its records, by `mode`, and how its data is
backed up (`backup`), restored from a dump (`restore`) or brought over from Determined's Helm
chart (`fromHelmChart`): settings every mode shares (`DatabaseBase`)."""

from __future__ import annotations

import math
import re
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import AfterValidator, BeforeValidator, Field, ValidationError, field_validator, model_validator
from pydantic_core import InitErrorDetails, PydanticCustomError

from components import constants, versions
from components.config.base import ConfigModel, default_tag
from components.config.checkpoint_storage import DirectoryStorage, SharedFsStorage
from components.config.master import Resources
from components.config.postgres_settings import libraries, setting_problem, startup_problems, truthy
from components.config.secrets import Secret
from components.config.syntax import (
    DnsLabel,
    DnsSubdomain,
    Flag,
    Host,
    ImageReference,
    MultilineText,
    NonEmpty,
    Quantity,
    control_character,
    pattern_check,
    shown,
    whole_number,
)

if TYPE_CHECKING:
    from components.config.stack import StackConfig

# Settings the StatefulSet, its volume and its Service depend on.
_OWNED_SETTINGS = {"data_directory", "port", "listen_addresses", "hba_file", "config_file"}
# With ssl on, the server loads its certificate and key at start (ssl_cert_file and
# ssl_key_file, default server.crt and server.key in the data directory) and does not start
# without them ("FATAL: could not load server certificate file"): "To start in SSL mode, files
# containing the server certificate and private key must exist", https://www.postgresql.org/docs/17/ssl-tcp.html
# (read 2026-11). The project puts no certificate in the volume or the image, and the image's
# first start (initdb's temporary server) gets the same arguments.
SSL_WITHOUT_CERTIFICATE = (
    "ssl on needs a server certificate and key (server.crt, server.key in the data directory), which "
    "the in-cluster server does not have: PostgreSQL would not start; leave ssl off"
)
# Settings naming the libraries loaded at start, whose own settings (`auto_explain.*`) the
# server then knows.
_PRELOAD_SETTINGS = ("shared_preload_libraries", "session_preload_libraries")

# An image's PostgreSQL major version, read from its tag (17.6, 17, 17.6-bookworm, 17-alpine).
_MAJOR_TAG = re.compile(r"(?P<major>[1-9][0-9]*)(?:[.-].*)?")


def image_major(image: str) -> int | None:
    """The PostgreSQL major version an image's tag names; None without such a tag."""
    last = image.split("@", 1)[0].rsplit("/", 1)[-1]
    if ":" not in last:
        return None
    match = _MAJOR_TAG.fullmatch(last.split(":", 1)[1])
    return int(match["major"]) if match else None


# The major version of the pinned server: its data directory can be opened by that major
# only ("The data directory was initialized by PostgreSQL version 17, which is not compatible
# with this version 16": https://www.postgresql.org/docs/17/upgrading.html, "the internal data
# storage format is subject to change" between major releases; read 2026-11). The project
# has no pg_upgrade step, so another major is refused either way.
POSTGRES_MAJOR: int = image_major(versions.POSTGRES_IMAGE)  # type: ignore[assignment]
HELM_CHART_POSTGRES_MAJOR: int = image_major(versions.HELM_CHART_POSTGRES_IMAGE)  # type: ignore[assignment]


def major_problem(image: str, major: int, what: str) -> str | None:
    """Why `image` cannot run `what` (whose data is of PostgreSQL `major`)."""
    found = image_major(image)
    if found is None:
        return (
            f"{shown(image)} names no PostgreSQL major version in its tag: give the tag (with the digest "
            f"if you pin one, e.g. postgres:{major}.6@sha256:...), as {what} is only readable by "
            f"PostgreSQL {major}"
        )
    if found != major:
        return (
            f"{shown(image)} is PostgreSQL {found}: {what} is PostgreSQL {major}'s, which only {major} "
            "can open"
        )
    return None


_SettingName = Annotated[
    str,
    AfterValidator(
        pattern_check(
            # Names are read in any case ("Parameter names are case-insensitive",
            # https://www.postgresql.org/docs/17/config-setting.html, read 2026-11).
            r"[A-Za-z_][A-Za-z0-9_.]*",
            "a PostgreSQL setting name (example: max_connections)",
            63,
        )
    ),
]


def _setting_text(value: Any) -> str:
    # PostgreSQL reads every setting as text: on/off for booleans, numbers as written.
    if isinstance(value, bool):
        return "on" if value else "off"
    if isinstance(value, str) and (control_character(value) or not value.isascii()):
        # The image's first start hands settings to the server through bash's printf %q and
        # /bin/sh (docker-entrypoint.sh, docker_temp_server_start), which reads only ASCII
        # escapes; PostgreSQL's own settings are ASCII.
        raise ValueError("must be on one line of printable ASCII (no newline or other control character)")
    if isinstance(value, (str, int, float)):
        return str(value)
    raise ValueError("must be a string, a number or true/false (a PostgreSQL setting's value)")


_SettingValue = Annotated[str, BeforeValidator(_setting_text)]


SslMode = Literal["disable", "allow", "prefer", "require", "verify-ca", "verify-full"]


# --- backups, restore, the Helm chart's data ------------------------------------------------

# Cron fields as Kubernetes reads a CronJob's schedule (robfig/cron's standard parser):
# (name, lowest, highest, names allowed in place of numbers).
_MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
_DAYS = ("sun", "mon", "tue", "wed", "thu", "fri", "sat")
_CRON_FIELDS = (
    ("minute", 0, 59, ()),
    ("hour", 0, 23, ()),
    ("day of month", 1, 31, ()),
    ("month", 1, 12, _MONTHS),
    ("day of week", 0, 6, _DAYS),
)
_CRON_MACROS = ("@yearly", "@annually", "@monthly", "@weekly", "@daily", "@midnight", "@hourly")
_CRON_ITEM = re.compile(r"(?P<range>\*|\?|[0-9a-zA-Z]+(?:-[0-9a-zA-Z]+)?)(?:/(?P<step>[0-9]+))?")
_CRON_FORM = (
    "five fields, minute hour day-of-month month day-of-week, in UTC (example: '0 3 * * *', "
    "03:00 every day), or one of " + ", ".join(_CRON_MACROS)
)


def _cron_value(text: str, low: int, high: int, names: tuple[str, ...]) -> int | None:
    if text.isdigit():
        return int(text)
    if text.lower() in names:
        return names.index(text.lower()) + low
    return None


def _cron_field_problem(text: str, name: str, low: int, high: int, names: tuple[str, ...]) -> str | None:
    for item in text.split(","):
        match = _CRON_ITEM.fullmatch(item)
        if match is None:
            return f"its {name} field {item!r} is not a number, a range a-b, '*' or a step */n"
        if match["step"] is not None and int(match["step"]) == 0:
            return f"its {name} field {item!r} has a step of 0"
        spec = match["range"]
        if spec == "?" and name not in ("day of month", "day of week"):
            return f"'?' is only for the day fields, not the {name}"
        if spec in ("*", "?"):
            continue
        bounds = [_cron_value(part, low, high, names) for part in spec.split("-")]
        if None in bounds or not all(low <= b <= high for b in bounds):  # type: ignore[operator]
            allowed = f"{low}-{high}" + (f" or {names[0].upper()}-{names[-1].upper()}" if names else "")
            return f"its {name} field {item!r} is outside {allowed}"
        if len(bounds) == 2 and bounds[0] > bounds[1]:  # type: ignore[operator]
            return f"its {name} field {item!r} is a range that ends before it starts"
    return None


def _cron(value: str) -> str:
    """A CronJob schedule Kubernetes accepts (checked here: the API server would refuse it
    only once the stack is half applied). Time zones in the schedule are refused: the
    CronJob runs in UTC, which the dump names use too."""
    shown = repr(value if len(value) <= 60 else value[:60] + "...")
    if value.strip() in _CRON_MACROS:
        if value != value.strip():
            raise ValueError(f"{shown} has spaces around it; write {value.strip()!r}")
        return value
    if value.startswith(("TZ=", "CRON_TZ=")):
        raise ValueError(f"{shown}: no time zone in the schedule (it runs in UTC); give {_CRON_FORM}")
    fields = value.split(" ")
    if len(fields) != 5 or any(not f for f in fields):
        raise ValueError(f"{shown} is not a cron schedule: give {_CRON_FORM}")
    for text, (name, low, high, names) in zip(fields, _CRON_FIELDS, strict=True):
        problem = _cron_field_problem(text, name, low, high, names)
        if problem:
            raise ValueError(f"{shown} is not a cron schedule: {problem}")
    return value


CronSchedule = Annotated[str, AfterValidator(_cron)]

# A dump's file name as the backup Jobs write them (determined-<UTC time>[-<what>].dump): no
# directory, nothing a shell or a storage path would read as more than one name.
DumpName = Annotated[
    str,
    AfterValidator(
        pattern_check(
            r"[A-Za-z0-9][A-Za-z0-9._-]*\.dump",
            "a dump's file name (letters, digits, '.', '_' and '-', ending in .dump, no directory; "
            "example: determined-20261122T030000Z.dump)",
            200,
        )
    ),
]
# A PostgreSQL role or database name as the chart sets them (db.user, db.name).
PgName = Annotated[
    str,
    AfterValidator(
        pattern_check(
            r"[A-Za-z_][A-Za-z0-9_]*",
            "a PostgreSQL name (letters, digits and '_', not starting with a digit, at most 63 characters; "
            "example: determined)",
            63,
        )
    ),
]

DEFAULT_BACKUP_SCHEDULE = "0 3 * * *"  # 03:00 UTC daily
DEFAULT_KEEP_DAYS = 14
DEFAULT_BACKUP_STORAGE = "50Gi"


class BackupSettings(ConfigModel):
    """Dumps of the database (`pg_dump --format=custom`, by a client of the server's major
    version) in the checkpoint store: under `<prefix>/determined-db-backups/` of the checkpoint
    bucket or container (gcs, s3, azure: with the identity or credentials checkpoints use), or
    on the claim `determined-db-backups` (sharedFs, directory).

    `schedule`: a CronJob's schedule (UTC); null: no scheduled dumps. `keepDays`: scheduled
    runs delete dumps older than this, never the one they just wrote. `beforeUpgrade`: a
    changed master version first runs a dump Job to completion, before the master migrates the
    schema (refused off in prod). `storageSize`: the claim's size (sharedFs/directory only).
    `clientImage`, `rcloneImage`: mirrors of the PostgreSQL client and rclone images (pinned).
    """

    schedule: CronSchedule | None = Field(
        DEFAULT_BACKUP_SCHEDULE,
        description=(
            "When scheduled dumps run: a cron schedule of five fields (minute hour day-of-month month "
            "day-of-week) in UTC, or a macro such as @daily; default '0 3 * * *' (03:00 UTC daily). null: no "
            "scheduled dumps (refused in prod for inCluster, whose dumps are its only backups)."
        ),
    )
    keep_days: whole_number(1, 3650) = Field(
        DEFAULT_KEEP_DAYS,
        description=(
            "Days dumps are kept, 1-3650 (default 14): each scheduled run deletes older dumps, upgrade "
            "dumps included, never the one it just stored."
        ),
    )
    before_upgrade: Flag = Field(
        True,
        description=(
            "Whether a changed master version first runs a dump Job to completion, before the master "
            "migrates the schema (default true, in every mode; false is refused in prod)."
        ),
    )
    storage_size: Quantity = Field(
        DEFAULT_BACKUP_STORAGE,
        description=(
            "Size of the backups claim determined-db-backups (default 50Gi); only with sharedFs or directory "
            "checkpoint storage, where dumps go to a volume instead of the checkpoint bucket or container."
        ),
    )
    client_image: ImageReference | None = Field(
        None,
        description=(
            "A mirror of the PostgreSQL client image the dump and restore Jobs run (pinned: tag or digest); "
            "default the server's PostgreSQL image. For inCluster and managed servers its tag must name "
            "the server's major version or a newer one (pg_dump refuses a server newer than itself)."
        ),
    )
    rclone_image: ImageReference | None = Field(
        None,
        description=(
            "A mirror of the rclone image that moves dumps to and from the checkpoint store (pinned: tag "
            f"or digest); default {versions.RCLONE_IMAGE.split('@', 1)[0]}, pinned by digest."
        ),
    )


class ServerBackupSettings(BackupSettings):
    """Backups of a database on a server the stack does not run (external) or the cloud runs
    (managed): no scheduled dumps by default, since such servers keep their own backups
    (Cloud SQL and RDS daily backups, and point-in-time recovery in prod; an external server's
    by whoever runs it). A schedule adds portable dumps next to them; the dump before an
    upgrade runs in every mode."""

    schedule: CronSchedule | None = Field(
        None,
        description=(
            "When scheduled dumps run: a cron schedule of five fields in UTC, or a macro such as @daily; "
            "default none, since external and managed servers keep their own backups. Set one to have dumps "
            "in the checkpoint store too."
        ),
    )


class RestoreSettings(ConfigModel):
    """While set, a Job loads this dump into the database (replacing what it holds, in one
    transaction) and the master is kept at 0 replicas; remove the key to start the master."""

    backup: DumpName = Field(
        description=(
            "The file name of the dump to load (e.g. determined-20261122T030000Z.dump, no directory): while "
            "set, the master is kept at 0 replicas and a Job replaces the database's contents with the dump "
            "in one transaction; remove the key to start the master."
        )
    )


# Helm refuses a release name over 53 characters ("maxReleaseNameLen = 53", helm/helm
# pkg/chartutil/validate_name.go, v3; read 2026-11): no chart release of a longer name exists.
HELM_RELEASE_NAME_MAX = 53


def _release_name(value: str) -> str:
    if len(value) > HELM_RELEASE_NAME_MAX:
        raise ValueError(
            f"is {len(value)} characters; Helm release names have at most {HELM_RELEASE_NAME_MAX}, so no "
            "chart release of this name can exist: give the name the chart was installed with"
        )
    return value


class FromHelmChart(ConfigModel):
    """Adopt the records of an install of Determined's Helm chart: a Job in the chart's
    namespace mounts the chart's database claim read-only, copies its data directory, starts
    a temporary PostgreSQL of the chart's major version (10) on the copy, dumps it and loads
    the dump into this stack's (empty) database, before the master first starts. The chart's
    database Deployment must be scaled to 0 first (its claim is ReadWriteOnce)."""

    namespace: DnsLabel = Field(
        "default",
        description="The namespace the chart is installed in (default default); not this stack's namespace.",
    )
    release_name: Annotated[DnsLabel, AfterValidator(_release_name)] = Field(
        "determined",
        description=(
            "The chart's Helm release name (default determined, at most 53 characters), which names its "
            "database claim, Deployment and Service."
        ),
    )
    # Default determined-db-pvc-<releaseName> (the chart's db.claimSuffix changes it).
    claim_name: DnsSubdomain | None = Field(
        None,
        description=(
            "The chart's database claim; default determined-db-pvc-<releaseName>. Set it when the chart's "
            "db.claimSuffix renamed the claim."
        ),
    )
    # The chart's db.name and db.user (the server's superuser).
    database: PgName = Field(
        "determined", description="The chart's database name (its db.name; default determined)."
    )
    user: PgName = Field(
        "postgres",
        description="The chart's database user, the server's superuser (its db.user; default postgres).",
    )
    # A mirror of the temporary server's image; its major version must be the chart's data's.
    image: ImageReference | None = Field(
        None,
        description=(
            "A mirror of the image of the temporary PostgreSQL server that reads the chart's data (default "
            f"{versions.HELM_CHART_POSTGRES_IMAGE}); its tag must name the data's major version, "
            f"{HELM_CHART_POSTGRES_MAJOR}."
        ),
    )

    @field_validator("image")
    @classmethod
    def _chart_major(cls, value: str | None) -> str | None:
        message = value and major_problem(value, HELM_CHART_POSTGRES_MAJOR, "the chart's data directory")
        if message:
            raise ValueError(message)
        return value

    @property
    def claim(self) -> str:
        return self.claim_name or f"{constants.HELM_CHART_CLAIM_PREFIX}{self.release_name}"

    @property
    def service(self) -> str:
        """The chart's database Service: the Job refuses to copy while it still answers."""
        return f"{constants.HELM_CHART_SERVICE_PREFIX}{self.release_name}"


def _refuse(*problems: tuple[str | tuple[str, ...], str]) -> ValidationError:
    """Problems of the section's keys taken together, each reported at its own key (a key
    path below the section as a tuple)."""
    details = [
        InitErrorDetails(
            type=PydanticCustomError("value_error", message),
            loc=key if isinstance(key, tuple) else (key,),
            input=None,
        )
        for key, message in problems
    ]
    return ValidationError.from_exception_data("database", details)


class DatabaseBase(ConfigModel):
    """What every mode shares: backups, a restore, the Helm chart's data."""

    backup: BackupSettings = Field(
        default_factory=BackupSettings,
        description=(
            "Dumps of the database in the checkpoint store: daily for inCluster by default, and one before "
            "each new master version in every mode."
        ),
    )
    restore: RestoreSettings | None = Field(
        None,
        description=(
            "A dump to load into the database, replacing what it holds; absent: no restore. Not together "
            "with fromHelmChart."
        ),
    )
    from_helm_chart: FromHelmChart | None = Field(
        None,
        description=(
            "Copy the records of a Determined Helm chart install into this stack's empty database, before "
            "the master first starts; absent: nothing is copied. Not together with restore."
        ),
    )

    @model_validator(mode="after")
    def _one_source(self) -> DatabaseBase:
        if self.restore is not None and self.from_helm_chart is not None:
            raise _refuse(
                (
                    "fromHelmChart",
                    "restore and fromHelmChart are alternatives: fromHelmChart fills an empty database "
                    "from the chart's volume, restore replaces the contents with a dump; set one",
                )
            )
        return self

    @property
    def runs_backup_jobs(self) -> bool:
        """Whether a Job of the project dumps or restores through the checkpoint store."""
        b = self.backup
        return b.schedule is not None or b.before_upgrade or self.restore is not None


class InClusterDatabase(DatabaseBase):
    """PostgreSQL in the cluster, on a volume kept across destroy; dumped daily by default."""

    mode: Literal["inCluster"] = Field(
        description=(
            "inCluster (the default mode): PostgreSQL runs in the cluster, on a volume kept across destroy, "
            "dumped daily by default."
        )
    )
    storage_size: Quantity = Field(
        "30Gi", description="inCluster: size of the database volume (default 30Gi)."
    )
    storage_class: DnsSubdomain | None = Field(
        None,
        description=(
            "inCluster: the StorageClass of the database volume; default the cluster's default class (on gke "
            "and eks the stack's determined-db, created with reclaimPolicy Retain, or Delete with "
            "allowDataDeletion)."
        ),
    )
    # To reattach a kept volume with the password it was created with.
    password: Secret | None = Field(
        None,
        description=(
            "inCluster: the database password (secret), to reattach a kept volume with the password it was "
            "created with; default generated."
        ),
    )
    # A mirror of the pinned PostgreSQL image (same major version: the data directory is
    # only readable by it).
    image: ImageReference | None = Field(
        None,
        description=(
            "inCluster: a mirror of the pinned PostgreSQL image (default "
            f"{versions.POSTGRES_IMAGE.split('@', 1)[0]}, pinned by digest), with a tag naming major version "
            f"{POSTGRES_MAJOR}: the data directory is only readable by that major, so another major, or a "
            "tag naming none, is refused."
        ),
    )
    resources: Resources | None = Field(  # default: constants.DB_RESOURCES
        None,
        description=(
            "inCluster: the database container's {requests, limits}, like master.resources; default requests "
            "500m CPU and 1Gi memory, limit 2Gi memory."
        ),
    )
    # postgres -c settings, over the defaults (max_connections 96, shared_buffers 512MB).
    parameters: dict[_SettingName, _SettingValue] = Field(
        default_factory=dict,
        description=(
            "inCluster: PostgreSQL settings passed as -c name=value over the defaults (max_connections 96, "
            f"shared_buffers 512MB), checked as PostgreSQL {POSTGRES_MAJOR} reads them; data_directory, "
            "port, listen_addresses, hba_file and config_file are refused (the volume and Service depend on "
            "them)."
        ),
    )

    @field_validator("image")
    @classmethod
    def _pinned_major(cls, value: str | None) -> str | None:
        message = value and major_problem(value, POSTGRES_MAJOR, "the data directory")
        if message:
            raise ValueError(message)
        return value

    @field_validator("parameters")
    @classmethod
    def _settable(cls, value: dict[str, Any]) -> dict[str, Any]:
        owned = sorted({name.lower() for name in value} & _OWNED_SETTINGS)
        if owned:
            raise ValueError(
                f"{', '.join(owned)} cannot be set here: the project sets the data directory, "
                "port and listen addresses the Service and volume rely on"
            )
        return value

    @model_validator(mode="after")
    def _server_takes(self) -> InClusterDatabase:
        """Each parameter as the pinned server reads `-c name=value`: a setting it knows, a
        value it parses (else it would not start), or a setting of a library it loads."""
        seen: dict[str, str] = {}
        for name in self.parameters:
            if (first := seen.setdefault(name.lower(), name)) != name:
                # Names differ in case only: one setting given twice, the later value silently winning.
                raise _refuse(
                    (
                        ("parameters", name),
                        f"{first!r} is the same setting (names are case-insensitive); give it once",
                    )
                )
        settings = self.settings
        preloaded = [lib for key in _PRELOAD_SETTINGS for lib in libraries(settings.get(key, ""))]
        problems = [
            (("parameters", name), message)
            for name, value in self.parameters.items()
            if (message := setting_problem(POSTGRES_MAJOR, name, value, preloaded))
        ]
        if problems:
            raise _refuse(*problems)
        ssl = [name for name, value in self.parameters.items() if name.lower() == "ssl" and truthy(value)]
        if ssl:
            raise _refuse((("parameters", ssl[0]), SSL_WITHOUT_CERTIFICATE))
        # Settings the server checks together at start (postgres_settings.startup_problems).
        given = {name.lower(): name for name in self.parameters}
        combined = startup_problems(settings, set(given))
        if combined:
            raise _refuse(*((("parameters", given[name]), message) for name, message in combined))
        return self

    @property
    def settings(self) -> dict[str, str]:
        """postgres -c settings: the defaults, then the configured parameters, each by its
        lower-case name (the server reads any case; one spelling lets a parameter replace a
        default instead of following it)."""
        return {**constants.DB_SETTINGS, **{name.lower(): value for name, value in self.parameters.items()}}

    @property
    def container_resources(self) -> dict[str, Any]:
        return self.resources.manifest() if self.resources else constants.DB_RESOURCES


class ExternalDatabase(DatabaseBase):
    """A PostgreSQL server run elsewhere (whoever runs it keeps its backups)."""

    mode: Literal["external"] = Field(
        description="external: a PostgreSQL server run elsewhere; whoever runs it keeps its backups."
    )
    backup: ServerBackupSettings = Field(
        default_factory=ServerBackupSettings,
        description=(
            "Dumps of the database in the checkpoint store: no scheduled dumps by default (the server keeps "
            "its own backups), a dump before each new master version."
        ),
    )
    host: Host = Field(description="external: the server's host name or IP address (required).")
    port: whole_number(1, 65535) = Field(
        constants.DB_PORT, description="external: the server's port, 1-65535 (default 5432)."
    )
    # One line (NonEmpty refuses control characters: "determined\n" is another role).
    name: NonEmpty = Field(
        constants.DB_DATABASE, description="external: the database name (default determined)."
    )
    user: NonEmpty = Field(description="external: the role the master connects as (required).")
    password: Secret = Field(description="external: the role's password (secret; required).")
    ssl_mode: SslMode | None = Field(
        None,
        description=(
            "external: the connection's SSL mode, one of disable, allow, prefer, require, verify-ca, "
            "verify-full; absent: not set."
        ),
    )
    ssl_root_cert: MultilineText | None = Field(  # PEM
        None,
        description=(
            "external: the CA certificate (PEM text, no private key) the server's certificate is checked "
            "against; required for sslMode verify-ca and verify-full."
        ),
    )

    @field_validator("ssl_root_cert")
    @classmethod
    def _pem(cls, value: str | None) -> str | None:
        if value is not None and "PRIVATE KEY-----" in value:
            # Not repeated: the key is a secret, and this value is written in clear.
            raise ValueError("holds a private key: give only the CA certificate (this value is not secret)")
        if value is not None and "-----BEGIN CERTIFICATE-----" not in value:
            raise ValueError("must be a CA certificate in PEM form (-----BEGIN CERTIFICATE----- ...)")
        return value


class ManagedDatabase(DatabaseBase):
    """Cloud SQL (gke) or RDS (eks), created by the stack, reached on a private address;
    backed up by the cloud (daily, point-in-time recovery in prod)."""

    mode: Literal["managed"] = Field(
        description=(
            "managed (gke and eks only): Cloud SQL (gke) or RDS (eks), created by the stack, reached on a "
            "private address and backed up by the cloud."
        )
    )
    backup: ServerBackupSettings = Field(
        default_factory=ServerBackupSettings,
        description=(
            "Dumps of the database in the checkpoint store, besides the cloud's backups: no scheduled dumps "
            "by default, a dump before each new master version."
        ),
    )
    # Cloud SQL tier (db-custom-2-8192) or RDS instance class (db.m6g.large); Cloud SQL's
    # Enterprise Plus tiers hold a capital (db-perf-optimized-N-8), and are refused by name on
    # GKE (cloud_sql_tier_problem).
    tier: Annotated[
        str,
        AfterValidator(
            pattern_check(
                r"db[-.][a-z0-9][a-z0-9.-]*|db-perf-optimized-N-[0-9]+",
                "a Cloud SQL tier (example: db-custom-2-8192) or RDS instance class (example: db.m6g.large)",
                64,
            )
        ),
    ] = Field(
        description=(
            "managed (required): on gke a Cloud SQL tier of the Enterprise edition (e.g. db-custom-2-8192), "
            "on eks an RDS instance class (e.g. db.m7g.large)."
        )
    )
    storage_size_gb: whole_number(10, 65536) = Field(
        20,
        description=(
            "managed: disk size in GB, 10-65536 (default 20); gke: the initial size, which grows "
            "automatically; eks: RDS allocated storage, which storage autoscaling grows up to 4 times this."
        ),
    )
    # A standby in a second zone; default: on in prod, off in dev.
    high_availability: Flag | None = Field(
        None,
        description="managed: a standby in a second zone (eks: Multi-AZ); default on in prod, off in dev.",
    )


# Cloud SQL for PostgreSQL tiers in the ENTERPRISE edition the stack creates (components/cluster/
# gke/database.py): the shared-core db-f1-micro and db-g1-small, or db-custom-<vCPUs>-<MB> with
# 1 or an even number of vCPUs up to 96 and 0.9 to 6.5 GB of memory per vCPU, a multiple of
# 256 MB and at least 3.75 GB (3840 MB). db-perf-optimized-N-* tiers are ENTERPRISE_PLUS only;
# predefined db-n1-* tiers are MySQL's. Sources (read 2026-11-25): https://cloud.google.com/
# sql/docs/postgres/instance-settings ("Cores: 1 to 96 (must be either 1 or an even number)",
# "Memory: 0.9 to 6.5 GB per vCPU (must be a multiple of 256 MB and at least 3.75 GB)");
# terraform-provider-google website/docs/r/sql_database_instance.html.markdown at 23ad923
# (2026-08-17), `tier`: "Postgres supports only shared-core machine types, and custom machine
# types such as db-custom-2-13312", `edition`: "ENTERPRISE_PLUS supports only predefined
# db-perf-optimized-N-* machine types ... shared-core and custom tiers ... require edition =
# ENTERPRISE".
CLOUD_SQL_SHARED_CORE = ("db-f1-micro", "db-g1-small")
CLOUD_SQL_MAX_VCPUS = 96
CLOUD_SQL_MB_PER_VCPU = (0.9 * 1024, 6.5 * 1024)
CLOUD_SQL_MEMORY_STEP_MB = 256
CLOUD_SQL_MIN_MEMORY_MB = 3840
_CLOUD_SQL_CUSTOM = re.compile(r"db-custom-([0-9]+)-([0-9]+)")


def cloud_sql_tier_problem(tier: str) -> str | None:
    """Why Cloud SQL would refuse `tier` for an ENTERPRISE PostgreSQL instance (None: it takes it)."""
    if tier in CLOUD_SQL_SHARED_CORE:
        return None
    example = "example: db-custom-2-8192 for 2 vCPUs and 8 GB"
    if tier.startswith("db-perf-optimized-"):
        return (
            f"{tier!r} is an Enterprise Plus tier; the stack creates ENTERPRISE edition instances, which "
            f"take {' or '.join(CLOUD_SQL_SHARED_CORE)} or db-custom-<vCPUs>-<MB> ({example})"
        )
    match = _CLOUD_SQL_CUSTOM.fullmatch(tier)
    if match is None:
        return (
            f"{tier!r} is not a Cloud SQL for PostgreSQL tier: it takes {' or '.join(CLOUD_SQL_SHARED_CORE)} "
            f"or db-custom-<vCPUs>-<MB> ({example})"
        )
    vcpus, memory = int(match[1]), int(match[2])
    if not (vcpus == 1 or (vcpus % 2 == 0 and 2 <= vcpus <= CLOUD_SQL_MAX_VCPUS)):
        return f"{vcpus} vCPUs: Cloud SQL takes 1 or an even number up to {CLOUD_SQL_MAX_VCPUS}"
    step = CLOUD_SQL_MEMORY_STEP_MB
    lowest = max(CLOUD_SQL_MIN_MEMORY_MB, math.ceil(vcpus * CLOUD_SQL_MB_PER_VCPU[0] / step) * step)
    highest = math.floor(vcpus * CLOUD_SQL_MB_PER_VCPU[1] / step) * step
    if memory % CLOUD_SQL_MEMORY_STEP_MB or not lowest <= memory <= highest:
        return (
            f"{memory} MB for {vcpus} vCPU(s): Cloud SQL takes a multiple of {CLOUD_SQL_MEMORY_STEP_MB} MB "
            f"from {lowest} to {highest} (0.9 to 6.5 GB per vCPU, {CLOUD_SQL_MIN_MEMORY_MB} at least)"
        )
    return None


# RDS instance classes are db.FAMILY.SIZE (db.m6g.large, db.r6i.2xlarge): "DB instance
# class types", https://docs.aws.amazon.com/AmazonRDS/latest/UserGuide/Concepts.DBInstanceClass.Types.html
# (read 2026-11). db.serverless is the class of Aurora Serverless v2 instances only, inside an
# Aurora cluster ("the parameter you specify for the DB instance class is db.serverless",
# https://docs.aws.amazon.com/AmazonRDS/latest/AuroraUserGuide/aurora-serverless-v2.create.html,
# read 2026-11); the stack creates an RDS for PostgreSQL instance (engine postgres,
# components/cluster/eks/database.py), which CreateDBInstance refuses with it.
AURORA_ONLY_CLASSES = ("db.serverless",)
_RDS_CLASS = re.compile(r"db\.[a-z][a-z0-9-]*\.[a-z0-9]+")


def rds_instance_class_problem(tier: str) -> str | None:
    """Why RDS would refuse `tier` for an RDS for PostgreSQL instance (None: the form is one
    RDS takes; whether the region offers it is the cloud's to say)."""
    example = "example: db.m6g.large"
    if tier in AURORA_ONLY_CLASSES:
        return (
            f"{tier!r} is Aurora Serverless v2's class; the stack creates an RDS for PostgreSQL "
            f"instance, which takes a db.FAMILY.SIZE instance class ({example})"
        )
    if tier.startswith("db.") and not _RDS_CLASS.fullmatch(tier):
        return f"{tier!r} is not an RDS instance class: give db.FAMILY.SIZE ({example})"
    return None


def managed_tier_problems(cfg: StackConfig, add: Any) -> None:
    """database.tier on eks: an RDS for PostgreSQL instance class (Cloud SQL's own tiers are
    judged on gke, a Cloud SQL tier on eks by components/config/eks.py)."""
    db = cfg.database
    if cfg.cloud != "eks" or not isinstance(db, ManagedDatabase):
        return
    problem = rds_instance_class_problem(db.tier)
    if problem:
        add("database.tier", problem)


DatabaseConfig = Annotated[
    InClusterDatabase | ExternalDatabase | ManagedDatabase,
    BeforeValidator(default_tag("mode", "inCluster")),
    Field(discriminator="mode"),
]


def _server_major(db: Any) -> int | None:
    """The server's PostgreSQL major version where the stack knows it (not for external)."""
    if isinstance(db, InClusterDatabase):
        return POSTGRES_MAJOR
    if isinstance(db, ManagedDatabase):
        return versions.MANAGED_POSTGRES_MAJOR
    return None


def backup_problems(cfg: StackConfig, add: Any) -> None:
    """Backup settings read against the environment and the checkpoint store."""
    db = cfg.database
    if cfg.environment == "prod" and not db.backup.before_upgrade:
        add(
            "database.backup.beforeUpgrade",
            "refused in prod: an upgrade must never run without a way back (the dump taken before the "
            "new master migrates the schema)",
        )
    if cfg.environment == "prod" and isinstance(db, InClusterDatabase) and db.backup.schedule is None:
        add(
            "database.backup.schedule",
            "refused in prod for an inCluster database: its scheduled dumps are its only backups (a "
            "managed or external server keeps its own); give a schedule (default "
            f"{DEFAULT_BACKUP_SCHEDULE!r})",
        )
    server = _server_major(db)
    client = db.backup.client_image
    if client is not None and server is not None:
        found = image_major(client)
        if found is None or found < server:
            add(
                "database.backup.clientImage",
                f"{shown(client)} must be PostgreSQL {server} or newer (its major version in the tag): "
                "pg_dump refuses a server newer than itself",
            )
    cs = cfg.checkpoint_storage
    on_claim = isinstance(cs, (SharedFsStorage, DirectoryStorage))
    if "storage_size" in db.backup.model_fields_set and not on_claim:
        where = "container" if cs.type == "azure" else "bucket"
        add(
            "database.backup.storageSize",
            f"only with sharedFs or directory checkpoint storage (dumps then go to a volume); with "
            f"{cs.type} they go to the checkpoint {where}",
        )
    chart = db.from_helm_chart
    if chart is not None and chart.namespace == cfg.namespace:
        add(
            "database.fromHelmChart.namespace",
            f"the chart's namespace cannot be this stack's ({cfg.namespace!r}): its fencing would cut the "
            "chart's database off from the check that it is stopped; give the stack another namespace",
        )
