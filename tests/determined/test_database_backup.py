"""Database backups: the CronJob, the dump before an upgrade and the restore Job for every
checkpoint storage type (destination, tools, identity, no secret in sight, strict schema),
the Helm chart migration Job, and the wiring in whole stacks."""

from __future__ import annotations

import json

import pytest
import yaml
from component_args import make_args
from conftest import EKS, GKE, ROOT, raw_config
from planning import by_kind, one, plan_for

from components import constants, versions
from components.determined import (
    database,
    database_backup,
    database_jobs,
    database_restore,
    from_helm_chart,
    master,
    upgrade_dump,
)
from components.determined.database import DatabaseEndpoint
from components.determined.database_jobs import Target
from components.kube import validation

S3_KEY_ID = "AKIAABCDEFGHIJKLMNOP"
S3_SECRET = "s3-Secret-Key-42"
AZURE_CONNECTION = "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=azKey-77;"
AZURE_SAS = "sv=2024-01-01&ss=b&sig=Sas-Sig-55"
DB_PASSWORD = "Ext-Db-Pass-9"
SECRETS = (S3_SECRET, AZURE_CONNECTION, AZURE_SAS, DB_PASSWORD, "azKey-77", "Sas-Sig-55")
# A real CA certificate: master.caBundle must parse as X.509 (components/config/syntax.py).
CA = (ROOT / "tests" / "data" / "test-ca.pem").read_text()
DUMP = "determined-20261122T030000Z.dump"

STORAGES = {
    "gcs": {"type": "gcs", "bucket": "ckpt-bucket", "prefix": "team/exp/"},
    "s3": {"type": "s3", "bucket": "ckpt-bucket", "prefix": "det"},
    "s3-keys": {
        "type": "s3",
        "bucket": "ckpt-bucket",
        "endpointUrl": "http://minio.storage:9000",
        "accessKey": S3_KEY_ID,
        "secretKey": S3_SECRET,
    },
    "azure": {"type": "azure", "container": "ckpts", "connectionString": AZURE_CONNECTION},
    "azure-sas": {
        "type": "azure",
        "container": "ckpts",
        "accountUrl": "https://acct.blob.core.windows.net",
        "credential": AZURE_SAS,
    },
    "azure-identity": {
        "type": "azure",
        "container": "ckpts",
        "accountUrl": "https://acct.blob.core.windows.net",
    },
    "sharedFs": {"type": "sharedFs"},
    "directory": {"type": "directory", "claimName": "shared-ckpts"},
}
# Where each puts its dumps (the rclone path, or the claim's directory).
DESTINATIONS = {
    "gcs": "backup:ckpt-bucket/team/exp/determined-db-backups",
    "s3": "backup:ckpt-bucket/det/determined-db-backups",
    "s3-keys": "backup:ckpt-bucket/determined-db-backups",
    "azure": "backup:ckpts/determined-db-backups",
    "azure-sas": "backup:ckpts/determined-db-backups",
    "azure-identity": "backup:ckpts/determined-db-backups",
    "sharedFs": "/backups",
    "directory": "/backups",
}
EXTERNAL = {
    "mode": "external",
    "host": "pg.internal",
    "user": "det",
    "password": DB_PASSWORD,
    "sslMode": "verify-full",
    "sslRootCert": CA,
}


def config(storage: str = "sharedFs", **database_keys):
    return make_args(checkpointStorage=STORAGES[storage], database={"mode": "inCluster", **database_keys})


def target(cfg, identity: bool = False) -> Target:
    return Target(database.endpoint(cfg), workload_identity=identity)


def pod(obj) -> dict:
    if obj["kind"] == "CronJob":
        return obj["spec"]["jobTemplate"]["spec"]["template"]["spec"]
    return obj["spec"]["template"]["spec"]


def containers(obj) -> dict[str, dict]:
    spec = pod(obj)
    return {c["name"]: c for c in [*spec.get("initContainers", []), *spec["containers"]]}


def env(container) -> dict[str, dict]:
    return {e["name"]: e for e in container["env"]}


def value(container, name):
    return env(container)[name].get("value")


def script(container) -> str:
    assert container["command"][:2] == ["/bin/sh", "-c"]
    return container["command"][2]


def volume(obj, name) -> dict:
    (found,) = [v for v in pod(obj)["volumes"] if v["name"] == name]
    return found


def projected(obj, name) -> dict[str, list[tuple[str, str]]]:
    """{Secret: [(key, file)]} of a projected credentials volume."""
    return {
        source["secret"]["name"]: [(item["key"], item["path"]) for item in source["secret"]["items"]]
        for source in volume(obj, name)["projected"]["sources"]
    }


def assert_valid(obj):
    assert list(validation.problems(obj)) == [], (obj["kind"], obj["metadata"]["name"])


def assert_hardened(obj, uid=constants.BACKUP_UID):
    spec = pod(obj)
    context = spec["securityContext"]
    assert context["runAsNonRoot"] is True and context["runAsUser"] == uid
    assert context["seccompProfile"] == {"type": "RuntimeDefault"}
    assert spec["enableServiceLinks"] is False
    mounts_tmp = False
    for c in containers(obj).values():
        sc = c["securityContext"]
        assert sc["allowPrivilegeEscalation"] is False and sc["capabilities"] == {"drop": ["ALL"]}
        assert sc["readOnlyRootFilesystem"] is True and sc["runAsNonRoot"] is True and sc["runAsUser"] == uid
        resources = c["resources"]
        assert {"cpu", "memory"} <= resources["requests"].keys() and {"cpu", "memory"} <= resources[
            "limits"
        ].keys()
        assert c["image"].rsplit(":", 1)[-1] not in ("", "latest")
        mounts_tmp = mounts_tmp or any(m["mountPath"] == "/tmp" for m in c["volumeMounts"])
        # Secrets reach the containers as files only (no environment value, no secretKeyRef).
        for e in c["env"]:
            assert "secretKeyRef" not in e.get("valueFrom", {}), e["name"]
            assert not any(word in e["name"] for word in ("PASSWORD", "SECRET", "CONNECTION_STRING")), e[
                "name"
            ]
        for m in c["volumeMounts"]:
            if m["name"].endswith("credentials"):
                assert m["readOnly"] is True
    assert mounts_tmp


def assert_no_secret(obj):
    text = json.dumps(obj)
    for secret in SECRETS:
        assert secret not in text, f"{obj['kind']} {obj['metadata']['name']} shows a secret"


# --- every storage type ----------------------------------------------------------------------


@pytest.mark.parametrize("storage", sorted(STORAGES))
def test_the_cronjob_dumps_and_stores_where_checkpoints_go(storage):
    cfg = config(storage)
    job = database_backup.backup_cronjob(cfg, target(cfg))
    assert_valid(job)
    assert_hardened(job)
    assert_no_secret(job)
    spec = job["spec"]
    assert (spec["schedule"], spec["timeZone"], spec["concurrencyPolicy"]) == (
        "0 3 * * *",
        "Etc/UTC",
        "Forbid",
    )
    assert spec["suspend"] is False
    assert spec["successfulJobsHistoryLimit"] == spec["failedJobsHistoryLimit"] == constants.BACKUP_HISTORY
    job_spec = spec["jobTemplate"]["spec"]
    assert job_spec["backoffLimit"] == constants.BACKUP_BACKOFF_LIMIT
    assert job_spec["activeDeadlineSeconds"] == constants.BACKUP_DEADLINE_SECONDS
    dump, store = containers(job)["dump"], containers(job)["store"]
    assert [c["name"] for c in pod(job)["initContainers"]] == ["dump"]
    # The in-cluster database's own image: the client matches the server.
    assert dump["image"] == versions.POSTGRES_IMAGE
    assert "pg_dump --format=custom" in script(dump)
    assert store["image"] == versions.RCLONE_IMAGE
    assert 'rclone moveto "$work/dump" "$DEST/$name"' in script(store)
    assert value(store, "DEST") == DESTINATIONS[storage]
    assert value(store, "KEEP_DAYS") == "14"
    assert "MASTER_VERSION" not in env(store)
    # The in-cluster database's own password Secret, as a file the script reads.
    assert projected(job, "db-credentials") == {
        constants.DB_SECRET_NAME: [("POSTGRES_PASSWORD", "postgres-password")]
    }
    assert volume(job, "db-credentials")["projected"]["defaultMode"] == 0o440
    assert pod(job)["securityContext"]["fsGroup"] == constants.BACKUP_UID
    assert "/etc/determined-db-credentials}/postgres-password" in script(dump)
    assert (value(dump, "PGHOST"), value(dump, "PGUSER")) == (constants.DB_SERVICE_NAME, constants.DB_USER)
    labels = pod_labels(job)
    assert labels["app.kubernetes.io/name"] == constants.BACKUP_COMPONENT == "database-backup"
    assert pod(job)["serviceAccountName"] == constants.BACKUP_SERVICE_ACCOUNT
    # The dump travels between the containers on the claim, or on an emptyDir.
    volumes = {v["name"]: v for v in pod(job)["volumes"]}
    if storage in ("sharedFs", "directory"):
        assert volumes["backups"]["persistentVolumeClaim"] == {"claimName": constants.BACKUP_CLAIM}
        assert value(dump, "WORK") == "/backups/.incoming"
    else:
        assert volumes["work"] == {"name": "work", "emptyDir": {}}


def pod_labels(obj):
    if obj["kind"] == "CronJob":
        return obj["spec"]["jobTemplate"]["spec"]["template"]["metadata"]["labels"]
    return obj["spec"]["template"]["metadata"]["labels"]


@pytest.mark.parametrize("storage", sorted(STORAGES))
def test_the_dump_before_an_upgrade_is_named_after_the_version_and_never_prunes(storage):
    cfg = make_args(checkpointStorage=STORAGES[storage], master={"version": "0.37.0"})
    job = upgrade_dump.pre_upgrade_job(cfg, target(cfg))
    assert_valid(job)
    assert_hardened(job)
    assert_no_secret(job)
    assert job["metadata"]["name"] == "determined-db-backup-0-37-0"
    assert job["metadata"]["annotations"]["pulumi.com/replaceUnready"] == "true"
    store = containers(job)["store"]
    assert value(store, "MASTER_VERSION") == "0.37.0"
    assert "KEEP_DAYS" not in env(store)
    assert value(store, "DEST") == DESTINATIONS[storage]
    assert "-upgrade-${from:-unknown}-to-$MASTER_VERSION.dump" in script(store)


@pytest.mark.parametrize("storage", sorted(STORAGES))
def test_the_restore_job_loads_the_named_dump_in_one_transaction(storage):
    cfg = config(storage, restore={"backup": DUMP})
    job = database_restore.restore_job(cfg, target(cfg))
    assert_valid(job)
    assert_hardened(job)
    assert_no_secret(job)
    assert job["metadata"]["name"].startswith(constants.RESTORE_JOB_PREFIX + "-")
    assert pod_labels(job)["app.kubernetes.io/name"] == constants.RESTORE_COMPONENT
    restore = containers(job)["restore"]
    text = script(restore)
    assert 'pg_restore --no-owner --no-privileges --use-list="$tmp/restore.list" --file=- ' in text
    assert "echo 'BEGIN;'" in text and "echo 'COMMIT;'" in text
    assert "--set=ON_ERROR_STOP=1" in text
    assert value(restore, "MODE") == "replace"
    assert restore["image"] == versions.POSTGRES_IMAGE
    if storage in ("sharedFs", "directory"):
        # Read from the claim, read-only; nothing to fetch.
        assert value(restore, "DUMP") == f"/backups/{DUMP}"
        assert "initContainers" not in pod(job)
        (claim,) = [v for v in pod(job)["volumes"] if "persistentVolumeClaim" in v]
        assert claim["persistentVolumeClaim"] == {"claimName": constants.BACKUP_CLAIM, "readOnly": True}
    else:
        fetch = containers(job)["fetch"]
        assert value(fetch, "SOURCE") == DESTINATIONS[storage]
        assert value(fetch, "BACKUP") == DUMP
        assert 'rclone copyto "$SOURCE/$BACKUP" "$WORK/restore.dump"' in script(fetch)
        assert value(restore, "DUMP") == "/work/restore.dump"


def test_restore_jobs_are_named_by_their_dump():
    names = {
        database_restore.restore_job(c, target(c))["metadata"]["name"]
        for c in (config(restore={"backup": DUMP}), config(restore={"backup": "determined-1.dump"}))
    }
    assert len(names) == 2


# --- storage credentials and identity ---------------------------------------------------------


def rclone_env(storage, **kw):
    cfg = config(storage)
    return env(containers(database_backup.backup_cronjob(cfg, target(cfg, **kw)))["store"])


def test_gcs_uses_the_pods_workload_identity_with_object_rights_only():
    e = rclone_env("gcs")
    assert e["RCLONE_CONFIG_BACKUP_TYPE"]["value"] == "google cloud storage"
    assert e["RCLONE_CONFIG_BACKUP_ENV_AUTH"]["value"] == "true"
    assert e["RCLONE_CONFIG_BACKUP_BUCKET_POLICY_ONLY"]["value"] == "true"
    assert e["RCLONE_CONFIG_BACKUP_NO_CHECK_BUCKET"]["value"] == "true"


def test_s3_uses_the_sdk_chain_or_the_configured_keys_from_the_secret():
    e = rclone_env("s3")
    assert (e["RCLONE_CONFIG_BACKUP_PROVIDER"]["value"], e["RCLONE_CONFIG_BACKUP_ENV_AUTH"]["value"]) == (
        "AWS",
        "true",
    )
    keyed = rclone_env("s3-keys")
    assert "RCLONE_CONFIG_BACKUP_ENV_AUTH" not in keyed
    assert keyed["RCLONE_CONFIG_BACKUP_ENDPOINT"]["value"] == "http://minio.storage:9000"
    assert keyed["RCLONE_CONFIG_BACKUP_PROVIDER"]["value"] == "Other"
    cfg = config("s3-keys")
    job = database_backup.backup_cronjob(cfg, target(cfg))
    # Each key a file named after the rclone variable it sets, from the backup Secret.
    assert projected(job, "storage-credentials") == {
        constants.BACKUP_SECRET: [
            (database_jobs.S3_ACCESS_KEY, "RCLONE_CONFIG_BACKUP_ACCESS_KEY_ID"),
            (database_jobs.S3_SECRET_KEY, "RCLONE_CONFIG_BACKUP_SECRET_ACCESS_KEY"),
        ]
    }
    store = containers(job)["store"]
    assert {
        "name": "storage-credentials",
        "mountPath": "/etc/determined-storage-credentials",
        "readOnly": True,
    } in (store["volumeMounts"])
    assert "/etc/determined-storage-credentials}" in script(store)
    # The database's own containers never see the store's keys.
    assert not [m for m in containers(job)["dump"]["volumeMounts"] if m["name"] == "storage-credentials"]
    data = database_jobs.secret_data(config("s3-keys"), "pw", lambda s: s.get_secret_value())
    assert data == {database_jobs.S3_ACCESS_KEY: S3_KEY_ID, database_jobs.S3_SECRET_KEY: S3_SECRET}


def test_the_store_is_reached_through_the_masters_proxy_and_with_its_extra_cas():
    from components.determined import network_policies

    proxy = {"httpsProxy": "http://proxy.corp:3128", "noProxy": ".corp"}
    cfg = make_args(
        checkpointStorage=STORAGES["s3-keys"],
        database={"mode": "inCluster", "restore": {"backup": DUMP}},
        master={"proxy": proxy, "caBundle": CA},
    )
    jobs = [database_backup.backup_cronjob(cfg, target(cfg)), database_restore.restore_job(cfg, target(cfg))]
    for job, name in zip(jobs, ("store", "fetch"), strict=True):
        rclone = containers(job)[name]
        assert value(rclone, "HTTPS_PROXY") == value(rclone, "https_proxy") == "http://proxy.corp:3128"
        assert ".svc" in value(rclone, "NO_PROXY")
        # The extra CAs beside the system ones, from the volume the master mounts them from.
        directories = value(rclone, "SSL_CERT_DIR").split(":")
        (ca_mount,) = [m for m in rclone["volumeMounts"] if m["mountPath"] in directories[1:]]
        volumes = {v["name"]: v for v in pod(job)["volumes"]}
        assert volumes[ca_mount["name"]]["configMap"]["name"] == constants.CA_BUNDLE_CONFIG_MAP
    # The backup Jobs may reach the proxy (and the store's own port).
    assert {3128, 9000, 443} <= set(network_policies.object_storage_ports(cfg))


def test_an_eks_bucket_is_reached_in_the_clusters_region():
    cfg = make_args(**{**EKS, "checkpointStorage": {"type": "s3", "bucket": "eks-bucket"}})
    store = containers(database_backup.backup_cronjob(cfg, target(cfg)))["store"]
    assert value(store, "RCLONE_CONFIG_BACKUP_REGION") == "us-east-1"


def test_azure_takes_a_connection_string_a_key_or_sas_or_the_credential_chain():
    def files(storage):
        cfg = config(storage)
        return projected(database_backup.backup_cronjob(cfg, target(cfg)), "storage-credentials")

    assert files("azure") == {
        constants.BACKUP_SECRET: [
            (database_jobs.AZURE_CONNECTION_STRING, "RCLONE_CONFIG_BACKUP_CONNECTION_STRING")
        ]
    }
    assert files("azure-sas") == {
        constants.BACKUP_SECRET: [(database_jobs.AZURE_CREDENTIAL, database_jobs.AZURE_CREDENTIAL)]
    }
    sas = rclone_env("azure-sas")
    assert sas["RCLONE_CONFIG_BACKUP_ACCOUNT"]["value"] == "acct"
    assert "RCLONE_CONFIG_BACKUP_ENV_AUTH" not in sas
    # The credential is told apart in the script (key or SAS), never in argv.
    cfg = config("azure-sas")
    store = containers(database_backup.backup_cronjob(cfg, target(cfg)))["store"]
    assert "RCLONE_CONFIG_BACKUP_SAS_URL=" in script(store)
    assert rclone_env("azure-identity")["RCLONE_CONFIG_BACKUP_ENV_AUTH"]["value"] == "true"
    plain = database_backup.backup_cronjob(config("azure-identity"), target(config("azure-identity")))
    assert "storage-credentials" not in [v["name"] for v in pod(plain)["volumes"]]
    assert "AZURE_CREDENTIAL" not in script(containers(plain)["store"])


def test_azure_account_names_from_endpoints():
    assert database_jobs.azure_account("https://acct.blob.core.windows.net") == "acct"
    assert database_jobs.azure_account("http://127.0.0.1:10000/devstoreaccount1") == "devstoreaccount1"


def test_the_token_is_mounted_only_where_a_cloud_identity_reaches_the_bucket():
    for storage, identity, mounted in (
        ("gcs", True, True),
        ("s3", True, True),
        ("gcs", False, False),
        ("sharedFs", True, False),
    ):
        cfg = config(storage)
        for job in (
            database_backup.backup_cronjob(cfg, target(cfg, identity)),
            upgrade_dump.pre_upgrade_job(cfg, target(cfg, identity)),
        ):
            assert pod(job)["automountServiceAccountToken"] is mounted, (storage, identity)


def test_the_service_account_is_annotated_like_the_masters():
    identity = {"iam.gke.io/gcp-service-account": "storage@p.iam.gserviceaccount.com"}
    account = database_jobs.service_account(config("gcs"), identity)
    assert account["metadata"]["annotations"] == identity
    assert account["metadata"]["name"] == constants.BACKUP_SERVICE_ACCOUNT
    assert_valid(account)


def test_the_platforms_bind_the_backup_account_to_the_bucket():
    from components.cluster import checkpoints

    assert ("determined", constants.BACKUP_SERVICE_ACCOUNT) in checkpoints.kubernetes_accounts(config("gcs"))
    off = make_args(
        checkpointStorage=STORAGES["gcs"],
        database={"mode": "external", **EXTERNAL, "backup": {"beforeUpgrade": False}},
    )
    assert ("determined", constants.BACKUP_SERVICE_ACCOUNT) not in checkpoints.kubernetes_accounts(off)


# --- database modes ---------------------------------------------------------------------------


def test_an_external_server_is_dumped_with_its_tls_settings_and_the_newest_client():
    cfg = make_args(checkpointStorage=STORAGES["s3"], database={**EXTERNAL, "backup": {"schedule": "@daily"}})
    job = database_backup.backup_cronjob(cfg, target(cfg))
    assert_valid(job)
    assert_no_secret(job)
    dump = containers(job)["dump"]
    assert dump["image"] == versions.EXTERNAL_POSTGRES_CLIENT_IMAGE
    assert (value(dump, "PGHOST"), value(dump, "PGUSER"), value(dump, "PGSSLMODE")) == (
        "pg.internal",
        "det",
        "verify-full",
    )
    assert value(dump, "PGSSLROOTCERT") == "/etc/determined-db-credentials/root.crt"
    # Password and CA certificate from the backup Secret (the server's own lives elsewhere).
    assert projected(job, "db-credentials") == {
        constants.BACKUP_SECRET: [("POSTGRES_PASSWORD", "postgres-password"), ("root.crt", "root.crt")]
    }
    data = database_jobs.secret_data(cfg, DB_PASSWORD, lambda s: s.get_secret_value())
    assert data == {"POSTGRES_PASSWORD": DB_PASSWORD, database_jobs.CA_KEY: CA}
    secret = database_jobs.credentials_secret(cfg, data)
    assert_valid(secret)


def test_a_managed_server_is_dumped_by_a_client_of_its_major_version():
    from components.cluster.eks import database as rds
    from components.cluster.gke import database as cloud_sql

    major = versions.MANAGED_POSTGRES_MAJOR
    assert f"POSTGRES_{major}" == cloud_sql.DATABASE_VERSION
    assert str(major) == rds.ENGINE_VERSION
    assert versions.MANAGED_POSTGRES_CLIENT_IMAGE.split(":")[1].split(".")[0] == str(major)
    cfg = make_args(
        **{
            **GKE,
            "checkpointStorage": {"type": "gcs"},
            "database": {"mode": "managed", "tier": "db-custom-2-8192"},
        }
    )
    endpoint = DatabaseEndpoint("10.0.0.5", 5432, "determined", "determined", "require")
    job = upgrade_dump.pre_upgrade_job(cfg, Target(endpoint, bucket="created-bucket", workload_identity=True))
    assert_valid(job)
    dump = containers(job)["dump"]
    assert dump["image"] == versions.MANAGED_POSTGRES_CLIENT_IMAGE
    assert value(dump, "PGSSLMODE") == "require"
    assert value(containers(job)["store"], "DEST") == "backup:created-bucket/determined-db-backups"


def test_mirrors_of_the_tools_are_used_when_given():
    cfg = config(
        backup={
            "clientImage": "mirror.example.com/postgres:17.6",
            "rcloneImage": "mirror.example.com/rclone:1.75.1",
        }
    )
    c = containers(database_backup.backup_cronjob(cfg, target(cfg)))
    assert (c["dump"]["image"], c["store"]["image"]) == (
        "mirror.example.com/postgres:17.6",
        "mirror.example.com/rclone:1.75.1",
    )
    cfg = config(image="mirror.example.com/library/postgres:17.6")
    assert containers(database_backup.backup_cronjob(cfg, target(cfg)))["dump"]["image"] == (
        "mirror.example.com/library/postgres:17.6"
    )


def test_the_backup_claim_is_the_configured_size_of_the_databases_class():
    claim = database_jobs.backup_claim(
        config(backup={"storageSize": "80Gi"}, storageClass="fast"), "determined-db"
    )
    assert claim["spec"]["resources"]["requests"]["storage"] == "80Gi"
    assert claim["spec"]["storageClassName"] == "fast"
    assert (
        database_jobs.backup_claim(config(), "determined-db")["spec"]["storageClassName"] == "determined-db"
    )
    assert database_jobs.backup_claim(config())["spec"]["resources"]["requests"]["storage"] == "50Gi"
    assert_valid(claim)


def test_a_restore_holds_the_master_at_zero_and_pauses_scheduled_dumps():
    cfg = config(restore={"backup": DUMP})
    assert database_restore.master_replicas(cfg) == 0
    assert database_restore.master_replicas(config()) == 1
    assert master.deployment(cfg, "sum")["spec"]["replicas"] == 0
    assert master.deployment(config(), "sum")["spec"]["replicas"] == 1
    assert database_backup.backup_cronjob(cfg, target(cfg))["spec"]["suspend"] is True


# --- the Helm chart's records ----------------------------------------------------------------


def test_the_migration_job_copies_the_charts_volume_read_only_and_fills_an_empty_database():
    cfg = config(fromHelmChart={"namespace": "legacy", "releaseName": "det"})
    job = from_helm_chart.migration_job(cfg, target(cfg))
    assert_valid(job)
    assert_no_secret(job)
    assert job["metadata"]["namespace"] == "legacy"
    assert job["metadata"]["name"] == constants.MIGRATION_JOB
    assert pod_labels(job)["app.kubernetes.io/name"] == constants.MIGRATION_COMPONENT
    spec = pod(job)
    (claim,) = [v for v in spec["volumes"] if "persistentVolumeClaim" in v]
    assert claim["persistentVolumeClaim"] == {"claimName": "determined-db-pvc-det", "readOnly": True}
    assert "fsGroup" not in spec["securityContext"]  # the old volume is never relabelled
    assert spec["automountServiceAccountToken"] is False
    dump, restore = containers(job)["chart-dump"], containers(job)["restore"]
    assert dump["image"] == versions.HELM_CHART_POSTGRES_IMAGE == "postgres:10.23"
    assert [m for m in dump["volumeMounts"] if m["name"] == "chart"] == [
        {"name": "chart", "mountPath": "/chart", "readOnly": True}
    ]
    assert value(dump, "CHART_SERVICE") == "determined-db-service-det"
    assert "pg_dump --host=" in script(dump) and "cp -R -p" in script(dump)
    assert value(restore, "MODE") == "into-empty"
    assert value(restore, "PGHOST") == "determined-db.determined.svc"
    assert projected(job, "db-credentials") == {
        constants.MIGRATION_SECRET: [("POSTGRES_PASSWORD", "postgres-password")]
    }
    # The chart's postgres user reads the chart's files; the volume is never relabelled.
    assert spec["securityContext"]["runAsUser"] == constants.MIGRATION_UID == 999
    secret = from_helm_chart.password_secret(cfg, "pw")
    assert secret["metadata"]["namespace"] == "legacy"
    assert_valid(secret)
    assert_hardened(job, uid=constants.MIGRATION_UID)


def test_the_scripts_read_credentials_where_the_pods_mount_them():
    path = f"${{DB_CREDENTIALS_DIR:-{constants.DB_CREDENTIALS_DIR}}}/{database_jobs.PASSWORD_FILE}"
    assert path in database_jobs.script("db_connect.sh")
    # ... which every container running the client scripts runs first.
    cfg = config("gcs", restore={"backup": DUMP})
    tgt = target(cfg)
    for job, name in (
        (database_backup.backup_cronjob(cfg, tgt), "dump"),
        (database_restore.restore_job(cfg, tgt), "restore"),
    ):
        assert containers(job)[name]["command"] == database_jobs.sh("db_connect.sh", f"db_{name}.sh")
    storage = f"${{STORAGE_CREDENTIALS_DIR:-{constants.STORAGE_CREDENTIALS_DIR}}}"
    assert f'for file in "{storage}"/*; do' in database_jobs.script("db_rclone_env.sh")
    # Dumps run as a user of their own, high enough to be no node user's.
    assert constants.BACKUP_UID >= 10000


# --- whole stacks -----------------------------------------------------------------------------


def resources_of(result, kind, name):
    return [
        r
        for r in result.resources
        if r["type"].endswith(f":{kind}") and r["inputs"]["metadata"]["name"] == name
    ]


def test_a_restore_runs_after_the_master_is_scaled_to_zero():
    result = plan_for(raw_config(database={"restore": {"backup": DUMP}}))
    name = database_restore.restore_job_name(DUMP)
    (job,) = resources_of(result, "Job", name)
    (deployment,) = resources_of(result, "Deployment", constants.MASTER_NAME)
    assert deployment["inputs"]["spec"]["replicas"] == 0
    assert deployment["urn"] in job["dependsOn"]
    assert job["urn"] not in deployment["dependsOn"]
    assert one(result, "CronJob", constants.BACKUP_CRONJOB)["spec"]["suspend"] is True
    assert_valid(one(result, "Job", name))


def test_the_charts_records_move_in_before_the_master_starts():
    raw = raw_config(database={"fromHelmChart": {"namespace": "legacy"}})
    result = plan_for(raw)
    (job,) = resources_of(result, "Job", constants.MIGRATION_JOB)
    (deployment,) = resources_of(result, "Deployment", constants.MASTER_NAME)
    (upgrade,) = resources_of(result, "Job", upgrade_dump.pre_upgrade_job_name("0.38.1"))
    assert job["urn"] in deployment["dependsOn"]
    # The first dump of the new install holds the chart's records.
    assert job["urn"] in upgrade["dependsOn"]
    (secret,) = resources_of(result, "Secret", constants.MIGRATION_SECRET)
    assert secret["inputs"]["metadata"]["namespace"] == "legacy"
    assert secret["urn"] in job["dependsOn"]
    for obj in result.manifests:
        if obj["metadata"].get("namespace") == "legacy":
            assert_valid(obj)


def test_a_gke_stack_binds_the_backup_account_and_keeps_the_dumps_in_the_bucket():
    result = plan_for({**GKE, "checkpointStorage": {"type": "gcs"}})
    account = one(result, "ServiceAccount", constants.BACKUP_SERVICE_ACCOUNT)
    assert "iam.gke.io/gcp-service-account" in account["metadata"]["annotations"]
    members = [
        r["inputs"]["member"]
        for r in result.resources
        if r["type"].endswith("serviceaccount/iAMMember:IAMMember")
    ]
    assert any(m.endswith(f"[determined/{constants.BACKUP_SERVICE_ACCOUNT}]") for m in members)
    job = one(result, "CronJob", constants.BACKUP_CRONJOB)
    assert value(containers(job)["store"], "DEST").endswith("-checkpoints/determined-db-backups")
    assert pod(job)["automountServiceAccountToken"] is True
    assert not by_kind(result, "PersistentVolumeClaim") or all(
        c["metadata"]["name"] != constants.BACKUP_CLAIM for c in by_kind(result, "PersistentVolumeClaim")
    )


def test_the_backup_claim_and_its_namespace_are_kept_on_destroy():
    result = plan_for(raw_config(database=EXTERNAL))
    (claim,) = resources_of(result, "PersistentVolumeClaim", constants.BACKUP_CLAIM)
    assert claim["options"].get("retainOnDelete") is True
    (ns,) = resources_of(result, "Namespace", "determined")
    assert ns["options"].get("retainOnDelete") is True
    prod = plan_for(raw_config(environment="prod"))
    (claim,) = resources_of(prod, "PersistentVolumeClaim", constants.BACKUP_CLAIM)
    assert claim["options"].get("protect") is True


def test_no_secret_value_reaches_a_backup_object_in_a_whole_stack():
    raw = raw_config(
        checkpointStorage=STORAGES["s3-keys"],
        database={**EXTERNAL, "backup": {"schedule": "0 4 * * *"}},
    )
    result = plan_for(raw)
    secret = one(result, "Secret", constants.BACKUP_SECRET)
    assert secret["stringData"]["POSTGRES_PASSWORD"] == "[secret]"
    assert secret["stringData"][database_jobs.S3_SECRET_KEY] == "[secret]"
    for obj in result.manifests:
        if obj["metadata"]["labels"]["app.kubernetes.io/name"] in (constants.BACKUP_COMPONENT,):
            assert_no_secret(obj)
            assert_valid(obj)
    text = yaml.safe_dump(result.manifests)
    assert DB_PASSWORD not in text and S3_SECRET not in text
