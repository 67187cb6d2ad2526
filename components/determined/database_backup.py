"""database.backup: the scheduled dumps (a CronJob), and `DatabaseBackups`, the component
that registers every Job around the master's database and what they use: the backup
CronJob, the dump before an upgrade (components.determined.upgrade_dump), the restore
(components.determined.database_restore) and the Helm chart migration
(components.determined.from_helm_chart). What those Jobs share, and how they reach the
database and the store, is in components.determined.database_jobs."""

from __future__ import annotations

from typing import Any

import pulumi

from components import constants, kube
from components.cluster import ClusterHandle
from components.determined import database
from components.determined.args import DeterminedArgs
from components.determined.database_jobs import (
    COMPONENT,
    Target,
    awaited_job_options,
    backup_claim,
    credentials_secret,
    dump_pod,
    job_spec,
    on_claim,
    runs_jobs,
    secret_data,
    service_account,
    target,
)
from components.determined.database_restore import restore_job
from components.determined.upgrade_dump import pre_upgrade_job


def backup_cronjob(cfg: DeterminedArgs, tgt: Target) -> dict[str, Any]:
    """Scheduled dumps (`database.backup.schedule`, UTC); paused while a restore is set."""
    schedule = cfg.database.backup.schedule
    assert schedule is not None
    labels = kube.labels(COMPONENT)
    spec = {
        "schedule": schedule,
        "timeZone": constants.BACKUP_TIME_ZONE,
        # Never two dumps at once; a run still going when the next is due makes it skip.
        "concurrencyPolicy": "Forbid",
        # A dump of a database being replaced is of no use, and pruning could delete the
        # dump being restored.
        "suspend": cfg.database.restore is not None,
        "startingDeadlineSeconds": constants.BACKUP_STARTING_DEADLINE_SECONDS,
        "successfulJobsHistoryLimit": constants.BACKUP_HISTORY,
        "failedJobsHistoryLimit": constants.BACKUP_HISTORY,
        "jobTemplate": {"metadata": {"labels": labels}, "spec": job_spec(labels, dump_pod(cfg, tgt))},
    }
    meta = kube.metadata(constants.BACKUP_CRONJOB, COMPONENT, cfg.namespace)
    return kube.manifest("batch/v1", "CronJob", meta, spec=spec)


class DatabaseBackups(pulumi.ComponentResource):
    """The backup CronJob, the dump before an upgrade (`upgrade`: see `upgrade_dump.needed`), the
    restore and Helm chart migration Jobs, and what they use. `before_master`: what the master
    must wait for (the upgrade dump, the migration); `upgrade_job`: the upgrade dump, if any;
    `restore_after(master)` adds the restore Job, which runs once the master is scaled to 0."""

    before_master: list[pulumi.Resource]
    upgrade_job: pulumi.Resource | None

    def __init__(
        self,
        name: str,
        cfg: DeterminedArgs,
        cluster: ClusterHandle,
        db: database.Database,
        depends_on: list[pulumi.Resource],
        upgrade: bool = True,
        opts: pulumi.ResourceOptions | None = None,
    ):
        super().__init__("determined:components:DatabaseBackups", name, None, opts)
        from components.determined import from_helm_chart

        self.cfg = cfg
        self.target = target(cfg, cluster)
        self.before_master = []
        self.upgrade_job = None
        child = pulumi.ResourceOptions(parent=self, depends_on=depends_on)
        self._child = child
        self._needs: list[pulumi.Resource] = [db]
        migration = None
        if cfg.database.from_helm_chart is not None:
            migration = from_helm_chart.register(cfg, self.target, db.password, [db], child)
            self.before_master.append(migration)
        if not runs_jobs(cfg):
            self.register_outputs({})
            return

        self._needs.append(kube.register(service_account(cfg, cluster.storage_identity), child))
        data = secret_data(cfg, db.password, lambda s: pulumi.Output.secret(s.get_secret_value()))
        secret = credentials_secret(cfg, data)
        if secret is not None:
            self._needs.append(kube.register(secret, child))
        if on_claim(cfg):
            claim = backup_claim(cfg, cluster.default_storage_class)
            self._needs.append(
                kube.register(claim, pulumi.ResourceOptions.merge(child, database.data_options(cfg)))
            )
        after = pulumi.ResourceOptions.merge(child, pulumi.ResourceOptions(depends_on=self._needs))
        if cfg.database.backup.schedule is not None:
            kube.register(backup_cronjob(cfg, self.target), after)
        if cfg.database.backup.before_upgrade and upgrade:
            # After a migration: the first dump of the new install holds the chart's records.
            job_opts = awaited_job_options([*self._needs, *([migration] if migration else [])])
            self.upgrade_job = kube.register(
                pre_upgrade_job(cfg, self.target), pulumi.ResourceOptions.merge(child, job_opts)
            )
            self.before_master.append(self.upgrade_job)
        self.register_outputs({})

    def restore_after(self, master_deployment: pulumi.Resource) -> pulumi.Resource | None:
        """The restore Job (with `database.restore`), once the master's Deployment is at 0."""
        if self.cfg.database.restore is None:
            return None
        opts = awaited_job_options([*self._needs, master_deployment])
        return kube.register(
            restore_job(self.cfg, self.target), pulumi.ResourceOptions.merge(self._child, opts)
        )
