"""Policies: how the master and the cluster are reached from outside. The master only over
TLS, load balancers fenced to the allowed clients or internal, the Kubernetes API endpoint
fenced, plain HTTP on a Gateway only ever redirected to https, and the EFA security group
open to its own members only."""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping, Sequence
from typing import Any

from components import constants
from policies import facts
from policies.rule import Context, Report, Rule

GATEWAY_GROUP = "gateway.networking.k8s.io"
ENVOY_PROXY = "kubernetes:gateway.envoyproxy.io/v1alpha1:EnvoyProxy"
# Where the master's pods are told apart (components/determined/master.py: kube.selector(COMPONENT)).
NAME_LABEL = "app.kubernetes.io/name"
MASTER_COMPONENT = constants.MASTER_COMPONENT
EXPOSING_TYPES = ("LoadBalancer", "NodePort")
# Kubernetes reads this annotation when spec.loadBalancerSourceRanges is empty.
SOURCE_RANGES_ANNOTATION = "service.beta.kubernetes.io/load-balancer-source-ranges"
# Internal load balancers, per cloud (the in-tree and controller spellings).
GKE_INTERNAL = {constants.GKE_LB_TYPE: "internal", "cloud.google.com/load-balancer-type": "internal"}
AWS_LB_SCHEME = "service.beta.kubernetes.io/aws-load-balancer-scheme"


# --- reading ------------------------------------------------------------------------------


def gateway_kind(resource: Any) -> str | None:
    """The kind of a Gateway API object (any version), else None."""
    prefix = f"{facts.K8S}{GATEWAY_GROUP}/"
    if not resource.resource_type.startswith(prefix):
        return None
    return resource.resource_type.rsplit(":", 1)[-1]


def namespace_of(resource: Any) -> str:
    return str(facts.metadata(resource).get("namespace") or "")


def name_of(resource: Any) -> str:
    return str(facts.metadata(resource).get("name") or resource.name)


def opens_everything(cidr: Any) -> bool:
    """0.0.0.0/0, ::/0 or any other range of prefix length 0."""
    try:
        return ipaddress.ip_network(str(cidr).strip(), strict=False).prefixlen == 0
    except ValueError:
        return False


def selects_master(service: Any) -> bool:
    return facts.get(service.props, "spec", "selector", NAME_LABEL) == MASTER_COMPONENT


def listeners(gateway: Any) -> list[Mapping[str, Any]]:
    return [
        li for li in facts.items(facts.get(gateway.props, "spec", "listeners")) if isinstance(li, Mapping)
    ]


def attached_gateways(
    route: Any, gateways: Mapping[tuple[str, str], Any]
) -> list[tuple[Any, list[Mapping[str, Any]]]]:
    """(Gateway, the listeners the route attaches to) for each parentRef naming a Gateway of
    the stack: the listener `sectionName` names, else every listener (of `port`, if given)."""
    found = []
    for ref in facts.items(facts.get(route.props, "spec", "parentRefs")):
        ref = facts.mapping(ref)
        if ref.get("group", GATEWAY_GROUP) != GATEWAY_GROUP or ref.get("kind", "Gateway") != "Gateway":
            continue
        key = (str(ref.get("namespace") or namespace_of(route)), str(ref.get("name")))
        gateway = gateways.get(key)
        if gateway is None:
            continue
        section, port = ref.get("sectionName"), ref.get("port")
        chosen = [
            li
            for li in listeners(gateway)
            if (section is None or li.get("name") == section) and (port is None or li.get("port") == port)
        ]
        found.append((gateway, chosen))
    return found


def backend_services(route: Any) -> set[tuple[str, str]]:
    """(namespace, name) of the Services a route's rules send to."""
    found = set()
    for rule in facts.items(facts.get(route.props, "spec", "rules")):
        for ref in facts.items(facts.get(rule, "backendRefs")):
            ref = facts.mapping(ref)
            if ref.get("group", "") == "" and ref.get("kind", "Service") == "Service":
                found.add((str(ref.get("namespace") or namespace_of(route)), str(ref.get("name"))))
    return found


def _describe(listener: Mapping[str, Any]) -> str:
    return f"{listener.get('name')!r} ({listener.get('protocol')})"


# --- master-tls -----------------------------------------------------------------------------


def _master_serves_tls(resources: Sequence[Any]) -> bool:
    for config in facts.master_configs(resources):
        tls = facts.mapping(facts.get(config.config, "security", "tls"))
        if tls.get("cert") and tls.get("key"):
            return True
    return False


def master_tls(context: Context, resources: Sequence[Any], report: Report) -> None:
    services = [s for s in facts.of_type(resources, facts.SERVICE) if selects_master(s)]
    # master.yaml is read only when something exposes the master (in a first preview it is
    # not known yet, and a ClusterIP master needs nothing of it).
    exposed = [s for s in services if facts.get(s.props, "spec", "type") in EXPOSING_TYPES]
    if exposed and not _master_serves_tls(resources):
        for service in exposed:
            report(
                f"Service {facts.object_name(service)} exposes the master as "
                f"{facts.get(service.props, 'spec', 'type')} but master.yaml has no security.tls: "
                "the master would answer plain HTTP from outside the cluster",
                service.urn,
            )
    master_services = {(namespace_of(s), name_of(s)) for s in services}
    gateways = {(namespace_of(g), name_of(g)): g for g in resources if gateway_kind(g) == "Gateway"}
    reported: set[str] = set()
    for route in resources:
        if gateway_kind(route) not in ("HTTPRoute", "TLSRoute", "GRPCRoute", "TCPRoute"):
            continue
        if not backend_services(route) & master_services:
            continue
        for gateway, _ in attached_gateways(route, gateways):
            secure = [li for li in listeners(gateway) if li.get("protocol") in ("HTTPS", "TLS")]
            if secure or gateway.urn in reported:
                continue
            reported.add(gateway.urn)
            found = ", ".join(_describe(li) for li in listeners(gateway)) or "none"
            report(
                f"Gateway {facts.object_name(gateway)} routes to the master "
                f"({gateway_kind(route)} {facts.object_name(route)}) but has no HTTPS or TLS listener "
                f"(listeners: {found})",
                gateway.urn,
            )


# --- lb-source-ranges -------------------------------------------------------------------------


def is_internal(annotations: Mapping[str, Any], cloud: str) -> bool:
    """Annotations that make the cloud's load balancer internal (on an existing cluster,
    whichever cloud's spelling is there)."""
    values = {str(k): str(v).strip().lower() for k, v in annotations.items()}
    gke = any(values.get(key) == value for key, value in GKE_INTERNAL.items())
    internal_flag = values.get(constants.AWS_LB_INTERNAL)
    # The in-tree provider reads any value but "false" as internal (old docs used 0.0.0.0/0).
    aws = (internal_flag is not None and internal_flag not in ("", "false")) or values.get(
        AWS_LB_SCHEME
    ) == "internal"
    if cloud == "gke":
        return gke
    if cloud == "eks":
        return aws
    return gke or aws


def _check_ranges(where: str, annotations: Mapping[str, Any], ranges: list[Any], report: Report) -> None:
    if not ranges:
        annotated = str(annotations.get(SOURCE_RANGES_ANNOTATION) or "")
        ranges = [r for r in annotated.split(",") if r.strip()]
    if not ranges:
        report(f"{where}: a public load balancer open to any address (no loadBalancerSourceRanges)")
        return
    open_ranges = [str(r) for r in ranges if opens_everything(r)]
    if open_ranges:
        report(
            f"{where}: a public load balancer whose loadBalancerSourceRanges admit any address "
            f"({open_ranges[0]})"
        )


def lb_source_ranges(context: Context, resource: Any, report: Report) -> None:
    if resource.resource_type == facts.SERVICE:
        if facts.get(resource.props, "spec", "type") != "LoadBalancer":
            return
        annotations = facts.mapping(facts.metadata(resource).get("annotations"))
        if is_internal(annotations, context.cloud):
            return
        ranges = facts.items(facts.get(resource.props, "spec", "loadBalancerSourceRanges"))
        _check_ranges(f"Service {facts.object_name(resource)}", annotations, ranges, report)
    elif resource.resource_type == ENVOY_PROXY:
        service = facts.mapping(facts.get(resource.props, "spec", "provider", "kubernetes", "envoyService"))
        # Envoy Gateway's default Service type is LoadBalancer.
        if service.get("type", "LoadBalancer") != "LoadBalancer":
            return
        annotations = facts.mapping(service.get("annotations"))
        if is_internal(annotations, context.cloud):
            return
        ranges = facts.items(service.get("loadBalancerSourceRanges"))
        where = f"EnvoyProxy {facts.object_name(resource)} (spec.provider.kubernetes.envoyService)"
        _check_ranges(where, annotations, ranges, report)


# --- control-plane-endpoint-fenced ------------------------------------------------------------


def control_plane_endpoint_fenced(context: Context, resource: Any, report: Report) -> None:
    props = resource.props
    if resource.resource_type == facts.EKS_CLUSTER:
        name = facts.get(props, "name", default=resource.name)
        vpc = facts.mapping(facts.get(props, "vpcConfig"))
        # The EKS API's default: a public endpoint.
        if facts.get(vpc, "endpointPublicAccess", default=True) is not True:
            return
        cidrs = facts.items(vpc.get("publicAccessCidrs"))
        if not cidrs:
            report(
                f"EKS cluster {name}: the public API endpoint admits any address "
                "(vpcConfig.publicAccessCidrs is empty)"
            )
        elif any(opens_everything(c) for c in cidrs):
            report(f"EKS cluster {name}: vpcConfig.publicAccessCidrs admit any address (0.0.0.0/0)")
    elif resource.resource_type == facts.GKE_CLUSTER:
        name = facts.get(props, "name", default=resource.name)
        if facts.get(props, "privateClusterConfig", "enablePrivateEndpoint") is True:
            return
        networks = facts.mapping(facts.get(props, "masterAuthorizedNetworksConfig"))
        cidrs = [facts.get(block, "cidrBlock") for block in facts.items(networks.get("cidrBlocks"))]
        if not cidrs:
            report(
                f"GKE cluster {name}: the public control-plane endpoint admits any address "
                "(no masterAuthorizedNetworksConfig.cidrBlocks, no private endpoint)"
            )
        elif any(opens_everything(c) for c in cidrs):
            report(
                f"GKE cluster {name}: masterAuthorizedNetworksConfig.cidrBlocks admit any address (0.0.0.0/0)"
            )
        if networks.get("gcpPublicCidrsAccessEnabled") is True:
            report(
                f"GKE cluster {name}: masterAuthorizedNetworksConfig.gcpPublicCidrsAccessEnabled admits "
                "every Google Cloud public address"
            )


# --- no-plain-http-route ----------------------------------------------------------------------


def redirects_to_https(rule: Any) -> bool:
    """A rule that only answers with a redirect to https: no backends."""
    if facts.items(facts.get(rule, "backendRefs")):
        return False
    return any(
        facts.get(f, "type") == "RequestRedirect" and facts.get(f, "requestRedirect", "scheme") == "https"
        for f in facts.items(facts.get(rule, "filters"))
    )


def no_plain_http_route(context: Context, resources: Sequence[Any], report: Report) -> None:
    gateways = {(namespace_of(g), name_of(g)): g for g in resources if gateway_kind(g) == "Gateway"}
    for route in resources:
        if gateway_kind(route) != "HTTPRoute":
            continue
        for gateway, attached in attached_gateways(route, gateways):
            plain = [li for li in attached if li.get("protocol") == "HTTP"]
            if not plain:
                continue
            rules = facts.items(facts.get(route.props, "spec", "rules"))
            serving = [str(i) for i, rule in enumerate(rules) if not redirects_to_https(rule)]
            if serving:
                report(
                    f"HTTPRoute {facts.object_name(route)} is attached to plain HTTP listener "
                    f"{_describe(plain[0])} of Gateway {facts.object_name(gateway)} and its rule(s) "
                    f"{', '.join(serving)} do more than redirect to https",
                    route.urn,
                )


# --- efa-security-group-self-only -------------------------------------------------------------

SECURITY_GROUP = "aws:ec2/securityGroup:SecurityGroup"
SECURITY_GROUP_RULE = "aws:ec2/securityGroupRule:SecurityGroupRule"
VPC_RULES = (
    "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule",
    "aws:vpc/securityGroupEgressRule:SecurityGroupEgressRule",
)
# What a rule may name besides the group itself, per kind of rule (pulumi-aws 7.51.1:
# ec2/security_group.py inline ingress/egress, ec2/security_group_rule.py, vpc/
# security_group_ingress_rule.py); any of them opens the group to more than its members.
INLINE_PEERS = ("cidrBlocks", "ipv6CidrBlocks", "prefixListIds", "securityGroups")
RULE_PEERS = ("cidrBlocks", "ipv6CidrBlocks", "prefixListIds")
VPC_RULE_PEERS = ("cidrIpv4", "cidrIpv6", "prefixListId")


def efa_groups(resources: Sequence[Any]) -> list[Any]:
    """The EFA security groups: tagged constants.EFA_SECURITY_GROUP_TAG by the EKS cluster."""
    return [
        group
        for group in facts.of_type(resources, SECURITY_GROUP)
        if constants.EFA_SECURITY_GROUP_TAG in facts.mapping(facts.known(group.props, "tags"))
    ]


def _names_group(resource: Any, prop: str, group: Any) -> bool:
    """Whether `prop` of `resource` is `group`'s id: it comes from the group, or (known) equals it."""
    sources = facts.depends_on(resource, prop)
    if sources:
        return any(source.urn == group.urn for source in sources)
    group_id = facts.known(group.props, "id")
    return group_id is not None and facts.known(resource.props, prop) == group_id


def _peers(props: Any, keys: Sequence[str]) -> list[str]:
    """What a rule names besides a security group: `<key> <value>` for each CIDR or prefix list
    (a value not known yet in a first preview shows as such; `pulumi up` checks it known)."""
    found = []
    for key in keys:
        if facts.is_unknown(props, key):
            continue
        value = facts.get(props, key)
        if isinstance(value, Sequence) and not isinstance(value, str):
            listed = ["(not known yet)" if v is None else str(v) for v in facts.known_items(props, key)]
        else:
            listed = [str(value)] if value else []
        found += [f"{key} {item}" for item in listed]
    return found


def efa_security_group_self_only(context: Context, resources: Sequence[Any], report: Report) -> None:
    for group in efa_groups(resources):
        name = facts.describe(group, "EFA security group", "name")
        for direction in ("ingress", "egress"):
            for rule in facts.items(facts.known(group.props, direction)):
                rule = facts.mapping(rule)
                peers = _peers(rule, INLINE_PEERS)
                if peers or rule.get("self") is not True:
                    report(
                        f"{name}: an inline {direction} rule reaches {', '.join(peers) or 'no one'} "
                        "instead of the group itself (self: true only)",
                        group.urn,
                    )
        for rule in facts.of_type(resources, SECURITY_GROUP_RULE):
            if not _names_group(rule, "securityGroupId", group):
                continue
            peers = _peers(rule.props, RULE_PEERS)
            itself = facts.get(rule.props, "self") is True or _names_group(
                rule, "sourceSecurityGroupId", group
            )
            if peers or not itself:
                report(
                    f"{name}: its {facts.get(rule.props, 'type') or ''} rule {rule.name!r} reaches "
                    f"{', '.join(peers) or 'another security group'}, not only the group itself",
                    rule.urn,
                )
        for rule in facts.of_type(resources, *VPC_RULES):
            if not _names_group(rule, "securityGroupId", group):
                continue
            peers = _peers(rule.props, VPC_RULE_PEERS)
            if peers or not _names_group(rule, "referencedSecurityGroupId", group):
                kind = "ingress" if rule.resource_type == VPC_RULES[0] else "egress"
                report(
                    f"{name}: its {kind} rule {rule.name!r} reaches "
                    f"{', '.join(peers) or 'another security group'}, not only the group itself",
                    rule.urn,
                )


RULES: list[Rule] = [
    Rule(
        name="master-tls",
        description="The master is reached from outside the cluster only over TLS: a LoadBalancer or "
        "NodePort Service in front of the master pods only when master.yaml has security.tls, and a "
        "Gateway routing to the master has an HTTPS or TLS listener.",
        remediation="set determined:tls.mode to ingress (TLS ends at the Gateway) or master (TLS ends "
        "in the master; needed for determined:master.service.type LoadBalancer or NodePort)",
        dev="advisory",
        prod="mandatory",
        area="exposure",
        stack=master_tls,
        why="Users log in to the master with passwords and tokens: over plain HTTP anyone on the path "
        "reads them.",
    ),
    Rule(
        name="lb-source-ranges",
        description="Every public load balancer (a LoadBalancer Service, or the Service an Envoy Gateway "
        "EnvoyProxy describes) without an internal-load-balancer annotation names "
        "loadBalancerSourceRanges, none of them 0.0.0.0/0.",
        remediation="list the clients' CIDRs in determined:tls.sourceRanges, or make the load balancer "
        "internal with determined:tls.exposure: internal",
        dev="advisory",
        prod="mandatory",
        area="exposure",
        resource=lb_source_ranges,
        why="A public load balancer without source ranges puts the master's login page in front of the "
        "whole internet, scanners and credential stuffing included.",
    ),
    Rule(
        name="control-plane-endpoint-fenced",
        description="The Kubernetes API endpoint is not open to the internet: EKS endpointPublicAccess "
        "(on by default) only with publicAccessCidrs that exclude 0.0.0.0/0; GKE a private endpoint or "
        "master authorized networks that exclude 0.0.0.0/0.",
        remediation="list the CIDRs that may reach the API (include where `pulumi up` runs) in "
        "determined:cluster.endpoint.publicAccessCidrs (eks; or determined:cluster.endpoint.publicAccess: "
        "false) or determined:cluster.authorizedNetworks (gke)",
        dev="advisory",
        prod="mandatory",
        area="exposure",
        resource=control_plane_endpoint_fenced,
        why="An API server open to every address is one leaked token or one API-server CVE away from "
        "the whole cluster; a network fence is the layer that does not depend on credentials.",
    ),
    Rule(
        name="no-plain-http-route",
        description="An HTTPRoute attached to a Gateway listener of protocol HTTP only redirects to https: "
        "every rule has a RequestRedirect filter with scheme https and no backendRefs.",
        remediation="expose the master through determined:tls (mode ingress or master), whose HTTP "
        "listener only redirects to https",
        dev="mandatory",
        prod="mandatory",
        area="exposure",
        stack=no_plain_http_route,
        why="A route serving plain HTTP beside the HTTPS one sends passwords in the clear to anyone "
        "who types the address without https://.",
    ),
    Rule(
        name="efa-security-group-self-only",
        description="The EFA security group of EKS pools with fabric efa (tagged "
        f"{constants.EFA_SECURITY_GROUP_TAG}) allows traffic only to and from itself: every inline, "
        "SecurityGroupRule and VPC ingress/egress rule of it names the group itself and no CIDR, "
        "prefix list or other group.",
        remediation="use determined:nodePools[].fabric efa as the project sets it up (one group, all "
        "traffic within itself); add no rules to the EFA group",
        dev="mandatory",
        prod="mandatory",
        area="exposure",
        stack=efa_security_group_self_only,
        why="EFA needs all traffic between its nodes (EC2 user guide, create-efa); anything more on "
        "that group opens every port of the GPU nodes to whatever it names.",
    ),
]
