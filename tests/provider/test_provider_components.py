"""The provider's components, constructed the way the provider host constructs them for a
program in another language (ComponentProvider.construct with the schema's camelCase inputs,
pulumi 3.272.0 provider/experimental/component.py), under the plan's recording mocks: a GKE
cluster, and Determined on it through the cluster's handle outputs."""

from __future__ import annotations

import types

import pulumi
import pytest
from pulumi.provider.experimental.component import ComponentProvider
from pulumi.provider.server import ComponentInitError

from plan import runner
from provider import hosted

PUBLIC = [hosted.GkeCluster, hosted.EksCluster, hosted.ExistingCluster, hosted.Determined]
NODE_POOLS = [
    {"name": "system", "machineType": "e2-standard-4"},
    {"name": "l4", "machineType": "g2-standard-8", "gpu": {"type": "nvidia-l4", "count": 1}, "maxNodes": 2},
]
GKE_INPUTS = {
    "cluster": {"name": "det-provider", "region": "us-central1", "project": "p"},
    "nodePools": NODE_POOLS,
    "checkpointStorage": {"type": "gcs"},
    "taskNamespaces": ["determined-tasks", "det-l4"],
}


def determined_inputs(state: dict) -> dict:
    return {
        # What a program in another language passes on: the cluster component's outputs.
        "cluster": {key: state[key] for key in ("kubeconfig", "storageIdentity", "bucket") if key in state},
        "cloud": "gke",
        "clusterName": "det-provider",
        "region": "us-central1",
        "nodePools": NODE_POOLS,
        "checkpointStorage": {"type": "gcs"},
        "resourcePools": [{"name": "l4", "nodePool": "l4", "namespace": "det-l4"}],
    }


def construct_all(found: dict):
    host = ComponentProvider(PUBLIC, "determined")
    gke = host.construct("gke", "determined:index:GkeCluster", GKE_INPUTS, pulumi.ResourceOptions())
    found["gke"] = gke
    found["determined"] = host.construct(
        "determined", "determined:index:Determined", determined_inputs(gke.state), pulumi.ResourceOptions()
    )
    found["existing"] = host.construct(
        "existing",
        "determined:index:ExistingCluster",
        {"cluster": {"name": "kind"}},
        pulumi.ResourceOptions(),
    )


@pytest.fixture(scope="module")
def constructed():
    found: dict = {}
    program = types.SimpleNamespace(main=lambda: construct_all(found))
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(runner, "program", lambda: program)
        recorder = runner.run_program({}, [], "provider")
    return recorder, found


def test_the_host_builds_the_cluster_and_determined_on_it(constructed):
    recorder, _ = constructed
    by_type = {}
    for reg in recorder.resources:
        by_type.setdefault(reg.type, []).append(reg)
    assert len(by_type["determined:index:GkeCluster"]) == 1
    assert len(by_type["determined:index:Determined"]) == 1
    assert len(by_type["determined:index:ExistingCluster"]) == 1
    assert sorted(r.inputs["name"] for r in by_type["gcp:container/nodePool:NodePool"]) == ["l4", "system"]
    (master,) = [r for r in by_type["kubernetes:apps/v1:Deployment"] if r.name.endswith("determined-master")]
    # Determined's objects go through a provider made from the cluster's kubeconfig output.
    (provider,) = [r for r in by_type["pulumi:providers:kubernetes"] if r.name == "determined-cluster"]
    assert master.provider.startswith(provider.urn)


def test_the_cluster_outputs_its_handle_for_determined(constructed):
    _, found = constructed
    state = found["gke"].state
    assert {"clusterName", "kubeconfig", "checkpointBucket", "storageIdentity", "bucket"} <= set(state)
    assert set(found["existing"].state) == {"clusterName"}
    assert {"url", "namespace", "resourcePoolNamespaces", "initialUserPassword"} <= set(
        found["determined"].state
    )


def test_bad_inputs_are_refused_with_their_key_paths():
    def main():
        host = ComponentProvider(PUBLIC, "determined")
        host.construct("gke", "determined:index:GkeCluster", GKE_INPUTS | {"environment": "staging"}, None)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(runner, "program", lambda: types.SimpleNamespace(main=main))
        with pytest.raises(ComponentInitError, match=r"^determined:environment: "):
            runner.run_program({}, [], "provider")
