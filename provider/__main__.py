"""The provider's entry point: hosts the public components under the package name `determined`
(type tokens determined:index:<Component>; pulumi.provider.experimental.host, pulumi 3.272.0)."""

from pulumi.provider.experimental import component_provider_host

from provider.hosted import Determined, EksCluster, ExistingCluster, GkeCluster

if __name__ == "__main__":
    component_provider_host(
        name="determined", components=[GkeCluster, EksCluster, ExistingCluster, Determined]
    )
