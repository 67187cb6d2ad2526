"""Directory checkpoints as rendered: the volumes and claims of each source, how task pods
and the master mount the share, master.yaml's section per version, Azure's forms, and the
options that keep the data on destroy."""

from __future__ import annotations

import copy

import pytest
from conftest import raw_config
from pydantic import TypeAdapter

from components import constants
from components.config import master_yaml_schema
from components.config.stack import AnyStack
from components.config.syntax import dns_label_problem
from components.determined import checkpoint_volumes, database, master_yaml
from components.determined.checkpoint_storage import master_checkpoint_storage
from components.kube import strategic_merge, validation
from stack_args import determined_args

NFS = {"server": "10.0.0.2", "path": "/share"}
_STACK = TypeAdapter(AnyStack)


def stack(**overrides):
    """A config as its sections validate it (the cross-section rules are tested in
    tests/config/test_checkpoint_directory.py)."""
    return determined_args(_STACK.validate_python(raw_config(**overrides)))


def directory(**keys):
    return stack(checkpointStorage={"type": "directory", **keys})


def assert_valid(obj):
    assert list(validation.problems(obj)) == [], (obj["kind"], obj["metadata"]["name"])


# --- nfs: a volume and a claim per task namespace -------------------------------------------


def test_nfs_binds_the_share_in_every_namespace_tasks_run_in():
    cfg = directory(nfs={**NFS, "mountOptions": ["nfsvers=4.1", "hard"]}, size="500Gi")
    objs = checkpoint_volumes.objects(cfg)
    # The master's namespace (it mounts the share), then each task namespace.
    assert cfg.pod_namespaces == ["determined", "determined-tasks", "det-a100", "det-aux"]
    assert [(o["kind"], o["metadata"].get("namespace")) for o in objs] == [
        ("PersistentVolume", None),
        ("PersistentVolumeClaim", "determined"),
        ("PersistentVolume", None),
        ("PersistentVolumeClaim", "determined-tasks"),
        ("PersistentVolume", None),
        ("PersistentVolumeClaim", "det-a100"),
        ("PersistentVolume", None),
        ("PersistentVolumeClaim", "det-aux"),
    ]
    volumes = {o["metadata"]["name"]: o for o in objs if o["kind"] == "PersistentVolume"}
    claims = [o for o in objs if o["kind"] == "PersistentVolumeClaim"]
    assert len(volumes) == 4  # cluster-wide names: one per namespace
    for claim in claims:
        namespace = claim["metadata"]["namespace"]
        assert claim["metadata"]["name"] == "determined-checkpoints"
        volume = volumes[claim["spec"]["volumeName"]]
        # Bound both ways: the volume is reserved for exactly this claim.
        assert volume["spec"]["claimRef"] == {
            "apiVersion": "v1",
            "kind": "PersistentVolumeClaim",
            "namespace": namespace,
            "name": "determined-checkpoints",
        }
        assert volume["metadata"]["name"] == f"determined-checkpoints-{namespace}"
        assert volume["spec"]["accessModes"] == claim["spec"]["accessModes"] == ["ReadWriteMany"]
        assert volume["spec"]["storageClassName"] == claim["spec"]["storageClassName"] == ""
        assert (
            volume["spec"]["capacity"]["storage"]
            == claim["spec"]["resources"]["requests"]["storage"]
            == "500Gi"
        )
        assert volume["spec"]["persistentVolumeReclaimPolicy"] == "Retain"
        assert volume["spec"]["nfs"] == NFS
        assert volume["spec"]["mountOptions"] == ["nfsvers=4.1", "hard"]
    for obj in objs:
        assert_valid(obj)


def test_nfs_volumes_default_to_one_tebibyte_and_no_mount_options():
    volume, claim = checkpoint_volumes.objects(directory(nfs=NFS))[:2]
    assert volume["spec"]["capacity"] == {"storage": "1Ti"}
    assert claim["spec"]["resources"] == {"requests": {"storage": "1Ti"}}
    assert "mountOptions" not in volume["spec"]


def test_volume_names_stay_dns_labels_and_distinct_for_long_namespaces():
    long_a, long_b = "a" * 60 + "-one", "a" * 60 + "-two"
    names = [checkpoint_volumes.volume_name(ns) for ns in ("determined", long_a, long_b, "x" * 63)]
    assert names[0] == "determined-checkpoints-determined"
    assert all(dns_label_problem(name) is None for name in names), names
    assert len(set(names)) == len(names)


def test_nfs_volumes_of_namespaces_with_long_names_are_still_bound_to_their_claims():
    cfg = stack(
        checkpointStorage={"type": "directory", "nfs": NFS},
        resourcePools=[
            {"name": "a100", "nodePool": "a100", "namespace": "a" * 63},
            {"name": "aux", "nodePool": "system", "namespace": "a" * 62 + "b"},
        ],
    )
    objs = checkpoint_volumes.objects(cfg)
    volumes = {o["metadata"]["name"]: o for o in objs if o["kind"] == "PersistentVolume"}
    for claim in (o for o in objs if o["kind"] == "PersistentVolumeClaim"):
        ref = volumes[claim["spec"]["volumeName"]]["spec"]["claimRef"]
        assert (ref["namespace"], ref["name"]) == (claim["metadata"]["namespace"], claim["metadata"]["name"])
    assert len(volumes) == 4
    for obj in objs:
        assert_valid(obj)


# --- storageClass and claimName ------------------------------------------------------------


def test_a_storage_class_provisions_one_claim_in_the_masters_namespace():
    objs = checkpoint_volumes.objects(directory(storageClass="standard-rwx", size="2560Gi"))
    assert objs == [
        {
            "apiVersion": "v1",
            "kind": "PersistentVolumeClaim",
            "metadata": {
                "name": "determined-checkpoints",
                "namespace": "determined",
                "labels": objs[0]["metadata"]["labels"],
            },
            "spec": {
                "accessModes": ["ReadWriteMany"],
                "resources": {"requests": {"storage": "2560Gi"}},
                "storageClassName": "standard-rwx",
            },
        }
    ]
    assert objs[0]["metadata"]["labels"]["app.kubernetes.io/name"] == "checkpoint-storage"
    assert_valid(objs[0])


def test_an_existing_claim_needs_nothing_created():
    assert checkpoint_volumes.objects(directory(claimName="shared-ckpt")) == []


@pytest.mark.parametrize(
    "storage",
    [
        {"type": "sharedFs"},
        {"type": "s3", "bucket": "ckpt"},
        {"type": "azure", "container": "ckpt", "connectionString": "x"},
    ],
)
def test_other_storage_types_render_nothing(storage):
    cfg = stack(checkpointStorage=storage)
    assert checkpoint_volumes.objects(cfg) == []
    assert checkpoint_volumes.task_layer(cfg) == {}
    assert checkpoint_volumes.master_volume(cfg) is None
    assert not checkpoint_volumes.keeps_master_namespace(cfg)


# --- mounts ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("source", "claim"),
    [
        ({"nfs": NFS}, "determined-checkpoints"),
        ({"storageClass": "standard-rwx"}, "determined-checkpoints"),
        ({"claimName": "shared-ckpt"}, "shared-ckpt"),
    ],
)
def test_task_pods_mount_the_claim_at_the_container_path(source, claim):
    layer = checkpoint_volumes.task_layer(directory(containerPath="/ckpt", **source))
    assert layer == {
        "spec": {
            "volumes": [{"name": "checkpoints", "persistentVolumeClaim": {"claimName": claim}}],
            "containers": [
                {
                    "name": constants.TASK_CONTAINER,
                    "volumeMounts": [{"name": "checkpoints", "mountPath": "/ckpt"}],
                }
            ],
        }
    }


def test_the_task_layer_merges_beside_a_users_volumes_into_a_valid_pod():
    user = {
        "spec": {
            "containers": [
                {"name": constants.TASK_CONTAINER, "volumeMounts": [{"name": "data", "mountPath": "/data"}]}
            ],
            "volumes": [{"name": "data", "hostPath": {"path": "/data"}}],
        }
    }
    base = {"spec": {"containers": [{"name": constants.TASK_CONTAINER}]}}
    layer = checkpoint_volumes.task_layer(directory(nfs=NFS))
    pod = strategic_merge.merge_pods(base, layer, user)
    assert sorted(v["name"] for v in pod["spec"]["volumes"]) == ["checkpoints", "data"]
    (container,) = pod["spec"]["containers"]
    assert sorted(m["mountPath"] for m in container["volumeMounts"]) == ["/data", "/determined/checkpoints"]
    assert validation.template_problems({"apiVersion": "v1", "kind": "Pod", **pod}) == []


def test_the_master_mounts_the_same_claim_read_only():
    volume, mount = checkpoint_volumes.master_volume(
        directory(claimName="shared-ckpt", containerPath="/ckpt")
    )
    assert volume == {
        "name": "checkpoints",
        "persistentVolumeClaim": {"claimName": "shared-ckpt", "readOnly": True},
    }
    assert mount == {"name": "checkpoints", "mountPath": "/ckpt", "readOnly": True}
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "master"},
        "spec": {
            "containers": [{"name": "master", "image": "x", "volumeMounts": [mount]}],
            "volumes": [volume],
        },
    }
    assert list(validation.problems(pod)) == []


# --- master.yaml ---------------------------------------------------------------------------


def _master_yaml(cfg):
    return master_yaml.master_config(cfg, database.endpoint(cfg), master_yaml.MasterSecrets.redacted())


@pytest.mark.parametrize(("version", "accepted"), [("0.26.2", False), ("0.26.3", True), ("0.38.1", True)])
def test_master_yaml_names_the_container_path_where_the_master_knows_the_type(version, accepted):
    cfg = stack(
        master={"version": version}, checkpointStorage={"type": "directory", "nfs": NFS, "saveTrialBest": 3}
    )
    document = _master_yaml(cfg)
    assert document["checkpoint_storage"] == {
        "type": "directory",
        "container_path": "/determined/checkpoints",
        "save_experiment_best": 0,
        "save_trial_best": 3,
        "save_trial_latest": 1,
    }
    problems = master_yaml_schema.check(document, version)
    # Below 0.26.3 the config refuses the type (checkpoint_directory); this is why.
    assert problems == (
        []
        if accepted
        else [
            "checkpoint_storage.type: 'directory' is not accepted by Determined 0.26.2 (it is from 0.26.3 on): "
            "the master refuses to start"
        ]
    )


def _reveal(secret):
    return f"<{secret.get_secret_value()}>"


@pytest.mark.parametrize(
    ("keys", "written"),
    [
        (
            {"connectionString": "AccountName=x;AccountKey=y"},
            {"connection_string": "<AccountName=x;AccountKey=y>"},
        ),
        (
            {"accountUrl": "https://ckpt.blob.core.windows.net"},
            {"account_url": "https://ckpt.blob.core.windows.net"},
        ),
        (
            {"accountUrl": "https://ckpt.blob.core.windows.net", "credential": "Sas-T0ken"},
            {"account_url": "https://ckpt.blob.core.windows.net", "credential": "<Sas-T0ken>"},
        ),
    ],
)
def test_azure_writes_its_way_in_and_reveals_only_the_secrets(keys, written):
    cfg = stack(checkpointStorage={"type": "azure", "container": "ckpt", **keys})
    section = master_checkpoint_storage(cfg.checkpoint_storage, _reveal)
    assert section == {
        "type": "azure",
        "container": "ckpt",
        **written,
        "save_experiment_best": 0,
        "save_trial_best": 1,
        "save_trial_latest": 1,
    }
    for version in ("0.26.0", "0.38.1"):
        storage = {"type": "azure", "container": "ckpt", **keys}
        document = _master_yaml(stack(master={"version": version}, checkpointStorage=storage))
        assert master_yaml_schema.check(document, version) == []


def test_a_redacted_master_yaml_shows_no_azure_credential():
    cfg = stack(
        checkpointStorage={
            "type": "azure",
            "container": "ckpt",
            "accountUrl": "https://ckpt.blob.core.windows.net",
            "credential": "Sas-T0ken",
        }
    )
    section = _master_yaml(cfg)["checkpoint_storage"]
    assert section["credential"] == constants.REDACTED
    assert "Sas-T0ken" not in repr(section)


# --- data safety ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("environment", "allow", "kept"), [("dev", False, True), ("dev", True, False), ("prod", False, True)]
)
def test_claims_and_volumes_are_kept_on_destroy_unless_data_deletion_is_allowed(environment, allow, kept):
    raw = copy.deepcopy(raw_config(environment=environment, allowDataDeletion=allow))
    cfg = determined_args(
        _STACK.validate_python(
            {**raw, "checkpointStorage": {"type": "directory", "storageClass": "standard-rwx"}}
        )
    )
    options = checkpoint_volumes.data_options(cfg)
    assert options.retain_on_delete is kept
    assert options.ignore_changes == (["spec.storageClassName"] if kept else None)
    # The provisioned claim lives in the master's namespace: deleting that would delete it.
    assert checkpoint_volumes.keeps_master_namespace(cfg) is kept


@pytest.mark.parametrize("source", [{"nfs": NFS}, {"claimName": "shared-ckpt"}])
def test_only_a_provisioned_claim_needs_the_masters_namespace_kept(source):
    assert not checkpoint_volumes.keeps_master_namespace(directory(**source))
