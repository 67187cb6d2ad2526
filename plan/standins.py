"""The plan never runs the program with the user's secrets.

The configuration is validated with the values the user wrote (so every rule, Determined's
password rule included, is checked on them); then every value that is secret by nature
(`components.config.secret_fields`) is replaced by a stand-in that meets the same rules and is
distinctive: "PlanSecret" + a digest of the key path + "0Aa". The program runs with the
stand-ins only, so the plan's outputs do not depend on the secrets' values, and its last
check can look for the stand-ins (and the mocks' generated secrets) without false alarms.
"""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from components import config as stack_config
from components.config.errors import format_path
from plan.errors import PlanFailure
from plan.stackfile import ENCRYPTED_STAND_IN

PROJECT = stack_config.PROJECT
PREFIX = PROJECT + ":"

SecretPath = tuple[str | int, ...]


def stand_in(path: SecretPath) -> str:
    """The stand-in for the secret at `path`: distinct per path, meets the password rule."""
    digest = hashlib.sha256(json.dumps(list(path)).encode()).hexdigest()[:10]
    return f"PlanSecret{digest}0Aa"


def key_path(path: SecretPath) -> str:
    """`("database", "password")` -> "determined:database.password"."""
    return PREFIX + format_path(path)


def _paths_of(value: Any, needle: str, path: SecretPath = ()) -> Iterator[SecretPath]:
    """Where `needle` stands in a decoded config."""
    if value == needle:
        yield path
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _paths_of(item, needle, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _paths_of(item, needle, (*path, index))


@dataclass
class Prepared:
    """A stack's config ready to run: validated, its secrets replaced by stand-ins."""

    config: dict[str, str]
    secret_keys: list[str]
    # The validated configuration (from the user's values: it holds the real secrets).
    cfg: Any = field(repr=False)
    # Stand-in by key path, e.g. {("database", "password"): "PlanSecret...0Aa"}.
    stand_ins: dict[SecretPath, str] = field(default_factory=dict)

    def needles(self) -> set[str]:
        """What must never reach an output: every stand-in and the stand-in for encrypted
        values, as written and base64-encoded (as a Secret's `data` would hold it)."""
        values = {*self.stand_ins.values(), ENCRYPTED_STAND_IN}
        return values | {base64.b64encode(v.encode()).decode() for v in values}


def decode(config: Mapping[str, str]) -> dict[str, Any]:
    """The project's keys (without the prefix), decoded as the program decodes them."""
    return stack_config.decode_raw({k[len(PREFIX) :]: v for k, v in config.items() if k.startswith(PREFIX)})


def _replace(value: Any, path: SecretPath, replacement: str) -> bool:
    *parents, last = path
    for part in parents:
        if isinstance(part, int):
            if not isinstance(value, list) or not 0 <= part < len(value):
                return False
        elif not isinstance(value, dict) or part not in value:
            return False
        value = value[part]
    if isinstance(last, int):
        if not isinstance(value, list) or not 0 <= last < len(value):
            return False
    elif not isinstance(value, dict) or last not in value:
        return False
    value[last] = replacement
    return True


# Pulumi hands the program an encrypted value decrypted and unmarked: unless the project
# keeps the key secret by nature, it would land in clear wherever the project writes it.
ENCRYPTED_NOT_SECRET = (
    "stored encrypted (secure:), but only passwords, keys and connection strings are kept "
    "secret by the project, which would write this value in clear; store it in plain text"
)
# What a problem shows instead of the stand-in for an encrypted value.
ENCRYPTED_SHOWN = "(encrypted value)"


def _about_the_key(problem: stack_config.Problem) -> bool:
    """A problem with the key itself (unknown, or not for this mode) whatever its value: it
    stays as it is, so that a mistyped password key does not get the advice to store the
    password in plain text."""
    return problem.message.startswith(("unknown key", "only for "))


def _encrypted_problems(
    problems: Sequence[stack_config.Problem], encrypted: set[str]
) -> list[stack_config.Problem]:
    """The problems of a config whose encrypted values (at the key paths `encrypted`) were
    validated as the stand-in.

    A problem with an encrypted value is about the stand-in, not the value the user
    encrypted: it becomes the one thing to fix, that the value is stored encrypted. No
    message shows the stand-in."""
    rewritten: list[stack_config.Problem] = []
    for problem in problems:
        message = problem.message
        if problem.path in encrypted and not _about_the_key(problem):
            message = ENCRYPTED_NOT_SECRET
        for shown in (repr(ENCRYPTED_STAND_IN), f'"{ENCRYPTED_STAND_IN}"', ENCRYPTED_STAND_IN):
            message = message.replace(shown, ENCRYPTED_SHOWN)
        problem = stack_config.Problem(problem.path, message)
        if problem not in rewritten:
            rewritten.append(problem)
    return rewritten


def prepare(
    config: Mapping[str, str], secret_keys: Sequence[str], task_pods: stack_config.TaskPods | None = None
) -> Prepared:
    """Validate the config (ConfigError names every problem) and replace its secrets.
    `task_pods`: for the rules over the task pods the program renders (load_config)."""
    decoded = decode(config)
    encrypted = {format_path(path) for path in _paths_of(decoded, ENCRYPTED_STAND_IN)}
    try:
        cfg = stack_config.load_config(decoded, task_pods=task_pods)
    except stack_config.ConfigError as exc:
        raise stack_config.ConfigError(_encrypted_problems(exc.problems, encrypted)) from None
    prepared = Prepared(config=dict(config), secret_keys=list(secret_keys), cfg=cfg)
    touched: set[str] = set()
    for path, _ in stack_config.secret_fields(cfg):
        if not path or isinstance(path[0], int):
            raise PlanFailure(f"cannot place a stand-in for {key_path(path)}")
        if not _replace(decoded, path, stand_in(path)):
            # The value came from somewhere the plan cannot see: refuse to run with it.
            raise PlanFailure(f"cannot find {key_path(path)} in the stack file to replace it")
        prepared.stand_ins[path] = stand_in(path)
        touched.add(path[0])
    # What is still encrypted is not a secret by nature.
    left = list(_paths_of(decoded, ENCRYPTED_STAND_IN))
    if left:
        raise stack_config.ConfigError(
            stack_config.Problem(format_path(path), ENCRYPTED_NOT_SECRET) for path in left
        )
    for top in touched:
        value = decoded[top]
        prepared.config[PREFIX + top] = value if isinstance(value, str) else json.dumps(value)
    return prepared
