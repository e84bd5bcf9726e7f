"""The layers of the package (docs/architecture.md): each imports only those below it,
so the folder list tells what depends on what."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "calendar_app"
# Lowest first: a module may import its own layer and any layer before it. The site
# and the editorial tools stand beside the HTTP interface: none of the three imports
# another.
LAYERS = (("model",), ("store",), ("sync",), ("catalog",), ("linking", "bodycontext"), ("service",),
          ("wiring",), ("site", "editorial", "importing"), ("editing",), ("http",), ("cli",))
COMMANDS = ("trash", "__main__")  # the command line's own modules


def layer_of(module: str) -> str:
    first = module.split(".")[0]
    return "cli" if first in COMMANDS else first


def rank(module: str) -> int:
    return next(i for i, floor in enumerate(LAYERS) if layer_of(module) in floor)


def imports() -> list[tuple[str, str]]:
    """(importer, imported) for every import of the package by the package itself."""
    found = []
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE).with_suffix("").parts
        module = ".".join(p for p in parts if p != "__init__")
        package = module if path.name == "__init__.py" else module.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.ImportFrom):
                continue
            if node.level:
                base = package.split(".") if package else []
                base = base[:len(base) - (node.level - 1)] if node.level > 1 else base
                source = ".".join([*base, *([node.module] if node.module else [])])
            elif (node.module or "").startswith("calendar_app"):
                source = node.module.removeprefix("calendar_app").lstrip(".")
            else:
                continue
            for alias in node.names:
                target = f"{source}.{alias.name}".strip(".") if not node.module else source
                if target:
                    found.append((module, target))
    return found


def test_every_layer_is_a_folder_or_a_module() -> None:
    for name in (name for floor in LAYERS for name in floor):
        assert (PACKAGE / name).is_dir() or (PACKAGE / f"{name}.py").is_file(), name


def test_no_layer_imports_one_above_it() -> None:
    upward = [(a, b) for a, b in imports()
              if layer_of(a) != layer_of(b) and rank(b) >= rank(a)]
    assert upward == []


def test_the_model_does_no_io() -> None:
    heavy = {"flask", "whoosh", "watchdog", "subprocess"}
    for path in (PACKAGE / "model").glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                     else [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            assert not {n.split(".")[0] for n in names} & heavy, path.name
