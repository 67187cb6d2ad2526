"""The rules over sharedFilesystems that read other sections (components/config/
shared_filesystem_rules.py) and checkpointStorage.sharedFilesystem (checkpoint_directory.py):
each refusal one line at its key path, and the configurations they let through."""

from __future__ import annotations

import pytest
from conftest import EKS, GKE, MEGA_POOL, config_problems

from components.config import ConfigError
from components.determined.args import DeterminedArgs

NFS = {"server": "10.0.0.2", "path": "/data"}


def existing(name="data", **keys):
    return {"name": name, "kind": "existing", "nfs": NFS, **keys}


def test_a_valid_set_passes():
    assert (
        config_problems(
            {
                "sharedFilesystems": [
                    existing("datasets", readOnly=True, resourcePools=["a100"]),
                    {"name": "team", "kind": "existing", "claimName": "team", "mountPath": "/team"},
                    existing("ckpt", resourcePools=[]),
                ],
                "checkpointStorage": {"type": "directory", "sharedFilesystem": "ckpt"},
            }
        )
        == []
    )


def test_names_are_unique():
    assert config_problems({"sharedFilesystems": [existing(), existing(mountPath="/other")]}) == [
        "sharedFilesystems[1].name: duplicate shared filesystem name 'data' (also sharedFilesystems[0])"
    ]


@pytest.mark.parametrize(
    ("base", "fs", "expected"),
    [
        (
            {},
            {"name": "d", "kind": "filestore"},
            "filestore exists on cloud gke only; on existing use one of existing",
        ),
        ({}, {"name": "d", "kind": "efs"}, "efs exists on cloud eks only; on existing use one of existing"),
        (
            GKE,
            {"name": "d", "kind": "efs"},
            "efs exists on cloud eks only; on gke use one of filestore, gcsFuse, managedLustre, existing",
        ),
        (
            EKS,
            {"name": "d", "kind": "gcsFuse"},
            "gcsFuse exists on cloud gke only; on eks use one of efs, fsxLustre, existing",
        ),
    ],
)
def test_a_kind_exists_on_its_cloud_only(base, fs, expected):
    assert f"sharedFilesystems[0].kind: {expected}" in config_problems({**base, "sharedFilesystems": [fs]})


@pytest.mark.parametrize("base", [{}, GKE, EKS])
def test_existing_fits_every_cloud(base):
    problems = config_problems({**base, "sharedFilesystems": [existing()]})
    assert not [p for p in problems if p.startswith("sharedFilesystems")]


def test_resource_pools_name_pools_that_exist():
    assert config_problems({"sharedFilesystems": [existing(resourcePools=["a100", "h100"])]}) == [
        "sharedFilesystems[0].resourcePools[1]: no resource pool named 'h100' (resourcePools: a100, aux)"
    ]


def test_a_filesystem_no_pool_mounts_is_refused_unless_it_holds_checkpoints():
    assert config_problems({"sharedFilesystems": [existing(resourcePools=[])]}) == [
        "sharedFilesystems[0].resourcePools: no pool mounts it, and it is not checkpointStorage.sharedFilesystem: "
        "name the pools whose tasks mount it (or leave resourcePools out: every pool), or remove the filesystem"
    ]


def test_two_filesystems_at_one_path_in_a_pool():
    problems = config_problems(
        {
            "sharedFilesystems": [
                existing("a", mountPath="/data"),
                existing("b", mountPath="/data", resourcePools=["aux"]),
            ]
        }
    )
    assert problems == [
        "sharedFilesystems[1].mountPath: /data is also the path of sharedFilesystems[0] (a), both mounted by pool 'aux'; "
        "give each its own mountPath"
    ]


def test_the_same_path_in_pools_apart_is_fine():
    fss = [
        existing("a", mountPath="/data", resourcePools=["a100"]),
        existing("b", mountPath="/data", resourcePools=["aux"]),
    ]
    assert config_problems({"sharedFilesystems": fss}) == []


def test_a_filesystem_over_the_checkpoint_share():
    problems = config_problems(
        {
            "sharedFilesystems": [existing(mountPath="/determined/checkpoints/data")],
            "checkpointStorage": {"type": "directory", "claimName": "ckpt"},
        }
    )
    assert problems == [
        "sharedFilesystems[0].mountPath: /determined/checkpoints/data overlaps checkpointStorage.containerPath "
        "/determined/checkpoints (the checkpoint share's mount in every task pod); choose a directory of its own"
    ]


def test_a_filesystem_over_local_nvme_scratch():
    raw = {
        **GKE,
        "nodePools": [GKE["nodePools"][0], {**GKE["nodePools"][1], "localNvme": {"mountPath": "/scratch"}}],
    }
    problems = config_problems({**raw, "sharedFilesystems": [existing(mountPath="/scratch/data")]})
    assert (
        "sharedFilesystems[0].mountPath: /scratch/data overlaps node pool 'a100''s localNvme.mountPath /scratch "
        "(the scratch space of pool 'a100''s tasks); choose a directory of its own"
    ) in problems


@pytest.mark.parametrize("path", ["/run/determined", "/dev/shm"])
def test_determineds_own_directories_are_refused(path):
    problems = config_problems({"sharedFilesystems": [existing(mountPath=path)]})
    assert len(problems) == 1 and problems[0].startswith(f"sharedFilesystems[0].mountPath: '{path}' is under")


def test_a_users_pod_spec_must_not_take_a_filesystems_volume_name_or_path():
    spec = {
        "containers": [
            {"name": "determined-container", "volumeMounts": [{"name": "x", "mountPath": "/mnt/data"}]}
        ],
        "volumes": [{"name": "shared-data", "emptyDir": {}}],
    }
    problems = config_problems(
        {
            "sharedFilesystems": [existing(resourcePools=["a100"])],
            "resourcePools": [
                {"name": "a100", "nodePool": "a100", "namespace": "det-a100", "podSpec": spec},
                {"name": "aux", "nodePool": "system", "namespace": "det-aux", "podSpec": spec},
            ],
        }
    )
    assert (
        "resourcePools[0].podSpec.volumes[0].name: the volume name 'shared-data' is shared filesystem 'data''s "
        "(sharedFilesystems); choose another"
    ) in problems
    assert (
        "resourcePools[0].podSpec.containers[0].volumeMounts[0].mountPath: /mnt/data is where shared filesystem "
        "'data' is mounted (sharedFilesystems); choose another path"
    ) in problems
    # aux does not mount it: its own mount there is its business, its volume name is not.
    assert not [p for p in problems if p.startswith("resourcePools[1].podSpec.containers")]
    assert [p for p in problems if p.startswith("resourcePools[1].podSpec.volumes[0].name")]


def test_gcs_fuse_with_host_network():
    problems = config_problems(
        {
            **GKE,
            "sharedFilesystems": [{"name": "b", "kind": "gcsFuse"}],
            "taskContainerDefaults": {"networkMode": "host"},
        }
    )
    assert (
        "sharedFilesystems[0].kind: gcsFuse cannot mount in task pods on the host network (taskContainerDefaults."
        "networkMode host): its sidecar gets no identity there; use networkMode bridge, or a filestore or "
        "managedLustre filesystem"
    ) in problems


def test_gcs_fuse_only_dir_without_commas():
    problems = config_problems(
        {**GKE, "sharedFilesystems": [{"name": "b", "kind": "gcsFuse", "onlyDir": "a,b"}]}
    )
    assert problems == [
        "sharedFilesystems[0].onlyDir: must not contain ',' (gcsfuse mount options are separated by ',')"
    ]


# --- checkpointStorage.sharedFilesystem -----------------------------------------------------


def on(name):
    return {"type": "directory", "sharedFilesystem": name}


def test_checkpoints_on_a_filesystem_that_does_not_exist():
    assert config_problems({"sharedFilesystems": [existing()], "checkpointStorage": on("ckpt")}) == [
        "checkpointStorage.sharedFilesystem: no shared filesystem named 'ckpt' (sharedFilesystems: data)"
    ]


def test_checkpoints_on_a_read_only_filesystem():
    assert config_problems(
        {"sharedFilesystems": [existing(readOnly=True)], "checkpointStorage": on("data")}
    ) == [
        "checkpointStorage.sharedFilesystem: shared filesystem 'data' is readOnly: Determined writes checkpoints "
        "there, so every trial would fail at its first checkpoint; set its readOnly false or choose another"
    ]


def test_checkpoints_on_a_bucket_use_type_gcs():
    problems = config_problems(
        {**GKE, "sharedFilesystems": [{"name": "b", "kind": "gcsFuse"}], "checkpointStorage": on("b")}
    )
    assert problems == [
        "checkpointStorage.sharedFilesystem: shared filesystem 'b' is a gcsFuse bucket: use checkpointStorage type "
        "gcs with its bucket instead (Determined writes to Cloud Storage itself)"
    ]


def test_checkpoints_on_a_filesystem_need_a_master_with_directory_storage():
    problems = config_problems(
        {"sharedFilesystems": [existing()], "checkpointStorage": on("data"), "master": {"version": "0.26.0"}}
    )
    assert problems[0].startswith("checkpointStorage.type: directory needs master.version 0.26.3 or newer")


def test_a_pool_mount_of_the_checkpoint_filesystem_over_containerpath():
    problems = config_problems(
        {
            "sharedFilesystems": [existing(mountPath="/determined/checkpoints")],
            "checkpointStorage": on("data"),
        }
    )
    assert problems == [
        "sharedFilesystems[0].mountPath: /determined/checkpoints overlaps checkpointStorage.containerPath "
        "/determined/checkpoints (the same filesystem's mount in every task pod); choose a directory of its own"
    ]


def test_the_args_meet_the_rules_too():
    # A program building DeterminedArgs itself is refused what a stack file is.
    with pytest.raises(
        ConfigError, match=r"sharedFilesystems\[0\]\.kind: filestore exists on cloud gke only"
    ):
        DeterminedArgs.model_validate(
            {
                "cloud": "existing",
                "clusterName": "c",
                "nodePools": [{"name": "system", "nodeSelector": {"pool": "system"}}],
                "resourcePools": [{"name": "aux", "nodePool": "system"}],
                "sharedFilesystems": [{"name": "d", "kind": "filestore"}],
            }
        )


MEGA = MEGA_POOL


def on_tcpxo(fs_path, **pool):
    return {
        **GKE,
        "nodePools": [*GKE["nodePools"], MEGA],
        "resourcePools": [*GKE["resourcePools"], {"name": "mega", "nodePool": "mega", **pool}],
        "sharedFilesystems": [existing(mountPath=fs_path, resourcePools=["mega"])],
    }


def test_a_mount_path_keeps_clear_of_the_fabric_and_driver_mounts():
    # Two mounts at one path: the API server refuses the Job's pods (review26 M3).
    assert config_problems(on_tcpxo("/dev/aperture_devices")) != []  # under /dev: refused anyway
    assert config_problems(on_tcpxo("/usr/local/nvidia/lib64")) == [
        "sharedFilesystems[0].mountPath: /usr/local/nvidia/lib64 overlaps /usr/local/nvidia/lib64 (the TCPXO "
        "fabric's NVIDIA and NCCL plugin libraries) in the GPU tasks of pool 'mega', which mounts it; choose a "
        "directory of its own"
    ]
    # A pool without the fabric still has GKE's driver mount there.
    assert config_problems(on_tcpxo("/usr/local/nvidia/lib64", fabric=False)) == [
        "sharedFilesystems[0].mountPath: /usr/local/nvidia/lib64 overlaps /usr/local/nvidia (GKE's NVIDIA "
        "driver mount in GPU containers) in the GPU tasks of pool 'mega', which mounts it; choose a directory "
        "of its own"
    ]
    assert config_problems(on_tcpxo("/usr/local/data")) == []
