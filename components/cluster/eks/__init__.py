"""EKS: a cluster with managed node groups (CPU and NVIDIA GPU, scaling from zero), its VPC,
the checkpoint bucket with Pod Identity, RDS, the cluster-autoscaler and the NVIDIA device
plugin or GPU operator; all behind one `ClusterHandle`.

Plain pulumi-aws resources (no pulumi-eks component), so tests and policies see every one.
One module per concern (network, iam, cluster, node_groups, storage, database); pure
functions give each resource's arguments, and each module's own function registers its part
(`network.network`, `cluster.admin_access`, `cluster.addon`, `node_groups.node_group`,
`node_groups.autoscaler`, `karpenter.karpenter`, `storage.checkpoint_bucket`, `database.rds`,
`dns.dns01_identity`, `shared_filesystems.shared_filesystems`);
`EksCluster` only wires them.

No `from __future__ import annotations` here: the Pulumi SDK's schema analyzer reads the
class-level output annotations as types, not strings (pulumi 3.272.0
provider/experimental/analyzer.py `analyze_type`: `inspect.get_annotations` without `eval_str`).
"""

import pulumi
import pulumi_aws as aws
import pulumi_kubernetes as k8s

from components import kube
from components.addons import gpu_operator, nvidia_device_plugin
from components.cluster import (
    DatabaseServer,
    SharedVolume,
    database_volume,
    publish,
)
from components.cluster.eks import cluster as eks_cluster
from components.cluster.eks import database, dns, efa, iam, karpenter, network, node_groups, storage
from components.cluster.eks import shared_filesystems as eks_shared_filesystems
from components.cluster.eks.args import EksClusterArgs
from components.config import InClusterDatabase, ManagedDatabase

__all__ = ["EksCluster", "EksClusterArgs"]

TYPE = "determined:index:EksCluster"
# The type EksCluster had before it was a public component: deployed stacks' URNs carry it.
OLD_TYPE = "determined:eks:Platform"


class EksCluster(pulumi.ComponentResource):
    """An EKS cluster for Determined: its VPC, managed node groups scaling from zero with the
    cluster-autoscaler (or, with cluster.autoscaler karpenter, the system group and Karpenter
    making the other pools' nodes), the checkpoint bucket with Pod Identity, RDS, cert-manager's Route 53
    identity, and NVIDIA's device plugin or GPU operator, as its Args ask; `handle` is what
    the Determined component deploys onto."""

    cluster_name: pulumi.Output[str]
    """The EKS cluster's name."""
    kubeconfig: pulumi.Output[str]
    """A kubeconfig for the cluster (secret); clients get a token from `aws eks get-token`."""
    checkpoint_bucket: pulumi.Output[str] | None
    """The checkpoint bucket's URL (s3://<name>): the created one, else the configured one; none
    without S3."""
    database_endpoint: pulumi.Output[str] | None
    """host:port of the RDS instance (database mode managed); none otherwise."""

    def __init__(self, name: str, args: EksClusterArgs, opts: pulumi.ResourceOptions | None = None):
        # Stacks deployed when this was "determined:eks:Platform" keep their URNs.
        aliased = pulumi.ResourceOptions(aliases=[pulumi.Alias(type_=OLD_TYPE)])
        super().__init__(TYPE, name, None, pulumi.ResourceOptions.merge(aliased, opts))
        region = args.cluster.region
        self.provider = aws.Provider("aws", region=region, opts=pulumi.ResourceOptions(parent=self))
        child = pulumi.ResourceOptions(parent=self, provider=self.provider)
        invoke = pulumi.InvokeOptions(parent=self, provider=self.provider)
        invoke_output = pulumi.InvokeOutputOptions(parent=self, provider=self.provider)
        keep = not args.data_deletion_allowed
        data = pulumi.ResourceOptions.merge(child, pulumi.ResourceOptions(retain_on_delete=keep))

        managed_db = isinstance(args.database, ManagedDatabase)
        holds_interfaces = managed_db or bool(eks_shared_filesystems.created(args))
        net = network.network(args, keep_data=keep and holds_interfaces, opts=child)
        # Read now (not as outputs): the bucket's name and the admin entry derive from them.
        caller = aws.get_caller_identity(opts=invoke)

        key = aws.kms.Key("secrets", opts=child, **eks_cluster.kms_key_args(args))
        cluster_role = iam.role(
            "cluster",
            iam.role_name(args, "cluster"),
            iam.trust("eks.amazonaws.com", ("sts:AssumeRole", "sts:TagSession")),
            iam.CLUSTER_POLICIES,
            child,
            inline=iam.secrets_key_policy(key.arn),
        )
        eks_cluster.warn_extended_support(args)
        self.cluster = aws.eks.Cluster(
            "cluster",
            opts=pulumi.ResourceOptions.merge(
                child,
                pulumi.ResourceOptions(
                    depends_on=cluster_role.ready,
                    protect=args.environment == "prod",
                    ignore_changes=eks_cluster.ignored_changes(args),
                ),
            ),
            **eks_cluster.cluster_args(args, cluster_role.arn, net.private_subnet_ids, key.arn),
        )
        # The deploying identity (the role behind an assumed-role session) and the configured admins.
        deployer = aws.iam.get_session_context(arn=caller.arn, opts=invoke).issuer_arn
        self.access = eks_cluster.admin_access(args, self.cluster.name, deployer, child)

        node_role = iam.role(
            "nodes", iam.role_name(args, "nodes"), iam.trust("ec2.amazonaws.com"), iam.NODE_POLICIES, child
        )
        # Add-ons the nodes need to join and get addresses: before the node groups.
        addon_roles = eks_cluster.addon_roles(args, child)
        addons: dict[str, aws.eks.Addon] = {}
        for addon in eks_cluster.addons(args):
            if addon not in eks_cluster.ADDONS_ON_NODES:
                addons[addon] = eks_cluster.addon(
                    args, addon, self.cluster, addon_roles.get(addon), child, invoke_output
                )
        before_groups = [*node_role.ready, *addons.values()]
        # A managed node group per pool, but those Karpenter makes nodes for (cluster.autoscaler).
        group_pools = karpenter.group_pools(args)
        fabric = efa.network(args, net.vpc_id, child)  # EFA pools' security group and placement groups
        self.node_groups = [
            node_groups.node_group(
                args,
                pool,
                self.cluster,
                node_role.arn,
                node_groups.subnets(pool, net.private_subnet_ids, net.private_subnet_zones, invoke_output),
                child,
                before_groups,
                fabric,
            )
            for pool in group_pools
        ]
        # The node group the master runs on (the first untainted on-demand CPU pool by default):
        # what Determined waits for, and enough for the add-ons whose pods need nodes.
        master_pool = args.master_pool
        system_groups = [
            group
            for pool, group in zip(group_pools, self.node_groups, strict=True)
            if master_pool is None or pool.name == master_pool.name
        ]
        after_nodes = pulumi.ResourceOptions.merge(child, pulumi.ResourceOptions(depends_on=system_groups))
        for addon in eks_cluster.addons(args):
            if addon in eks_cluster.ADDONS_ON_NODES:
                addons[addon] = eks_cluster.addon(
                    args, addon, self.cluster, addon_roles.get(addon), after_nodes, invoke_output
                )

        name_of = args.cluster.name
        self.kubeconfig = pulumi.Output.secret(
            pulumi.Output.all(self.cluster.endpoint, self.cluster.certificate_authority.data).apply(
                lambda v: eks_cluster.kubeconfig(name_of, region, v[0], v[1])
            )
        )
        self.kubernetes = k8s.Provider(
            "eks",
            kubeconfig=self.kubeconfig,
            opts=pulumi.ResourceOptions(parent=self, depends_on=self.access),
        )
        kube_opts = pulumi.ResourceOptions(parent=self, providers={"kubernetes": self.kubernetes})
        # Not the GPU groups, the GPU operator, the device plugin or the node monitoring agent:
        # Determined starts without them.
        self.ready: list[pulumi.Resource] = [
            *system_groups,
            *(a for name, a in addons.items() if name != eks_cluster.NODE_MONITORING_AGENT),
        ]

        # The cluster-autoscaler sizes managed groups only: not installed when none can change size.
        if karpenter.needs_cluster_autoscaler(args):
            node_groups.autoscaler(args, self.cluster, caller.account_id, self.node_groups, child, kube_opts)
        self.karpenter: karpenter.Karpenter | None = None
        if args.cluster.autoscaler == "karpenter":
            self.karpenter = karpenter.karpenter(
                args, self.cluster, caller.account_id, system_groups, child, kube_opts, fabric
            )

        # The GPU software needs every group's nodes; nothing of Determined waits for it.
        after_groups = pulumi.ResourceOptions.merge(
            kube_opts, pulumi.ResourceOptions(depends_on=self.node_groups)
        )
        if args.gpu_operator.enabled:
            gpu_operator.GpuOperator(
                "gpu-operator",
                args.gpu_operator,
                args.node_pools,
                args.cluster.kubernetes_version,
                cloud="eks",
                after=self.node_groups,
                opts=after_groups,
            )
        elif any(pool.gpu for pool in args.node_pools):
            k8s.helm.v3.Release(
                "nvidia-device-plugin",
                opts=after_groups,
                **nvidia_device_plugin.release_args(args.node_pools),
            )
        efa.device_plugin(args, after_groups)

        self.storage_class: str | None = None
        if isinstance(args.database, InClusterDatabase):
            self.storage_class = database_volume.NAME
            volume_class = database_volume.storage_class(
                "ebs.csi.aws.com", {"type": "gp3", "encrypted": "true"}, retain=keep
            )
            self.ready.append(
                kube.register(
                    volume_class,
                    pulumi.ResourceOptions.merge(
                        kube_opts, pulumi.ResourceOptions(depends_on=[addons["aws-ebs-csi-driver"]])
                    ),
                )
            )

        access = storage.BucketAccess()
        if storage.binds_bucket(args.checkpoint_storage):
            access = storage.checkpoint_bucket(args, caller.account_id, self.cluster.name, child, data)
        self.bucket = access.bucket
        self.storage_identity = access.identity

        self.database: DatabaseServer | None = None
        if managed_db:
            self.database = database.rds(
                args, net, self.cluster.vpc_config.cluster_security_group_id, self, child, data
            )
        self.dns01_identity = dns.dns01_identity(args, self.cluster.name, child)
        self.shared_filesystems: dict[str, SharedVolume] = eks_shared_filesystems.shared_filesystems(
            args,
            net,
            self.cluster,
            addons.get(eks_shared_filesystems.EFS_ADDON),
            system_groups,
            child,
            data,
            kube_opts,
        )

        configured = args.checkpoint_storage.bucket if args.checkpoint_storage else None
        update = f"aws eks update-kubeconfig --name {name_of} --region {region}"
        publish(self, "s3://", configured, {"updateKubeconfig": update})
