"""Cloud Storage FUSE (`sharedFilesystems[].kind: gcsFuse`): the one copy of what both sides
need, the GKE cluster component (which creates the bucket and its grants) and the Determined
component (which writes the volume into task pod specs, rendered into master.yaml without
any cloud output): the bucket's derived name, the pod volume and the pod annotation.

A leaf: it imports neither the cluster nor the Determined components.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from components import names

if TYPE_CHECKING:
    from components.config.shared_filesystems import GcsFuseFs

BUCKET = "gcp:storage/bucket:Bucket"

# The CSI driver GKE's Cloud Storage FUSE add-on installs, and the annotation that makes its
# webhook inject the gcsfuse sidecar into a pod (GoogleCloudPlatform/gcs-fuse-csi-driver@v1.24.4:
# examples/ephemeral/deployment-non-root.yaml:30-88; pkg/webhook/mutatingwebhook.go:49-63).
DRIVER = "gcsfuse.csi.storage.gke.io"
VOLUMES_ANNOTATION = "gke-gcsfuse/volumes"
POD_ANNOTATIONS = {VOLUMES_ANNOTATION: "true"}

# Directories appear without a placeholder object (buckets written by other tools have
# none); the mount options are one comma-separated string (same example).
IMPLICIT_DIRS = "implicit-dirs"


def bucket_name(stack: str, region: str, cluster: str, fs_name: str) -> str:
    """The bucket the stack creates for a gcsFuse filesystem that names none:
    `<cluster>-<name>-<digest>` (components.names: GCS names are global, so the digest over
    stack, region and cluster tells installs apart)."""
    return names.Namer(stack, region, cluster).name(BUCKET, "name", fs_name)


def mount_options(fs: GcsFuseFs) -> str:
    """The gcsfuse mount options: implicit directories, and `only-dir=<dir>` for onlyDir
    (GoogleCloudPlatform/gcs-fuse-csi-driver@v1.24.4:docs/sub-directory-mounts.md:36)."""
    options = [IMPLICIT_DIRS]
    only_dir = (fs.only_dir or "").strip("/")
    if only_dir:
        options.append(f"only-dir={only_dir}")
    return ",".join(options)


def gcs_fuse_volume(fs: GcsFuseFs, bucket: str) -> dict[str, Any]:
    """The pod volume source (without its name) that mounts `bucket`: a CSI ephemeral inline
    volume, so no PersistentVolume or claim in any namespace; read-only for readOnly
    filesystems (the `csi.readOnly` of the driver's examples above)."""
    csi: dict[str, Any] = {
        "driver": DRIVER,
        "volumeAttributes": {"bucketName": bucket, "mountOptions": mount_options(fs)},
    }
    if fs.read_only:
        csi["readOnly"] = True
    return {"csi": csi}
