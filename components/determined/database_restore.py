"""database.restore: the Job that loads a dump into the master's database, while the
master is held at 0 replicas (`master_replicas`); removing the key starts the master on the
restored records. Its pod fetches the dump (from the bucket, or reads it on the backups
claim) and restores it in one transaction (components/determined/data/db_restore.sh).
Built from the pieces every database Job shares (components.determined.database_jobs)."""

from __future__ import annotations

import hashlib
from typing import Any

from components import constants, kube
from components.determined.args import DeterminedArgs
from components.determined.database_jobs import (
    BACKUPS_DIR,
    REPLACE_UNREADY,
    RESTORE_COMPONENT,
    TMP_DIR,
    WORK_DIR,
    Target,
    client_image,
    container,
    database_env,
    db_credentials,
    destination,
    empty_dir,
    env_value,
    job_spec,
    mount,
    on_claim,
    password_secret,
    pod_spec,
    rclone_image,
    rclone_script,
    sh,
    storage_env,
    storage_volumes,
)


def master_replicas(cfg: DeterminedArgs) -> int:
    """The master's replicas: 0 while `database.restore` is set (the restore needs the
    database to itself; removing the key starts the master on the restored records)."""
    return 0 if cfg.database.restore is not None else 1


def restore_job_name(backup: str) -> str:
    """Named by the dump: another dump is another Job; the same one is not run again."""
    return f"{constants.RESTORE_JOB_PREFIX}-{hashlib.sha256(backup.encode()).hexdigest()[:10]}"


def restore_job(cfg: DeterminedArgs, tgt: Target) -> dict[str, Any]:
    """Loads `database.restore.backup` into the database, replacing its contents in one
    transaction, once the master's sessions are gone."""
    restore = cfg.database.restore
    assert restore is not None
    credentials, credentials_mount = db_credentials(
        tgt.endpoint, password_secret(cfg), constants.BACKUP_SECRET
    )
    env = [
        env_value("MODE", "replace"),
        env_value("WAIT_SECONDS", str(constants.RESTORE_WAIT_SECONDS)),
        *database_env(tgt.endpoint),
    ]
    init: list[dict] = []
    if on_claim(cfg):
        claim = {"claimName": constants.BACKUP_CLAIM, "readOnly": True}
        volumes = [{"name": "backups", "persistentVolumeClaim": claim}]
        mounts = [mount("backups", BACKUPS_DIR, read_only=True)]
        env.insert(0, env_value("DUMP", f"{BACKUPS_DIR}/{restore.backup}"))
    else:
        volumes = [empty_dir("work")]
        mounts = [mount("work", WORK_DIR)]
        env.insert(0, env_value("DUMP", f"{WORK_DIR}/restore.dump"))
        store_volumes, storage_mounts = storage_volumes(cfg)
        volumes += store_volumes
        fetch_env = [
            env_value("WORK", WORK_DIR),
            env_value("SOURCE", destination(cfg, tgt)),
            env_value("BACKUP", restore.backup),
            *storage_env(cfg),
        ]
        init.append(
            container(
                "fetch",
                rclone_image(cfg),
                rclone_script(cfg, "db_fetch.sh"),
                fetch_env,
                [*mounts, mount("tmp", TMP_DIR), *storage_mounts],
            )
        )
    main = container(
        "restore",
        client_image(cfg),
        sh("db_connect.sh", "db_restore.sh"),
        env,
        [*mounts, mount("tmp", TMP_DIR), credentials_mount],
    )
    spec = pod_spec(cfg, tgt, init, [main], [*volumes, empty_dir("tmp"), credentials])
    meta = kube.metadata(restore_job_name(restore.backup), RESTORE_COMPONENT, cfg.namespace)
    meta["annotations"] = {REPLACE_UNREADY: "true"}
    return kube.manifest("batch/v1", "Job", meta, spec=job_spec(kube.labels(RESTORE_COMPONENT), spec))
