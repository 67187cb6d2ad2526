"""The cluster's VPC: created over two (prod: three) availability zones with public and
private subnets, an internet gateway and NAT (one in dev, one per zone in prod); or an
existing VPC and subnets named in config.

Subnets carry the tags Kubernetes load balancers look for; nodes and the database live in
the private ones.
"""

from __future__ import annotations

from dataclasses import dataclass

import pulumi
import pulumi_aws as aws

from components.cluster.eks.args import EksClusterArgs
from components.config.eks import subnet_cidrs

# Zones a created VPC may take when cluster.zones is not given: the region's Availability
# Zones (not Local or Wavelength Zones) where EKS takes cluster subnets.
# - EKS refuses cluster subnets in these zone IDs ("The subnets can't reside in the following
#   Availability Zones": us-east-1 use1-az3, us-west-1 usw1-az2, ca-central-1 cac1-az3; EKS
#   user guide, "View Amazon EKS networking requirements for VPC and subnets", Subnet
#   requirements for clusters, https://docs.aws.amazon.com/eks/latest/userguide/network-reqs.html,
#   read 2026-11-25 from awsdocs/amazon-eks-user-guide latest/ug/networking/network-reqs.adoc).
#   Zone IDs name the same physical zone in every account (zone names do not).
# - "For Availability Zones, this parameter [OptInStatus] always has the value of
#   opt-in-not-required. For Local Zones and Wavelength Zones, this parameter is the opt-in
#   status" (EC2 API reference, AvailabilityZone; DescribeAvailabilityZones filter
#   `opt-in-status`; botocore 1.43.11 ec2 service model, read 2026-11-25): opted-in Local Zones
#   are "available" too, and their names sort before the region's own zones.
EKS_UNSUPPORTED_ZONE_IDS = ("use1-az3", "usw1-az2", "cac1-az3")
ZONE_FILTERS = ({"name": "opt-in-status", "values": ["opt-in-not-required"]},)
# A subnet's zone is fixed at creation (a change replaces it, and EKS keeps a cluster in the
# zones it was created in): a VPC made before the zones were filtered keeps its subnets, and
# node groups are placed by the zone each subnet reports.
SUBNET_KEPT = ["availabilityZone"]


@dataclass(frozen=True)
class Network:
    vpc_id: pulumi.Input[str]
    private_subnet_ids: list[pulumi.Input[str]]
    # The availability zone of each private subnet (node groups go to the zones offering their type).
    private_subnet_zones: list[pulumi.Input[str]]


def zone_count(args: EksClusterArgs) -> int:
    return len(args.cluster.zones) or (3 if args.environment == "prod" else 2)


# What Karpenter's EC2NodeClasses select subnets and security groups by (upstream's guides tag
# them `karpenter.sh/discovery: <cluster>`: aws/karpenter-provider-aws@v1.14.1 website/content/en/
# docs/getting-started/migrating-from-cas/scripts/step05-tag-subnets.sh,
# step06-tag-security-groups.sh). Only what the stack made carries it: the private subnets of a
# created VPC and (components/cluster/eks/karpenter.py) the cluster's own security group. The
# subnets of an existing VPC are the user's and may serve other clusters (one tag key, one
# value): those are selected by id (subnet_selector_terms).
DISCOVERY_TAG = "karpenter.sh/discovery"


def subnet_tags(cluster: str, public: bool, discovery: bool = False) -> dict[str, str]:
    """`discovery`: Karpenter finds the (private) subnet by DISCOVERY_TAG."""
    role = "kubernetes.io/role/elb" if public else "kubernetes.io/role/internal-elb"
    tags = {
        role: "1",
        f"kubernetes.io/cluster/{cluster}": "shared",
        "Name": f"{cluster}-{'public' if public else 'private'}",
    }
    if discovery:
        tags[DISCOVERY_TAG] = cluster
    return tags


def subnet_selector_terms(args: EksClusterArgs) -> list[dict[str, object]]:
    """An EC2NodeClass's subnetSelectorTerms: the existing VPC's private subnets by id, else the
    created ones by DISCOVERY_TAG (terms are ORed: karpenter.k8s.aws_v1_EC2NodeClass schema)."""
    vpc = args.cluster.vpc
    if vpc.existing:
        return [{"id": subnet} for subnet in vpc.private_subnet_ids]
    return [{"tags": {DISCOVERY_TAG: args.cluster.name}}]


def security_group_selector_terms(args: EksClusterArgs) -> list[dict[str, object]]:
    """An EC2NodeClass's securityGroupSelectorTerms: the cluster security group, by its tag."""
    return [{"tags": {DISCOVERY_TAG: args.cluster.name}}]


def network(args: EksClusterArgs, keep_data: bool, opts: pulumi.ResourceOptions) -> Network:
    """`keep_data`: a kept RDS instance or shared filesystem (EFS mount targets, FSx for Lustre)
    keeps its network interfaces in the private subnets, so the VPC and those subnets are kept
    with it (AWS refuses to delete them)."""
    vpc_cfg = args.cluster.vpc
    if vpc_cfg.existing:
        invoke = pulumi.InvokeOutputOptions(parent=opts.parent, provider=opts.provider)
        ids = list(vpc_cfg.private_subnet_ids)
        zones = [aws.ec2.get_subnet_output(id=subnet, opts=invoke).availability_zone for subnet in ids]
        return Network(vpc_cfg.id, ids, zones)

    name = args.cluster.name
    zones = zone_count(args)
    if args.cluster.zones:
        zone_names: list[pulumi.Input[str]] = list(args.cluster.zones)
    else:
        available = aws.get_availability_zones_output(
            state="available",
            exclude_zone_ids=list(EKS_UNSUPPORTED_ZONE_IDS),
            filters=[dict(f) for f in ZONE_FILTERS],
            opts=pulumi.InvokeOutputOptions(parent=opts.parent, provider=opts.provider),
        )
        zone_names = [available.names.apply(lambda names, i=i: names[i]) for i in range(zones)]
    private_cidrs, public_cidrs = subnet_cidrs(vpc_cfg.cidr, zones)

    kept = pulumi.ResourceOptions.merge(opts, pulumi.ResourceOptions(retain_on_delete=keep_data))
    subnet_opts = pulumi.ResourceOptions.merge(opts, pulumi.ResourceOptions(ignore_changes=SUBNET_KEPT))
    private_subnet_opts = pulumi.ResourceOptions.merge(
        kept, pulumi.ResourceOptions(ignore_changes=SUBNET_KEPT)
    )
    vpc = aws.ec2.Vpc(
        "vpc",
        cidr_block=vpc_cfg.cidr,
        enable_dns_hostnames=True,
        enable_dns_support=True,
        tags={"Name": name},
        opts=kept,
    )
    gateway = aws.ec2.InternetGateway("internet", vpc_id=vpc.id, tags={"Name": name}, opts=opts)
    public_routes = aws.ec2.RouteTable(
        "public",
        vpc_id=vpc.id,
        routes=[{"cidr_block": "0.0.0.0/0", "gateway_id": gateway.id}],
        tags={"Name": f"{name}-public"},
        opts=opts,
    )
    private_ids = []
    private_zones: list[pulumi.Input[str]] = []
    nats: list[aws.ec2.NatGateway] = []
    # Prod: a NAT per zone, so losing a zone does not cut the others off.
    nat_count = zones if args.environment == "prod" else 1
    for i in range(zones):
        public = aws.ec2.Subnet(
            f"public-{i}",
            vpc_id=vpc.id,
            cidr_block=public_cidrs[i],
            availability_zone=zone_names[i],
            map_public_ip_on_launch=False,
            tags=subnet_tags(name, public=True),
            opts=subnet_opts,
        )
        aws.ec2.RouteTableAssociation(
            f"public-{i}", subnet_id=public.id, route_table_id=public_routes.id, opts=opts
        )
        if i < nat_count:
            address = aws.ec2.Eip(f"nat-{i}", domain="vpc", tags={"Name": f"{name}-nat-{i}"}, opts=opts)
            nats.append(
                aws.ec2.NatGateway(
                    f"nat-{i}",
                    subnet_id=public.id,
                    allocation_id=address.id,
                    tags={"Name": f"{name}-nat-{i}"},
                    opts=pulumi.ResourceOptions.merge(opts, pulumi.ResourceOptions(depends_on=[gateway])),
                )
            )
    for i in range(zones):
        private = aws.ec2.Subnet(
            f"private-{i}",
            vpc_id=vpc.id,
            cidr_block=private_cidrs[i],
            availability_zone=zone_names[i],
            tags=subnet_tags(name, public=False, discovery=args.cluster.autoscaler == "karpenter"),
            opts=private_subnet_opts,
        )
        routes = aws.ec2.RouteTable(
            f"private-{i}",
            vpc_id=vpc.id,
            routes=[{"cidr_block": "0.0.0.0/0", "nat_gateway_id": nats[i % len(nats)].id}],
            tags={"Name": f"{name}-private-{i}"},
            opts=opts,
        )
        aws.ec2.RouteTableAssociation(
            f"private-{i}", subnet_id=private.id, route_table_id=routes.id, opts=opts
        )
        private_ids.append(private.id)
        private_zones.append(private.availability_zone)
    return Network(vpc.id, private_ids, private_zones)
