"""Passwords: the configured one, or one generated with pulumi-random; always a secret."""

from __future__ import annotations

import pulumi
import pulumi_random
from pydantic import SecretStr

from components import constants


def configured_or_generated(
    name: str, configured: SecretStr | None, parent: pulumi.Resource
) -> pulumi.Output[str]:
    """The configured password, else a generated one that meets Determined's password rule
    (upper-case, lower-case and digit guaranteed; no special characters to quote)."""
    if configured is not None:
        return pulumi.Output.secret(configured.get_secret_value())
    generated = pulumi_random.RandomPassword(
        name,
        length=constants.PASSWORD_LENGTH,
        special=False,
        min_upper=1,
        min_lower=1,
        min_numeric=1,
        opts=pulumi.ResourceOptions(parent=parent),
    )
    # Marked here too: mocks and old providers may not flag `result` as secret.
    return pulumi.Output.secret(generated.result)
