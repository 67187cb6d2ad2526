"""`determined:checkpointStorage`: where trials write checkpoints, by `type`."""

from __future__ import annotations

import ipaddress
import posixpath
import re
from typing import Annotated, Literal

from pydantic import (
    AfterValidator,
    BeforeValidator,
    Field,
    SecretStr,
    ValidationError,
    field_validator,
    model_validator,
)
from pydantic_core import InitErrorDetails, PydanticCustomError

from components.config.base import ConfigModel, default_tag
from components.config.secrets import Secret
from components.config.syntax import (
    AbsolutePath,
    DnsSubdomain,
    HttpUrl,
    Quantity,
    control_character,
    pattern_check,
    shown,
    text_problem,
    whole_number,
)
from components.names import S3_RESERVED_PREFIXES, S3_RESERVED_SUFFIXES

_S3_BUCKET = re.compile(r"[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]")
_GCS_BUCKET = re.compile(r"[a-z0-9]([a-z0-9._-]*[a-z0-9])?")
# "Bucket names must contain 3-63 characters. Names containing dots can contain up to 222
# characters, but each dot-separated component can be no longer than 63 characters":
# https://cloud.google.com/storage/docs/buckets#naming (read 2026-11).
GCS_BUCKET_LENGTH = (3, 63)
GCS_DOTTED_BUCKET_MAX = 222
GCS_BUCKET_COMPONENT_MAX = 63


def _ip_shaped(value: str) -> bool:
    return re.fullmatch(r"[0-9]+(\.[0-9]+){3}", value) is not None


def _s3_bucket(value: str) -> str:
    # AWS's naming rules: besides the characters, no '..', '.-' or '-.', no IP-address form,
    # no prefix or suffix S3 keeps for itself.
    if (
        not _S3_BUCKET.fullmatch(value)
        or any(part in value for part in ("..", ".-", "-."))
        or _ip_shaped(value)
    ):
        raise ValueError(
            f"{shown(value)} is not an S3 bucket name (3 to 63 lower-case letters, digits, '.' and '-', "
            "not shaped like an IP address, no '..')"
        )
    reserved = [p for p in S3_RESERVED_PREFIXES if value.startswith(p)]
    reserved += [s for s in S3_RESERVED_SUFFIXES if value.endswith(s)]
    if reserved:
        where = "prefix" if value.startswith(reserved[0]) else "suffix"
        raise ValueError(
            f"{shown(value)} has the {where} {reserved[0]!r}, which S3 keeps for itself: no general purpose "
            "bucket has such a name"
        )
    return value


def _gcs_bucket(value: str) -> str:
    # Google's naming rules: besides the characters and lengths, no IP-address form, and no
    # name that starts with "goog" or holds "google" (or a look-alike such as "g00gle").
    low, high = GCS_BUCKET_LENGTH
    if "." in value:
        high = GCS_DOTTED_BUCKET_MAX
    if (
        not _GCS_BUCKET.fullmatch(value)
        or not low <= len(value) <= high
        or any(len(part) > GCS_BUCKET_COMPONENT_MAX for part in value.split("."))
        or _ip_shaped(value)
        or value.startswith("goog")
        or re.search(r"g[o0][o0]gle", value)
    ):
        raise ValueError(
            f"{shown(value)} is not a GCS bucket name (3 to 63 lower-case letters, digits, '.', '_' and '-', "
            "or up to 222 with dots, each dot-separated part at most 63; not starting with 'goog' nor "
            "holding 'google')"
        )
    return value


def _one_line_secret(value: SecretStr | None) -> SecretStr | None:
    # Keys and tokens are one line: a trailing newline (a key piped from a file) would be sent
    # as part of it. The message never repeats the value.
    if value is not None and (message := text_problem(value.get_secret_value())):
        raise ValueError(message)
    return value


S3Bucket = Annotated[str, AfterValidator(_s3_bucket)]
GcsBucket = Annotated[str, AfterValidator(_gcs_bucket)]


def _prefix(value: str) -> str:
    # As the master checks it (expconf validateStoragePrefix): it refuses to start otherwise.
    if value == ".." or value.startswith("../") or value.endswith("/..") or "/../" in value:
        raise ValueError("must not contain '..' as a path part (the master refuses such a prefix)")
    if message := text_problem(value):
        raise ValueError(message)
    return value


Prefix = Annotated[str, AfterValidator(_prefix)]
Count = whole_number(0)


class Retention(ConfigModel):
    """How many checkpoints the master keeps (master.yaml save_* keys)."""

    save_experiment_best: Count = Field(
        0,
        description="How many of the experiment's best checkpoints the master keeps (master.yaml "
        "save_experiment_best), 0 to 2^31-1; default 0.",
    )
    save_trial_best: Count = Field(
        1,
        description="How many of each trial's best checkpoints the master keeps (master.yaml "
        "save_trial_best), 0 to 2^31-1; default 1.",
    )
    save_trial_latest: Count = Field(
        1,
        description="How many of each trial's latest checkpoints the master keeps (master.yaml "
        "save_trial_latest), 0 to 2^31-1; default 1.",
    )


# Node directories a sharedFs hostPath must stay out of: mounted into every task pod, they
# would hand tasks the node's system, the kubelet's or the container runtime's files.
_NODE_TREES = (
    "/etc",
    "/proc",
    "/sys",
    "/dev",
    "/run",
    "/var/run",
    "/var/lib/kubelet",
    "/var/lib/containerd",
    "/var/lib/docker",
    "/var/log",
    "/boot",
    "/usr",
    "/bin",
    "/sbin",
    "/lib",
    "/lib64",
    "/root",
    "/home",
)


def _host_path(value: str) -> str:
    example = "example: /tmp/determined-checkpoints"
    if not value.startswith("/") or posixpath.normpath(value) != value or text_problem(value):
        raise ValueError(
            f"{shown(value)} is not a normalised absolute path (one line; no '.', '..', '//' or trailing "
            f"'/'; {example})"
        )
    if value in ("/", "/var", "/var/lib", "/tmp"):
        raise ValueError(
            f"{shown(value)} would give tasks the node's own {value}; choose a directory below it ({example})"
        )
    for tree in _NODE_TREES:
        if value == tree or value.startswith(tree + "/"):
            raise ValueError(
                f"{shown(value)} is under {tree}, the node's own files, which every task would read and "
                f"write; choose a directory of its own ({example})"
            )
    return value


HostPath = Annotated[str, AfterValidator(_host_path)]


class SharedFsStorage(Retention):
    """A host directory on each node: for single-node testing only."""

    type: Literal["sharedFs"] = Field(
        description="sharedFs: checkpoints in a host directory of each node, for single-node testing only "
        "(the default type; prod's mandatory policies forbid it)."
    )
    host_path: HostPath = Field(
        "/tmp/determined-checkpoints",
        description="sharedFs: the node directory checkpoints are written to, a normalised absolute path "
        "outside the node's system directories; default /tmp/determined-checkpoints.",
    )


class S3Storage(Retention):
    type: Literal["s3"] = Field(
        description="s3: checkpoints in an S3 bucket or an S3-compatible store (MinIO)."
    )
    bucket: S3Bucket | None = Field(
        None,
        description="s3: the bucket checkpoints are written to, a valid S3 bucket name. Required, except on "
        "eks, where the stack creates <stack>-<cluster>-<account>-<region>-checkpoints when absent.",
    )
    prefix: Prefix = Field(
        "", description="s3: a key prefix under which checkpoints are written; default none ('')."
    )
    endpoint_url: HttpUrl | None = Field(
        None,
        description="s3: an http(s):// URL of an S3-compatible store (MinIO); on eks nothing is created or "
        "bound on AWS then. Default: AWS S3.",
    )
    access_key: Secret | None = Field(
        None,
        description="s3, secret: a static access key, given together with secretKey (for S3-compatible "
        "stores; on eks no role or Pod Identity then).",
    )
    secret_key: Secret | None = Field(
        None, description="s3, secret: the static secret key that goes with accessKey, given together."
    )

    _one_line_keys = field_validator("access_key", "secret_key")(lambda value: _one_line_secret(value))


class GcsStorage(Retention):
    type: Literal["gcs"] = Field(description="gcs: checkpoints in a Google Cloud Storage bucket.")
    bucket: GcsBucket | None = Field(
        None,
        description="gcs: the bucket checkpoints are written to, a valid GCS bucket name. Required, except "
        "on gke, where the stack creates <project>-<stack>-<cluster>-<region>-checkpoints when absent.",
    )
    prefix: Prefix = Field(
        "", description="gcs: an object name prefix under which checkpoints are written; default none ('')."
    )


def _refuse(*problems: tuple[str | None, str]) -> ValidationError:
    """Problems of a section's keys taken together, each at its own key (None: the section).
    A model validator's ValueError would name the whole section; the locations of a
    ValidationError it raises are kept, below the section's."""
    details = [
        InitErrorDetails(
            type=PydanticCustomError("value_error", message), loc=(key,) if key else (), input=None
        )
        for key, message in problems
    ]
    return ValidationError.from_exception_data("checkpointStorage", details)


# "Container names must be from 3 through 63 characters long", lower-case letters, digits and
# dashes, each dash preceded and followed by a letter or digit:
# https://learn.microsoft.com/en-us/rest/api/storageservices/naming-and-referencing-containers--blobs--and-metadata
# (read 2026-11).
AZURE_CONTAINER_LENGTH = (3, 63)


def _azure_container(value: str) -> str:
    low, high = AZURE_CONTAINER_LENGTH
    if not (low <= len(value) <= high and re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", value)):
        raise ValueError(
            f"{shown(value)} is not an Azure container name (lower-case letters, digits and single '-' "
            f"between them, {low} to {high} characters)"
        )
    return value


class AzureStorage(Retention):
    """A blob container, reached with a connection string, or with the account's URL and a
    credential (an account key or SAS token). The task harness hands both to the Azure SDK
    as they are, with no default credential chain: without a credential access is
    anonymous, which Azure allows for reading public containers only."""

    type: Literal["azure"] = Field(description="azure: checkpoints in an Azure Blob Storage container.")
    container: Annotated[str, AfterValidator(_azure_container)] = Field(
        description="azure, required: the blob container, 3 to 63 lower-case letters, digits and single '-'."
    )
    connection_string: Secret | None = Field(
        None,
        description="azure, secret: the storage account's connection string; give it or accountUrl, not "
        "both.",
    )
    # https://<account>.blob.core.windows.net (http:// for an emulator such as Azurite)
    account_url: HttpUrl | None = Field(
        None,
        description="azure: the account URL (https://<account>.blob.core.windows.net, no query string), in "
        "place of connectionString, with an optional credential.",
    )
    credential: Secret | None = Field(
        None,
        description="azure, secret, only with accountUrl: an account key or SAS token; without one access is "
        "anonymous and cannot write.",
    )

    _one_line_credential = field_validator("credential")(lambda value: _one_line_secret(value))

    @field_validator("connection_string")
    @classmethod
    def _connection_string(cls, value: SecretStr | None) -> SecretStr | None:
        # Never repeated: it holds the account key. Only its syntax as a whole is checked: the
        # offline plan validates stand-ins for secrets, which have no Key=Value form.
        if value is not None and (
            control_character(value.get_secret_value()) or " " in value.get_secret_value()
        ):
            raise ValueError(
                "must be one line without spaces (Key=Value settings separated by ';', as the storage "
                "account's Access keys page shows it)"
            )
        return value

    @model_validator(mode="after")
    def _one_way_in(self) -> AzureStorage:
        if self.connection_string is not None and self.account_url is not None:
            raise _refuse(("accountUrl", "give connectionString or accountUrl, not both"))
        if self.connection_string is None and self.account_url is None:
            raise _refuse(
                ("connectionString", "required, or accountUrl (with an optional credential) in its place")
            )
        if self.account_url is not None and "?" in self.account_url:
            raise _refuse(
                ("accountUrl", "no query string: give a SAS token as credential, which is kept secret")
            )
        if self.credential is not None and self.account_url is None:
            raise _refuse(("credential", "only with accountUrl (a connection string carries its own key)"))
        return self


# Where task containers see the share by default: a directory of Determined's own, clear of
# the image's system directories and of /run/determined (the task's working files).
DEFAULT_CONTAINER_PATH = "/determined/checkpoints"
# The claim the stack creates (nfs: one per task namespace; storageClass: one).
CREATED_CLAIM = "determined-checkpoints"
DEFAULT_SIZE = "1Ti"
# Mounting over these (or under the first group) would break the container or the task.
_SYSTEM_TREES = ("/etc", "/proc", "/sys", "/dev", "/run")
_IMAGE_DIRS = ("/bin", "/boot", "/lib", "/lib64", "/opt", "/root", "/sbin", "/usr", "/var")


def _container_path(value: str) -> str:
    example = f"example: {DEFAULT_CONTAINER_PATH}"
    normal = posixpath.normpath(value)
    if not value.startswith("/") or normal != value or value.startswith("//") or text_problem(value):
        raise ValueError(
            f"{shown(value)} is not a normalised absolute path (one line; no '.', '..', '//' or trailing "
            f"'/'; {example})"
        )
    if value == "/":
        raise ValueError(f"'/' would hide the whole image; choose a directory of its own ({example})")
    for tree in _SYSTEM_TREES:
        if value == tree or value.startswith(tree + "/"):
            why = "Determined's task files (/run/determined)" if tree == "/run" else "the container runtime"
            raise ValueError(
                f"{value!r} is under {tree}, used by {why}; choose a directory of its own ({example})"
            )
    if value in _IMAGE_DIRS:
        raise ValueError(
            f"{value!r} would hide the image's {value}; choose a directory of its own ({example})"
        )
    return value


ContainerPath = Annotated[str, AfterValidator(_container_path)]

_HOST = re.compile(r"[A-Za-z0-9]([-A-Za-z0-9]*[A-Za-z0-9])?(\.[A-Za-z0-9]([-A-Za-z0-9]*[A-Za-z0-9])?)*")


def _nfs_server(value: str) -> str:
    try:
        ipaddress.ip_address(value)
        return value
    except ValueError:
        pass
    if len(value) > 253 or not _HOST.fullmatch(value):
        raise ValueError(
            f"{value!r} is not an NFS server address (an IP address or DNS name; examples: 10.0.0.2, "
            "fs-0123456789abcdef0.efs.us-east-1.amazonaws.com)"
        )
    return value


MountOption = Annotated[
    str, AfterValidator(pattern_check(r"\S+", "a mount option without spaces (example: nfsvers=4.1)"))
]


def _writable(options: list[str]) -> list[str]:
    # Determined writes every checkpoint into the share: mounted `ro`, each trial fails at its
    # first checkpoint. Of `ro` and `rw` the last given wins, as mount(8) applies an options
    # list in order ("ro: Mount the filesystem read-only", "rw: ... read-write";
    # https://man7.org/linux/man-pages/man8/mount.8.html, read 2026-11); kubelet passes a
    # PersistentVolume's mountOptions to mount as one -o list in that order.
    flags = [flag for option in options for flag in option.split(",") if flag in ("ro", "rw")]
    if flags and flags[-1] == "ro":
        raise ValueError(
            "mounts the share read-only (ro): Determined writes checkpoints there, so every trial would fail "
            "at its first checkpoint; remove ro"
        )
    return options


class NfsShare(ConfigModel):
    """An NFS export every node can mount: a Filestore instance (its IP, path /<share name>),
    an EFS file system (its DNS name, path /), a NAS."""

    server: Annotated[str, AfterValidator(_nfs_server)] = Field(
        description="The NFS server: an IP address (a Filestore instance's) or a DNS name (an EFS file "
        "system's)."
    )
    path: AbsolutePath = Field(
        description="The exported path: /<share name> on Filestore, / on EFS; its root must be writable by "
        "the users tasks run as."
    )
    # Passed to mount on each node (EFS recommends nfsvers=4.1; Filestore basic tiers speak
    # NFSv3 only).
    mount_options: Annotated[list[MountOption], AfterValidator(_writable)] = Field(
        default_factory=list,
        description="Mount options passed to mount on each node (e.g. nfsvers=4.1 for EFS); ro is refused. "
        "Default: none.",
    )


class DirectoryStorage(Retention):
    """Checkpoints in a directory of a shared file system (ReadWriteMany), mounted at
    `containerPath` in every task pod (and, read-only, in the master), from exactly one source:

    - `claimName`: an existing ReadWriteMany PersistentVolumeClaim. A claim is mounted only
      by pods of its own namespace, so a claim of that name must exist in the master's
      namespace and in every resource pool's namespace, all bound to the same share: that
      is the user's job (the stack creates nothing).
    - `nfs`: an NFS export; the stack creates, in every namespace tasks run in, a
      PersistentVolume for it (Retain) and the claim `determined-checkpoints` bound to it.
    - `storageClass`: the stack creates one claim `determined-checkpoints` of that class (a
      ReadWriteMany provisioner such as GKE's Filestore classes standard-rwx, premium-rwx,
      zonal-rwx, enterprise-rwx, enterprise-multishare-rwx). A provisioned volume is one
      claim in one namespace: valid only when every task namespace is the master's
      (components/config/checkpoint_directory.py).

    `size`: the claim's request (and the PersistentVolume's capacity with nfs); default 1Ti.
    The share's root must be writable by the user tasks run as.
    """

    type: Literal["directory"] = Field(
        description="directory: checkpoints in a ReadWriteMany shared file system, from one of claimName, "
        "nfs or storageClass."
    )
    container_path: ContainerPath = Field(
        DEFAULT_CONTAINER_PATH,
        description="directory: where the share is mounted in every task pod, the checkpoint GC pod and "
        "(read-only) the master; an absolute path outside /etc, /proc, /sys, /dev, /run and the system "
        "directories. Default /determined/checkpoints.",
    )
    claim_name: DnsSubdomain | None = Field(
        None,
        description="directory: an existing ReadWriteMany claim; one of that name must exist in the master's "
        "namespace and every pool's namespace, bound to the same share.",
    )
    nfs: NfsShare | None = Field(
        None,
        description="directory: an NFS export {server, path, mountOptions}; the stack binds it with a "
        "PersistentVolume and the claim determined-checkpoints in every namespace tasks run in.",
    )
    storage_class: DnsSubdomain | None = Field(
        None,
        description="directory: a ReadWriteMany StorageClass the claim determined-checkpoints is provisioned "
        "with; valid only when every task namespace is the master's, and not on eks.",
    )
    shared_filesystem: DnsSubdomain | None = Field(
        None,
        description="directory: the name of an entry of sharedFilesystems (not read-only, not gcsFuse) to "
        "keep checkpoints on; mounted at containerPath wherever tasks run, read-only in the master.",
    )
    size: Quantity | None = Field(
        None,
        description="directory, with nfs or storageClass: the volume's capacity (informational for NFS), a "
        "Kubernetes quantity; default 1Ti.",
    )

    @model_validator(mode="after")
    def _one_source(self) -> DirectoryStorage:
        given = [key for key, value in self._sources().items() if value is not None]
        allowed = (
            "claimName (an existing ReadWriteMany claim), nfs {server, path}, storageClass or "
            "sharedFilesystem"
        )
        if not given:
            raise _refuse((None, f"type directory needs one source: {allowed}"))
        if len(given) > 1:
            raise _refuse((given[1], f"{given[0]} and {given[1]} are alternatives; give one of {allowed}"))
        if (self.claim_name or self.shared_filesystem) is not None and self.size is not None:
            raise _refuse(("size", "only with nfs or storageClass (an existing claim has its own size)"))
        return self

    def _sources(self) -> dict[str, object]:
        return {
            "claimName": self.claim_name,
            "nfs": self.nfs,
            "storageClass": self.storage_class,
            "sharedFilesystem": self.shared_filesystem,
        }

    @property
    def claim(self) -> str:
        """The claim task pods mount: the user's, or the one the stack creates."""
        return self.claim_name or CREATED_CLAIM

    @property
    def capacity(self) -> str:
        return self.size or DEFAULT_SIZE

    @property
    def provisioned(self) -> bool:
        """Whether a storage class provisions the volume (on gke: the Filestore CSI driver)."""
        return self.storage_class is not None


CheckpointStorageConfig = Annotated[
    SharedFsStorage | S3Storage | GcsStorage | AzureStorage | DirectoryStorage,
    BeforeValidator(default_tag("type", "sharedFs")),
    Field(discriminator="type"),
]
