"""A test pack: one policy refusing Deployments, at the level DENY_LEVEL names (advisory, the
default, or mandatory), asynchronous when DENY_ASYNC is set (a pack gets the CLI's
environment)."""

import asyncio
import os

from pulumi_policy import EnforcementLevel, PolicyPack, ResourceValidationPolicy


def check(args, report):
    if args.resource_type == "kubernetes:apps/v1:Deployment":
        report("no deployments allowed")


async def check_later(args, report):
    await asyncio.sleep(0)
    check(args, report)


level = EnforcementLevel(os.environ.get("DENY_LEVEL", "advisory"))
validate = check_later if os.environ.get("DENY_ASYNC") else check
PolicyPack("deny", [ResourceValidationPolicy("deny-deployments", "test policy", validate, level)])
