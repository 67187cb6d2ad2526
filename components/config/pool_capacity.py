"""`nodePools[].capacity`: where a created pool's machines come from, in order of preference.

`types` lists purchase options the cloud falls back through: a reservation, on-demand, spot,
and (GKE) flex-start; `instanceTypes` (EKS with Karpenter, GKE) other machine types that
carry the pool's GPUs; `reservation` names the reservation; `queued` (GKE) makes the pool's
tasks wait, admitted by Kueue, until GKE has every node they need (queued provisioning).

What each cloud can do with them is checked with the rest of the stack (components/config/
eks.py, gke.py); this module holds the section and the rules that need nothing else.
"""

from __future__ import annotations

import re
from typing import Annotated, Literal

from pydantic import AfterValidator, Field, model_validator

from components.config.base import ConfigModel
from components.config.cluster import AwsTags, GcpZone
from components.config.syntax import DnsLabel, Flag, NonEmpty, pattern_check

CapacityType = Literal["reservation", "onDemand", "spot", "flexStart"]

# EC2 capacity reservation ids (cr-<17 hex>: https://docs.aws.amazon.com/AWSEC2/latest/APIReference/API_CapacityReservation.html).
_EC2_RESERVATION_ID = re.compile(r"cr-[0-9a-f]{17}")
Ec2ReservationId = Annotated[
    str,
    AfterValidator(
        pattern_check(_EC2_RESERVATION_ID, "an EC2 capacity reservation id (cr-0123456789abcdef0)")
    ),
]


def _unique_types(types: list[str]) -> list[str]:
    seen = [t for i, t in enumerate(types) if t in types[:i]]
    if seen:
        raise ValueError(f"{seen[0]!r} is listed twice: each type once, in order of preference")
    return types


class Reservation(ConfigModel):
    """The reservation a pool's nodes come from first (capacity type `reservation`)."""

    name: DnsLabel | None = Field(
        None,
        description="gke: the specific Compute Engine reservation's name (its VMs' machine type and GPUs "
        "must be the pool's).",
    )
    project: NonEmpty | None = Field(
        None,
        description="gke: the project that owns a shared reservation (default: the cluster's project).",
    )
    zone: GcpZone | None = Field(
        None,
        description="gke, required: the zone the reservation is in (a specific reservation holds VMs of one "
        "zone); the pool's reservation node pool is placed there.",
    )
    ids: list[Ec2ReservationId] = Field(
        default_factory=list,
        description="eks: EC2 capacity reservation ids (On-Demand Capacity Reservations or Capacity Blocks "
        "for ML), `cr-...`.",
    )
    tags: AwsTags = Field(
        default_factory=dict,
        description="eks: tags that select EC2 capacity reservations (all must match), instead of or beside "
        "`ids`.",
    )
    capacity_block: Flag = Field(
        False,
        description="eks: the reservations are Capacity Blocks for ML (time-boxed; Karpenter launches "
        "`reserved` capacity of type capacity-block). Default false: On-Demand Capacity Reservations.",
    )


class CapacityConfig(ConfigModel):
    """Where the pool's machines come from, in order of preference."""

    types: Annotated[list[CapacityType], AfterValidator(_unique_types)] = Field(
        default_factory=lambda: ["onDemand"],
        min_length=1,
        description="Purchase options in order of preference, each once: `reservation`, `onDemand`, `spot`, "
        "`flexStart` (gke, GPU pools). More than one: the cloud falls back to the next when the first has "
        "no capacity (eks: Karpenter; gke: a ComputeClass). Default `[onDemand]`.",
    )
    reservation: Reservation | None = Field(
        None,
        description="With type `reservation`: gke `{name, project}`, eks `{ids, tags, capacityBlock}`.",
    )
    instance_types: list[NonEmpty] = Field(
        default_factory=list,
        description="Other machine types for the pool besides `machineType`, each carrying the pool's GPU "
        "type and count (eks with Karpenter, gke). Default: `machineType` only.",
    )
    queued: Flag = Field(
        False,
        description="gke, GPU pools, `scheduler: kueue`: queued provisioning: a task waits, admitted by "
        "Kueue through a ProvisioningRequest, until GKE has all its nodes (flex-start VMs: `types` must "
        "be `[flexStart]`). Default false.",
    )

    @model_validator(mode="after")
    def _reservation_when_reserved(self) -> CapacityConfig:
        reserved = "reservation" in self.types
        if reserved and self.reservation is None:
            raise ValueError("type `reservation` needs `reservation` (which reservation)")
        if not reserved and self.reservation is not None:
            raise ValueError("`reservation` is set but `types` does not list `reservation`")
        if self.queued and self.types != ["flexStart"]:
            raise ValueError("`queued` pools run flex-start VMs only: set `types: [flexStart]`")
        return self

    @property
    def fallback(self) -> bool:
        """More than one purchase option or machine type: a ComputeClass (gke) or Karpenter
        (eks) chooses among them."""
        return len(self.types) > 1 or bool(self.instance_types)
