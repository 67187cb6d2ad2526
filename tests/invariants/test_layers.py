"""Layers point one way (docs: the Layers rule of issue 23's interfaces).

Every import of every module is read from its source (ast: imports inside functions and
TYPE_CHECKING blocks count too), and an import from a lower layer to a higher one fails:

- leaf modules (components.{names,versions,cloud_limits,constants,passwords}) and
  components.kube import nothing of the config, the components (cluster, determined,
  addons), the plan, the policy pack or the composition root;
- components.config imports nothing of those either: the app imports the config;
- the components import nothing of the plan, the policy pack or the composition root;
- plan/ and policies/ import only components.config, components.kube and the leaf modules
  (plan/runner.py runs the program through the root's __main__.py, loaded by path);
- nothing in components/ outside components/config names the stack configuration
  (StackConfig, GkeStack, EksStack, ExistingStack): the composition root maps it to Args.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import ROOT

LEAVES = {f"components.{name}" for name in ("names", "versions", "cloud_limits", "constants", "passwords")}
COMPONENTS = ("components.cluster", "components.determined", "components.addons", "components.observability")
ROOT_MODULES = ("stack_args", "__main__")
STACK_MODELS = {"StackConfig", "GkeStack", "EksStack", "ExistingStack"}


def within(module: str, *packages: str) -> bool:
    return any(module == p or module.startswith(p + ".") for p in packages)


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def is_module(name: str) -> bool:
    path = ROOT.joinpath(*name.split("."))
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def imports(source: str, module: str, is_package: bool) -> Iterator[tuple[int, str, list[str]]]:
    """(line, imported module, names taken from it) for every import in `source`; `from
    package import submodule` counts as importing the submodule."""
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name, []
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                package = module.split(".") if is_package else module.split(".")[:-1]
                package = package[: len(package) - (node.level - 1)]
                base = ".".join([*package, *([node.module] if node.module else [])])
            names = [alias.name for alias in node.names]
            submodules = [f"{base}.{name}" for name in names if is_module(f"{base}.{name}")]
            yield node.lineno, base, [n for n in names if not is_module(f"{base}.{n}")]
            for sub in submodules:
                yield node.lineno, sub, []


def sources(*tops: str) -> Iterator[tuple[str, Path]]:
    for top in tops:
        path = ROOT / top
        for file in [path] if path.suffix == ".py" else sorted(path.rglob("*.py")):
            if "data" not in file.relative_to(ROOT).parts:  # scripts the Jobs run, not modules
                yield module_name(file), file


def allowed(importer: str, imported: str) -> str | None:
    """Why `importer` may not import `imported`, or None when it may."""
    if not within(imported, "components", "plan", "policies", *ROOT_MODULES):
        return None  # the standard library or a dependency
    if within(importer, *LEAVES, "components.kube"):
        if within(imported, "components.config", *COMPONENTS, "plan", "policies", *ROOT_MODULES):
            return "a leaf module imports a higher layer"
    elif within(importer, "components.config"):
        if within(imported, *COMPONENTS, "plan", "policies", *ROOT_MODULES):
            return "the config imports a higher layer (the app imports the config)"
    elif within(importer, "components"):
        if within(imported, "plan", "policies", *ROOT_MODULES):
            return "a component imports the plan, the policy pack or the composition root"
    elif within(importer, "plan", "policies"):
        if not within(
            imported, "components.config", "components.kube", *LEAVES, "components", "plan", "policies"
        ):
            return "the plan and the policy pack import only the config, components.kube and leaf modules"
        if within(imported, *COMPONENTS) or imported == "components.program":
            return "the plan and the policy pack import only the config, components.kube and leaf modules"
    return None


def violations(*tops: str) -> list[str]:
    found = []
    for module, path in sources(*tops):
        for line, imported, _ in imports(path.read_text(), module, path.name == "__init__.py"):
            why = allowed(module, imported)
            if why:
                found.append(f"{path.relative_to(ROOT)}:{line}: imports {imported}: {why}")
    return found


def test_layers_point_one_way():
    assert violations("components", "plan", "policies") == []


def test_nothing_below_the_root_sees_the_stack_configuration():
    found = []
    for module, path in sources("components"):
        if within(module, "components.config"):
            continue
        source = path.read_text()
        for line, imported, names in imports(source, module, path.name == "__init__.py"):
            if within(imported, "components.config") and STACK_MODELS & set(names):
                found.append(f"{path.relative_to(ROOT)}:{line}: imports {sorted(STACK_MODELS & set(names))}")
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.Attribute) and node.attr in STACK_MODELS:
                found.append(f"{path.relative_to(ROOT)}:{node.lineno}: uses {ast.unparse(node)}")
    assert found == []


@pytest.mark.parametrize(
    ("importer", "source", "why"),
    [
        # Inside a function, as the config once dodged the cycle.
        (
            "components.config.stack",
            "def f():\n    from components.determined import workspaces\n",
            "the config imports a higher layer",
        ),
        (
            "components.config.tls",
            "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import components.addons.cert_manager\n",
            "the config imports a higher layer",
        ),
        ("components.names", "from components.cluster import gke\n", "a leaf module imports a higher layer"),
        ("components.kube.manifests", "import plan.runner\n", "a leaf module imports a higher layer"),
        (
            "components.cloud_limits",
            "def f():\n    from components.config import gke_machines\n",
            "a leaf module imports a higher layer",
        ),
        (
            "policies.exposure",
            "from components.addons import envoy_gateway\n",
            "the plan and the policy pack",
        ),
        ("plan.kube_check", "from components.determined.master_yaml import MASTER_YAML\n", "the plan and"),
        ("plan.runner", "import stack_args\n", "the plan and the policy pack"),
        ("components.determined.master", "from plan import mocks\n", "a component imports the plan"),
    ],
)
def test_the_walk_finds_an_upward_import(importer, source, why):
    """The walk itself: each of these is refused, wherever in the module it stands."""
    reasons = [allowed(importer, imported) for _, imported, _ in imports(source, importer, False)]
    assert any(reason and reason.startswith(why) for reason in reasons), reasons


def test_the_walk_allows_what_the_layers_allow():
    for importer, imported in [
        ("components.determined.master", "components.config.tls"),
        ("components.config.stack", "components.kube.api_rules"),
        ("components.config.namespaces", "components.constants"),
        ("policies.workloads", "components.constants"),
        ("plan.runner", "components.config.master_yaml_schema"),
        ("components.addons.kueue", "components.config.addons"),
    ]:
        assert allowed(importer, imported) is None, (importer, imported)
