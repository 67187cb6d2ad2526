"""Secure boot on GKE node pools: off only on the GPU pools of a GPU-operator stack (whose
drivers Google's installer builds), on everywhere else; a change of it would replace a pool,
so CPU pools keep what they were created with."""

from __future__ import annotations

from planning import of_type, planned


def pools(stack):
    return {p["name"]: p for p in of_type(planned(stack), "container/nodePool:NodePool")}


def secure_boot(pool):
    return pool["inputs"]["nodeConfig"]["shieldedInstanceConfig"]["enableSecureBoot"]


def test_with_the_operator_only_gpu_pools_boot_without_secure_boot():
    found = pools("gke-operator")
    assert {name: secure_boot(p) for name, p in found.items()} == {"system": True, "h100": False, "t4": False}
    for pool in found.values():
        assert pool["inputs"]["nodeConfig"]["shieldedInstanceConfig"]["enableIntegrityMonitoring"] is True


def test_with_gke_managed_drivers_every_pool_keeps_secure_boot():
    assert all(secure_boot(p) for p in pools("gke-prod").values())


def test_cpu_pools_keep_the_secure_boot_they_were_created_with():
    # shielded_instance_config is ForceNew: an existing CPU pool created with secure boot
    # off (the GPU operator used to turn it off everywhere) is not replaced to turn it on.
    for stack in ("gke-operator", "gke-prod"):
        for name, pool in pools(stack).items():
            ignored = pool["options"]["ignoreChanges"]
            gpu = "guestAccelerators" in pool["inputs"]["nodeConfig"]
            assert ("nodeConfig.shieldedInstanceConfig" in ignored) is not gpu, (stack, name)
            assert "initialNodeCount" in ignored


def test_gpu_pools_follow_their_secure_boot():
    # Turning the operator on or off replaces GPU pools anyway (their driver installation
    # setting is ForceNew too); their secure boot goes with it.
    for name, pool in pools("gke-operator").items():
        if name != "system":
            assert "nodeConfig.shieldedInstanceConfig" not in pool["options"]["ignoreChanges"]
