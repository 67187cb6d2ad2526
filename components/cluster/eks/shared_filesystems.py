"""sharedFilesystems on EKS: EFS (kind efs) and FSx for Lustre (kind fsxLustre), created in the
cluster's VPC, reached from the cluster's security group only, kept on destroy with what they
use, and handed to the app as the PersistentVolume source it binds in every namespace that
mounts them (components.cluster.SharedVolume).

- efs: an encrypted file system, a mount target in each zone of the nodes that mount it, a
  security group admitting NFS from the cluster's, an access point that maps every request to
  one POSIX user under /determined/<name> (mode 0770), and the EKS add-on aws-efs-csi-driver
  with its role through Pod Identity.
- fsxLustre: a PERSISTENT_2 SSD file system in one subnet of the mounting pools' zone, a
  security group admitting Lustre from the cluster's and from itself and sending it to both
  (and the cluster's admitting it back), an optional S3 data repository association (then no
  FSx backups: S3 holds the data), and the FSx CSI driver chart
  (components/addons/fsx_csi_driver.py).

Research and sources: each constant below cites its own.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pulumi
import pulumi_aws as aws
import pulumi_kubernetes as k8s

from components.addons import fsx_csi_driver
from components.cluster import SharedVolume, namer
from components.cluster.eks.args import EksClusterArgs
from components.cluster.eks.network import Network
from components.config.eks_shared_filesystems import efs_zones, fsx_zone
from components.config.node_pools import EksNodePool
from components.config.shared_filesystems import EfsFs, FsxLustreFs

SECURITY_GROUP = "aws:ec2/securityGroup:SecurityGroup"

# --- EFS --------------------------------------------------------------------------------------
# The add-on and its role. "The Amazon EKS add-on name is `aws-efs-csi-driver`"
# (awsdocs/amazon-eks-user-guide@4d52b4d0 latest/ug/workloads/eks-add-ons.adoc:322); Pod Identity
# from add-on v2.0.5-eksbuild.1 (…/add-ons-iam.adoc:151-153); the controller's account and
# AWS's managed policy: latest/ug/storage/efs-csi.adoc:67-75.
# Its node DaemonSet, which does the mounts, tolerates every taint by default (`node.tolerations:
# [{operator: Exists}]`, kubernetes-sigs/aws-efs-csi-driver@helm-chart-aws-efs-csi-driver-4.4.1
# charts/aws-efs-csi-driver/values.yaml:230-231): it reaches the tainted GPU nodes with no
# configuration values. That is the upstream chart's default; the add-on's own (EKS
# DescribeAddonConfiguration) was not read offline.
EFS_ADDON = "aws-efs-csi-driver"
EFS_CSI_POLICIES = ("service-role/AmazonEFSCSIDriverPolicy",)
EFS_CSI_ACCOUNT = "efs-csi-controller-sa"
EFS_DRIVER = "efs.csi.aws.com"
# NFS: what the mount targets' group admits ("an inbound rule that allows inbound NFS traffic",
# --port 2049: kubernetes-sigs/aws-efs-csi-driver@helm-chart-aws-efs-csi-driver-4.4.1
# docs/efs-create-filesystem.md:55-63), here from the cluster's security group rather than a CIDR.
NFS_PORT = 2049
# Access point root: "can have up to four subdirectories. If the specified path does not exist,
# you are required to provide `creation_info`" (pulumi-aws 7.51.1 pulumi_aws/efs/_inputs.py
# AccessPointRootDirectoryArgs). 0770: the owner (the task user) and its group, no one else.
ACCESS_POINT_ROOT = "/determined"
ACCESS_POINT_MODE = "0770"

# --- FSx for Lustre ---------------------------------------------------------------------------
# Field values from pulumi-aws 7.51.1 pulumi_aws/fsx/lustre_file_system.py LustreFileSystemArgs:
# PERSISTENT_2 (replicated in its zone, backups, data repository associations: "only compatible
# with ... PERSISTENT_2", pulumi_aws/fsx/data_repository_association.py), SSD, Lustre 2.15 ("The
# supported Lustre filesystem versions varies based on the Linux Kernel version of the Node",
# 2.15 the newest: aws-fsx-csi-driver@helm-chart-aws-fsx-csi-driver-1.17.0 docs/install.md:131),
# LZ4 compression.
FSX_DEPLOYMENT = "PERSISTENT_2"
FSX_STORAGE = "SSD"
FSX_LUSTRE_VERSION = "2.15"
FSX_COMPRESSION = "LZ4"
# Daily backups kept in prod (automatic_backup_retention_days: 0 disables, at most 90: same SDK file).
FSX_BACKUP_DAYS = {"dev": 0, "prod": 30}
# Lustre LNET: "allow inbound traffic on ports 988 and 1018-1023" (https://docs.aws.amazon.com/fsx/
# latest/LustreGuide/cannot-create-fs.html, read 2026-11); from the file servers' own group and
# the clients' (the EKS guide: "For 'the security groups associated with your Lustre clients',
# use your cluster security group", awsdocs/amazon-eks-user-guide@4d52b4d0
# latest/ug/storage/fsx-csi.adoc:151); the clients' group admits the file servers' on the same
# ports ("Lustre Client VPC Security Group Rules", FSx for Lustre user guide
# limit-access-security-groups, as mirrored in siagholami/aws-documentation@6bb7677
# documents/amazon-fsx-lustre-user-guide/doc_source/limit-access-security-groups.md).
# The same ports outbound, to itself and to the clients' group: "If your security group doesn't
# allow all outbound traffic, add the following outbound rules ... These rules allow traffic
# between Amazon FSx for Lustre file servers and Lustre clients, and between Lustre file
# servers" (limit-access-security-groups above). Ours allows none: AWS's default allow-all
# egress rule is removed when the provider creates a VPC security group ("this provider will
# remove this default rule", pulumi-aws 7.51.1 pulumi_aws/ec2/security_group.py:445).
LUSTRE_PORTS = ((988, 988), (1018, 1023))
# The whole file system is the linked S3 path: "/" is allowed for the first (and then only)
# association (FSx API CreateDataRepositoryAssociation FileSystemPath, read 2026-11 via
# https://docs.aws.amazon.com/sdk-for-kotlin/api/latest/fsx/aws.sdk.kotlin.services.fsx.model/-data-repository-association/file-system-path.html).
DRA_PATH = "/"
# Every file event type, imported (and with s3.export exported) as it happens (SDK
# DataRepositoryAssociationS3AutoImportPolicyArgs / AutoExportPolicyArgs `events`).
FILE_EVENTS = ["NEW", "CHANGED", "DELETED"]
# Lustre clients take `flock` for POSIX locks across nodes (the driver's static PV example,
# aws-fsx-csi-driver@helm-chart-aws-fsx-csi-driver-1.17.0
# examples/kubernetes/static_provisioning/specs/pv.yaml).
FSX_MOUNT_OPTIONS = ["flock"]


def created(args: EksClusterArgs) -> list[EfsFs | FsxLustreFs]:
    """The shared filesystems this cluster creates (the EKS kinds), in order."""
    return [fs for fs in args.shared_filesystems if isinstance(fs, (EfsFs, FsxLustreFs))]


def needs_efs_driver(args: EksClusterArgs) -> bool:
    return any(isinstance(fs, EfsFs) for fs in args.shared_filesystems)


def mounting_pools(args: EksClusterArgs, fs: EfsFs | FsxLustreFs) -> list[EksNodePool]:
    names = args.filesystem_node_pools.get(fs.name, [])
    return [pool for pool in args.node_pools if pool.name in names]


def tags(args: EksClusterArgs, name: str) -> dict[str, str]:
    return {**dict(args.cluster.tags), "Name": name}


def security_group_name(args: EksClusterArgs, purpose: str) -> str:
    return namer(args.cluster).name(SECURITY_GROUP, "name", purpose)


def one_subnet_per_zone(zones: Sequence[str] | None, count: int, wanted: Sequence[str] | None) -> list[int]:
    """Indexes of the private subnets that get an EFS mount target: the first subnet of each
    zone (one mount target per zone: "If you have multiple subnets in an Availability Zone, you
    create a mount target in one of the subnets",
    https://docs.aws.amazon.com/efs/latest/ug/manage-fs-access-create-delete-mount-targets.html,
    read 2026-11), of the `wanted` zones (None: all). `zones` None: the subnets' zones are not
    known before deployment, but each is in a zone of its own (a created VPC): every subnet."""
    if zones is None:
        return list(range(count))
    chosen: dict[str, int] = {}
    for i, zone in enumerate(zones):
        if (wanted is None or zone in wanted) and zone not in chosen:
            chosen[zone] = i
    if not chosen and wanted is not None:
        # No subnet in the pools' zones (an existing VPC the config could not check): every
        # zone, so that the file system stays reachable (across zones) rather than not at all.
        return one_subnet_per_zone(zones, count, None)
    return list(chosen.values())


def subnet_zones(args: EksClusterArgs, invoke: pulumi.InvokeOptions) -> list[str] | None:
    """The zone of each private subnet when it can be known while the program runs: named in
    cluster.zones (a created VPC's subnet i is in zone i), or asked of EC2 for an existing VPC's
    subnets (which may share zones); None for a created VPC over zones EC2 picks."""
    vpc = args.cluster.vpc
    if vpc.existing:
        return [
            aws.ec2.get_subnet(id=subnet, opts=invoke).availability_zone for subnet in vpc.private_subnet_ids
        ]
    return list(args.cluster.zones) or None


def access_point_args(fs: EfsFs, file_system_id: pulumi.Input[str]) -> dict[str, Any]:
    owner = fs.owner
    return {
        "file_system_id": file_system_id,
        # Every request through it acts as this user ("Operating system user and group applied
        # to all file system requests made using the access point", SDK AccessPointPosixUserArgs).
        "posix_user": {"uid": owner.uid, "gid": owner.gid},
        "root_directory": {
            "path": f"{ACCESS_POINT_ROOT}/{fs.name}",
            "creation_info": {
                "owner_uid": owner.uid,
                "owner_gid": owner.gid,
                "permissions": ACCESS_POINT_MODE,
            },
        },
    }


def efs_file_system_args(args: EksClusterArgs, fs: EfsFs) -> dict[str, Any]:
    return {
        # Encryption at rest is opt-in in the EFS API (AWS Config efs-encrypted-check,
        # https://docs.aws.amazon.com/config/latest/developerguide/efs-encrypted-check.html);
        # without a key, EFS uses its AWS managed key aws/elasticfilesystem.
        "encrypted": True,
        "throughput_mode": fs.throughput_mode,
        "tags": tags(args, f"{args.cluster.name}-{fs.name}"),
    }


def efs_volume_handle(
    file_system_id: pulumi.Input[str], access_point_id: pulumi.Input[str]
) -> pulumi.Output[str]:
    """`fs-…::fsap-…`: the file system through the access point (the middle field, a subpath, left
    empty): "The double colon in the `volumeHandle` is intentional", and "Using access points via
    `volumeHandle` automatically adds the `tls` mount option" (kubernetes-sigs/aws-efs-csi-driver@
    helm-chart-aws-efs-csi-driver-4.4.1 examples/kubernetes/efs/access_points/README.md:57-58,82);
    the form older and newer drivers both parse (pkg/driver/node.go:491-514 at that tag)."""
    return pulumi.Output.concat(file_system_id, "::", access_point_id)


def fsx_file_system_args(
    args: EksClusterArgs,
    fs: FsxLustreFs,
    subnet_id: pulumi.Input[str],
    security_group_id: pulumi.Input[str],
) -> dict[str, Any]:
    prod = args.environment == "prod"
    # FSx takes no backup of a file system linked to S3: "File system backups aren't supported on
    # file systems that are linked an Amazon S3 data repository" (FSx for Lustre user guide,
    # "Using data repositories", https://docs.aws.amazon.com/fsx/latest/LustreGuide/
    # fsx-data-repositories.html; CreateBackup: "Are not linked to a data repository", read
    # 2026-11). With `s3` the bucket is the durable copy: no daily nor final backup (a final
    # backup FSx cannot take would fail the deletion).
    backed_up = fs.s3 is None
    result: dict[str, Any] = {
        "deployment_type": FSX_DEPLOYMENT,
        "storage_type": FSX_STORAGE,
        "storage_capacity": fs.capacity_gib,
        "per_unit_storage_throughput": fs.throughput,
        "file_system_type_version": FSX_LUSTRE_VERSION,
        "data_compression_type": FSX_COMPRESSION,
        # One subnet, as a string: pulumi-aws 7 types `subnet_ids` as one ID (SDK
        # lustre_file_system.py:24, "File systems currently support only one subnet").
        "subnet_ids": subnet_id,
        "security_group_ids": [security_group_id],
        "automatic_backup_retention_days": FSX_BACKUP_DAYS[args.environment] if backed_up else 0,
        "copy_tags_to_backups": True,
        # A deletion leaves a final backup in prod ("Defaults to `true`", SDK skip_final_backup).
        "skip_final_backup": not (prod and backed_up),
        "tags": tags(args, f"{args.cluster.name}-{fs.name}"),
    }
    if prod and backed_up:
        result["final_backup_tags"] = tags(args, f"{args.cluster.name}-{fs.name}-final")
    return result


def data_repository_args(fs: FsxLustreFs, file_system_id: pulumi.Input[str]) -> dict[str, Any] | None:
    """The S3 link of an FSx file system (fs.s3): imported as S3 changes, exported back only
    with s3.export; deleting the link never deletes the files."""
    if fs.s3 is None:
        return None
    prefix = fs.s3.prefix.strip("/")
    s3: dict[str, Any] = {"auto_import_policy": {"events": FILE_EVENTS}}
    if fs.s3.export:
        s3["auto_export_policy"] = {"events": FILE_EVENTS}
    return {
        "file_system_id": file_system_id,
        "file_system_path": DRA_PATH,
        "data_repository_path": f"s3://{fs.s3.bucket}/{prefix}/" if prefix else f"s3://{fs.s3.bucket}/",
        # The listing is imported once the link exists, the contents on first read.
        "batch_import_meta_data_on_create": True,
        "delete_data_in_filesystem": False,
        "s3": s3,
    }


def subnet_in_zone(zone: str | None, ids: list[str], zones: list[str]) -> str:
    if zone is None:
        return ids[0]
    if zone not in zones:
        raise ValueError(
            f"FSx for Lustre zone {zone}: the VPC has no private subnet there (its subnets are in "
            f"{', '.join(sorted(set(zones)))}); choose sharedFilesystems[].zone among those"
        )
    return ids[zones.index(zone)]


def fsx_subnet(net: Network, zone: str | None) -> pulumi.Output[str]:
    """The private subnet of the file system's zone (None: the first private subnet)."""
    return pulumi.Output.all(
        pulumi.Output.all(*net.private_subnet_ids), pulumi.Output.all(*net.private_subnet_zones)
    ).apply(lambda v: subnet_in_zone(zone, list(v[0]), list(v[1])))


def _security_group(
    args: EksClusterArgs, net: Network, name: str, description: str, data: pulumi.ResourceOptions
) -> aws.ec2.SecurityGroup:
    """A file system's own security group in the VPC (its rules apart), kept with the data."""
    return aws.ec2.SecurityGroup(
        name,
        name=security_group_name(args, name),
        description=description,
        vpc_id=net.vpc_id,
        tags=tags(args, f"{args.cluster.name}-{name}"),
        opts=data,
    )


def _rule(
    direction: type[aws.vpc.SecurityGroupIngressRule] | type[aws.vpc.SecurityGroupEgressRule],
    name: str,
    group: pulumi.Input[str],
    peer: pulumi.Input[str],
    ports: tuple[int, int],
    description: str,
    opts: pulumi.ResourceOptions,
) -> pulumi.CustomResource:
    """A TCP rule of `group` from (ingress) or to (egress) the security group `peer`."""
    return direction(
        name,
        security_group_id=group,
        referenced_security_group_id=peer,
        ip_protocol="tcp",
        from_port=ports[0],
        to_port=ports[1],
        description=description,
        opts=opts,
    )


def efs(
    args: EksClusterArgs,
    fs: EfsFs,
    net: Network,
    cluster_security_group: pulumi.Input[str],
    driver: pulumi.Resource | None,
    opts: pulumi.ResourceOptions,
    data: pulumi.ResourceOptions,
    invoke: pulumi.InvokeOptions,
) -> SharedVolume:
    """An EFS file system with its mount targets, security group and access point (`data`: what
    holds the data or what a kept file system uses), and how pods mount it."""
    name = f"efs-{fs.name}"
    prod = args.environment == "prod"
    file_system = aws.efs.FileSystem(
        name,
        opts=pulumi.ResourceOptions.merge(data, pulumi.ResourceOptions(protect=prod)),
        **efs_file_system_args(args, fs),
    )
    group = _security_group(
        args, net, name, f"EFS {fs.name} of {args.cluster.name}: NFS from the cluster only", data
    )
    _rule(
        aws.vpc.SecurityGroupIngressRule,
        f"{name}-from-cluster",
        group.id,
        cluster_security_group,
        (NFS_PORT, NFS_PORT),
        "NFS from the cluster's nodes",
        opts,
    )
    zones = subnet_zones(args, invoke)
    indexes = one_subnet_per_zone(zones, len(net.private_subnet_ids), efs_zones(mounting_pools(args, fs)))
    targets = [
        aws.efs.MountTarget(
            f"{name}-{i}",
            file_system_id=file_system.id,
            subnet_id=net.private_subnet_ids[i],
            security_groups=[group.id],
            opts=data,
        )
        for i in indexes
    ]
    access_point = aws.efs.AccessPoint(
        name,
        tags=tags(args, f"{args.cluster.name}-{fs.name}"),
        opts=data,
        **access_point_args(fs, file_system.id),
    )
    if prod:
        # AWS Backup's daily backups of the file system (EFS has no deletion protection of its own).
        aws.efs.BackupPolicy(
            name, file_system_id=file_system.id, backup_policy={"status": "ENABLED"}, opts=data
        )
    return SharedVolume(
        persistent_volume={
            "csi": {"driver": EFS_DRIVER, "volumeHandle": efs_volume_handle(file_system.id, access_point.id)}
        },
        ready=[*targets, *([driver] if driver is not None else [])],
    )


def fsx_lustre(
    args: EksClusterArgs,
    fs: FsxLustreFs,
    net: Network,
    cluster_security_group: pulumi.Input[str],
    driver: pulumi.Resource,
    opts: pulumi.ResourceOptions,
    data: pulumi.ResourceOptions,
) -> SharedVolume:
    """An FSx for Lustre file system in the mounting pools' zone with its security group and S3
    link, and how pods mount it."""
    name = f"fsx-{fs.name}"
    prod = args.environment == "prod"
    group = _security_group(
        args,
        net,
        name,
        f"FSx for Lustre {fs.name} of {args.cluster.name}: Lustre from the cluster and itself",
        data,
    )
    rules = []
    for low, high in LUSTRE_PORTS:
        ports = f"{low}" if low == high else f"{low}-{high}"
        rules += [
            _rule(
                aws.vpc.SecurityGroupIngressRule,
                f"{name}-{ports}-from-cluster",
                group.id,
                cluster_security_group,
                (low, high),
                "Lustre from the cluster's nodes",
                opts,
            ),
            _rule(
                aws.vpc.SecurityGroupIngressRule,
                f"{name}-{ports}-from-itself",
                group.id,
                group.id,
                (low, high),
                "Lustre between the file servers",
                opts,
            ),
            _rule(
                aws.vpc.SecurityGroupIngressRule,
                f"{name}-{ports}-to-cluster",
                cluster_security_group,
                group.id,
                (low, high),
                f"Lustre from FSx {fs.name} to its clients",
                opts,
            ),
            _rule(
                aws.vpc.SecurityGroupEgressRule,
                f"{name}-{ports}-out-to-itself",
                group.id,
                group.id,
                (low, high),
                "Lustre between the file servers",
                opts,
            ),
            _rule(
                aws.vpc.SecurityGroupEgressRule,
                f"{name}-{ports}-out-to-cluster",
                group.id,
                cluster_security_group,
                (low, high),
                "Lustre from the file servers to the cluster's nodes",
                opts,
            ),
        ]
    zone = fsx_zone(fs, mounting_pools(args, fs))
    file_system = aws.fsx.LustreFileSystem(
        name,
        # FSx checks the group's rules when it creates the file system (cannot-create-fs.html above).
        opts=pulumi.ResourceOptions.merge(data, pulumi.ResourceOptions(protect=prod, depends_on=rules)),
        **fsx_file_system_args(args, fs, fsx_subnet(net, zone), group.id),
    )
    ready: list[pulumi.Resource] = [file_system, driver]
    link = data_repository_args(fs, file_system.id)
    if link is not None:
        ready.append(
            aws.fsx.DataRepositoryAssociation(
                name, tags=tags(args, f"{args.cluster.name}-{fs.name}"), opts=data, **link
            )
        )
    return SharedVolume(
        persistent_volume={
            "csi": {
                "driver": fsx_csi_driver.DRIVER,
                "volumeHandle": file_system.id,
                "volumeAttributes": {"dnsname": file_system.dns_name, "mountname": file_system.mount_name},
            }
        },
        mount_options=list(FSX_MOUNT_OPTIONS),
        capacity=f"{fs.capacity_gib}Gi",
        ready=ready,
    )


def shared_filesystems(
    args: EksClusterArgs,
    net: Network,
    cluster: aws.eks.Cluster,
    efs_driver: pulumi.Resource | None,
    after_nodes: Sequence[pulumi.Resource],
    opts: pulumi.ResourceOptions,
    data: pulumi.ResourceOptions,
    kube_opts: pulumi.ResourceOptions,
) -> dict[str, SharedVolume]:
    """Every EKS shared filesystem of the stack, by name (`efs_driver`: the EFS add-on, when an
    efs entry exists; `after_nodes`: what the FSx driver's pods wait for)."""
    wanted = created(args)
    if not wanted:
        return {}
    invoke = pulumi.InvokeOptions(parent=opts.parent, provider=opts.provider)
    cluster_group = cluster.vpc_config.cluster_security_group_id
    fsx_driver: pulumi.Resource | None = None
    if any(isinstance(fs, FsxLustreFs) for fs in wanted):
        fsx_driver = k8s.helm.v3.Release(
            "fsx-csi-driver",
            opts=pulumi.ResourceOptions.merge(
                kube_opts, pulumi.ResourceOptions(depends_on=list(after_nodes))
            ),
            **fsx_csi_driver.release_args(args.cluster.region),
        )
    volumes: dict[str, SharedVolume] = {}
    for fs in wanted:
        if isinstance(fs, EfsFs):
            volumes[fs.name] = efs(args, fs, net, cluster_group, efs_driver, opts, data, invoke)
        else:
            assert fsx_driver is not None
            volumes[fs.name] = fsx_lustre(args, fs, net, cluster_group, fsx_driver, opts, data)
    return volumes
