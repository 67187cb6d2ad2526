"""Pulumi mocks that answer as the providers do, and record every registration.

`PlanMocks` gives back, per resource type, what the real provider would: the inputs as its
Check returns them (auto-names filled in) and, on create, the outputs it computes. In a
first preview (`preview=True`) only the checked inputs come back, so whatever the provider
computes stays unknown, as in a real first `pulumi preview`. Every type is modelled in
`RESOURCES` (cloud types must be: an unmodelled one stops the plan); `kubernetes:*` and
`pulumi:providers:*` types not in the table get the generic behaviour of their provider.
Provider functions (invokes) are modelled in `INVOKES`; an unknown token stops the plan.

The stock mock monitor hands `Mocks.new_resource` only the inputs; `RecordingMonitor` also
keeps what the engine would see: parent, dependencies, the resource options that protect
data, and where a registered value is still unknown.
"""

from __future__ import annotations

import base64
import hashlib
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pulumi
from google.protobuf import struct_pb2
from pulumi.runtime import config as runtime_config
from pulumi.runtime import mocks as pulumi_mocks
from pulumi.runtime import rpc

from plan.redaction import is_secret, restore_ints

# A fixed time for server-set timestamps, so that plans stay byte-for-byte reproducible.
CREATED_AT = "2025-01-01T00:00:00Z"


class UnmodelledError(Exception):
    """The program uses a resource type or function the mocks do not model."""


def _digest(*parts: str, length: int = 12) -> str:
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()[:length]


def mock_secret(seed: str, length: int = 24) -> str:
    """A generated password: distinctive (the plan's last check looks for it), of the
    requested length (at least 12) and meeting Determined's password rule."""
    return ("MockSecret" + hashlib.sha256(seed.encode()).hexdigest() * 2)[: max(length, 12) - 1] + "0"


# --- recording ---------------------------------------------------------------------------


@dataclass
class Registration:
    urn: str
    type: str
    name: str
    parent: str | None
    custom: bool
    provider: str | None
    inputs: dict[str, Any]
    depends_on: list[str]
    options: dict[str, Any]
    # Paths of values in `inputs` that are unknown (a first preview; never after an apply).
    unknowns: list[str] = field(default_factory=list)
    # Input property -> URNs of the resources its value comes from (for stack policies).
    property_dependencies: dict[str, list[str]] = field(default_factory=dict)
    # The RegisterResourceRequest as the engine gets it: the options it passes to policy packs.
    request: Any = None
    # The resource's outputs in the engine's state: the provider's answer after an apply, what
    # a component registers; None for a custom resource in a first preview (not known yet).
    outputs: dict[str, Any] | None = None


@dataclass
class Recorder:
    resources: list[Registration] = field(default_factory=list)
    stack_outputs: dict[str, Any] = field(default_factory=dict)
    stack_output_unknowns: list[str] = field(default_factory=list)
    # Secret values the mocks generated (random passwords, their hashes): the plan's last
    # check makes sure none of them reaches an output.
    generated_secrets: set[str] = field(default_factory=set)
    # What the program returned (the Determined component), for what it exposes to previews.
    deployment: Any = None
    # Registered inputs by URN: a resource's provider settings (region, project) for the mocks.
    inputs_by_urn: dict[str, dict[str, Any]] = field(default_factory=dict)
    # master.yaml as the program previews it (secrets as placeholders).
    master_yaml: str | None = None
    # What the mocks answered for each resource, by (type, name): the computed outputs
    # tests compare with what the program did with them.
    outputs: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)
    # Existing resources the program reads (`Resource.get`): (type, ID).
    reads: list[tuple[str, str]] = field(default_factory=list)


def unknown_paths(value: struct_pb2.Struct | struct_pb2.Value, path: str = "") -> list[str]:
    """Where the RPC unknown sentinel is in a serialized value, secrets included."""
    if isinstance(value, struct_pb2.Struct):
        if value.fields.get(rpc._special_sig_key) == struct_pb2.Value(string_value=rpc._special_secret_sig):
            inner = value.fields.get("value")
            return unknown_paths(inner, path) if inner is not None else []
        found: list[str] = []
        for key, item in value.fields.items():
            found += unknown_paths(item, f"{path}.{key}" if path else key)
        return found
    kind = value.WhichOneof("kind")
    if kind == "string_value":
        return [path or "(value)"] if value.string_value == rpc.UNKNOWN else []
    if kind == "struct_value":
        return unknown_paths(value.struct_value, path)
    if kind == "list_value":
        found = []
        for index, item in enumerate(value.list_value.values):
            found += unknown_paths(item, f"{path}[{index}]")
        return found
    return []


# --- how providers answer ----------------------------------------------------------------


@dataclass(frozen=True)
class Request:
    """What a resource model sees of one registration."""

    type: str
    name: str
    inputs: dict[str, Any]
    # Inputs of the explicit provider the resource goes through ({} for a default provider).
    provider: dict[str, Any]

    def setting(self, key: str, package: str, default: str) -> str:
        """A provider setting: the resource's own input, its provider's, the stack config's."""
        for source in (self.inputs, self.provider):
            value = source.get(key)
            if isinstance(value, str) and value:
                return value
        configured = runtime_config.get_config(f"{package}:{key}")
        return configured if isinstance(configured, str) and configured else default

    @property
    def seed(self) -> str:
        return f"{self.type}::{self.name}"


def _no_outputs(_: Request) -> dict[str, Any]:
    return {}


def _name_id(req: Request) -> str:
    return f"{req.name}-{_digest(req.seed, length=8)}"


@dataclass(frozen=True)
class ResourceModel:
    """How a provider answers for one resource type.

    `autoname`: the input (a dotted path) the provider names itself when it is absent (`<name>-<7 hex>`,
    as Pulumi's auto-naming does; known in a preview, since Check does it). `create`: the
    outputs the provider computes on create, merged over the inputs (unknown in a first
    preview). `ident`: the resource's ID (unknown in a first preview).
    """

    create: Callable[[Request], dict[str, Any]] = _no_outputs
    autoname: str | None = None
    ident: Callable[[Request], str] = _name_id


def _merge(base: Any, extra: Any) -> Any:
    if isinstance(base, dict) and isinstance(extra, dict) and not is_secret(base):
        merged = dict(base)
        for key, value in extra.items():
            merged[key] = _merge(base[key], value) if key in base else value
        return merged
    return extra


def _checked(req: Request, model: ResourceModel) -> dict[str, Any]:
    """The inputs as the provider's Check returns them: auto-named where a name is missing."""
    if not model.autoname:
        return dict(req.inputs)
    *parents, key = model.autoname.split(".")
    name = f"{req.name}-{_digest(req.seed, length=7)}".lower()
    outer = inputs = dict(req.inputs)
    for part in parents:
        inner = outer.get(part)
        if is_secret(inner) or (inner is not None and not isinstance(inner, dict)):
            return inputs  # a secret or an unknown holds the name: leave it to the provider
        outer[part] = outer = dict(inner or {})
    if not outer.get(key):
        outer[key] = name
    return inputs


# --- kubernetes --------------------------------------------------------------------------


def _kind(req: Request) -> str:
    return req.type.rsplit(":", 1)[-1]


def _meta(req: Request) -> dict[str, Any]:
    meta = req.inputs.get("metadata")
    return meta if isinstance(meta, dict) and not is_secret(meta) else {}


def _replicas(req: Request) -> int:
    spec = req.inputs.get("spec")
    replicas = spec.get("replicas", 1) if isinstance(spec, dict) else 1
    return int(replicas) if isinstance(replicas, (int, float)) else 1


def _workload_status(req: Request) -> dict[str, Any]:
    n = _replicas(req)
    status = {"observedGeneration": 1, "replicas": n, "readyReplicas": n, "updatedReplicas": n}
    status["availableReplicas"] = n
    if _kind(req) == "StatefulSet":
        status |= {"currentReplicas": n, "currentRevision": f"{_meta(req).get('name', req.name)}-1"}
    return {"status": status}


def _ip(seed: str, prefix: tuple[int, int]) -> str:
    digest = hashlib.sha256(seed.encode()).digest()
    return f"{prefix[0]}.{prefix[1]}.{digest[0]}.{max(digest[1], 1)}"


def _service(req: Request) -> dict[str, Any]:
    spec = req.inputs.get("spec") if isinstance(req.inputs.get("spec"), dict) else {}
    kind = spec.get("type", "ClusterIP")
    computed_spec: dict[str, Any] = {}
    if kind != "ExternalName" and spec.get("clusterIP") != "None":
        ip = spec.get("clusterIP") or _ip(req.seed, (10, 96))
        computed_spec |= {"clusterIP": ip, "clusterIPs": [ip], "ipFamilies": ["IPv4"]}
    status: dict[str, Any] = {"loadBalancer": {}}
    if kind in ("NodePort", "LoadBalancer") and isinstance(spec.get("ports"), list):
        computed_spec["ports"] = [
            {**port, "nodePort": port.get("nodePort") or 30000 + int(_digest(req.seed, str(i)), 16) % 2768}
            for i, port in enumerate(spec["ports"])
            if isinstance(port, dict)
        ]
    if kind == "LoadBalancer":
        status["loadBalancer"] = {"ingress": [{"ip": _ip(req.seed, (203, 0)), "ipMode": "VIP"}]}
    return {"spec": computed_spec, "status": status}


def _claim(req: Request) -> dict[str, Any]:
    spec = req.inputs.get("spec") if isinstance(req.inputs.get("spec"), dict) else {}
    requests = (
        spec.get("resources", {}).get("requests", {}) if isinstance(spec.get("resources"), dict) else {}
    )
    return {
        "spec": {"volumeName": f"pvc-{_uid(req)}"},
        "status": {
            "phase": "Bound",
            "accessModes": spec.get("accessModes", []),
            "capacity": {"storage": requests.get("storage", "1Gi")},
        },
    }


def _quota(req: Request) -> dict[str, Any]:
    spec = req.inputs.get("spec") if isinstance(req.inputs.get("spec"), dict) else {}
    hard = spec.get("hard", {}) if isinstance(spec.get("hard"), dict) else {}
    return {"status": {"hard": hard, "used": dict.fromkeys(hard, "0")}}


# What the API server adds per kind that the program might read (status, assigned fields).
KUBERNETES_KINDS: dict[str, Callable[[Request], dict[str, Any]]] = {
    "Namespace": lambda req: {"spec": {"finalizers": ["kubernetes"]}, "status": {"phase": "Active"}},
    "Service": _service,
    "Deployment": _workload_status,
    "StatefulSet": _workload_status,
    "PersistentVolumeClaim": _claim,
    "ResourceQuota": _quota,
}


def _uid(req: Request) -> str:
    return str(uuid.uuid5(uuid.NAMESPACE_URL, req.seed))


def _kubernetes_create(req: Request) -> dict[str, Any]:
    server_meta = {
        "uid": _uid(req),
        "resourceVersion": "1",
        "creationTimestamp": CREATED_AT,
        "generation": 1,
    }
    return _merge({"metadata": server_meta}, KUBERNETES_KINDS.get(_kind(req), _no_outputs)(req))


def _kubernetes_id(req: Request) -> str:
    meta = _meta(req)
    name = meta.get("name") or req.name
    return f"{meta['namespace']}/{name}" if meta.get("namespace") else str(name)


KUBERNETES = ResourceModel(create=_kubernetes_create, autoname="metadata.name", ident=_kubernetes_id)


def _helm_release(req: Request) -> dict[str, Any]:
    chart = req.inputs.get("chart", "")
    name = req.inputs.get("name") or req.name
    return {
        "status": {
            "name": name,
            "namespace": req.inputs.get("namespace", "default"),
            "chart": str(chart).rsplit("/", 1)[-1],
            "version": req.inputs.get("version", ""),
            "appVersion": req.inputs.get("version", ""),
            "revision": 1,
            "status": "deployed",
        }
    }


# --- other providers ---------------------------------------------------------------------

PROVIDER = ResourceModel(ident=lambda req: str(uuid.uuid5(uuid.NAMESPACE_URL, req.seed)))


def _random_password(req: Request) -> dict[str, Any]:
    length = req.inputs.get("length", 24)
    value = mock_secret(req.seed, int(length) if isinstance(length, (int, float)) else 24)
    salt = base64.b64encode(hashlib.sha256(value.encode()).digest()).decode()
    bcrypt = "$2a$10$" + (salt.replace("+", ".").replace("=", "") * 2)[:53]
    return {"result": value, "bcryptHash": bcrypt}


def _random_id(req: Request) -> dict[str, Any]:
    length = req.inputs.get("byteLength", 8)
    raw = hashlib.sha256(req.seed.encode()).digest()[: int(length) if isinstance(length, (int, float)) else 8]
    url = base64.urlsafe_b64encode(raw).decode().rstrip("=")
    return {
        "hex": raw.hex(),
        "dec": str(int.from_bytes(raw, "big")),
        "b64Std": base64.b64encode(raw).decode(),
        "b64Url": url,
    }


def _pem(seed: str) -> str:
    body = base64.b64encode(hashlib.sha256(seed.encode()).digest() * 3).decode()
    return base64.b64encode(
        f"-----BEGIN CERTIFICATE-----\n{body}\n-----END CERTIFICATE-----\n".encode()
    ).decode()


def _gcp_project(req: Request) -> str:
    return req.setting("project", "gcp", "plan-project")


def _gcp_region(req: Request) -> str:
    return req.setting("region", "gcp", "us-central1")


def _aws_region(req: Request) -> str:
    return req.setting("region", "aws", "us-east-1")


AWS_ACCOUNT = "123456789012"  # the account number AWS documentation uses


def _gke_cluster(req: Request) -> dict[str, Any]:
    name = req.inputs["name"]
    location = req.inputs.get("location") or _gcp_region(req)
    labels = req.inputs.get("resourceLabels", {})
    return {
        "endpoint": _ip(req.seed, (34, 118)),
        "masterAuth": {
            "clusterCaCertificate": _pem(req.seed),
            "clientCertificate": "",
            "clientKey": "",
            "clientCertificateConfig": {"issueClientCertificate": False},
        },
        "masterVersion": req.inputs.get("minMasterVersion") or "1.33.5-gke.1000000",
        "selfLink": f"https://container.googleapis.com/v1/projects/{_gcp_project(req)}/locations/"
        f"{location}/clusters/{name}",
        "labelFingerprint": _digest(req.seed, length=8),
        "effectiveLabels": labels,
        "pulumiLabels": labels,
        "operation": "",
    }


def _gke_node_pool(req: Request) -> dict[str, Any]:
    zone = f"{_gcp_region(req)}-a"
    group = f"gke-{req.inputs['name']}-{_digest(req.seed, length=8)}-grp"
    base = f"https://www.googleapis.com/compute/v1/projects/{_gcp_project(req)}/zones/{zone}"
    return {
        "instanceGroupUrls": [f"{base}/instanceGroupManagers/{group}"],
        "managedInstanceGroupUrls": [f"{base}/instanceGroups/{group}"],
        "operation": "",
    }


def _gcs_bucket(req: Request) -> dict[str, Any]:
    name = req.inputs["name"]
    labels = req.inputs.get("labels", {})
    return {
        "url": f"gs://{name}",
        "selfLink": f"https://www.googleapis.com/storage/v1/b/{name}",
        "projectNumber": 123456789012,
        "timeCreated": CREATED_AT,
        "updated": CREATED_AT,
        "effectiveLabels": labels,
        "pulumiLabels": labels,
    }


def _cloud_sql(req: Request) -> dict[str, Any]:
    name, project = req.inputs["name"], _gcp_project(req)
    region = req.inputs.get("region") or _gcp_region(req)
    private_ip = _ip(req.seed, (10, 20))
    return {
        "connectionName": f"{project}:{region}:{name}",
        "privateIpAddress": private_ip,
        "firstIpAddress": private_ip,
        "ipAddresses": [{"ipAddress": private_ip, "type": "PRIVATE", "timeToRetire": ""}],
        "publicIpAddress": "",
        "selfLink": f"https://sqladmin.googleapis.com/sql/v1beta4/projects/{project}/instances/{name}",
        "serviceAccountEmailAddress": f"p123456789012-{_digest(req.seed, length=6)}"
        "@gcp-sa-cloud-sql.iam.gserviceaccount.com",
        "serverCaCerts": [
            {
                "cert": _pem(req.seed),
                "commonName": f"C={name}",
                "sha1Fingerprint": _digest(req.seed, length=40),
            }
        ],
        "dnsName": "",
    }


def _gcp_service_account(req: Request) -> dict[str, Any]:
    project = _gcp_project(req)
    email = f"{req.inputs.get('accountId', req.name)}@{project}.iam.gserviceaccount.com"
    return {
        "email": email,
        "member": f"serviceAccount:{email}",
        "name": f"projects/{project}/serviceAccounts/{email}",
        "uniqueId": str(int(_digest(req.seed, length=15), 16)),
    }


def _gcp_link(req: Request, path: str) -> str:
    return f"https://www.googleapis.com/compute/v1/projects/{_gcp_project(req)}/{path}"


def _network(req: Request) -> dict[str, Any]:
    return {
        "selfLink": _gcp_link(req, f"global/networks/{req.inputs['name']}"),
        "gatewayIpv4": "",
        "numericId": str(int(_digest(req.seed, length=15), 16)),
    }


def _subnetwork(req: Request) -> dict[str, Any]:
    region = req.inputs.get("region") or _gcp_region(req)
    cidr = req.inputs.get("ipCidrRange", "10.0.0.0/20")
    gateway = cidr.split("/")[0].rsplit(".", 1)[0] + ".1" if isinstance(cidr, str) else ""
    return {
        "selfLink": _gcp_link(req, f"regions/{region}/subnetworks/{req.inputs['name']}"),
        "gatewayAddress": gateway,
        "fingerprint": _digest(req.seed, length=12),
        "creationTimestamp": CREATED_AT,
    }


def _router(req: Request) -> dict[str, Any]:
    region = req.inputs.get("region") or _gcp_region(req)
    return {
        "selfLink": _gcp_link(req, f"regions/{region}/routers/{req.inputs['name']}"),
        "creationTimestamp": CREATED_AT,
    }


def _global_address(req: Request) -> dict[str, Any]:
    return {
        "address": "10.100.0.0",
        "selfLink": _gcp_link(req, f"global/addresses/{req.inputs['name']}"),
        "creationTimestamp": CREATED_AT,
    }


def _gcp_iam_member(req: Request) -> dict[str, Any]:
    return {"etag": f"BwY{_digest(req.seed, length=9)}="}


def _gcp_ident(*keys: str) -> Callable[[Request], str]:
    """An ID made of inputs, as the provider composes it (`<a>/<b>/...`)."""

    def ident(req: Request) -> str:
        return "/".join(str(req.inputs.get(key, "")) for key in keys)

    return ident


def _gcp_path(template: str) -> Callable[[Request], str]:
    """A resource ID as Google's provider forms it, e.g. projects/{project}/global/networks/{name}."""

    def ident(req: Request) -> str:
        location = req.inputs.get("location") or req.inputs.get("region") or _gcp_region(req)
        return template.format(
            project=_gcp_project(req), location=location, name=req.inputs.get("name", req.name)
        )

    return ident


def _eks_cluster(req: Request) -> dict[str, Any]:
    name, region = req.inputs["name"], _aws_region(req)
    cluster_id = _digest(req.seed, length=32).upper()
    return {
        "arn": f"arn:aws:eks:{region}:{AWS_ACCOUNT}:cluster/{name}",
        "certificateAuthority": {"data": _pem(req.seed)},
        "clusterId": str(uuid.uuid5(uuid.NAMESPACE_URL, req.seed)),
        "createdAt": CREATED_AT,
        "endpoint": f"https://{cluster_id}.gr7.{region}.eks.amazonaws.com",
        "identities": [{"oidcs": [{"issuer": f"https://oidc.eks.{region}.amazonaws.com/id/{cluster_id}"}]}],
        "vpcConfig": {
            **(req.inputs.get("vpcConfig") or {}),
            "clusterSecurityGroupId": f"sg-{_digest(req.seed, 'cluster', length=17)}",
            "vpcId": f"vpc-{_digest(req.seed, 'vpc', length=17)}",
        },
        "platformVersion": "eks.1",
        "status": "ACTIVE",
        "version": req.inputs.get("version") or "1.33",
        "tagsAll": req.inputs.get("tags", {}),
    }


def _aws_id(prefix: str, length: int = 17) -> Callable[[Request], str]:
    """An EC2-style ID: `<prefix>-<hex>`."""
    return lambda req: f"{prefix}-{_digest(req.seed, length=length)}"


def _aws_arn(service: str, path: str) -> Callable[[Request], dict[str, Any]]:
    """Outputs holding an ARN whose resource part is `path` with `{id}` (the resource's ID)."""

    def create(req: Request) -> dict[str, Any]:
        region = _aws_region(req)
        ident = RESOURCES[req.type].ident(req)
        location = "" if service in ("iam", "s3") else region
        return {
            "arn": f"arn:aws:{service}:{location}:{AWS_ACCOUNT}:{path.format(id=ident)}",
            "tagsAll": req.inputs.get("tags", {}),
        }

    return create


def _kms_key(req: Request) -> dict[str, Any]:
    key_id = str(uuid.uuid5(uuid.NAMESPACE_URL, req.seed))
    return {
        "arn": f"arn:aws:kms:{_aws_region(req)}:{AWS_ACCOUNT}:key/{key_id}",
        "keyId": key_id,
        "tagsAll": {},
    }


def _eip(req: Request) -> dict[str, Any]:
    return {"allocationId": _aws_id("eipalloc")(req), "publicIp": _ip(req.seed, (52, 0)), "tagsAll": {}}


def _nat_gateway(req: Request) -> dict[str, Any]:
    return {"publicIp": _ip(req.seed, (52, 1)), "privateIp": _ip(req.seed, (10, 0)), "tagsAll": {}}


def _eks_node_group(req: Request) -> dict[str, Any]:
    name, region = req.inputs["nodeGroupName"], _aws_region(req)
    cluster = req.inputs.get("clusterName", "cluster")
    return {
        "arn": f"arn:aws:eks:{region}:{AWS_ACCOUNT}:nodegroup/{cluster}/{name}/{_uid(req)}",
        "status": "ACTIVE",
        "resources": [
            {"autoscalingGroups": [{"name": f"eks-{name}-{_uid(req)}"}], "remoteAccessSecurityGroupId": ""}
        ],
        "tagsAll": req.inputs.get("tags", {}),
    }


def _s3_bucket(req: Request) -> dict[str, Any]:
    bucket, region = req.inputs["bucket"], _aws_region(req)
    return {
        "arn": f"arn:aws:s3:::{bucket}",
        "bucketDomainName": f"{bucket}.s3.amazonaws.com",
        "bucketRegionalDomainName": f"{bucket}.s3.{region}.amazonaws.com",
        "bucketRegion": region,
        "region": region,
        "hostedZoneId": "Z3AQBSTGFYJSTF",
        "tagsAll": req.inputs.get("tags", {}),
    }


def _rds_instance(req: Request) -> dict[str, Any]:
    identifier, region = req.inputs["identifier"], _aws_region(req)
    port = req.inputs.get("port") or 5432
    address = f"{identifier}.c{_digest(req.seed, length=11)}.{region}.rds.amazonaws.com"
    return {
        "address": address,
        "endpoint": f"{address}:{port}",
        "port": port,
        "arn": f"arn:aws:rds:{region}:{AWS_ACCOUNT}:db:{identifier}",
        "hostedZoneId": "Z2R2ITUGPM61AM",
        "resourceId": f"db-{_digest(req.seed, length=26).upper()}",
        "status": "available",
        "engineVersionActual": req.inputs.get("engineVersion", ""),
        "listenerEndpoints": [],
        "tagsAll": req.inputs.get("tags", {}),
    }


def _iam_role(req: Request) -> dict[str, Any]:
    return {
        "arn": f"arn:aws:iam::{AWS_ACCOUNT}:role/{req.inputs['name']}",
        "uniqueId": f"AROA{_digest(req.seed, length=17).upper()}",
        "createDate": CREATED_AT,
        "tagsAll": req.inputs.get("tags", {}),
    }


# Resource types by token. Output names are the providers' (see the SDKs' output-only
# properties); only what a program could read is modelled.
RESOURCES: dict[str, ResourceModel] = {
    "random:index/randomPassword:RandomPassword": ResourceModel(
        create=_random_password, ident=lambda _: "none"
    ),
    "random:index/randomId:RandomId": ResourceModel(
        create=_random_id, ident=lambda req: _random_id(req)["b64Url"]
    ),
    "kubernetes:helm.sh/v3:Release": ResourceModel(create=_helm_release, autoname="name"),
    "gcp:container/cluster:Cluster": ResourceModel(
        create=_gke_cluster,
        autoname="name",
        ident=_gcp_path("projects/{project}/locations/{location}/clusters/{name}"),
    ),
    "gcp:container/nodePool:NodePool": ResourceModel(
        create=_gke_node_pool,
        autoname="name",
        ident=lambda req: f"{req.inputs.get('cluster')}/nodePools/{req.inputs.get('name', req.name)}",
    ),
    "gcp:storage/bucket:Bucket": ResourceModel(create=_gcs_bucket, autoname="name"),
    "gcp:sql/databaseInstance:DatabaseInstance": ResourceModel(create=_cloud_sql, autoname="name"),
    "gcp:serviceaccount/account:Account": ResourceModel(create=_gcp_service_account),
    "gcp:compute/network:Network": ResourceModel(
        create=_network, autoname="name", ident=_gcp_path("projects/{project}/global/networks/{name}")
    ),
    "gcp:compute/subnetwork:Subnetwork": ResourceModel(
        create=_subnetwork,
        autoname="name",
        ident=_gcp_path("projects/{project}/regions/{location}/subnetworks/{name}"),
    ),
    "gcp:compute/router:Router": ResourceModel(
        create=_router,
        autoname="name",
        ident=_gcp_path("projects/{project}/regions/{location}/routers/{name}"),
    ),
    "gcp:compute/routerNat:RouterNat": ResourceModel(
        autoname="name", ident=_gcp_ident("region", "router", "name")
    ),
    "gcp:compute/firewall:Firewall": ResourceModel(
        create=lambda req: {
            "selfLink": _gcp_link(req, f"global/firewalls/{req.inputs['name']}"),
            "creationTimestamp": CREATED_AT,
        },
        autoname="name",
        ident=_gcp_path("projects/{project}/global/firewalls/{name}"),
    ),
    "gcp:compute/globalAddress:GlobalAddress": ResourceModel(
        create=_global_address, autoname="name", ident=_gcp_path("projects/{project}/global/addresses/{name}")
    ),
    "gcp:servicenetworking/connection:Connection": ResourceModel(
        create=lambda req: {"peering": "servicenetworking-googleapis-com"},
        ident=_gcp_ident("network", "service"),
    ),
    "gcp:projects/iAMMember:IAMMember": ResourceModel(create=_gcp_iam_member),
    "gcp:serviceaccount/iAMMember:IAMMember": ResourceModel(create=_gcp_iam_member),
    "gcp:storage/bucketIAMMember:BucketIAMMember": ResourceModel(create=_gcp_iam_member),
    "gcp:sql/database:Database": ResourceModel(
        create=lambda req: {"charset": "UTF8", "collation": "en_US.UTF8"}, autoname="name"
    ),
    "gcp:sql/user:User": ResourceModel(create=lambda req: {"sqlServerUserDetails": []}),
    "aws:eks/cluster:Cluster": ResourceModel(create=_eks_cluster, autoname="name"),
    "aws:eks/nodeGroup:NodeGroup": ResourceModel(create=_eks_node_group, autoname="nodeGroupName"),
    # The provider's ID of a bucket is its name (what BucketPolicy & co. take as `bucket`).
    "aws:s3/bucketV2:BucketV2": ResourceModel(
        create=_s3_bucket, autoname="bucket", ident=lambda req: req.inputs["bucket"]
    ),
    "aws:s3/bucket:Bucket": ResourceModel(
        create=_s3_bucket, autoname="bucket", ident=lambda req: req.inputs["bucket"]
    ),
    "aws:rds/instance:Instance": ResourceModel(create=_rds_instance, autoname="identifier"),
    "aws:iam/role:Role": ResourceModel(
        create=_iam_role, autoname="name", ident=lambda req: req.inputs["name"]
    ),
    "aws:iam/rolePolicyAttachment:RolePolicyAttachment": ResourceModel(),
    "aws:iam/rolePolicy:RolePolicy": ResourceModel(create=lambda req: {"name": req.name}),
    "aws:kms/key:Key": ResourceModel(
        create=_kms_key, ident=lambda req: str(uuid.uuid5(uuid.NAMESPACE_URL, req.seed))
    ),
    "aws:ec2/vpc:Vpc": ResourceModel(
        create=lambda req: {
            **_aws_arn("ec2", "vpc/{id}")(req),
            "defaultSecurityGroupId": _aws_id("sg")(req),
            "mainRouteTableId": _aws_id("rtb")(req),
            "ownerId": AWS_ACCOUNT,
        },
        ident=_aws_id("vpc"),
    ),
    "aws:ec2/subnet:Subnet": ResourceModel(create=_aws_arn("ec2", "subnet/{id}"), ident=_aws_id("subnet")),
    "aws:ec2/internetGateway:InternetGateway": ResourceModel(
        create=_aws_arn("ec2", "internet-gateway/{id}"), ident=_aws_id("igw")
    ),
    "aws:ec2/eip:Eip": ResourceModel(create=_eip, ident=_aws_id("eipalloc")),
    "aws:ec2/natGateway:NatGateway": ResourceModel(create=_nat_gateway, ident=_aws_id("nat")),
    "aws:ec2/routeTable:RouteTable": ResourceModel(
        create=_aws_arn("ec2", "route-table/{id}"), ident=_aws_id("rtb")
    ),
    "aws:ec2/routeTableAssociation:RouteTableAssociation": ResourceModel(ident=_aws_id("rtbassoc")),
    "aws:ec2/securityGroup:SecurityGroup": ResourceModel(
        create=lambda req: {**_aws_arn("ec2", "security-group/{id}")(req), "ownerId": AWS_ACCOUNT},
        autoname="name",
        ident=_aws_id("sg"),
    ),
    "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule": ResourceModel(
        create=lambda req: {
            **_aws_arn("ec2", "security-group-rule/{id}")(req),
            "securityGroupRuleId": _aws_id("sgr")(req),
        },
        ident=_aws_id("sgr"),
    ),
    "aws:eks/accessEntry:AccessEntry": ResourceModel(
        create=lambda req: {
            "accessEntryArn": f"arn:aws:eks:{_aws_region(req)}:{AWS_ACCOUNT}:access-entry/{_uid(req)}",
            "createdAt": CREATED_AT,
            "modifiedAt": CREATED_AT,
            "kubernetesGroups": [],
            "userName": str(req.inputs.get("principalArn", "")),
        }
    ),
    "aws:eks/accessPolicyAssociation:AccessPolicyAssociation": ResourceModel(
        create=lambda req: {"associatedAt": CREATED_AT, "modifiedAt": CREATED_AT}
    ),
    "aws:eks/addon:Addon": ResourceModel(
        create=lambda req: {
            "arn": f"arn:aws:eks:{_aws_region(req)}:{AWS_ACCOUNT}:addon/"
            f"{req.inputs.get('addonName')}/{_uid(req)}",
            "addonVersion": "v1.0.0-eksbuild.1",
            "createdAt": CREATED_AT,
            "modifiedAt": CREATED_AT,
        }
    ),
    "aws:eks/podIdentityAssociation:PodIdentityAssociation": ResourceModel(
        create=lambda req: {
            "associationArn": f"arn:aws:eks:{_aws_region(req)}:{AWS_ACCOUNT}:podidentityassociation/"
            f"{_uid(req)}",
            "associationId": f"a-{_digest(req.seed, length=17)}",
        }
    ),
    "aws:autoscaling/tag:Tag": ResourceModel(),
    "aws:s3/bucketPublicAccessBlock:BucketPublicAccessBlock": ResourceModel(),
    "aws:s3/bucketOwnershipControls:BucketOwnershipControls": ResourceModel(),
    "aws:s3/bucketServerSideEncryptionConfiguration:BucketServerSideEncryptionConfiguration": ResourceModel(),
    "aws:s3/bucketPolicy:BucketPolicy": ResourceModel(),
    "aws:s3/bucketVersioning:BucketVersioning": ResourceModel(),
    "aws:s3/bucketLifecycleConfiguration:BucketLifecycleConfiguration": ResourceModel(),
    "aws:rds/subnetGroup:SubnetGroup": ResourceModel(
        create=_aws_arn("rds", "subgrp:{id}"), autoname="name", ident=lambda req: req.inputs["name"]
    ),
    "aws:rds/parameterGroup:ParameterGroup": ResourceModel(
        create=_aws_arn("rds", "pg:{id}"), autoname="name", ident=lambda req: req.inputs["name"]
    ),
}


def model_for(type_: str) -> ResourceModel:
    if type_ in RESOURCES:
        return RESOURCES[type_]
    if type_.startswith("kubernetes:"):
        return KUBERNETES
    if type_.startswith("pulumi:providers:"):
        return PROVIDER
    raise UnmodelledError(f"the plan's mocks do not model resource type {type_} (add it to plan/mocks.py)")


# --- provider functions (invokes) --------------------------------------------------------


def _aws_offerings(req: Request) -> dict[str, Any]:
    region = _aws_region(req)
    # Every zone a config may name (a-f): the plan never refuses a zone EC2 may offer.
    locations = [f"{region}{letter}" for letter in "abcdef"]
    types = [f["values"][0] for f in req.inputs.get("filters", []) if f.get("name") == "instance-type"]
    return {
        "id": region,
        "locations": locations,
        "locationTypes": ["availability-zone"] * len(locations),
        "instanceTypes": types * len(locations) if types else [],
        "locationType": req.inputs.get("locationType"),
        "filters": req.inputs.get("filters", []),
    }


def _aws_subnet(req: Request) -> dict[str, Any]:
    region = _aws_region(req)
    subnet = req.inputs.get("id", "")
    # Existing subnets: a zone per subnet, stable, spread as a VPC's subnets are.
    letter = "abc"[int(hashlib.sha256(subnet.encode()).hexdigest(), 16) % 3]
    return {"id": subnet, "availabilityZone": f"{region}{letter}", "availabilityZoneId": f"{region}-az1"}


def _aws_zones(req: Request) -> dict[str, Any]:
    region = _aws_region(req)
    names = [f"{region}{letter}" for letter in "abc"]
    return {
        "id": region,
        "names": names,
        "zoneIds": [f"{region}-az{i}" for i in (1, 2, 3)],
        "groupNames": [region],
        "state": req.inputs.get("state"),
        "region": region,
    }


def _aws_region_info(req: Request) -> dict[str, Any]:
    region = _aws_region(req)
    return {
        "id": region,
        "name": region,
        "region": region,
        "endpoint": f"ec2.{region}.amazonaws.com",
        "description": region,
    }


def _eks_addon_version(req: Request) -> dict[str, Any]:
    """An add-on version of EKS's form (v<major.minor.patch>-eksbuild.<n>), one per add-on and
    Kubernetes minor: the plan shows that each add-on follows the cluster's version."""
    addon, kubernetes = str(req.inputs.get("addonName", "")), str(req.inputs.get("kubernetesVersion", ""))
    minor = kubernetes.split(".")[1] if kubernetes.count(".") == 1 else "0"
    patch = int(_digest(addon, length=2), 16) % 10
    return {
        "id": addon,
        "addonName": addon,
        "kubernetesVersion": kubernetes,
        "mostRecent": bool(req.inputs.get("mostRecent", False)),
        "region": _aws_region(req),
        "version": f"v1.{minor}.{patch}-eksbuild.1",
    }


def _gcp_client_config(req: Request) -> dict[str, Any]:
    region = _gcp_region(req)
    return {
        "id": f"projects/{_gcp_project(req)}/regions/{region}/zones/{region}-a",
        "project": _gcp_project(req),
        "region": region,
        "zone": f"{region}-a",
        "accessToken": "plan-offline-access-token",
        "defaultLabels": {},
    }


def _gcp_project_info(req: Request) -> dict[str, Any]:
    project = req.inputs.get("projectId") or _gcp_project(req)
    return {
        "id": f"projects/{project}",
        "projectId": project,
        "name": project,
        "number": "123456789012",
        "orgId": "",
        "folderId": "",
        "labels": {},
        "effectiveLabels": {},
        "pulumiLabels": {},
        "autoCreateNetwork": True,
    }


INVOKES: dict[str, Callable[[Request], dict[str, Any]]] = {
    "aws:index/getCallerIdentity:getCallerIdentity": lambda req: {
        "id": AWS_ACCOUNT,
        "accountId": AWS_ACCOUNT,
        "arn": f"arn:aws:iam::{AWS_ACCOUNT}:user/offline-plan",
        "userId": "AIDAOFFLINEPLAN000000",
    },
    "aws:index/getAvailabilityZones:getAvailabilityZones": _aws_zones,
    # Offline, every type is offered in every zone the mocks know and each existing subnet
    # is in one of them: the real answers come from EC2 at `pulumi up`.
    "aws:ec2/getInstanceTypeOfferings:getInstanceTypeOfferings": _aws_offerings,
    "aws:ec2/getSubnet:getSubnet": _aws_subnet,
    "aws:index/getRegion:getRegion": _aws_region_info,
    "aws:eks/getAddonVersion:getAddonVersion": _eks_addon_version,
    "aws:iam/getSessionContext:getSessionContext": lambda req: {
        "id": req.inputs.get("arn", ""),
        "arn": req.inputs.get("arn", ""),
        "issuerArn": req.inputs.get("arn", ""),
        "issuerId": "AROAOFFLINEPLAN000000",
        "issuerName": "offline-plan",
        "sessionName": "",
    },
    "gcp:organizations/getClientConfig:getClientConfig": _gcp_client_config,
    "gcp:organizations/getProject:getProject": _gcp_project_info,
    # The stack's own outputs from its last update: the plan is of a stack never deployed.
    "pulumi:pulumi:readStackOutputs": lambda req: {
        "name": req.inputs.get("name", ""),
        "outputs": {},
        "secretOutputNames": [],
    },
}


# --- the mocks ---------------------------------------------------------------------------


class PlanMocks(pulumi.runtime.Mocks):
    """The providers' answers: checked inputs, plus computed outputs unless previewing."""

    def __init__(self, recorder: Recorder, preview: bool = False):
        self.recorder = recorder
        self.preview = preview

    def _provider_inputs(self, provider: str | None) -> dict[str, Any]:
        # A provider reference is "<urn>::<id>".
        if not provider:
            return {}
        return self.recorder.inputs_by_urn.get(provider.rsplit("::", 1)[0], {})

    def new_resource(self, args: pulumi.runtime.MockResourceArgs) -> tuple[str, dict]:
        if args.custom is False:
            return "", {}  # a component: its outputs are what it registers itself
        model = model_for(args.typ)
        req = Request(args.typ, args.name, dict(args.inputs), self._provider_inputs(args.provider))
        checked = _checked(req, model)
        # A read (`Resource.get`) finds a resource that exists: everything is known.
        reading = args.custom is None and bool(args.resource_id)
        if reading:
            self.recorder.reads.append((args.typ, args.resource_id))
        if self.preview and not reading:
            return "", checked
        req = Request(req.type, req.name, checked, req.provider)
        outputs = _merge(checked, model.create(req))
        self.recorder.outputs[(args.typ, args.name)] = outputs
        if args.typ == "random:index/randomPassword:RandomPassword":
            self.recorder.generated_secrets |= {outputs["result"], outputs["bcryptHash"]}
        return args.resource_id or model.ident(req), outputs

    def call(self, args: pulumi.runtime.MockCallArgs) -> dict:
        try:
            answer = INVOKES[args.token]
        except KeyError:
            raise UnmodelledError(
                f"the plan's mocks do not model function {args.token} (add it to plan/mocks.py)"
            ) from None
        return answer(Request(args.token, "", dict(args.args), self._provider_inputs(args.provider)))


class RecordingMonitor(pulumi_mocks.MockMonitor):
    def __init__(self, mocks: PlanMocks, recorder: Recorder):
        super().__init__(mocks)
        self.recorder = recorder

    def RegisterResource(self, request):
        response = super().RegisterResource(request)
        if request.type == "pulumi:pulumi:Stack":
            return response
        options: dict[str, Any] = {}
        if request.HasField("protect") and request.protect:
            options["protect"] = True
        if request.HasField("retainOnDelete") and request.retainOnDelete:
            options["retainOnDelete"] = True
        if request.ignoreChanges:
            options["ignoreChanges"] = list(request.ignoreChanges)
        if request.deleteBeforeReplace:
            options["deleteBeforeReplace"] = True
        inputs = restore_ints(rpc.deserialize_properties(request.object, keep_unknowns=True))
        self.recorder.inputs_by_urn[response.urn] = inputs
        self.recorder.resources.append(
            Registration(
                urn=response.urn,
                type=request.type,
                name=request.name,
                parent=request.parent or None,
                custom=request.custom,
                provider=request.provider or None,
                inputs=inputs,
                depends_on=sorted(set(request.dependencies)),
                options=options,
                unknowns=unknown_paths(request.object),
                property_dependencies={
                    prop: sorted(set(deps.urns)) for prop, deps in request.propertyDependencies.items()
                },
                request=request,
                outputs=None
                if self.mocks.preview and request.custom
                else restore_ints(rpc.deserialize_properties(response.object, keep_unknowns=True)),
            )
        )
        return response

    def RegisterResourceOutputs(self, request):
        if "::pulumi:pulumi:Stack::" in request.urn:
            self.recorder.stack_outputs = restore_ints(
                rpc.deserialize_properties(request.outputs, keep_unknowns=True)
            )
            self.recorder.stack_output_unknowns = unknown_paths(request.outputs)
        else:
            for reg in self.recorder.resources:
                if reg.urn == request.urn:
                    reg.outputs = restore_ints(
                        rpc.deserialize_properties(request.outputs, keep_unknowns=True)
                    )
        return super().RegisterResourceOutputs(request)
