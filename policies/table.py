"""The README's table of policies, made from the rules themselves (a test keeps the README's
copy equal to it: `python -m policies.table` prints it)."""

from __future__ import annotations

from policies.catalog import RULES


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def markdown() -> str:
    lines = [
        "| policy | area | dev | prod | what | why |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for rule in RULES:
        lines.append(
            f"| `{rule.name}` | {rule.area} | {rule.dev} | {rule.prod} | {_cell(rule.description)} "
            f"| {_cell(rule.why)} |"
        )
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    print(markdown(), end="")
