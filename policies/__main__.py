"""CrossGuard entry point: `pulumi preview --policy-pack policies`.

Constructing PolicyPack starts the policy server and never returns, so this file does
nothing else; the rules live in the modules of this package (policies/catalog.py lists them).
The Pulumi CLI hands the pack the stack's config (PULUMI_CONFIG); the stack's
`determined:environment` picks each rule's level (prod raises those marked so to mandatory).
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from pulumi.runtime import get_config_env
from pulumi_policy import EnforcementLevel, PolicyPack

from policies.catalog import policies
from policies.rule import context_from_config

PolicyPack(
    name="determined",
    policies=policies(context_from_config(get_config_env())),
    enforcement_level=EnforcementLevel.ADVISORY,
)
