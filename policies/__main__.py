"""CrossGuard entry point: `pulumi preview --policy-pack policies`.

Constructing PolicyPack starts the policy server and never returns, so this file does
nothing else; the rules live in the modules of this package (policies/catalog.py lists them).
The Pulumi CLI hands the pack the stack's config (PULUMI_CONFIG); the stack's
`determined:environment` picks each rule's level (prod raises those marked so to mandatory).

The packages it imports (policies, components) are installed in the project's virtualenv
(pyproject.toml, `-e .`), or lie beside this file in a published pack: the SDK runs it with
`runpy.run_path(<pack directory>)`, which puts that directory first on sys.path
(.venv/lib/python3.11/site-packages/pulumi/policy/__main__.py, pulumi 3.272.0;
https://docs.python.org/3/library/runpy.html#runpy.run_path).
"""

from pulumi.runtime import get_config_env
from pulumi_policy import EnforcementLevel, PolicyPack

from policies.catalog import policies
from policies.rule import context_from_config

PolicyPack(
    name="determined",
    policies=policies(context_from_config(get_config_env())),
    enforcement_level=EnforcementLevel.ADVISORY,
)
