"""README.md stays an entry point (what it is, the two commands, where to go next): at most
200 lines, and every page it sends readers to exists."""

from __future__ import annotations

import re

from conftest import ROOT

README = ROOT / "README.md"


def test_the_readme_is_at_most_200_lines():
    lines = README.read_text().splitlines()
    assert len(lines) <= 200, f"README.md has {len(lines)} lines: move the text into docs/"


def test_the_readme_names_the_two_commands():
    text = README.read_text()
    assert "make plan" in text and "make test" in text


def test_every_page_the_readme_links_exists():
    targets = re.findall(r"\]\(([^)#]+?)(?:#[^)]*)?\)", README.read_text())
    local = [t for t in targets if "://" not in t]
    assert local, "the README links no page of docs/"
    missing = [t for t in local if not (ROOT / t).is_file()]
    assert not missing, missing
