"""The EKS cluster: pinned version, API authentication with explicit access entries,
control-plane logs, secrets encrypted with a rotated KMS key, a fenced API endpoint, the
managed add-ons, and the kubeconfig the Kubernetes provider uses."""

from __future__ import annotations

import hashlib
import json
from datetime import date
from typing import Any

import pulumi
import pulumi_aws as aws

from components import versions
from components.addons.gpu_operator import with_gpu_pool_taints
from components.cluster.eks import iam, shared_filesystems
from components.cluster.eks.args import EksClusterArgs
from components.config.node_pools import GPU_TAINT
from components.kube.kubeconfig import kubeconfig as kube_kubeconfig

LOG_TYPES = ["api", "audit", "authenticator", "controllerManager", "scheduler"]
# What follows the cluster's Kubernetes version (the version the cluster reports, so that an
# unpinned cluster's groups follow the version it runs): every managed node group
# (`version`) and every managed add-on (`addon_version`). "If your cluster has managed node
# groups attached to it, all of your node groups' Kubernetes versions must match the
# cluster's Kubernetes version in order to update the cluster to a new Kubernetes version"
# (Amazon EKS API reference, UpdateClusterVersion,
# https://docs.aws.amazon.com/eks/latest/APIReference/API_UpdateClusterVersion.html, read
# 2026-11-25): groups left behind would block the next upgrade. A group's version changes in
# place (UpdateNodegroupVersion); an add-on's in place too (UpdateAddon).
CLUSTER_VERSION_FOLLOWERS = {"aws:eks/nodeGroup:NodeGroup": "version", "aws:eks/addon:Addon": "addonVersion"}
# An add-on's version: EKS's default for the cluster's minor (`most_recent=False`), the one
# EKS installs when none is given (DescribeAddonVersions `defaultVersion`,
# https://docs.aws.amazon.com/eks/latest/APIReference/API_AddonVersionInfo.html, read
# 2026-11-25), not the newest, which may not have had its defaults' testing yet.
ADDON_MOST_RECENT = False
ADMIN_POLICY = "arn:aws:eks::aws:cluster-access-policy/AmazonEKSClusterAdminPolicy"
# The EKS node monitoring agent: DaemonSets that turn what a node's logs and DCGM say into node
# conditions (KernelReady, NetworkingReady, StorageReady, ContainerRuntimeReady,
# AcceleratedHardwareReady) that node auto repair acts on (node_groups.node_repair_config).
# Without it auto repair sees only the kubelet's Ready (https://docs.aws.amazon.com/eks/latest/
# userguide/node-health.html: awsdocs/amazon-eks-user-guide latest/ug/nodes/node-health.adoc at
# 049ce23, read 2026-11-26). What it reports on GPUs: docs/clouds/eks.md, node health.
NODE_MONITORING_AGENT = "eks-node-monitoring-agent"
# Managed add-ons, each at the default version for the cluster's Kubernetes version; the node
# monitoring agent only with cluster.nodeRepair (addons()).
ADDONS = (
    "vpc-cni",
    "kube-proxy",
    "eks-pod-identity-agent",
    "coredns",
    "aws-ebs-csi-driver",
    NODE_MONITORING_AGENT,
)
# Managed add-ons a shared filesystem needs: the EFS CSI driver, with an efs one (addons()).
FILESYSTEM_ADDONS = (shared_filesystems.EFS_ADDON,)
# Add-ons created once the system nodes exist: those whose pods need nodes to run on, and the
# node monitoring agent, which nothing before the node groups needs (its DaemonSets reach every
# node as it joins). The others (DaemonSets the nodes need to join, cluster-side) come first.
ADDONS_ON_NODES = {"coredns", "aws-ebs-csi-driver", NODE_MONITORING_AGENT, shared_filesystems.EFS_ADDON}
# Add-on settings other than the defaults (the add-on's configuration values). The VPC CNI
# enforces NetworkPolicies only with its network policy agent, which is off by default.
ADDON_SETTINGS: dict[str, dict[str, Any]] = {"vpc-cni": {"enableNetworkPolicy": "true"}}


def addon_version(
    addon: str, kubernetes_version: pulumi.Input[str], opts: pulumi.InvokeOutputOptions
) -> pulumi.Output[str]:
    """The add-on's default version for the cluster's Kubernetes version (ADDON_MOST_RECENT)."""
    return aws.eks.get_addon_version_output(
        addon_name=addon, kubernetes_version=kubernetes_version, most_recent=ADDON_MOST_RECENT, opts=opts
    ).version


def addons(args: EksClusterArgs) -> tuple[str, ...]:
    """The cluster's managed add-ons: ADDONS, without the node monitoring agent when
    cluster.nodeRepair is off (its conditions serve node auto repair), without the EFS CSI
    driver when no shared filesystem is of kind efs."""
    always = tuple(a for a in ADDONS if a != NODE_MONITORING_AGENT or args.cluster.node_repair)
    return always + (FILESYSTEM_ADDONS if shared_filesystems.needs_efs_driver(args) else ())


def node_monitoring_settings(args: EksClusterArgs) -> dict[str, Any] | None:
    """The node monitoring agent's configuration values: tolerations for every taint of the GPU
    groups on its DCGM server, or None without GPU groups.

    The agent reads GPU health from DCGM through an nv-hostengine on localhost:5555, which the
    add-on's `dcgm-server` DaemonSet runs on NVIDIA instance types only (a list in its affinity),
    tolerating no taint by default (`dcgmAgent.tolerations: []`): on this stack's GPU groups,
    tainted nvidia.com/gpu=present:NoSchedule and more, it would not run, and the agent would see
    no GPU error through DCGM. The agent itself tolerates every taint (`nodeAgent.tolerations:
    [{operator: Exists}]`). Source: aws/eks-node-monitoring-agent@v1.7.0 (c399089)
    charts/eks-node-monitoring-agent/values.yaml:93-95,125-158, templates/dcgm-daemonset.yaml:34-36,
    72-76, README.md:33-50; the add-on accepts `dcgmAgent.tolerations` in its configuration schema
    (charts/configuration.schema.json: DCGMAgent.tolerations, an array of objects), in every tagged
    release v1.6.0-v1.7.0 (tests/cluster/test_node_repair.py checks the document against it)."""
    gpu_pools = [pool for pool in args.node_pools if pool.gpu]
    if not gpu_pools:
        return None
    return {"dcgmAgent": {"tolerations": with_gpu_pool_taints([GPU_TAINT.toleration], gpu_pools)}}


def addon_configuration(addon: str, args: EksClusterArgs) -> str | None:
    """An add-on's configuration values as EKS takes them (a JSON document), or None."""
    settings = node_monitoring_settings(args) if addon == NODE_MONITORING_AGENT else ADDON_SETTINGS.get(addon)
    return json.dumps(settings, sort_keys=True) if settings else None


def kubernetes_version(args: EksClusterArgs) -> str:
    return args.cluster.kubernetes_version or versions.DEFAULT_EKS_KUBERNETES_VERSION


def ignored_changes(args: EksClusterArgs) -> list[str]:
    """Without a pinned version a new cluster gets the default (the newest EKS version in
    standard support) and keeps it: a later default does not upgrade it (EKS upgrades one minor
    at a time, and an upgrade is the user's to start, by pinning the next minor)."""
    return [] if args.cluster.kubernetes_version else ["version"]


def extended_support_warning(args: EksClusterArgs, today: date) -> str | None:
    """What a pinned version in EKS extended support costs the user, or None."""
    version = args.cluster.kubernetes_version
    if version is None or versions.eks_support(version, today) != "extended":
        return None
    row = versions.EKS_VERSIONS[version]
    return (
        f"cluster.kubernetesVersion {version} left EKS standard support on {row.end_of_standard_support}: "
        f"EKS bills extended support per cluster hour until {row.end_of_extended_support}, then upgrades "
        "the control plane itself; upgrade one minor at a time (newest: "
        f"{versions.DEFAULT_EKS_KUBERNETES_VERSION})"
    )


def warn_extended_support(args: EksClusterArgs) -> None:
    message = extended_support_warning(args, versions.today())
    if message:
        pulumi.log.warn(message)


def cluster_args(
    args: EksClusterArgs,
    role_arn: pulumi.Input[str],
    subnet_ids: list[pulumi.Input[str]],
    key_arn: pulumi.Input[str],
) -> dict[str, Any]:
    endpoint = args.cluster.endpoint
    vpc_config: dict[str, Any] = {
        "subnet_ids": subnet_ids,
        "endpoint_private_access": endpoint.private_access,
        "endpoint_public_access": endpoint.public_access,
    }
    if endpoint.public_access and endpoint.public_access_cidrs:
        vpc_config["public_access_cidrs"] = list(endpoint.public_access_cidrs)
    return {
        "name": args.cluster.name,
        "version": kubernetes_version(args),
        "role_arn": role_arn,
        "vpc_config": vpc_config,
        # Access entries only (no aws-auth ConfigMap); the creator gets no implicit admin:
        # it gets an explicit entry below, like every other admin (both would conflict).
        "access_config": {"authentication_mode": "API", "bootstrap_cluster_creator_admin_permissions": False},
        "enabled_cluster_log_types": LOG_TYPES,
        "encryption_config": {"provider": {"key_arn": key_arn}, "resources": ["secrets"]},
        "tags": dict(args.cluster.tags),
    }


def kms_key_args(args: EksClusterArgs) -> dict[str, Any]:
    return {
        "description": f"Kubernetes secrets of EKS cluster {args.cluster.name}",
        "enable_key_rotation": True,
        "deletion_window_in_days": 30,
    }


def kubeconfig(name: str, region: str, endpoint: str, ca_data: str) -> str:
    """A kubeconfig that gets a token from `aws eks get-token` with the caller's AWS credentials."""
    args = ["eks", "get-token", "--cluster-name", name, "--region", region, "--output", "json"]
    return kube_kubeconfig(f"eks-{name}", endpoint, ca_data, {"command": "aws", "args": args})


def admin_access(
    args: EksClusterArgs, cluster_name: pulumi.Input[str], deployer: str, opts: pulumi.ResourceOptions
) -> list[pulumi.Resource]:
    """Cluster-admin access entries for the deploying identity (`deployer`, the role behind
    an assumed-role session) and cluster.adminArns; what the Kubernetes provider waits for."""
    # One entry per principal: EKS refuses a second entry for the same one.
    admins = list(dict.fromkeys([deployer, *args.cluster.admin_arns]))
    access: list[pulumi.Resource] = []
    for principal in admins:
        # Named by the principal: reordering adminArns or deploying as another admin
        # changes no entry (a replaced entry would meet its own principal's).
        entry_name = f"admin-{hashlib.sha256(principal.encode()).hexdigest()[:10]}"
        entry = aws.eks.AccessEntry(
            entry_name, cluster_name=cluster_name, principal_arn=principal, type="STANDARD", opts=opts
        )
        access.append(
            aws.eks.AccessPolicyAssociation(
                entry_name,
                cluster_name=cluster_name,
                principal_arn=entry.principal_arn,
                policy_arn=ADMIN_POLICY,
                access_scope={"type": "cluster"},
                opts=opts,
            )
        )
    return access


# The managed add-ons whose service account gets a role through Pod Identity: (role name,
# the role's managed policies, the add-on's service account).
ADDON_ROLES = {
    "vpc-cni": ("vpc-cni", iam.CNI_POLICIES, "aws-node"),
    "aws-ebs-csi-driver": ("ebs-csi", iam.EBS_CSI_POLICIES, "ebs-csi-controller-sa"),
    shared_filesystems.EFS_ADDON: (
        "efs-csi",
        shared_filesystems.EFS_CSI_POLICIES,
        shared_filesystems.EFS_CSI_ACCOUNT,
    ),
}


def addon_roles(args: EksClusterArgs, opts: pulumi.ResourceOptions) -> dict[str, tuple[iam.Role, str]]:
    """Add-on -> (its role, its service account) for the cluster's add-ons of ADDON_ROLES."""
    return {
        addon: (iam.role(role, iam.role_name(args, role), iam.POD_IDENTITY_TRUST, policies, opts), account)
        for addon, (role, policies, account) in ADDON_ROLES.items()
        if addon in addons(args)
    }


def addon(
    args: EksClusterArgs,
    name: str,
    cluster: aws.eks.Cluster,
    role: tuple[iam.Role, str] | None,
    opts: pulumi.ResourceOptions,
    invoke: pulumi.InvokeOutputOptions,
) -> aws.eks.Addon:
    """The managed add-on `name` at its default version for the cluster's; `role`: the role
    its service account gets through Pod Identity (with the account's name)."""
    addon_args: dict[str, Any] = {
        "cluster_name": cluster.name,
        "addon_name": name,
        # Follows the version the cluster runs (CLUSTER_VERSION_FOLLOWERS).
        "addon_version": addon_version(name, cluster.version, invoke),
        # The cluster bootstraps self-managed copies of some add-ons: take them over.
        "resolve_conflicts_on_create": "OVERWRITE",
        "resolve_conflicts_on_update": "OVERWRITE",
    }
    configuration = addon_configuration(name, args)
    if configuration:
        addon_args["configuration_values"] = configuration
    if role is not None:
        created, account = role
        addon_args["pod_identity_associations"] = [{"role_arn": created.arn, "service_account": account}]
        opts = pulumi.ResourceOptions.merge(opts, pulumi.ResourceOptions(depends_on=created.ready))
    return aws.eks.Addon(name, opts=opts, **addon_args)
