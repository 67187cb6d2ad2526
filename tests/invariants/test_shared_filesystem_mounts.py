"""Shared filesystems (sharedFilesystems) in every stack that has them (stacks/ and fixtures),
read from the plan against the configuration the user wrote: each pool that mounts a
filesystem has its volume and a task-container mount at its path in every task pod spec (CPU
and GPU), read-only where asked; pools that do not mount it have neither; where a pool's pods
may run there is a claim bound to the filesystem, replaced with its volume when the source
changes, never resized, not kept on destroy (the filesystem keeps the data); the checkpoint
filesystem is the checkpoint volume of every task pod, checkpoint GC's and (read-only) the
master's."""

from __future__ import annotations

import pytest
import stack_plans

import stack_args

TASK_CONTAINER = "determined-container"
CHECKPOINT_VOLUME = "checkpoints"
GCS_FUSE_DRIVER = "gcsfuse.csi.storage.gke.io"
GCS_FUSE_ANNOTATION = "gke-gcsfuse/volumes"
# Determined 0.35+: a pool's tasks run in any task namespace (components/determined/resource_pools.py
# pool_namespaces, with Determined's sources).
WORKSPACE_NAMESPACES_SINCE = (0, 35, 0)

WITH_FILESYSTEMS = [
    name
    for name in stack_plans.NAMES
    if stack_plans.raw_config(stack_plans.STACK_FILES[name]).get("sharedFilesystems")
]


@pytest.fixture(scope="module", params=WITH_FILESYSTEMS)
def stack(request):
    return stack_plans.plan(request.param)


def filesystems(stack) -> list[dict]:
    return stack.raw["sharedFilesystems"]


def path_of(fs) -> str:
    return fs.get("mountPath") or f"/mnt/{fs['name']}"


def checkpoint_fs(stack) -> str | None:
    storage = stack.raw.get("checkpointStorage") or {}
    return storage.get("sharedFilesystem") if storage.get("type") == "directory" else None


def container_path(stack) -> str:
    return (stack.raw.get("checkpointStorage") or {}).get("containerPath", "/determined/checkpoints")


def mounts(pool_name, fs) -> bool:
    return fs.get("resourcePools") is None or pool_name in fs["resourcePools"]


def claim_of(fs) -> str:
    return fs.get("claimName") or f"shared-{fs['name']}"


def task_container(pod) -> dict:
    return next(c for c in pod["spec"]["containers"] if c["name"] == TASK_CONTAINER)


def volumes(pod) -> dict[str, dict]:
    return {v["name"]: v for v in pod["spec"].get("volumes", [])}


def mounts_by_path(pod) -> dict[str, dict]:
    return {m["mountPath"]: m for m in task_container(pod).get("volumeMounts", [])}


def task_specs(stack):
    """(pool name, spec key, pod) of every task pod spec in master.yaml."""
    for entry in stack.master["resource_pools"]:
        tcd = entry["task_container_defaults"]
        for key in ("cpu_pod_spec", "gpu_pod_spec"):
            yield entry["pool_name"], key, tcd[key]


def args(stack):
    return stack_args.determined_args(stack_args.load_stack(stack.raw))


def test_each_pool_that_mounts_a_filesystem_has_its_volume_and_mount(stack):
    checkpoint = checkpoint_fs(stack)
    for pool, key, pod in task_specs(stack):
        where = f"{stack.name}: {pool}.{key}"
        for fs in filesystems(stack):
            name, path = fs["name"], path_of(fs)
            volume_name = CHECKPOINT_VOLUME if name == checkpoint else f"shared-{name}"
            if not mounts(pool, fs):
                assert path not in mounts_by_path(pod), f"{where}: mounts {name} though not one of its pools"
                assert f"shared-{name}" not in volumes(pod), f"{where}: has {name}'s volume"
                continue
            volume = volumes(pod).get(volume_name)
            assert volume is not None, f"{where}: no volume {volume_name} for {name}"
            mount = mounts_by_path(pod).get(path)
            assert mount is not None and mount["name"] == volume_name, f"{where}: {name} not at {path}"
            read_only = fs.get("readOnly", False)
            assert mount.get("readOnly", False) is read_only, f"{where}: {name} mount readOnly"
            if fs["kind"] == "gcsFuse":
                csi = volume["csi"]
                assert csi["driver"] == GCS_FUSE_DRIVER and csi["volumeAttributes"]["bucketName"]
                assert csi.get("readOnly", False) is read_only
                assert pod["metadata"]["annotations"].get(GCS_FUSE_ANNOTATION) == "true", where
            else:
                assert volume["persistentVolumeClaim"]["claimName"] == claim_of(fs), where
                assert volume["persistentVolumeClaim"].get("readOnly", False) is read_only, where
            # One volume per filesystem: never the same claim under two names.
            claims = [
                v["persistentVolumeClaim"]["claimName"]
                for v in pod["spec"].get("volumes", [])
                if "persistentVolumeClaim" in v
            ]
            assert len(claims) == len(set(claims)), f"{where}: a claim mounted as two volumes: {claims}"


def test_only_pods_that_mount_a_gcs_fuse_bucket_get_its_sidecar(stack):
    for pool, key, pod in task_specs(stack):
        wanted = any(fs["kind"] == "gcsFuse" and mounts(pool, fs) for fs in filesystems(stack))
        annotations = pod.get("metadata", {}).get("annotations", {})
        assert (GCS_FUSE_ANNOTATION in annotations) is wanted, f"{stack.name}: {pool}.{key}"


def test_a_gcs_fuse_pod_mounts_the_bucket_the_stack_made_or_named(stack):
    # master.yaml is rendered from the configuration, the bucket by the cluster component: one name.
    created = {r.inputs.get("name") for r in stack.registrations("gcp:storage/bucket:Bucket")}
    for fs in filesystems(stack):
        if fs["kind"] != "gcsFuse":
            continue
        for pool, key, pod in task_specs(stack):
            if mounts(pool, fs):
                bucket = volumes(pod)[f"shared-{fs['name']}"]["csi"]["volumeAttributes"]["bucketName"]
                assert bucket == fs["bucket"] if fs.get("bucket") else bucket in created, f"{pool}.{key}"


def test_a_claim_bound_to_the_filesystem_where_each_mounting_pool_may_run(stack):
    det = args(stack)
    checkpoint = checkpoint_fs(stack)
    claims = {
        (m["metadata"]["namespace"], m["metadata"]["name"]): m
        for m in stack.manifests("PersistentVolumeClaim")
    }
    volumes_by_name = {m["metadata"]["name"]: m for m in stack.manifests("PersistentVolume")}
    kept = {
        (r["inputs"]["metadata"].get("namespace"), r["inputs"]["metadata"]["name"]): r.get("options", {})
        for r in stack.result.resources
        if r["type"] in ("kubernetes:core/v1:PersistentVolumeClaim", "kubernetes:core/v1:PersistentVolume")
    }
    urns = {
        (r["inputs"]["metadata"].get("namespace"), r["inputs"]["metadata"]["name"]): r["urn"]
        for r in stack.result.resources
        if r["type"] == "kubernetes:core/v1:PersistentVolume"
    }
    new_namespaces = det.master.version_tuple >= WORKSPACE_NAMESPACES_SINCE
    for fs in filesystems(stack):
        if fs["kind"] == "gcsFuse" or fs.get("claimName"):
            assert not [n for (_, n) in claims if n == f"shared-{fs['name']}"], "nothing is bound for it"
            continue
        namespaces = set()
        for rp in det.resource_pools:
            if mounts(rp.name, fs):
                namespaces.add(rp.namespace_name)
                namespaces |= (
                    set(det.task_namespaces)
                    if new_namespaces
                    else {p.namespace_name for p in det.resource_pools if p.name == det.aux_pool}
                )
        if fs["name"] == checkpoint:
            namespaces |= {det.namespace, *det.task_namespaces}
        for namespace in namespaces:
            claim = claims.get((namespace, f"shared-{fs['name']}"))
            assert claim is not None, f"{stack.name}: no claim for {fs['name']} in {namespace}"
            volume = volumes_by_name[claim["spec"]["volumeName"]]
            assert volume["spec"]["claimRef"]["namespace"] == namespace
            assert volume["spec"]["claimRef"]["name"] == claim["metadata"]["name"]
            assert volume["spec"]["persistentVolumeReclaimPolicy"] == "Retain"
            assert volume["spec"]["storageClassName"] == "" == claim["spec"]["storageClassName"]
            assert volume["spec"]["accessModes"] == ["ReadWriteMany"]
            if fs["kind"] == "existing":
                assert volume["spec"]["nfs"] == {"server": fs["nfs"]["server"], "path": fs["nfs"]["path"]}
            claim_ref, volume_ref = (namespace, claim["metadata"]["name"]), (None, volume["metadata"]["name"])
            for ref in (claim_ref, volume_ref):
                options = kept[ref]
                # Not kept (the share keeps the data; a kept volume would block the namespace's
                # return), and a new size is never applied (a class-less claim cannot grow).
                assert not options.get("retainOnDelete"), f"{stack.name}: {ref} kept on destroy"
                assert {"spec.capacity", "spec.resources.requests.storage"} <= set(
                    options.get("ignoreChanges", [])
                )
                assert options.get("deleteBeforeReplace") is True, f"{stack.name}: {ref} (fixed name)"
            # A new source replaces the volume (immutable), and its claim with it.
            source = next(k for k in ("nfs", "csi") if k in volume["spec"])
            assert f"spec.{source}" in kept[volume_ref].get("replaceOnChanges", []), (
                f"{stack.name}: {volume_ref}"
            )
            assert kept[claim_ref].get("replaceWith") == [urns[volume_ref]], f"{stack.name}: {claim_ref}"


def test_the_checkpoint_filesystem_is_every_pods_checkpoint_volume(stack):
    checkpoint = checkpoint_fs(stack)
    if checkpoint is None:
        pytest.skip("checkpoints are not on a shared filesystem")
    fs = next(f for f in filesystems(stack) if f["name"] == checkpoint)
    specs = [(f"{p}.{k}", pod) for p, k, pod in task_specs(stack)]
    for entry in stack.master["resource_pools"]:
        gc = entry["task_container_defaults"].get("checkpoint_gc_pod_spec")
        if gc:
            specs.append((f"{entry['pool_name']}.checkpoint_gc_pod_spec", gc))
    gc = (stack.master.get("task_container_defaults") or {}).get("checkpoint_gc_pod_spec")
    if gc:
        specs.append(("checkpoint_gc_pod_spec", gc))
    for where, pod in specs:
        volume = volumes(pod)[CHECKPOINT_VOLUME]
        assert volume["persistentVolumeClaim"]["claimName"] == claim_of(fs), where
        mount = mounts_by_path(pod)[container_path(stack)]
        assert mount["name"] == CHECKPOINT_VOLUME and not mount.get("readOnly"), where
    master = stack.one("Deployment", "determined-master", stack.raw.get("namespace", "determined"))
    pod = master["spec"]["template"]["spec"]
    volume = next(v for v in pod["volumes"] if v["name"] == CHECKPOINT_VOLUME)
    assert volume["persistentVolumeClaim"] == {"claimName": claim_of(fs), "readOnly": True}
    container = pod["containers"][0]
    mount = next(m for m in container["volumeMounts"] if m["name"] == CHECKPOINT_VOLUME)
    assert mount["mountPath"] == container_path(stack) and mount["readOnly"] is True
    assert stack.master["checkpoint_storage"]["type"] == "directory"
    assert stack.master["checkpoint_storage"]["container_path"] == container_path(stack)
