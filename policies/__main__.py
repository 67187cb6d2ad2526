"""CrossGuard entry point: `pulumi preview --policy-pack policies`.

Constructing PolicyPack starts the policy server and never returns, so this file does
nothing else; the policies live in policies/rules.py.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from pulumi_policy import PolicyPack

from policies.rules import POLICIES

PolicyPack(name="determined", policies=POLICIES)
