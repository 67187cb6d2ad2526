"""The cluster's VPC: created over two (prod: three) availability zones with public and
private subnets, an internet gateway and NAT (one in dev, one per zone in prod); or an
existing VPC and subnets named in config.

Subnets carry the tags Kubernetes load balancers look for; nodes and the database live in
the private ones.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass

import pulumi
import pulumi_aws as aws

from deploy.config import EksStack

# Private subnets get most of the space (pods take VPC addresses with the VPC CNI).
PRIVATE_PREFIX = 19
PUBLIC_PREFIX = 22


@dataclass(frozen=True)
class Network:
    vpc_id: pulumi.Input[str]
    private_subnet_ids: list[pulumi.Input[str]]
    # The availability zone of each private subnet (node groups go to the zones offering their type).
    private_subnet_zones: list[pulumi.Input[str]]


def zone_count(cfg: EksStack) -> int:
    return len(cfg.cluster.zones) or (3 if cfg.environment == "prod" else 2)


def subnet_cidrs(vpc_cidr: str, zones: int) -> tuple[list[str], list[str]]:
    """(private, public) CIDRs, one of each per zone, carved from the VPC's range: the
    private /19s first, the public /22s after them."""
    network = ipaddress.ip_network(vpc_cidr)
    private = list(network.subnets(new_prefix=PRIVATE_PREFIX))[:zones]
    rest = list(network.subnets(new_prefix=PUBLIC_PREFIX))
    taken = [s for s in rest if any(s.subnet_of(p) for p in private)]
    public = [s for s in rest if s not in taken][:zones]
    return [str(s) for s in private], [str(s) for s in public]


def subnet_tags(cluster: str, public: bool) -> dict[str, str]:
    role = "kubernetes.io/role/elb" if public else "kubernetes.io/role/internal-elb"
    return {
        role: "1",
        f"kubernetes.io/cluster/{cluster}": "shared",
        "Name": f"{cluster}-{'public' if public else 'private'}",
    }


def network(cfg: EksStack, keep_database: bool, opts: pulumi.ResourceOptions) -> Network:
    """`keep_database`: a kept RDS instance keeps its network interfaces in the private
    subnets, so the VPC and those subnets are kept with it (AWS refuses to delete them)."""
    vpc_cfg = cfg.cluster.vpc
    if vpc_cfg.existing:
        invoke = pulumi.InvokeOutputOptions(parent=opts.parent, provider=opts.provider)
        ids = list(vpc_cfg.private_subnet_ids)
        zones = [aws.ec2.get_subnet_output(id=subnet, opts=invoke).availability_zone for subnet in ids]
        return Network(vpc_cfg.id, ids, zones)

    name = cfg.cluster.name
    zones = zone_count(cfg)
    if cfg.cluster.zones:
        zone_names: list[pulumi.Input[str]] = list(cfg.cluster.zones)
    else:
        available = aws.get_availability_zones_output(
            state="available", opts=pulumi.InvokeOutputOptions(parent=opts.parent, provider=opts.provider)
        )
        zone_names = [available.names.apply(lambda names, i=i: names[i]) for i in range(zones)]
    private_cidrs, public_cidrs = subnet_cidrs(vpc_cfg.cidr, zones)

    kept = pulumi.ResourceOptions.merge(opts, pulumi.ResourceOptions(retain_on_delete=keep_database))
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
    nats: list[aws.ec2.NatGateway] = []
    # Prod: a NAT per zone, so losing a zone does not cut the others off.
    nat_count = zones if cfg.environment == "prod" else 1
    for i in range(zones):
        public = aws.ec2.Subnet(
            f"public-{i}",
            vpc_id=vpc.id,
            cidr_block=public_cidrs[i],
            availability_zone=zone_names[i],
            map_public_ip_on_launch=False,
            tags=subnet_tags(name, public=True),
            opts=opts,
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
            tags=subnet_tags(name, public=False),
            opts=kept,
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
    return Network(vpc.id, private_ids, zone_names)
