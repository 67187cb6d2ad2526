"""Directory checkpoints (`checkpointStorage.type: directory`) and Azure's account-URL form:
what each accepts, each refusal with its key path, and the rules that read other sections
(components/config/checkpoint_directory.py)."""

from __future__ import annotations

import copy

import pytest
from conftest import BASE, EKS, GKE, raw_config
from pydantic import TypeAdapter

from components.config import AzureStorage, ConfigError, DirectoryStorage, load_config, secret_fields
from components.config.checkpoint_directory import directory_problems
from components.config.stack import AnyStack

NFS = {"server": "10.0.0.2", "path": "/share"}
ACCOUNT_URL = "https://ckpt.blob.core.windows.net"
_STACK = TypeAdapter(AnyStack)


def directory(**keys):
    return {"type": "directory", **keys}


def stack(raw):
    """The config as its sections validate it, before any cross-section rule (so that these
    tests judge directory_problems alone, registered in components.config.rules or not)."""
    return _STACK.validate_python(raw)


def problems(raw) -> list[str]:
    with pytest.raises(ConfigError) as info:
        load_config(raw)
    return [str(p) for p in info.value.problems]


def rule(raw) -> list[str]:
    found: list[str] = []
    directory_problems(stack(raw), lambda path, message: found.append(f"{path}: {message}"))
    return found


def in_master_namespace(raw):
    """Every task in the master's namespace: each resource pool's and (0.35+) the default
    task namespace's (as directory_problems sees it; the namespace rules of stack.py refuse
    such a config on their own)."""
    raw = copy.deepcopy(raw)
    for pool in raw["resourcePools"]:
        pool["namespace"] = raw.get("namespace", "determined")
    raw["taskNamespace"] = raw.get("namespace", "determined")
    return raw


# --- accepted --------------------------------------------------------------------------


def test_each_source_is_accepted_with_the_defaults_filled_in():
    by_claim = stack(raw_config(checkpointStorage=directory(claimName="shared-ckpt"))).checkpoint_storage
    assert isinstance(by_claim, DirectoryStorage)
    assert by_claim.container_path == "/determined/checkpoints"
    assert (by_claim.claim, by_claim.size, by_claim.provisioned) == ("shared-ckpt", None, False)
    assert (by_claim.save_experiment_best, by_claim.save_trial_best, by_claim.save_trial_latest) == (0, 1, 1)

    by_nfs = stack(raw_config(checkpointStorage=directory(nfs=NFS))).checkpoint_storage
    assert (by_nfs.claim, by_nfs.capacity, by_nfs.nfs.mount_options) == ("determined-checkpoints", "1Ti", [])

    by_class = stack(
        raw_config(
            checkpointStorage=directory(storageClass="standard-rwx", size="2560Gi", containerPath="/ckpt")
        )
    ).checkpoint_storage
    assert (by_class.claim, by_class.capacity, by_class.provisioned) == (
        "determined-checkpoints",
        "2560Gi",
        True,
    )
    assert by_class.container_path == "/ckpt"


@pytest.mark.parametrize(
    "server", ["10.0.0.2", "fd00::2", "fs-0123456789abcdef0.efs.us-east-1.amazonaws.com", "nas", "NAS.lan"]
)
def test_an_nfs_server_is_an_ip_address_or_a_dns_name(server):
    cfg = stack(
        raw_config(
            checkpointStorage=directory(nfs={**NFS, "server": server, "mountOptions": ["nfsvers=4.1"]})
        )
    )
    assert cfg.checkpoint_storage.nfs.server == server


def test_a_size_given_as_a_number_is_a_quantity():
    cfg = stack(raw_config(checkpointStorage=directory(nfs=NFS, size=1000)))
    assert cfg.checkpoint_storage.capacity == "1000"


@pytest.mark.parametrize(
    ("keys", "section"),
    [
        ({"connectionString": "AccountName=x;AccountKey=y"}, ("connection_string", None, None)),
        ({"accountUrl": ACCOUNT_URL}, (None, ACCOUNT_URL, None)),
        ({"accountUrl": ACCOUNT_URL, "credential": "sas-or-key"}, (None, ACCOUNT_URL, "sas-or-key")),
    ],
)
def test_azure_takes_a_connection_string_or_an_account_url_with_an_optional_credential(keys, section):
    cs = load_config(
        raw_config(checkpointStorage={"type": "azure", "container": "ckpt", **keys})
    ).checkpoint_storage
    assert isinstance(cs, AzureStorage)
    connection, url, credential = section
    assert (cs.connection_string is not None) == (connection is not None)
    assert cs.account_url == url
    assert (cs.credential.get_secret_value() if cs.credential else None) == credential


def test_the_azure_credential_is_a_secret_found_like_every_other():
    cfg = load_config(
        raw_config(
            checkpointStorage={
                "type": "azure",
                "container": "ckpt",
                "accountUrl": ACCOUNT_URL,
                "credential": "Sas-T0ken",
            }
        )
    )
    assert ("checkpointStorage", "credential") in [path for path, _ in secret_fields(cfg)]
    assert "Sas-T0ken" not in repr(cfg.checkpoint_storage)


# --- refused by the section itself ----------------------------------------------------

BAD = [
    (
        "no source",
        directory(),
        "determined:checkpointStorage: type directory needs one source: claimName (an existing "
        "ReadWriteMany claim), nfs {server, path}, storageClass or sharedFilesystem",
    ),
    (
        "two sources",
        directory(claimName="x", nfs=NFS),
        "determined:checkpointStorage.nfs: claimName and nfs are alternatives; give one of claimName",
    ),
    (
        "three sources",
        directory(claimName="x", nfs=NFS, storageClass="standard-rwx"),
        "determined:checkpointStorage.nfs: claimName and nfs are alternatives",
    ),
    (
        "class and nfs",
        directory(nfs=NFS, storageClass="standard-rwx"),
        "determined:checkpointStorage.storageClass: nfs and storageClass are alternatives",
    ),
    (
        "size of an existing claim",
        directory(claimName="x", size="1Ti"),
        "determined:checkpointStorage.size: only with nfs or storageClass (an existing claim has its own size)",
    ),
    (
        "size not a quantity",
        directory(nfs=NFS, size="lots"),
        "determined:checkpointStorage.size: 'lots' is not a Kubernetes quantity",
    ),
    (
        "size zero",
        directory(nfs=NFS, size="0"),
        "determined:checkpointStorage.size: '0' must be greater than zero",
    ),
    (
        "claim name",
        directory(claimName="Shared_Ckpt"),
        "determined:checkpointStorage.claimName: 'Shared_Ckpt' is not a valid Kubernetes name",
    ),
    (
        "class name",
        directory(storageClass="Standard RWX"),
        "determined:checkpointStorage.storageClass: 'Standard RWX' is not a valid Kubernetes name",
    ),
    (
        "nfs server",
        directory(nfs={**NFS, "server": "nfs://10.0.0.2"}),
        "determined:checkpointStorage.nfs.server: 'nfs://10.0.0.2' is not an NFS server address",
    ),
    (
        "nfs path",
        directory(nfs={**NFS, "path": "share"}),
        "determined:checkpointStorage.nfs.path: 'share' is not an absolute path",
    ),
    (
        "nfs without path",
        directory(nfs={"server": "10.0.0.2"}),
        "determined:checkpointStorage.nfs.path: required",
    ),
    (
        "nfs mount option",
        directory(nfs={**NFS, "mountOptions": ["nfsvers=4.1 hard"]}),
        "determined:checkpointStorage.nfs.mountOptions[0]: 'nfsvers=4.1 hard' is not a mount option without spaces",
    ),
    (
        "relative path",
        directory(claimName="x", containerPath="ckpt"),
        "determined:checkpointStorage.containerPath: 'ckpt' is not a normalised absolute path",
    ),
    (
        "dot-dot path",
        directory(claimName="x", containerPath="/data/../etc"),
        "determined:checkpointStorage.containerPath: '/data/../etc' is not a normalised absolute path",
    ),
    (
        "trailing slash",
        directory(claimName="x", containerPath="/ckpt/"),
        "determined:checkpointStorage.containerPath: '/ckpt/' is not a normalised absolute path",
    ),
    (
        "double slash",
        directory(claimName="x", containerPath="//ckpt"),
        "determined:checkpointStorage.containerPath: '//ckpt' is not a normalised absolute path",
    ),
    (
        "root",
        directory(claimName="x", containerPath="/"),
        "determined:checkpointStorage.containerPath: '/' would hide the whole image",
    ),
    (
        "etc",
        directory(claimName="x", containerPath="/etc/ckpt"),
        "determined:checkpointStorage.containerPath: '/etc/ckpt' is under /etc",
    ),
    (
        "proc",
        directory(claimName="x", containerPath="/proc"),
        "determined:checkpointStorage.containerPath: '/proc' is under /proc",
    ),
    (
        "sys",
        directory(claimName="x", containerPath="/sys/fs/ckpt"),
        "determined:checkpointStorage.containerPath: '/sys/fs/ckpt' is under /sys",
    ),
    (
        "dev",
        directory(claimName="x", containerPath="/dev/shm"),
        "determined:checkpointStorage.containerPath: '/dev/shm' is under /dev",
    ),
    (
        "run determined",
        directory(claimName="x", containerPath="/run/determined/ckpt"),
        "determined:checkpointStorage.containerPath: '/run/determined/ckpt' is under /run",
    ),
    (
        "run",
        directory(claimName="x", containerPath="/run"),
        "determined:checkpointStorage.containerPath: '/run' is under /run",
    ),
    (
        "usr",
        directory(claimName="x", containerPath="/usr"),
        "determined:checkpointStorage.containerPath: '/usr' would hide the image's /usr",
    ),
    (
        "opt",
        directory(claimName="x", containerPath="/opt"),
        "determined:checkpointStorage.containerPath: '/opt' would hide the image's /opt",
    ),
    (
        "host path of sharedFs",
        directory(claimName="x", hostPath="/x"),
        "determined:checkpointStorage.hostPath: only for checkpointStorage.type sharedFs",
    ),
    (
        "azure without a way in",
        {"type": "azure", "container": "ckpt"},
        "determined:checkpointStorage.connectionString: required, or accountUrl (with an optional credential) in its place",
    ),
    (
        "azure both ways in",
        {"type": "azure", "container": "ckpt", "connectionString": "x", "accountUrl": ACCOUNT_URL},
        "determined:checkpointStorage.accountUrl: give connectionString or accountUrl, not both",
    ),
    (
        "azure credential with a connection string",
        {"type": "azure", "container": "ckpt", "connectionString": "x", "credential": "k"},
        "determined:checkpointStorage.credential: only with accountUrl (a connection string carries its own key)",
    ),
    (
        "azure account url form",
        {"type": "azure", "container": "ckpt", "accountUrl": "ckpt.blob.core.windows.net"},
        "determined:checkpointStorage.accountUrl: 'ckpt.blob.core.windows.net' is not an http:// or https:// URL",
    ),
    (
        "azure SAS token in the url",
        {"type": "azure", "container": "ckpt", "accountUrl": ACCOUNT_URL + "/?sv=2022&sig=abc"},
        "determined:checkpointStorage.accountUrl: no query string: give a SAS token as credential",
    ),
    (
        "azure empty credential",
        {"type": "azure", "container": "ckpt", "accountUrl": ACCOUNT_URL, "credential": ""},
        "determined:checkpointStorage.credential: must not be empty",
    ),
    (
        "azure container",
        {"type": "azure", "accountUrl": ACCOUNT_URL},
        "determined:checkpointStorage.container: required for checkpointStorage.type azure",
    ),
]


@pytest.mark.parametrize(("storage", "expected"), [c[1:] for c in BAD], ids=[c[0] for c in BAD])
def test_a_bad_value_is_refused_on_one_line_with_its_key_path(storage, expected):
    lines = problems(raw_config(checkpointStorage=storage))
    assert any(line.startswith(expected) for line in lines), lines
    assert all("\n" not in line for line in lines)


def test_problems_of_separate_keys_are_reported_together():
    lines = problems(
        raw_config(
            checkpointStorage=directory(nfs={"server": "bad host", "path": "share"}, containerPath="/etc/x")
        )
    )
    assert sorted(line.split(": ")[0] for line in lines) == [
        "determined:checkpointStorage.containerPath",
        "determined:checkpointStorage.nfs.path",
        "determined:checkpointStorage.nfs.server",
    ]


def test_secret_values_never_appear_in_a_refusal():
    lines = problems(
        raw_config(
            checkpointStorage={
                "type": "azure",
                "container": "ckpt",
                "connectionString": "Key=s3cr3t",
                "credential": "t0ken",
            }
        )
    )
    assert lines and not any("s3cr3t" in line or "t0ken" in line for line in lines)


# --- rules across sections ---------------------------------------------------------------


def test_other_storage_types_are_not_judged():
    assert rule(raw_config(master={"version": "0.26.0"})) == []


@pytest.mark.parametrize(
    ("version", "refused"), [("0.26.0", True), ("0.26.2", True), ("0.26.3", False), ("0.38.1", False)]
)
def test_directory_storage_needs_a_master_from_0_26_3(version, refused):
    found = rule(raw_config(master={"version": version}, checkpointStorage=directory(nfs=NFS)))
    expected = [
        "checkpointStorage.type: directory needs master.version 0.26.3 or newer (older masters refuse the "
        "type and do not start); use sharedFs, s3, gcs or azure, or a newer master"
    ]
    assert found == (expected if refused else [])


def test_a_storage_class_claim_cannot_serve_tasks_in_other_namespaces():
    assert rule(raw_config(checkpointStorage=directory(storageClass="nfs-rwx"))) == [
        "checkpointStorage.storageClass: a provisioned claim is one volume in one namespace ('determined'), "
        "but tasks also run in 'determined-tasks', 'det-a100', 'det-aux'; use nfs (the stack binds the share in every namespace) "
        "or claimName (a claim of that name in each, bound to one share)"
    ]


def test_a_storage_class_claim_serves_tasks_that_all_run_in_the_masters_namespace():
    raw = in_master_namespace(raw_config(checkpointStorage=directory(storageClass="nfs-rwx")))
    assert stack(raw).task_namespaces == ["determined"]
    assert rule(raw) == []


@pytest.mark.parametrize("source", [{"nfs": NFS}, {"claimName": "shared-ckpt"}])
def test_nfs_and_existing_claims_serve_every_namespace(source):
    assert rule(raw_config(checkpointStorage=directory(**source))) == []


def test_eks_refuses_a_storage_class_and_points_to_efs_over_nfs():
    raw = in_master_namespace({**EKS, "checkpointStorage": directory(storageClass="efs-sc")})
    assert rule(raw) == [
        "checkpointStorage.storageClass: the EKS cluster the stack creates has no ReadWriteMany provisioner "
        "(no EFS CSI driver); use nfs with an EFS file system's DNS name and path / (nfs: {server: "
        "fs-0123456789abcdef0.efs.<region>.amazonaws.com, path: /}), or claimName"
    ]
    efs = {
        "server": "fs-0123456789abcdef0.efs.us-east-1.amazonaws.com",
        "path": "/",
        "mountOptions": ["nfsvers=4.1"],
    }
    assert rule({**EKS, "checkpointStorage": directory(nfs=efs)}) == []


@pytest.mark.parametrize(
    "storage_class",
    ["standard-rwx", "premium-rwx", "enterprise-rwx", "zonal-rwx", "enterprise-multishare-rwx", "mine"],
)
def test_gke_takes_any_storage_class_where_tasks_share_one_namespace(storage_class):
    raw = in_master_namespace({**GKE, "checkpointStorage": directory(storageClass=storage_class)})
    assert rule(raw) == []


@pytest.mark.parametrize("mount", ["/etc/determined", "/etc/determined-tls", "/etc/determined/ckpt", "/etc"])
def test_the_container_path_must_not_collide_with_the_masters_own_mounts(mount):
    # The section refuses /etc as a whole; this rule also stands if that ever loosens.
    cfg = stack(raw_config(checkpointStorage=directory(nfs=NFS)))
    cs = cfg.checkpoint_storage.model_copy(update={"container_path": mount})
    found: list[str] = []
    directory_problems(
        cfg.model_copy(update={"checkpoint_storage": cs}), lambda p, m: found.append(f"{p}: {m}")
    )
    assert found and all(
        line.startswith(f"checkpointStorage.containerPath: {mount} collides with /etc/determined")
        for line in found
    )


def test_a_users_pod_spec_may_not_take_the_share_volume_name_or_its_mount_path():
    pool = {
        **BASE["resourcePools"][0],
        "podSpec": {
            "volumes": [{"name": "checkpoints", "emptyDir": {}}],
            "containers": [
                {
                    "name": "determined-container",
                    "volumeMounts": [{"name": "checkpoints", "mountPath": "/determined/checkpoints"}],
                }
            ],
        },
    }
    gc = {
        "metadata": {"labels": {"team": "ml"}},
        "spec": {
            "containers": [
                {"name": "sidecar", "volumeMounts": [{"name": "d", "mountPath": "/determined/checkpoints"}]},
                {
                    "name": "determined-container",
                    "volumeMounts": [{"name": "d", "mountPath": "/determined/checkpoints"}],
                },
            ],
            "volumes": [{"name": "d", "emptyDir": {}}],
        },
    }
    raw = raw_config(
        checkpointStorage=directory(nfs=NFS),
        resourcePools=[pool, BASE["resourcePools"][1]],
        taskContainerDefaults={"checkpointGcPodSpec": gc},
    )
    assert [line.split(": ")[0] for line in rule(raw)] == [
        "taskContainerDefaults.checkpointGcPodSpec.spec.containers[1].volumeMounts[0].mountPath",
        "resourcePools[0].podSpec.volumes[0].name",
        "resourcePools[0].podSpec.containers[0].volumeMounts[0].mountPath",
    ]
    # Another storage type mounts nothing: the same pod specs are fine.
    assert rule({**raw, "checkpointStorage": {"type": "sharedFs"}}) == []
