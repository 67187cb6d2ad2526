"""`database.backup`, `database.restore`, `database.fromHelmChart`: defaults per mode, what is
refused (one line per problem, naming the key path), and never a secret in a message."""

from __future__ import annotations

import pytest
from conftest import GKE, make_config, raw_config

from components.config import ConfigError, load_config

EXTERNAL = {"mode": "external", "host": "pg.internal", "user": "det", "password": "Ext-Db-Pass-9"}
MANAGED = {"mode": "managed", "tier": "db-custom-2-8192"}


def problems(raw) -> list[str]:
    with pytest.raises(ConfigError) as exc:
        load_config(raw)
    return str(exc.value).splitlines()


def cross_problems(**overrides) -> list[str]:
    """What loading a config says of it, key paths without the project prefix."""
    try:
        load_config(raw_config(**overrides))
    except ConfigError as exc:
        return [line.removeprefix("determined:") for line in str(exc).splitlines()]
    return []


# --- defaults ---------------------------------------------------------------------------------


def test_the_in_cluster_database_is_dumped_daily_and_before_every_upgrade():
    backup = make_config().database.backup
    assert (backup.schedule, backup.keep_days, backup.before_upgrade, backup.storage_size) == (
        "0 3 * * *",
        14,
        True,
        "50Gi",
    )
    assert (backup.client_image, backup.rclone_image) == (None, None)


@pytest.mark.parametrize("db", [EXTERNAL, MANAGED], ids=["external", "managed"])
def test_servers_that_keep_their_own_backups_are_dumped_only_before_upgrades(db):
    overrides = {**GKE, "database": db} if db is MANAGED else {"database": db}
    cfg = make_config(**overrides)
    assert cfg.database.backup.schedule is None
    assert cfg.database.backup.before_upgrade is True
    assert cfg.database.restore is None and cfg.database.from_helm_chart is None
    assert cfg.database.runs_backup_jobs


def test_a_schedule_can_be_set_or_turned_off():
    assert make_config(
        database={**EXTERNAL, "backup": {"schedule": "30 1 * * 0"}}
    ).database.backup.schedule == ("30 1 * * 0")
    assert make_config(database={"backup": {"schedule": None}}).database.backup.schedule is None


@pytest.mark.parametrize(
    "schedule",
    [
        "0 3 * * *",
        "*/15 * * * *",
        "0 0-6/2 1,15 * MON-FRI",
        "0 3 * jan,jul sun",
        "0 3 ? * *",
        "@daily",
        "@hourly",
    ],
)
def test_cron_schedules_kubernetes_accepts(schedule):
    assert make_config(database={"backup": {"schedule": schedule}}).database.backup.schedule == schedule


def test_the_helm_chart_source_defaults_to_the_charts_own_names():
    source = make_config(database={"fromHelmChart": {}}).database.from_helm_chart
    assert (source.namespace, source.claim, source.service, source.database, source.user) == (
        "default",
        "determined-db-pvc-determined",
        "determined-db-service-determined",
        "determined",
        "postgres",
    )
    named = make_config(database={"fromHelmChart": {"releaseName": "det", "claimName": "old-pvc"}})
    assert (named.database.from_helm_chart.claim, named.database.from_helm_chart.service) == (
        "old-pvc",
        "determined-db-service-det",
    )


# --- refusals ---------------------------------------------------------------------------------

BAD = [
    (
        "cron with four fields",
        {"backup": {"schedule": "0 3 * *"}},
        "determined:database.backup.schedule: '0 3 * *' is not a cron schedule: give five fields",
    ),
    (
        "cron minute out of range",
        {"backup": {"schedule": "60 3 * * *"}},
        "determined:database.backup.schedule: '60 3 * * *' is not a cron schedule: its minute field '60' is "
        "outside 0-59",
    ),
    (
        "cron hour out of range",
        {"backup": {"schedule": "0 24 * * *"}},
        "determined:database.backup.schedule: '0 24 * * *' is not a cron schedule: its hour field '24'",
    ),
    (
        "cron day of week 7",
        {"backup": {"schedule": "0 3 * * 7"}},
        "determined:database.backup.schedule: '0 3 * * 7' is not a cron schedule: its day of week field '7' is "
        "outside 0-6 or SUN-SAT",
    ),
    (
        "cron month name",
        {"backup": {"schedule": "0 3 * foo *"}},
        "determined:database.backup.schedule: '0 3 * foo *' is not a cron schedule: its month field 'foo'",
    ),
    (
        "cron zero step",
        {"backup": {"schedule": "*/0 * * * *"}},
        "determined:database.backup.schedule: '*/0 * * * *' is not a cron schedule: its minute field '*/0' has "
        "a step of 0",
    ),
    (
        "cron backwards range",
        {"backup": {"schedule": "0 9-5 * * *"}},
        "determined:database.backup.schedule: '0 9-5 * * *' is not a cron schedule: its hour field '9-5' is a "
        "range that ends before it starts",
    ),
    (
        "cron time zone",
        {"backup": {"schedule": "CRON_TZ=Europe/Paris 0 3 * * *"}},
        "determined:database.backup.schedule: 'CRON_TZ=Europe/Paris 0 3 * * *': no time zone in the schedule",
    ),
    (
        "cron injection",
        {"backup": {"schedule": "0 3 * * *; rm -rf /"}},
        "determined:database.backup.schedule: '0 3 * * *; rm -rf /' is not a cron schedule",
    ),
    (
        "cron trailing newline",
        {"backup": {"schedule": "0 3 * * *\n"}},
        "determined:database.backup.schedule: '0 3 * * *\\n' is not a cron schedule",
    ),
    ("cron not a string", {"backup": {"schedule": 3}}, "determined:database.backup.schedule: "),
    ("keepDays zero", {"backup": {"keepDays": 0}}, "determined:database.backup.keepDays: must be at least 1"),
    (
        "keepDays too large",
        {"backup": {"keepDays": 3651}},
        "determined:database.backup.keepDays: must be at most 3650",
    ),
    (
        "beforeUpgrade not a boolean",
        {"backup": {"beforeUpgrade": "yes"}},
        "determined:database.backup.beforeUpgrade: must be true or false",
    ),
    (
        "storageSize not a quantity",
        {"backup": {"storageSize": "lots"}},
        "determined:database.backup.storageSize: 'lots' is not a Kubernetes quantity",
    ),
    (
        "unpinned client image",
        {"backup": {"clientImage": "postgres"}},
        "determined:database.backup.clientImage: 'postgres' has no tag or digest",
    ),
    (
        "unknown backup key",
        {"backup": {"keep_days": 3}},
        "determined:database.backup.keep_days: unknown key; did you mean 'keepDays'?",
    ),
    ("restore without a dump", {"restore": {}}, "determined:database.restore.backup: required"),
    (
        "restore of a path",
        {"restore": {"backup": "../determined-1.dump"}},
        "determined:database.restore.backup: '../determined-1.dump' is not a dump's file name",
    ),
    (
        "restore with shell characters",
        {"restore": {"backup": "x$(id).dump"}},
        "determined:database.restore.backup: 'x$(id).dump' is not a dump's file name",
    ),
    (
        "restore of another format",
        {"restore": {"backup": "determined.sql"}},
        "determined:database.restore.backup: 'determined.sql' is not a dump's file name",
    ),
    (
        "restore and fromHelmChart",
        {"restore": {"backup": "determined-1.dump"}, "fromHelmChart": {}},
        "determined:database.fromHelmChart: restore and fromHelmChart are alternatives",
    ),
    (
        "chart namespace not a label",
        {"fromHelmChart": {"namespace": "Default"}},
        "determined:database.fromHelmChart.namespace: 'Default' is not a valid DNS label",
    ),
    (
        "chart release not a label",
        {"fromHelmChart": {"releaseName": "my_release"}},
        "determined:database.fromHelmChart.releaseName: 'my_release' is not a valid DNS label",
    ),
    (
        "chart claim not a name",
        {"fromHelmChart": {"claimName": "PVC!"}},
        "determined:database.fromHelmChart.claimName: 'PVC!' is not a valid Kubernetes name",
    ),
    (
        "chart user with a quote",
        {"fromHelmChart": {"user": "postgres'; --"}},
        'determined:database.fromHelmChart.user: "postgres\'; --" is not a PostgreSQL name',
    ),
    (
        "chart database empty",
        {"fromHelmChart": {"database": ""}},
        "determined:database.fromHelmChart.database: ",
    ),
    (
        "unknown chart key",
        {"fromHelmChart": {"claim": "x"}},
        "determined:database.fromHelmChart.claim: unknown key; did you mean 'claimName'?",
    ),
]


@pytest.mark.parametrize(("database", "expected"), [c[1:] for c in BAD], ids=[c[0] for c in BAD])
def test_bad_backup_settings_name_their_key_path(database, expected):
    lines = problems(raw_config(database=database))
    assert any(line.startswith(expected) for line in lines), lines
    assert len(lines) == 1, lines


def test_messages_never_repeat_the_database_password():
    lines = problems(raw_config(database={**EXTERNAL, "backup": {"keepDays": -1, "schedule": "x"}}))
    assert len(lines) == 2
    assert not any("Ext-Db-Pass-9" in line for line in lines)


# --- rules across sections --------------------------------------------------------------------


def test_prod_refuses_an_upgrade_without_a_dump_before_it():
    assert cross_problems(environment="prod", database={"backup": {"beforeUpgrade": False}}) == [
        "database.backup.beforeUpgrade: refused in prod: an upgrade must never run without a way back (the dump "
        "taken before the new master migrates the schema)"
    ]
    assert cross_problems(environment="dev", database={"backup": {"beforeUpgrade": False}}) == []
    assert cross_problems(environment="prod") == []


def test_prod_refuses_an_in_cluster_database_without_scheduled_dumps():
    assert cross_problems(environment="prod", database={"backup": {"schedule": None}}) == [
        "database.backup.schedule: refused in prod for an inCluster database: its scheduled dumps are its only "
        "backups (a managed or external server keeps its own); give a schedule (default '0 3 * * *')"
    ]
    assert cross_problems(environment="dev", database={"backup": {"schedule": None}}) == []
    # A server the stack does not run keeps its own backups: no schedule is its default, in prod too.
    assert cross_problems(environment="prod", database={**EXTERNAL, "backup": {"schedule": None}}) == []
    # Both prod rules at once, each at its key.
    both = cross_problems(environment="prod", database={"backup": {"schedule": None, "beforeUpgrade": False}})
    assert [line.split(":")[0] for line in both] == [
        "database.backup.beforeUpgrade",
        "database.backup.schedule",
    ]


def test_prod_rules_of_every_backup_key():
    """beforeUpgrade and (inCluster) schedule are prod's; keepDays, storageSize and the images
    have no prod rule: any value dev takes, prod takes."""
    for backup in (
        {"keepDays": 1},
        {"storageSize": "1Gi"},
        {"schedule": "@hourly"},
        {"clientImage": "postgres:17.6"},
    ):
        dev = cross_problems(
            environment="dev",
            database={"backup": backup},
            checkpointStorage={"type": "directory", "claimName": "c"},
        )
        prod = cross_problems(
            environment="prod",
            database={"backup": backup},
            checkpointStorage={"type": "directory", "claimName": "c"},
        )
        assert dev == prod == [], backup


def test_a_backup_volume_size_is_only_for_storage_without_a_bucket():
    sized = {"backup": {"storageSize": "10Gi"}}
    assert cross_problems(database=sized) == []
    assert cross_problems(database=sized, checkpointStorage={"type": "directory", "claimName": "c"}) == []
    assert cross_problems(database=sized, checkpointStorage={"type": "gcs", "bucket": "ckpts"}) == [
        "database.backup.storageSize: only with sharedFs or directory checkpoint storage (dumps then go to a "
        "volume); with gcs they go to the checkpoint bucket"
    ]
    azure = {"type": "azure", "container": "ckpt", "connectionString": "AccountKey=k"}
    assert cross_problems(database=sized, checkpointStorage=azure)[0].endswith("checkpoint container")


def test_the_rules_across_sections_run_when_the_config_loads():
    lines = problems(raw_config(environment="prod", database={"backup": {"beforeUpgrade": False}}))
    assert "determined:database.backup.beforeUpgrade: refused in prod" in lines[0]
