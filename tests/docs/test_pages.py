"""The pages of docs/ stay true to the repository: every file or folder they cite exists, and
the site's navigation lists every page (mkdocs itself checks links and anchors, `make docs`)."""

from __future__ import annotations

import re

import yaml
from conftest import ROOT

DOCS = ROOT / "docs"
PAGES = sorted(DOCS.rglob("*.md"))
# A repository path in code spans: `components/config`, `stacks/Pulumi.local.yaml`, ...;
# placeholders (`<stack>`) and globs are not paths.
CITED = re.compile(r"`((?:components|plan|policies|tests|scripts|stacks|docs|provider|examples)/[^`\s<>*]*)`")


def test_every_path_the_pages_cite_exists():
    missing = [
        f"{page.relative_to(ROOT)}: {path}"
        for page in [*PAGES, ROOT / "README.md"]
        for path in CITED.findall(page.read_text())
        if not (ROOT / path).exists()
    ]
    assert not missing, missing


def _nav_pages(nav) -> list[str]:
    found = []
    for item in nav:
        value = next(iter(item.values())) if isinstance(item, dict) else item
        found += _nav_pages(value) if isinstance(value, list) else [value]
    return found


def test_the_navigation_lists_every_page():
    # mkdocs.yml names a Python function for Mermaid fences; the test reads the nav only.
    text = (ROOT / "mkdocs.yml").read_text().replace("!!python/name:", "")
    nav = _nav_pages(yaml.safe_load(text)["nav"])
    assert sorted(nav) == sorted(str(page.relative_to(DOCS)) for page in PAGES)
