"""The public cluster components (GkeCluster, EksCluster, ExistingCluster) as a library: each
built from its Args alone, no stack config, under the plan's recording mocks; their Args
described field by field; and nothing in components/cluster/ reading the stack config."""

from __future__ import annotations

import types
from collections.abc import Callable
from typing import Any

import pulumi
import pytest
from component_args import undescribed_outputs
from pydantic import BaseModel

from components.cluster import ClusterHandle
from components.cluster.args import CloudClusterArgs
from components.cluster.eks import EksCluster
from components.cluster.eks.args import EksClusterArgs
from components.cluster.existing import ExistingCluster, ExistingClusterArgs
from components.cluster.gke import GkeCluster
from components.cluster.gke.args import GkeClusterArgs
from components.config.errors import ConfigError
from plan import runner
from plan.mocks import Recorder

POOLS = [
    {"name": "system", "machineType": "MACHINE", "maxNodes": 2},
    {"name": "gpu", "machineType": "GPU_MACHINE", "maxNodes": 2, "gpu": {"type": "GPU", "count": 1}},
]

GKE_ARGS = {
    "cluster": {"name": "lib", "region": "us-central1", "project": "lib-project"},
    "nodePools": [
        {**POOLS[0], "machineType": "e2-standard-4"},
        {**POOLS[1], "machineType": "g2-standard-8", "gpu": {"type": "nvidia-l4", "count": 1}},
    ],
    "checkpointStorage": {"type": "gcs"},
    "database": {"mode": "managed", "tier": "db-custom-2-8192"},
    "taskNamespaces": ["det-gpu"],
}

EKS_ARGS = {
    "cluster": {"name": "lib", "region": "us-west-2"},
    "nodePools": [
        {**POOLS[0], "machineType": "m6i.xlarge"},
        {**POOLS[1], "machineType": "g6.xlarge", "gpu": {"type": "nvidia-l4", "count": 1}},
    ],
    "checkpointStorage": {"type": "s3"},
    "taskNamespaces": ["det-gpu"],
}

OUTPUTS = {"clusterName", "kubeconfig", "checkpointBucket", "databaseEndpoint"}


def run(build: Callable[[], Any]) -> tuple[Recorder, Any]:
    """`build()` run as a program of its own under the plan's recording mocks."""
    built: dict[str, Any] = {}

    def main() -> None:
        built["component"] = build()

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(runner, "program", lambda: types.SimpleNamespace(main=main))
        recorder = runner.run_program({}, [], "lib")
    return recorder, built["component"]


def registered(recorder: Recorder, type_: str) -> list[Any]:
    return [r for r in recorder.resources if r.type == type_]


def alias_types(registration: Any) -> list[str]:
    return [spec.spec.type for spec in registration.request.aliases]


def test_gke_cluster_from_its_args_alone_registers_the_cluster_and_its_outputs():
    recorder, cluster = run(lambda: GkeCluster("gke", GkeClusterArgs.model_validate(GKE_ARGS)))
    (component,) = registered(recorder, "determined:index:GkeCluster")
    # Stacks deployed under the old token keep their URNs.
    assert alias_types(component) == ["determined:gke:Platform"]
    assert set(component.outputs) == OUTPUTS
    assert component.outputs["clusterName"] == "lib"
    assert component.outputs["checkpointBucket"] == "gs://lib-project-lib-lib-us-central1-checkpoints"
    assert component.outputs["databaseEndpoint"].endswith(":5432")
    (gke,) = registered(recorder, "gcp:container/cluster:Cluster")
    assert gke.parent == component.urn and gke.inputs["project"] == "lib-project"
    assert sorted(p.name for p in registered(recorder, "gcp:container/nodePool:NodePool")) == [
        "gpu",
        "system",
    ]
    assert len(registered(recorder, "gcp:sql/databaseInstance:DatabaseInstance")) == 1
    assert len(registered(recorder, "gcp:storage/bucket:Bucket")) == 1
    # The task namespace's service account reaches the bucket.
    members = [r.inputs["member"] for r in registered(recorder, "gcp:serviceaccount/iAMMember:IAMMember")]
    assert "serviceAccount:lib-project.svc.id.goog[det-gpu/determined-task]" in members
    handle = cluster.handle
    assert isinstance(handle, ClusterHandle) and isinstance(handle.provider, pulumi.ProviderResource)
    assert handle.database is not None and handle.default_storage_class is None
    assert set(handle.exports) == {*OUTPUTS, "getCredentials"}


def test_eks_cluster_from_its_args_alone_registers_the_cluster_and_its_outputs():
    recorder, cluster = run(lambda: EksCluster("eks", EksClusterArgs.model_validate(EKS_ARGS)))
    (component,) = registered(recorder, "determined:index:EksCluster")
    assert alias_types(component) == ["determined:eks:Platform"]
    assert set(component.outputs) == OUTPUTS - {"databaseEndpoint"}  # no managed database
    assert component.outputs["clusterName"] == "lib"
    assert component.outputs["checkpointBucket"].startswith("s3://lib-lib-")
    assert sorted(g.name for g in registered(recorder, "aws:eks/nodeGroup:NodeGroup")) == ["gpu", "system"]
    assert registered(recorder, "aws:rds/instance:Instance") == []
    # The in-cluster database's volume class, and the device plugin for the GPU group.
    handle = cluster.handle
    assert handle.default_storage_class == "determined-db" and handle.database is None
    releases = [r.inputs["name"] for r in registered(recorder, "kubernetes:helm.sh/v3:Release")]
    assert sorted(releases) == ["cluster-autoscaler", "nvidia-device-plugin"]
    associations = registered(recorder, "aws:eks/podIdentityAssociation:PodIdentityAssociation")
    assert ("det-gpu", "determined-task") in {
        (a.inputs["namespace"], a.inputs["serviceAccount"]) for a in associations
    }


def test_existing_cluster_from_its_args_alone_holds_the_provider_that_reaches_it():
    args = ExistingClusterArgs.model_validate({"cluster": {"name": "kind", "context": "kind-kind"}})
    recorder, cluster = run(lambda: ExistingCluster("existing", args))
    (component,) = registered(recorder, "determined:index:ExistingCluster")
    assert component.outputs == {"clusterName": "kind"}
    (provider,) = registered(recorder, "pulumi:providers:kubernetes")
    assert provider.name == "existing-cluster" and provider.parent == component.urn
    assert provider.inputs["context"] == "kind-kind"
    # Before the component the provider was the stack's own child: the alias keeps its URN.
    (alias,) = provider.request.aliases
    assert alias.spec.noParent
    assert cluster.handle.provider is cluster.kubernetes


def test_the_master_node_pool_must_be_one_of_the_pools():
    with pytest.raises(ConfigError, match=r"^determined:masterNodePool: 'nope' is not one of the node pools"):
        GkeClusterArgs.model_validate(GKE_ARGS | {"masterNodePool": "nope"})
    args = GkeClusterArgs.model_validate(GKE_ARGS)
    assert args.master_pool is not None and args.master_pool.name == "system"  # the untainted CPU pool


ARGS_MODELS = [CloudClusterArgs, GkeClusterArgs, EksClusterArgs, ExistingClusterArgs]


@pytest.mark.parametrize("model", ARGS_MODELS, ids=lambda m: m.__name__)
def test_every_args_field_is_described(model: type[BaseModel]):
    undescribed = [name for name, info in model.model_fields.items() if not (info.description or "").strip()]
    assert undescribed == [], f"{model.__name__}: fields without a description: {undescribed}"
    assert (model.__doc__ or "").strip(), model.__name__


@pytest.mark.parametrize("component", [GkeCluster, EksCluster, ExistingCluster], ids=lambda c: c.__name__)
def test_public_outputs_are_typed_and_described_at_class_level(component: type):
    assert "cluster_name" in component.__annotations__
    assert undescribed_outputs(component) == []
