"""What holds data is kept by a destroy in every stack (shipped and fixtures), as resources.json
shows it: buckets, managed database servers, every PersistentVolumeClaim (the database's,
backups', checkpoints') and the namespace such a claim lives in. Only
`allowDataDeletion: true` (dev) lets them go; prod also protects the server and the bucket.
"""

from __future__ import annotations

import pytest
import stack_plans

DATA_TYPES = (
    "gcp:storage/bucket:Bucket",
    "aws:s3/bucket:Bucket",
    "aws:s3/bucketV2:BucketV2",
    "gcp:sql/databaseInstance:DatabaseInstance",
    "aws:rds/instance:Instance",
    "kubernetes:core/v1:PersistentVolumeClaim",
)
# Servers and buckets a destroy in prod must stop at.
PROTECTED_IN_PROD = DATA_TYPES[:5]


@pytest.fixture(scope="module", params=stack_plans.NAMES)
def stack(request):
    return stack_plans.plan(request.param)


def allowed(stack) -> bool:
    return stack.raw.get("allowDataDeletion") is True and stack.raw.get("environment", "dev") == "dev"


def shared_filesystem_claim(resource) -> bool:
    # A shared filesystem's claim holds no data of its own: the filesystem does, which deleting
    # its static volume (Retain) never touches (components/determined/resource_pools.py
    # _shared_filesystems); it is not kept, so a removed namespace can come back.
    labels = resource["inputs"].get("metadata", {}).get("labels", {})
    return labels.get("app.kubernetes.io/name") == "shared-filesystem"


def data_resources(stack) -> list[dict]:
    return [r for r in stack.result.resources if r["type"] in DATA_TYPES and not shared_filesystem_claim(r)]


def test_data_is_kept_unless_deletion_is_allowed(stack):
    for resource in data_resources(stack):
        kept = resource.get("options", {}).get("retainOnDelete", False)
        assert kept is not allowed(stack), (
            f"{stack.name}: {resource['type']} {resource['name']} retainOnDelete={kept} "
            f"with allowDataDeletion={allowed(stack)}"
        )


def test_the_namespace_of_a_kept_claim_is_kept(stack):
    # Claims bound by name to a volume the stack made (NFS) lose nothing with their namespace:
    # the data lives on the share. A provisioned claim's volume goes with it.
    claims = {
        r["inputs"]["metadata"]["namespace"]
        for r in data_resources(stack)
        if r["type"].endswith("PersistentVolumeClaim")
        and r.get("options", {}).get("retainOnDelete")
        and not r["inputs"]["spec"].get("volumeName")
    }
    namespaces = {
        r["inputs"]["metadata"]["name"]: r
        for r in stack.result.resources
        if r["type"] == "kubernetes:core/v1:Namespace"
    }
    for name in claims & set(namespaces):
        assert namespaces[name].get("options", {}).get("retainOnDelete"), (
            f"{stack.name}: namespace {name} holds a kept claim but would be deleted (and its claim with it)"
        )


PROD = [
    n
    for n in stack_plans.NAMES
    if stack_plans.raw_config(stack_plans.STACK_FILES[n]).get("environment") == "prod"
]


@pytest.mark.parametrize("name", PROD)
def test_prod_protects_servers_and_buckets(name):
    stack = stack_plans.plan(name)
    for resource in data_resources(stack):
        if resource["type"] in PROTECTED_IN_PROD:
            assert resource.get("options", {}).get("protect"), (
                f"{stack.name}: {resource['type']} {resource['name']} is not protected in prod"
            )
