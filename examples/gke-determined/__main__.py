"""Determined on a new GKE cluster, composed from the library's components directly.

No stack configuration: the program builds each component's Args itself (the same sections,
camelCase keys and all, a stack file of the main project holds) and wires the cluster's
handle into Determined. Run it with `pulumi config set gcp:project <project>` and `pulumi up`;
tests/examples plans it under the project's mocks.
"""

import pulumi

from components.cluster.gke import GkeCluster, GkeClusterArgs
from components.config.cluster import GkeCluster as ClusterSection
from components.determined.args import DeterminedArgs
from components.determined.determined import Determined

# One CPU pool for the master and its database, one spot L4 pool scaling from zero.
NODE_POOLS = [
    {"name": "system", "machineType": "e2-standard-4", "minNodes": 1, "maxNodes": 3},
    {
        "name": "l4",
        "machineType": "g2-standard-8",
        "gpu": {"type": "nvidia-l4", "count": 1},
        "maxNodes": 2,
        "spot": True,
    },
]
CLUSTER = {"name": "det-example", "region": "us-central1", "zones": ["us-central1-a", "us-central1-b"]}
# Checkpoints in a GCS bucket the cluster creates, reached through workload identity.
CHECKPOINTS = {"type": "gcs"}


def cluster_section() -> ClusterSection:
    """The cluster's section (name, region, project, network...), as a stack file's `cluster`."""
    return ClusterSection.model_validate(CLUSTER | {"project": pulumi.Config("gcp").require("project")})


def determined_args(cluster: ClusterSection) -> DeterminedArgs:
    """What to deploy: the master, two resource pools on the node pools, the cluster's facts."""
    return DeterminedArgs.model_validate(
        {
            "cloud": "gke",
            "clusterName": cluster.name,
            "region": cluster.region,
            # The created network's Service range: pods reach Services directly with a proxy.
            "serviceCidrs": [cluster.network.services_cidr],
            "nodePools": NODE_POOLS,
            "master": {"version": "0.38.1", "cpu": "1", "memory": "4Gi"},
            "checkpointStorage": CHECKPOINTS,
            "resourcePools": [
                {"name": "l4", "nodePool": "l4", "namespace": "det-l4"},
                {"name": "aux", "nodePool": "system", "namespace": "det-aux"},
            ],
        }
    )


def cluster_args(cluster: ClusterSection, determined: DeterminedArgs) -> GkeClusterArgs:
    """The cluster: its pools, the bucket, and the namespaces whose service accounts reach it."""
    return GkeClusterArgs.model_validate(
        {
            "cluster": cluster,
            "nodePools": NODE_POOLS,
            "checkpointStorage": CHECKPOINTS,
            "namespace": determined.namespace,
            "taskNamespaces": determined.task_namespaces,
        }
    )


def main() -> Determined:
    """Register the cluster and Determined on it; export how to reach them."""
    section = cluster_section()
    determined = determined_args(section)
    cluster = GkeCluster("gke", cluster_args(section, determined))
    deployment = Determined("determined", determined, cluster.handle)
    pulumi.export("kubeconfig", cluster.kubeconfig)
    pulumi.export("checkpointBucket", cluster.checkpoint_bucket)
    pulumi.export("masterUrl", deployment.url)
    pulumi.export("initialUserPassword", deployment.initial_user_password)
    # Read back by the next update to tell an upgrade of the master from a plain update
    # (without them, every update would first wait for a dump of the database).
    for name, value in deployment.state_outputs.items():
        pulumi.export(name, value)
    return deployment


if __name__ == "__main__":
    main()
