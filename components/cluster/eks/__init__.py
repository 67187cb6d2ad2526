"""EKS: a cluster with managed node groups (CPU and NVIDIA GPU, scaling from zero), its VPC,
the checkpoint bucket with Pod Identity, RDS, the cluster-autoscaler and the NVIDIA device
plugin or GPU operator; all behind one `ClusterHandle`.

Plain pulumi-aws resources (no pulumi-eks component), so tests and policies see every one.
One module per concern (network, iam, cluster, node_groups, storage, database); pure
functions give each resource's arguments, `EksPlatform` only registers and wires them.
"""

from __future__ import annotations

import hashlib
from typing import Any

import pulumi
import pulumi_aws as aws
import pulumi_kubernetes as k8s
import pulumi_random

from components import constants, kube, passwords
from components.addons import cluster_autoscaler, gpu_operator, nvidia_device_plugin
from components.cluster import (
    ClusterHandle,
    DatabaseServer,
    Dns01Identity,
    checkpoints,
    created_cluster,
    data_exports,
    database_volume,
    name_kept,
)
from components.cluster.eks import cluster as eks_cluster
from components.cluster.eks import database, dns, iam, network, node_groups, storage
from components.config import EksStack, InClusterDatabase, ManagedDatabase, S3Storage
from components.config.tls import cloud_identity


class EksPlatform(pulumi.ComponentResource):
    """Everything AWS holds for one Determined install."""

    def __init__(self, name: str, cfg: EksStack, opts: pulumi.ResourceOptions | None = None):
        super().__init__("determined:eks:Platform", name, None, opts)
        region = cfg.cluster.region
        self.provider = aws.Provider("aws", region=region, opts=pulumi.ResourceOptions(parent=self))
        child = pulumi.ResourceOptions(parent=self, provider=self.provider)
        invoke = pulumi.InvokeOptions(parent=self, provider=self.provider)
        invoke_output = pulumi.InvokeOutputOptions(parent=self, provider=self.provider)
        keep = not cfg.data_deletion_allowed
        data = pulumi.ResourceOptions.merge(child, pulumi.ResourceOptions(retain_on_delete=keep))
        name_of = cfg.cluster.name

        managed_db = isinstance(cfg.database, ManagedDatabase)
        net = network.network(cfg, keep_database=keep and managed_db, opts=child)
        # Read now (not as outputs): the bucket's name and the admin entry derive from them.
        caller = aws.get_caller_identity(opts=invoke)

        key = aws.kms.Key("secrets", opts=child, **eks_cluster.kms_key_args(cfg))
        cluster_role = iam.role(
            "cluster",
            iam.role_name(cfg, "cluster"),
            iam.trust("eks.amazonaws.com", ("sts:AssumeRole", "sts:TagSession")),
            iam.CLUSTER_POLICIES,
            child,
            inline=iam.secrets_key_policy(key.arn),
        )
        eks_cluster.warn_extended_support(cfg)
        self.cluster = aws.eks.Cluster(
            "cluster",
            opts=pulumi.ResourceOptions.merge(
                child,
                pulumi.ResourceOptions(
                    depends_on=cluster_role.ready,
                    protect=cfg.environment == "prod",
                    ignore_changes=eks_cluster.ignored_changes(cfg),
                ),
            ),
            **eks_cluster.cluster_args(cfg, cluster_role.arn, net.private_subnet_ids, key.arn),
        )
        # The deploying identity (the role behind an assumed-role session) and the configured admins.
        deployer = aws.iam.get_session_context(arn=caller.arn, opts=invoke).issuer_arn
        # One entry per principal: EKS refuses a second entry for the same one.
        admins = list(dict.fromkeys([deployer, *cfg.cluster.admin_arns]))
        self.access: list[pulumi.Resource] = []
        for principal in admins:
            # Named by the principal: reordering adminArns or deploying as another admin
            # changes no entry (a replaced entry would meet its own principal's).
            entry_name = f"admin-{hashlib.sha256(principal.encode()).hexdigest()[:10]}"
            entry = aws.eks.AccessEntry(
                entry_name,
                cluster_name=self.cluster.name,
                principal_arn=principal,
                type="STANDARD",
                opts=child,
            )
            self.access.append(
                aws.eks.AccessPolicyAssociation(
                    entry_name,
                    cluster_name=self.cluster.name,
                    principal_arn=entry.principal_arn,
                    policy_arn=eks_cluster.ADMIN_POLICY,
                    access_scope={"type": "cluster"},
                    opts=child,
                )
            )

        node_role = iam.role(
            "nodes", iam.role_name(cfg, "nodes"), iam.trust("ec2.amazonaws.com"), iam.NODE_POLICIES, child
        )
        # Add-ons the nodes need to join and get addresses: before the node groups.
        pod_identity = iam.POD_IDENTITY_TRUST
        cni_role = iam.role("vpc-cni", iam.role_name(cfg, "vpc-cni"), pod_identity, iam.CNI_POLICIES, child)
        ebs_role = iam.role(
            "ebs-csi", iam.role_name(cfg, "ebs-csi"), pod_identity, iam.EBS_CSI_POLICIES, child
        )
        addon_roles = {
            "vpc-cni": (cni_role, "aws-node"),
            "aws-ebs-csi-driver": (ebs_role, "ebs-csi-controller-sa"),
        }
        addons: dict[str, aws.eks.Addon] = {}
        for addon in eks_cluster.ADDONS:
            if addon in eks_cluster.ADDONS_ON_NODES:
                continue
            addons[addon] = self._addon(addon, addon_roles.get(addon), child, invoke_output)
        self.node_groups = []
        for pool in cfg.node_pools:
            group = aws.eks.NodeGroup(
                pool.name,
                opts=pulumi.ResourceOptions.merge(
                    child,
                    pulumi.ResourceOptions(
                        depends_on=[*node_role.ready, *addons.values()],
                        # The group's name is fixed: a change that replaces it (instance type,
                        # capacity, AMI, disk) must delete the old group first.
                        delete_before_replace=True,
                        # The autoscaler owns the size after creation (node_groups.DESIRED_SIZE).
                        # Subnets are set at creation (a change replaces the group): groups
                        # made before they followed the type's zones keep theirs.
                        ignore_changes=[node_groups.DESIRED_SIZE, "subnetIds"],
                    ),
                ),
                **node_groups.node_group_args(
                    cfg,
                    pool,
                    self.cluster.name,
                    node_role.arn,
                    node_groups.subnets(
                        pool, net.private_subnet_ids, net.private_subnet_zones, invoke_output
                    ),
                    self.cluster.version,
                ),
            )
            asg = group.resources.apply(lambda resources: resources[0].autoscaling_groups[0].name)
            # Named by key; the names they had by position stay as aliases.
            positional = node_groups.positional_names(pool)
            for tag_key, value in sorted(node_groups.node_template_tags(pool).items()):
                aliases = [pulumi.Alias(name=positional[tag_key])] if tag_key in positional else []
                aws.autoscaling.Tag(
                    node_groups.tag_name(pool, "template", tag_key),
                    autoscaling_group_name=asg,
                    tag={"key": tag_key, "value": value, "propagate_at_launch": False},
                    opts=pulumi.ResourceOptions.merge(child, pulumi.ResourceOptions(aliases=aliases)),
                )
            for tag_key, value in sorted(node_groups.instance_tags(cfg).items()):
                aws.autoscaling.Tag(
                    node_groups.tag_name(pool, "tag", tag_key),
                    autoscaling_group_name=asg,
                    tag={"key": tag_key, "value": value, "propagate_at_launch": True},
                    opts=child,
                )
            self.node_groups.append(group)
        # The node group the master runs on (the first untainted on-demand CPU pool by default):
        # what Determined waits for, and enough for the add-ons whose pods need nodes.
        system_groups = [
            group
            for pool, group in zip(cfg.node_pools, self.node_groups, strict=True)
            if cfg.master_node_pool is None or pool.name == cfg.master_node_pool.name
        ]
        after_nodes = pulumi.ResourceOptions.merge(child, pulumi.ResourceOptions(depends_on=system_groups))
        for addon in eks_cluster.ADDONS:
            if addon in eks_cluster.ADDONS_ON_NODES:
                addons[addon] = self._addon(addon, addon_roles.get(addon), after_nodes, invoke_output)

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
        # Not the GPU groups, the GPU operator or the device plugin: Determined starts without them.
        self.ready: list[pulumi.Resource] = [*system_groups, *addons.values()]

        autoscaler_role = iam.role(
            "cluster-autoscaler",
            iam.role_name(cfg, "cluster-autoscaler"),
            pod_identity,
            (),
            child,
            inline=cluster_autoscaler.iam_policy(name_of, region, caller.account_id),
        )
        association = aws.eks.PodIdentityAssociation(
            "cluster-autoscaler",
            cluster_name=self.cluster.name,
            namespace=cluster_autoscaler.NAMESPACE,
            service_account=cluster_autoscaler.SERVICE_ACCOUNT,
            role_arn=autoscaler_role.arn,
            opts=pulumi.ResourceOptions.merge(
                child, pulumi.ResourceOptions(depends_on=autoscaler_role.ready)
            ),
        )
        k8s.helm.v3.Release(
            "cluster-autoscaler",
            opts=pulumi.ResourceOptions.merge(
                kube_opts, pulumi.ResourceOptions(depends_on=[*self.node_groups, association])
            ),
            # The version the cluster runs: an unpinned cluster keeps the one it was made with.
            **cluster_autoscaler.release_args(name_of, region, self.cluster.version),
        )

        # The GPU software needs every group's nodes; nothing of Determined waits for it.
        after_groups = pulumi.ResourceOptions.merge(
            kube_opts, pulumi.ResourceOptions(depends_on=self.node_groups)
        )
        if cfg.gpu_operator.enabled:
            gpu_operator.GpuOperator(
                "gpu-operator",
                cfg,
                platform="eks",
                after=self.node_groups,
                opts=after_groups,
            )
        elif any(pool.gpu for pool in cfg.node_pools):
            k8s.helm.v3.Release(
                "nvidia-device-plugin",
                opts=after_groups,
                **nvidia_device_plugin.release_args(cfg),
            )

        self.storage_class: str | None = None
        if isinstance(cfg.database, InClusterDatabase):
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

        self.bucket: pulumi.Output[str] | None = None
        self.storage_identity: dict[str, pulumi.Input[str]] = {}
        cs = cfg.checkpoint_storage
        # An S3-compatible store (endpointUrl) or static keys: nothing to create or bind on AWS.
        if isinstance(cs, S3Storage) and not cs.endpoint_url and cs.access_key is None:
            self._checkpoint_bucket(cfg, caller.account_id, child, data)

        self.database: DatabaseServer | None = None
        if managed_db:
            self._rds(cfg, net, child, data)
        self.dns01_identity = self._dns01_identity(cfg, child)
        self.register_outputs({"clusterName": self.cluster.name, "kubeconfig": self.kubeconfig})

    def _addon(
        self,
        addon: str,
        role: tuple[iam.Role, str] | None,
        opts: pulumi.ResourceOptions,
        invoke: pulumi.InvokeOutputOptions,
    ) -> aws.eks.Addon:
        args: dict[str, Any] = {
            "cluster_name": self.cluster.name,
            "addon_name": addon,
            # Follows the version the cluster runs (eks_cluster.CLUSTER_VERSION_FOLLOWERS).
            "addon_version": eks_cluster.addon_version(addon, self.cluster.version, invoke),
            # The cluster bootstraps self-managed copies of some add-ons: take them over.
            "resolve_conflicts_on_create": "OVERWRITE",
            "resolve_conflicts_on_update": "OVERWRITE",
        }
        configuration = eks_cluster.addon_configuration(addon)
        if configuration:
            args["configuration_values"] = configuration
        if role is not None:
            created, account = role
            args["pod_identity_associations"] = [{"role_arn": created.arn, "service_account": account}]
            opts = pulumi.ResourceOptions.merge(opts, pulumi.ResourceOptions(depends_on=created.ready))
        return aws.eks.Addon(addon, opts=opts, **args)

    def _checkpoint_bucket(
        self, cfg: EksStack, account: str, child: pulumi.ResourceOptions, data: pulumi.ResourceOptions
    ) -> None:
        cs = cfg.checkpoint_storage
        assert isinstance(cs, S3Storage)
        name: pulumi.Input[str]
        if cs.bucket:
            name = cs.bucket
        else:
            derived = storage.bucket_name(pulumi.get_stack(), cfg.cluster.name, account, cfg.cluster.region)
            # The bucket's own name, not the derived one: a stack made before the derivation
            # changed keeps its bucket (checkpoints.py), and everything names that one.
            name = self.bucket = self._bucket(cfg, derived, child, data)
        arn = storage.bucket_arn(name)
        role = iam.role(
            "storage",
            iam.role_name(cfg, "checkpoints"),
            iam.POD_IDENTITY_TRUST,
            (),
            child,
            inline=storage.access_policy(arn, cs),
        )
        for namespace, service_account in checkpoints.kubernetes_accounts(cfg):
            aws.eks.PodIdentityAssociation(
                f"storage-{namespace}-{service_account}",
                cluster_name=self.cluster.name,
                namespace=namespace,
                service_account=service_account,
                role_arn=role.arn,
                opts=pulumi.ResourceOptions.merge(child, pulumi.ResourceOptions(depends_on=role.ready)),
            )
        # Pod Identity needs no annotation; the accounts only have to exist (and be used).
        self.storage_identity = {storage.ROLE_ANNOTATION: role.arn}

    def _bucket(
        self, cfg: EksStack, name: str, child: pulumi.ResourceOptions, data: pulumi.ResourceOptions
    ) -> pulumi.Output[str]:
        """The bucket, named `name` when created; its name (the deployed one) as an output."""
        bucket = aws.s3.Bucket(
            "checkpoints",
            bucket=name,
            force_destroy=False,
            tags=dict(cfg.cluster.tags),
            opts=name_kept(checkpoints.bucket_options(cfg, data), storage.BUCKET, "bucket"),
        )
        part = pulumi.ResourceOptions.merge(data, pulumi.ResourceOptions(depends_on=[bucket]))
        aws.s3.BucketPublicAccessBlock(
            "checkpoints", bucket=bucket.id, opts=part, **storage.PUBLIC_ACCESS_BLOCKED
        )
        aws.s3.BucketOwnershipControls(
            "checkpoints", bucket=bucket.id, rule={"object_ownership": "BucketOwnerEnforced"}, opts=part
        )
        aws.s3.BucketServerSideEncryptionConfiguration(
            "checkpoints",
            bucket=bucket.id,
            rules=[
                {
                    "apply_server_side_encryption_by_default": {"sse_algorithm": "aws:kms"},
                    "bucket_key_enabled": True,
                }
            ],
            opts=part,
        )
        aws.s3.BucketPolicy(
            "checkpoints",
            bucket=bucket.id,
            policy=pulumi.Output.json_dumps(storage.tls_only_policy(storage.bucket_arn(bucket.bucket))),
            opts=part,
        )
        if cfg.environment == "prod":
            aws.s3.BucketVersioning(
                "checkpoints", bucket=bucket.id, versioning_configuration={"status": "Enabled"}, opts=part
            )
            aws.s3.BucketLifecycleConfiguration(
                "checkpoints",
                bucket=bucket.id,
                rules=[
                    {
                        "id": "noncurrent-versions",
                        "status": "Enabled",
                        "filter": {},
                        "noncurrent_version_expiration": {"noncurrent_days": storage.NONCURRENT_DAYS},
                    }
                ],
                opts=part,
            )
        return bucket.bucket

    def _dns01_identity(self, cfg: EksStack, child: pulumi.ResourceOptions) -> Dns01Identity | None:
        """cert-manager's Route 53 role (DNS-01), through Pod Identity, when its solver names no keys."""
        if cloud_identity(cfg.cloud, cfg.tls) is None:
            return None
        role = iam.role(
            "cert-manager",
            iam.role_name(cfg, "cert-manager"),
            iam.POD_IDENTITY_TRUST,
            (),
            child,
            inline=dns.role_policy(cfg),
        )
        association = aws.eks.PodIdentityAssociation(
            "cert-manager",
            cluster_name=self.cluster.name,
            opts=pulumi.ResourceOptions.merge(child, pulumi.ResourceOptions(depends_on=role.ready)),
            **dns.association_args(role.arn),
        )
        return Dns01Identity(
            solver_defaults=dns.solver_defaults(cfg),
            account_annotations={storage.ROLE_ANNOTATION: role.arn},
            identity=role.arn,
            ready=[association],
        )

    def _rds(
        self, cfg: EksStack, net: network.Network, child: pulumi.ResourceOptions, data: pulumi.ResourceOptions
    ) -> None:
        name = cfg.cluster.name
        # What a kept instance uses is kept with it (AWS refuses to delete it while in use).
        subnets = aws.rds.SubnetGroup(
            "database",
            name=database.subnet_group_name(cfg),
            subnet_ids=net.private_subnet_ids,
            tags=dict(cfg.cluster.tags),
            opts=data,
        )
        group = aws.ec2.SecurityGroup(
            "database",
            name=database.security_group_name(cfg),
            description=f"PostgreSQL of {name}: from the cluster only",
            vpc_id=net.vpc_id,
            tags=dict(cfg.cluster.tags),
            opts=data,
        )
        aws.vpc.SecurityGroupIngressRule(
            "database-from-cluster",
            security_group_id=group.id,
            referenced_security_group_id=self.cluster.vpc_config.cluster_security_group_id,
            ip_protocol="tcp",
            from_port=constants.DB_PORT,
            to_port=constants.DB_PORT,
            description="PostgreSQL from the cluster's nodes and pods",
            opts=child,
        )
        parameters = aws.rds.ParameterGroup("database", opts=data, **database.parameter_group_args(cfg))
        password = passwords.configured_or_generated("database-password", None, self)
        suffix = None
        if cfg.environment == "prod":
            # One final snapshot name per instance (database.FINAL_SNAPSHOT_SUFFIX_BYTES): a new
            # instance of the same identifier gets a new one.
            suffix = pulumi_random.RandomId(
                "database-final-snapshot",
                byte_length=database.FINAL_SNAPSHOT_SUFFIX_BYTES,
                keepers={"identifier": database.identifier(cfg)},
                opts=child,
            ).hex
        instance = aws.rds.Instance(
            "database",
            # Prod: destroy refuses up front instead of failing on deletion protection midway.
            opts=pulumi.ResourceOptions.merge(
                data, pulumi.ResourceOptions(protect=cfg.environment == "prod")
            ),
            **database.instance_args(cfg, subnets.name, group.id, parameters.name, password, suffix),
        )
        self.database = DatabaseServer(
            host=instance.address,
            port=constants.DB_PORT,
            name=constants.DB_DATABASE,
            user=constants.DB_USER,
            password=password,
            ssl_mode="require",
        )


def exports(cfg: EksStack, platform: EksPlatform) -> dict[str, pulumi.Input]:
    cluster = cfg.cluster
    values: dict[str, pulumi.Input] = {
        "clusterName": platform.cluster.name,
        "kubeconfig": platform.kubeconfig,
        "updateKubeconfig": f"aws eks update-kubeconfig --name {cluster.name} --region {cluster.region}",
    }
    bucket = platform.bucket or getattr(cfg.checkpoint_storage, "bucket", None)
    return values | data_exports(pulumi.Output.concat("s3://", bucket) if bucket else None, platform.database)


def connect(cfg: EksStack) -> ClusterHandle:
    platform = EksPlatform("eks", cfg)
    return created_cluster(platform, exports(cfg, platform))
