"""database.backup.beforeUpgrade (components.determined.upgrade_dump): the dump before a new
master version first starts, and whether an update needs one, from what the last update
left in the stack's outputs."""

from __future__ import annotations

import pytest
from component_args import make_args
from conftest import raw_config
from planning import by_kind, of_type, one, plan_for, resource

from components import constants, versions
from components.determined import upgrade_dump
from components.kube import validation
from plan import mocks

DB_PASSWORD = "Ext-Db-Pass-9"


@pytest.fixture
def deployed(monkeypatch):
    """Plans as of a stack whose last update left `outputs` (the plan's mocks answer the
    invoke that reads them; by default a stack never deployed)."""

    def deployed_with(outputs):
        answer = {"name": "organization/determined/test", "outputs": outputs, "secretOutputNames": []}
        monkeypatch.setitem(mocks.INVOKES, upgrade_dump.READ_STACK_OUTPUTS, lambda req: answer)

    return deployed_with


def upgrade_jobs(result):
    return [
        j
        for j in by_kind(result, "Job")
        if j["metadata"]["name"].startswith(constants.PRE_UPGRADE_JOB_PREFIX)
    ]


def test_the_master_waits_for_the_dump_before_its_upgrade_and_a_new_version_is_a_new_job(deployed):
    deployed({"masterVersion": "0.37.0", "namespace": "determined"})
    old = plan_for(raw_config(master={"version": "0.38.0"}))
    new = plan_for(raw_config(master={"version": "0.38.1"}))
    for result, version in ((old, "0.38.0"), (new, "0.38.1")):
        name = upgrade_dump.pre_upgrade_job_name(version)
        job = resource(result, ":Job", f"determined/{name}")
        deployment = resource(result, ":Deployment", f"determined/{constants.MASTER_NAME}")
        assert job["urn"] in deployment["dependsOn"]
        assert job["options"].get("deleteBeforeReplace") is True
        assert list(validation.problems(one(result, "Job", name))) == []
    old_job = upgrade_dump.pre_upgrade_job_name("0.38.0")
    assert not [r for r in of_type(new, ":Job") if r["name"] == f"determined/{old_job}"]
    # The CronJob and every other backup object stay as they were.
    for kind, name in (
        ("CronJob", constants.BACKUP_CRONJOB),
        ("ServiceAccount", constants.BACKUP_SERVICE_ACCOUNT),
    ):
        assert one(old, kind, name) == one(new, kind, name)


@pytest.mark.parametrize(
    ("outputs", "expected"),
    [
        ({}, False),  # never deployed (or destroyed): a new database
        ({"masterVersion": "0.38.0"}, True),  # an upgrade
        ({"masterVersion": "0.38.1"}, False),  # the same version again
        # The same version, right after its upgrade: the Job made for it stays.
        ({"masterVersion": "0.38.1", "upgradeDump": "determined-db-backup-0-38-1"}, True),
        ({"masterVersion": "0.38.1", "upgradeDump": "determined-db-backup-0-38-0"}, False),
        ({"namespace": "determined"}, True),  # deployed before versions were recorded
        (None, True),  # unreadable: dump
    ],
)
def test_the_dump_before_the_master_runs_only_where_records_may_need_it(outputs, expected):
    assert upgrade_dump.needed(make_args(), outputs) is expected


def test_a_first_update_dumps_an_external_server_or_the_charts_records_but_not_a_new_database():
    external = {"mode": "external", "host": "10.0.0.5", "user": "det", "password": DB_PASSWORD}
    assert upgrade_dump.needed(make_args(database=external), {}) is True
    chart = {"fromHelmChart": {"namespace": "legacy"}}
    assert upgrade_dump.needed(make_args(database=chart), {}) is True
    off = {"backup": {"beforeUpgrade": False}, "fromHelmChart": {"namespace": "legacy"}}
    assert upgrade_dump.needed(make_args(database=off), {"masterVersion": "0.1.0"}) is False


def test_a_first_install_starts_the_master_without_a_dump_and_records_its_version(deployed):
    result = plan_for(raw_config())
    assert not upgrade_jobs(result)
    assert result.outputs[upgrade_dump.VERSION_OUTPUT] == versions.DEFAULT_DETERMINED_VERSION
    assert upgrade_dump.UPGRADE_DUMP_OUTPUT not in result.outputs
    # The next update reads those outputs back: the same version, no dump; a new one, a dump.
    deployed(dict(result.outputs))
    assert not upgrade_jobs(plan_for(raw_config()))
    upgraded = plan_for(raw_config(master={"version": "0.37.0"}))
    (job,) = upgrade_jobs(upgraded)
    assert upgraded.outputs[upgrade_dump.UPGRADE_DUMP_OUTPUT] == job["metadata"]["name"]


def test_the_plan_reads_the_stacks_outputs_with_pulumis_builtin_function():
    # The token the engine's builtin provider answers (pulumi/pulumi builtins.go), modelled by
    # the plan's mocks as a stack never deployed.
    assert upgrade_dump.READ_STACK_OUTPUTS == "pulumi:pulumi:readStackOutputs"
    answer = mocks.INVOKES[upgrade_dump.READ_STACK_OUTPUTS](mocks.Request("", "", {"name": "o/p/s"}, {}))
    assert answer == {"name": "o/p/s", "outputs": {}, "secretOutputNames": []}


def test_a_plan_reads_the_stacks_previous_outputs_once(monkeypatch):
    """The upgrade dump and the workspace-binding Job (0.35+) both use them: one read."""
    calls = []
    read = mocks.INVOKES[upgrade_dump.READ_STACK_OUTPUTS]
    monkeypatch.setitem(
        mocks.INVOKES, upgrade_dump.READ_STACK_OUTPUTS, lambda req: calls.append(req) or read(req)
    )
    plan_for(raw_config(master={"version": "0.38.1"}))
    assert len(calls) == 1


def test_without_dumps_before_upgrades_the_master_waits_for_none():
    result = plan_for(raw_config(database={"backup": {"beforeUpgrade": False}}))
    assert not [j for j in by_kind(result, "Job") if j["metadata"]["name"].startswith("determined-db-backup")]
    assert one(result, "CronJob", constants.BACKUP_CRONJOB)
