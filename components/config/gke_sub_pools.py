"""The GKE node pools a configured pool becomes (names and shapes from the configuration
alone): one, of the pool's name; or, for a pool a ComputeClass serves, one per purchase
option and machine type (components/cluster/gke/compute_classes.py makes them and the class;
components/config/capacity_rules.py checks their names)."""

from __future__ import annotations

from dataclasses import dataclass

from components.config.node_pools import GkeNodePool

# Node pool name suffixes per purchase option (a pool name is at most 40 characters on GKE:
# components/names.py GKE_NODE_POOL; components/config/capacity_rules.py refuses longer).
SUFFIXES = {"reservation": "res", "onDemand": "od", "spot": "spot", "flexStart": "flex"}


@dataclass(frozen=True)
class SubPool:
    """One GKE node pool of a configured pool: a machine type bought one way."""

    name: str
    machine_type: str
    capacity_type: str
    min_nodes: int
    max_nodes: int


def sub_pools(pool: GkeNodePool) -> list[SubPool]:
    """The GKE node pools of `pool`, most preferred first.

    Without a ComputeClass: one, of the pool's name. With one: per purchase option in the
    user's order, per machine type (`machineType`, then `instanceTypes`); a reservation holds
    VMs of one machine type, `machineType` (capacity.reservation's description). `minNodes`
    goes to the first (the preferred capacity is where the kept nodes belong; flex-start
    pools keep none: capacity_rules); each keeps `maxNodes`, so that the next option can take
    the whole pool when the one before has nothing. The pool's GPU quota (Determined's
    resource pool) bounds what tasks ask for in all of them together.
    """
    types = pool.capacity_types
    if pool.compute_class is None:
        return [SubPool(pool.name, pool.machine_type, types[0], pool.min_nodes, pool.max_nodes)]
    found: list[SubPool] = []
    for capacity_type in types:
        machines = [pool.machine_type] if capacity_type == "reservation" else pool.machine_types
        for machine in machines:
            index = pool.machine_types.index(machine)
            name = f"{pool.name}-{SUFFIXES[capacity_type]}" + (f"-{index}" if index else "")
            found.append(
                SubPool(name, machine, capacity_type, 0 if found else pool.min_nodes, pool.max_nodes)
            )
    return found


def node_pool_names(pool: GkeNodePool) -> list[str]:
    return [sub.name for sub in sub_pools(pool)]
