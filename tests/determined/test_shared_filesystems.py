"""Shared filesystems as the Determined component renders them: the volume and claim per
namespace of each filesystem the stack binds (from the cluster's handle or, for kind
existing, the configuration), the pool layer of task pods, the checkpoint filesystem as the
checkpoint volume, and the gcsFuse bucket name both components derive."""

from __future__ import annotations

import pulumi
import pytest
from conftest import GKE, make_config

import stack_args
from components.cluster import SharedVolume
from components.config import gcs_fuse
from components.determined import checkpoint_volumes, resource_pools, shared_filesystems
from components.kube import validation

NFS = {"server": "10.0.0.2", "path": "/data"}
DATASETS = {"name": "datasets", "kind": "existing", "nfs": NFS, "readOnly": True, "resourcePools": ["a100"]}
TEAM = {"name": "team", "kind": "existing", "claimName": "team-share", "mountPath": "/team"}


def args(version="0.37.0", **overrides):
    return stack_args.determined_args(make_config(master={"version": version}, **overrides))


def gke_args(**overrides):
    return stack_args.determined_args(make_config(**{**GKE, **overrides}))


def pods(cfg, pool):
    rp = next(rp for rp in cfg.resource_pools if rp.name == pool)
    return resource_pools.pool_pod_specs(cfg, rp)


def task_container(pod):
    return next(c for c in pod["spec"]["containers"] if c["name"] == "determined-container")


def volumes(pod):
    return {v["name"]: v for v in pod["spec"].get("volumes", [])}


def mounts(pod):
    return {m["mountPath"]: m for m in task_container(pod).get("volumeMounts", [])}


# --- volumes and claims ---------------------------------------------------------------------


def test_an_nfs_export_is_bound_in_each_namespace_a_mounting_pools_pods_may_run_in():
    cfg = args(
        sharedFilesystems=[{**DATASETS, "readOnly": False, "nfs": {**NFS, "mountOptions": ["nfsvers=4.1"]}}]
    )
    found = shared_filesystems.objects(cfg, {})
    # 0.35+: a pool's pods run in any task namespace (its workspace's, or the default one).
    assert [pvc["metadata"]["namespace"] for _, _, _, pvc in found] == [
        "determined-tasks",
        "det-a100",
        "det-aux",
    ]
    for _, _, pv, pvc in found:
        assert list(validation.problems(pv)) == [] and list(validation.problems(pvc)) == []
        namespace = pvc["metadata"]["namespace"]
        assert pv["metadata"]["name"] == f"shared-datasets.{namespace}" == pvc["spec"]["volumeName"]
        assert pv["spec"]["claimRef"] == {
            "apiVersion": "v1",
            "kind": "PersistentVolumeClaim",
            "namespace": namespace,
            "name": "shared-datasets",
        }
        assert pv["spec"]["nfs"] == NFS and pv["spec"]["mountOptions"] == ["nfsvers=4.1"]
        assert pv["spec"]["persistentVolumeReclaimPolicy"] == "Retain"
        assert pv["spec"]["storageClassName"] == "" == pvc["spec"]["storageClassName"]
        assert pv["spec"]["accessModes"] == ["ReadWriteMany"] == pvc["spec"]["accessModes"]
        assert pvc["metadata"]["name"] == "shared-datasets"


def test_before_035_a_pools_claims_are_in_its_namespace_and_the_aux_pools():
    # Checkpoint GC runs on the default aux pool, in its namespace, with the experiment's pod spec.
    cfg = args(version="0.34.0", sharedFilesystems=[DATASETS])
    found = shared_filesystems.objects(cfg, {})
    assert [pvc["metadata"]["namespace"] for _, _, _, pvc in found] == ["det-a100", "det-aux"]


def test_volume_names_never_collide_between_filesystems_and_namespaces():
    cfg = args(
        namespace="x",
        resourcePools=[
            {"name": "a100", "nodePool": "a100", "namespace": "x-y"},
            {"name": "aux", "nodePool": "system", "namespace": "y"},
        ],
        sharedFilesystems=[
            {"name": "data", "kind": "existing", "nfs": NFS},
            {"name": "data-x", "kind": "existing", "nfs": NFS},
        ],
    )
    names = [pv["metadata"]["name"] for _, _, pv, _ in shared_filesystems.objects(cfg, {})]
    # With '-' as the joint, data in x-y and data-x in y would both be shared-data-x-y.
    assert len(names) == len(set(names)) and "shared-data.x-y" in names and "shared-data-x.y" in names


def test_a_cloud_filesystem_is_bound_from_the_clusters_volume():
    cfg = gke_args(sharedFilesystems=[{"name": "data", "kind": "filestore", "resourcePools": ["a100"]}])
    source = {"nfs": {"server": "10.1.2.3", "path": "/share"}}
    created = {
        "data": SharedVolume(persistent_volume=source, mount_options=["nfsvers=4.1"], capacity="1024Gi")
    }
    (_, volume, pv, pvc), *_ = shared_filesystems.objects(cfg, created)
    assert volume is created["data"]
    assert pv["spec"]["nfs"] == source["nfs"] and pv["spec"]["capacity"] == {"storage": "1024Gi"}
    assert pvc["spec"]["resources"] == {"requests": {"storage": "1024Gi"}}
    with pytest.raises(ValueError, match="no PersistentVolume source"):
        shared_filesystems.objects(cfg, {})


def test_nothing_is_bound_for_a_users_claim_or_a_bucket():
    cfg = gke_args(sharedFilesystems=[TEAM, {"name": "bucket", "kind": "gcsFuse", "bucket": "my-data"}])
    assert shared_filesystems.objects(cfg, {}) == []


# --- the pool layer -------------------------------------------------------------------------


def test_a_pool_mounts_its_filesystems_and_only_them_in_cpu_and_gpu_pods():
    cfg = args(sharedFilesystems=[DATASETS, TEAM])
    for pod in pods(cfg, "a100").values():
        assert volumes(pod)["shared-datasets"] == {
            "name": "shared-datasets",
            "persistentVolumeClaim": {"claimName": "shared-datasets", "readOnly": True},
        }
        assert mounts(pod)["/mnt/datasets"] == {
            "name": "shared-datasets",
            "mountPath": "/mnt/datasets",
            "readOnly": True,
        }
        assert volumes(pod)["shared-team"]["persistentVolumeClaim"] == {"claimName": "team-share"}
        assert mounts(pod)["/team"] == {"name": "shared-team", "mountPath": "/team"}
    for pod in pods(cfg, "aux").values():
        assert "shared-datasets" not in volumes(pod) and "/mnt/datasets" not in mounts(pod)
        assert "/team" in mounts(pod)


def test_a_users_pod_spec_adds_to_the_filesystems():
    pool_spec = {
        "spec": {
            "containers": [
                {"name": "determined-container", "volumeMounts": [{"name": "x", "mountPath": "/x"}]}
            ],
            "volumes": [{"name": "x", "emptyDir": {}}],
        }
    }
    pools = [
        {"name": "a100", "nodePool": "a100", "namespace": "det-a100", "podSpec": pool_spec},
        {"name": "aux", "nodePool": "system"},
    ]
    cfg = args(sharedFilesystems=[DATASETS], resourcePools=pools)
    pod = pods(cfg, "a100")["gpu_pod_spec"]
    assert {"x", "shared-datasets"} <= set(volumes(pod)) and {"/x", "/mnt/datasets"} <= set(mounts(pod))


def test_gcs_fuse_mounts_the_bucket_inline_with_the_sidecar_annotation():
    fs = {"name": "bucket", "kind": "gcsFuse", "onlyDir": "/imagenet/train/", "readOnly": True}
    cfg = gke_args(sharedFilesystems=[fs])
    # The stack the args were built under (a plan earlier in the process may have set another).
    bucket = gcs_fuse.bucket_name(pulumi.get_stack(), "us-central1", "det", "bucket")
    assert cfg.filesystem_buckets == {"bucket": bucket}
    for pod in pods(cfg, "aux").values():
        assert volumes(pod)["shared-bucket"] == {
            "name": "shared-bucket",
            "csi": {
                "driver": "gcsfuse.csi.storage.gke.io",
                "readOnly": True,
                "volumeAttributes": {
                    "bucketName": bucket,
                    "mountOptions": "implicit-dirs,only-dir=imagenet/train",
                },
            },
        }
        assert pod["metadata"]["annotations"]["gke-gcsfuse/volumes"] == "true"
    named = gke_args(sharedFilesystems=[{**fs, "bucket": "team-bucket"}])
    assert named.filesystem_buckets == {"bucket": "team-bucket"}


def test_the_bucket_name_is_the_gke_namers():
    # The GKE cluster component names the bucket it creates with the Namer (components.names).
    from components import names

    expected = names.Namer("dev", "us-central1", "det").name("gcp:storage/bucket:Bucket", "name", "data")
    assert gcs_fuse.bucket_name("dev", "us-central1", "det", "data") == expected
    assert not names.rule("gcp:storage/bucket:Bucket", "name").problems(expected)


def test_a_pool_without_filesystems_gets_nothing():
    cfg = args(sharedFilesystems=[{**DATASETS, "resourcePools": ["a100"]}])
    rp = next(rp for rp in cfg.resource_pools if rp.name == "aux")
    assert shared_filesystems.pool_layer(cfg, rp) == {}


# --- checkpoints on a shared filesystem -----------------------------------------------------

CKPT = {"name": "ckpt", "kind": "existing", "nfs": {"server": "10.0.0.3", "path": "/ckpt"}}
ON_CKPT = {"type": "directory", "sharedFilesystem": "ckpt", "containerPath": "/mnt/checkpoints"}


def test_the_checkpoint_filesystem_is_bound_wherever_pods_run_and_only_once():
    cfg = args(sharedFilesystems=[{**CKPT, "resourcePools": []}], checkpointStorage=ON_CKPT)
    namespaces = [pvc["metadata"]["namespace"] for _, _, _, pvc in shared_filesystems.objects(cfg, {})]
    assert namespaces == ["determined", "determined-tasks", "det-a100", "det-aux"]
    assert checkpoint_volumes.objects(cfg) == []  # not a second claim determined-checkpoints


def test_checkpoints_mount_the_filesystems_claim_in_tasks_gc_and_master():
    cfg = args(sharedFilesystems=[{**CKPT, "resourcePools": []}], checkpointStorage=ON_CKPT)
    layer = checkpoint_volumes.task_layer(cfg)
    assert layer["spec"]["volumes"] == [
        {"name": "checkpoints", "persistentVolumeClaim": {"claimName": "shared-ckpt"}}
    ]
    gc = resource_pools.checkpoint_gc_pod_spec(cfg, None)
    assert volumes(gc)["checkpoints"]["persistentVolumeClaim"] == {"claimName": "shared-ckpt"}
    assert mounts(gc)["/mnt/checkpoints"]["name"] == "checkpoints"
    volume, mount = checkpoint_volumes.master_volume(cfg)
    assert volume["persistentVolumeClaim"] == {"claimName": "shared-ckpt", "readOnly": True}
    assert mount == {"name": "checkpoints", "mountPath": "/mnt/checkpoints", "readOnly": True}


def test_a_pool_that_also_mounts_the_checkpoint_filesystem_gets_one_volume_two_mounts():
    cfg = args(sharedFilesystems=[{**CKPT, "resourcePools": ["a100"]}], checkpointStorage=ON_CKPT)
    for pod in pods(cfg, "a100").values():
        claims = [
            v
            for v in pod["spec"]["volumes"]
            if v.get("persistentVolumeClaim", {}).get("claimName") == "shared-ckpt"
        ]
        assert claims == [{"name": "checkpoints", "persistentVolumeClaim": {"claimName": "shared-ckpt"}}]
        assert mounts(pod)["/mnt/ckpt"] == {"name": "checkpoints", "mountPath": "/mnt/ckpt"}
        assert mounts(pod)["/mnt/checkpoints"] == {"name": "checkpoints", "mountPath": "/mnt/checkpoints"}
    for pod in pods(cfg, "aux").values():
        assert "/mnt/ckpt" not in mounts(pod) and "/mnt/checkpoints" in mounts(pod)


def test_checkpoints_on_a_users_claim_mount_that_claim():
    cfg = args(
        sharedFilesystems=[{**TEAM, "resourcePools": []}],
        checkpointStorage={"type": "directory", "sharedFilesystem": "team"},
    )
    assert checkpoint_volumes.task_layer(cfg)["spec"]["volumes"][0]["persistentVolumeClaim"] == {
        "claimName": "team-share"
    }
    assert shared_filesystems.objects(cfg, {}) == []


def test_pod_specs_stay_valid_pods():
    cfg = args(
        sharedFilesystems=[DATASETS, TEAM, {**CKPT, "resourcePools": ["a100"]}], checkpointStorage=ON_CKPT
    )
    for pool in ("a100", "aux"):
        for pod in pods(cfg, pool).values():
            pod = {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {"name": "t", **pod.get("metadata", {})},
                **{"spec": pod["spec"]},
            }
            pod["spec"]["containers"] = [{**c, "image": "x"} for c in pod["spec"]["containers"]]
            assert list(validation.problems(pod)) == [], pool


# --- updates: sizes, sources, namespaces (review26 B1-B3) -----------------------------------


def test_a_new_size_never_reaches_a_bound_volume_or_its_claim():
    # Growing a claim of no class is refused by the API server (resize admission): the size is
    # nominal and ignored on update, for shared filesystems and nfs checkpoint volumes alike.
    assert set(shared_filesystems.volume_options()["ignore_changes"]) >= {"spec.capacity"}
    assert "spec.resources.requests.storage" in shared_filesystems.claim_options(None)["ignore_changes"]
    nfs = args(checkpointStorage={"type": "directory", "nfs": NFS, "size": "1Ti"})
    ignored = checkpoint_volumes.data_options(nfs).ignore_changes
    assert {"spec.capacity", "spec.resources.requests.storage", "spec.storageClassName"} <= set(ignored)


def test_a_new_source_replaces_the_volume_and_its_claim_the_old_first():
    options = shared_filesystems.volume_options()
    # Every source the stack binds is one of these (nfs: Filestore, existing; csi: the rest).
    assert set(options["replace_on_changes"]) == {"spec.nfs", "spec.csi"}
    assert options["delete_before_replace"] is True
    marker = object()
    claim = shared_filesystems.claim_options(marker)
    assert claim["replace_with"] == [marker] and claim["delete_before_replace"] is True


def quota_args(limits, own=None):
    quota = {"gpu": 8, "cpu": "8", "memory": "64Gi", **({"limits": limits} if limits else {})}
    # The task container's own limits, which the configuration asks for under such a quota.
    sized = {
        "spec": {
            "containers": [
                {"name": "determined-container", "resources": {"limits": {"cpu": "4", "memory": "16Gi"}}}
            ]
        }
    }
    return gke_args(
        resourcePools=[
            {"name": "a100", "nodePool": "a100", "quota": quota, "podSpec": {**sized, **(own or {})}},
            {"name": "aux", "nodePool": "system", "podSpec": sized},
        ],
        sharedFilesystems=[{"name": "bucket", "kind": "gcsFuse", "bucket": "my-data"}],
    )


def test_gcs_fuse_sidecars_get_limits_where_a_quota_caps_limits():
    capped = quota_args({"cpu": "16", "memory": "128Gi"})
    # Every pool's pods: on 0.35+ any of them may run in the capped namespace.
    for pool in ("a100", "aux"):
        for pod in pods(capped, pool).values():
            annotations = pod["metadata"]["annotations"]
            assert annotations["gke-gcsfuse/cpu-limit"] == "1"
            assert annotations["gke-gcsfuse/memory-limit"] == "1Gi"
            # Requests stay the driver's defaults (a limit alone would become the request).
            assert annotations["gke-gcsfuse/cpu-request"] == "250m"
            assert annotations["gke-gcsfuse/memory-request"] == "256Mi"
    uncapped = quota_args(None)
    for pod in pods(uncapped, "a100").values():
        assert not any(k.startswith("gke-gcsfuse/cpu") for k in pod["metadata"]["annotations"])


def test_a_pools_pod_spec_may_size_the_gcs_fuse_sidecar_itself():
    own = {"metadata": {"annotations": {"gke-gcsfuse/memory-limit": "4Gi"}}}
    cfg = quota_args({"cpu": "16", "memory": "128Gi"}, own)
    for pod in pods(cfg, "a100").values():
        assert pod["metadata"]["annotations"]["gke-gcsfuse/memory-limit"] == "4Gi"
