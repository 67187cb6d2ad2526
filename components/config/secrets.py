"""Secret-by-nature values (passwords, keys, connection strings): typed, found, never shown."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, SecretStr


def _not_empty(value: SecretStr) -> SecretStr:
    if not value.get_secret_value():
        raise ValueError("must not be empty")
    return value


# A secret whatever way it was set (`--secret` or plain text); repr and errors hide it.
Secret = Annotated[SecretStr, AfterValidator(_not_empty)]


def secret_fields(model: BaseModel) -> list[tuple[tuple[str | int, ...], SecretStr]]:
    """Every secret-by-nature value in a config model with its key path, as the user wrote
    it (camelCase keys, list indexes): `(("database", "password"), SecretStr(...))`."""
    found: list[tuple[tuple[str | int, ...], SecretStr]] = []

    def walk(value: Any, path: tuple[str | int, ...]) -> None:
        if isinstance(value, SecretStr):
            found.append((path, value))
        elif isinstance(value, BaseModel):
            for name, info in type(value).model_fields.items():
                walk(getattr(value, name), (*path, info.alias or name))
        elif isinstance(value, list):
            for index, item in enumerate(value):
                walk(item, (*path, index))
        elif isinstance(value, dict):
            for key, item in value.items():
                walk(item, (*path, key))

    walk(model, ())
    return found


def secret_values(model: BaseModel) -> set[str]:
    """Every secret-by-nature value in a config model."""
    return {secret.get_secret_value() for _, secret in secret_fields(model)}
