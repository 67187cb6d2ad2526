"""The Google Cloud provider: what GKE, Cloud Storage, Cloud SQL, IAM and Compute networking
compute on create, their IDs as the provider forms them, and the functions the program calls."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from plan.mocks.model import CREATED_AT, Request, ResourceModel, digest, ip_address, pem


def _gcp_project(req: Request) -> str:
    return req.setting("project", "gcp", "plan-project")


def _gcp_region(req: Request) -> str:
    return req.setting("region", "gcp", "us-central1")


def _gke_cluster(req: Request) -> dict[str, Any]:
    name = req.inputs["name"]
    location = req.inputs.get("location") or _gcp_region(req)
    labels = req.inputs.get("resourceLabels", {})
    return {
        "endpoint": ip_address(req.seed, (34, 118)),
        "masterAuth": {
            "clusterCaCertificate": pem(req.seed),
            "clientCertificate": "",
            "clientKey": "",
            "clientCertificateConfig": {"issueClientCertificate": False},
        },
        "masterVersion": req.inputs.get("minMasterVersion") or "1.33.5-gke.1000000",
        "selfLink": f"https://container.googleapis.com/v1/projects/{_gcp_project(req)}/locations/"
        f"{location}/clusters/{name}",
        "labelFingerprint": digest(req.seed, length=8),
        "effectiveLabels": labels,
        "pulumiLabels": labels,
        "operation": "",
    }


def _gke_node_pool(req: Request) -> dict[str, Any]:
    zone = f"{_gcp_region(req)}-a"
    group = f"gke-{req.inputs['name']}-{digest(req.seed, length=8)}-grp"
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
    private_ip = ip_address(req.seed, (10, 20))
    return {
        "connectionName": f"{project}:{region}:{name}",
        "privateIpAddress": private_ip,
        "firstIpAddress": private_ip,
        "ipAddresses": [{"ipAddress": private_ip, "type": "PRIVATE", "timeToRetire": ""}],
        "publicIpAddress": "",
        "selfLink": f"https://sqladmin.googleapis.com/sql/v1beta4/projects/{project}/instances/{name}",
        "serviceAccountEmailAddress": f"p123456789012-{digest(req.seed, length=6)}"
        "@gcp-sa-cloud-sql.iam.gserviceaccount.com",
        "serverCaCerts": [
            {
                "cert": pem(req.seed),
                "commonName": f"C={name}",
                "sha1Fingerprint": digest(req.seed, length=40),
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
        "uniqueId": str(int(digest(req.seed, length=15), 16)),
    }


def _gcp_link(req: Request, path: str) -> str:
    return f"https://www.googleapis.com/compute/v1/projects/{_gcp_project(req)}/{path}"


def _network(req: Request) -> dict[str, Any]:
    return {
        "selfLink": _gcp_link(req, f"global/networks/{req.inputs['name']}"),
        "gatewayIpv4": "",
        "numericId": str(int(digest(req.seed, length=15), 16)),
    }


def _subnetwork(req: Request) -> dict[str, Any]:
    region = req.inputs.get("region") or _gcp_region(req)
    cidr = req.inputs.get("ipCidrRange", "10.0.0.0/20")
    gateway = cidr.split("/")[0].rsplit(".", 1)[0] + ".1" if isinstance(cidr, str) else ""
    return {
        "selfLink": _gcp_link(req, f"regions/{region}/subnetworks/{req.inputs['name']}"),
        "gatewayAddress": gateway,
        "fingerprint": digest(req.seed, length=12),
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


def _filestore(req: Request) -> dict[str, Any]:
    # networks[].ipAddresses is output-only (pulumi-gcp 10.2.0 filestore/_inputs.py
    # InstanceNetworkArgs.ip_addresses).
    address = ip_address(req.seed, (10, 30))
    networks = [{**n, "ipAddresses": [address]} for n in req.inputs.get("networks", [])]
    return {"networks": networks, "createTime": CREATED_AT, "etag": digest(req.seed, length=12)}


def _lustre(req: Request) -> dict[str, Any]:
    # mountPoint: "IP_ADDRESS@tcp:/FILESYSTEM" (pulumi-gcp 10.2.0 lustre/instance.py).
    address = ip_address(req.seed, (10, 40))
    return {
        "mountPoint": f"{address}@tcp:/{req.inputs.get('filesystem', '')}",
        "state": "ACTIVE",
        "createTime": CREATED_AT,
        "name": f"projects/{_gcp_project(req)}/locations/{req.inputs.get('location')}/instances/"
        f"{req.inputs.get('instanceId')}",
    }


def _gcp_iam_member(req: Request) -> dict[str, Any]:
    return {"etag": f"BwY{digest(req.seed, length=9)}="}


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


# Resource types by token. Output names are the provider's (see the SDK's output-only
# properties); only what a program could read is modelled.
RESOURCES: dict[str, ResourceModel] = {
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
    "gcp:filestore/instance:Instance": ResourceModel(
        create=_filestore,
        autoname="name",
        ident=_gcp_path("projects/{project}/locations/{location}/instances/{name}"),
    ),
    "gcp:lustre/instance:Instance": ResourceModel(
        create=_lustre,
        ident=lambda req: (
            f"projects/{_gcp_project(req)}/locations/{req.inputs.get('location')}/instances/"
            f"{req.inputs.get('instanceId')}"
        ),
    ),
    "gcp:projects/iAMMember:IAMMember": ResourceModel(create=_gcp_iam_member),
    "gcp:serviceaccount/iAMMember:IAMMember": ResourceModel(create=_gcp_iam_member),
    "gcp:storage/bucketIAMMember:BucketIAMMember": ResourceModel(create=_gcp_iam_member),
    "gcp:sql/database:Database": ResourceModel(
        create=lambda req: {"charset": "UTF8", "collation": "en_US.UTF8"}, autoname="name"
    ),
    "gcp:sql/user:User": ResourceModel(create=lambda req: {"sqlServerUserDetails": []}),
}


# --- functions (invokes) -------------------------------------------------------------------


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
    "gcp:organizations/getClientConfig:getClientConfig": _gcp_client_config,
    "gcp:organizations/getProject:getProject": _gcp_project_info,
}
