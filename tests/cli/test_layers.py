"""The layers the folders show hold in the import graph: no module imports a higher layer's, whether
the import sits at the top of the file or inside a function, or names the module in a string (a string that is
exactly a module of the tree, ``"harness.x.y"`` or ``"harness.x.y:name"``, as ``importlib.import_module`` takes).

harness/:  core -> metric, cases -> judge, store -> run -> cli, api   (each arrow: "is imported by")
reports/:  analysis -> model -> render -> cards, export, build, review -> commands
and harness/ imports neither reports/ nor adapters/. The top-level reports/ and adapters/ are installed as
harness.reports and harness.adapters (the symlinks harness/reports, harness/adapters), harness_cli.py as
harness.console (the composition root, which imports every layer).
"""
from __future__ import annotations

import ast
import os
import re

import pytest

from tests.conftest import ROOT

HARNESS = {"harness.core": 0, "harness.metric": 1, "harness.cases": 1, "harness.judge": 2, "harness.store": 2,
           "harness.run": 3, "harness.cli": 4, "harness.api": 4, "harness": 5}
REPORTS = {"harness.reports.analysis": 0, "harness.reports.model": 1, "harness.reports.render": 2,
           "harness.reports.cards": 3, "harness.reports.export": 3, "harness.reports.build": 3,
           "harness.reports.review": 3, "harness.reports.commands": 4, "harness.reports": 5}
FORBIDDEN = {"harness": ("harness.reports", "harness.adapters", "harness.console")}
"""Packages a tree must not import at all."""
PACKAGE = {"harness": "harness", "reports": "harness.reports"}
"""Folder -> the package name it is installed as."""
COMPOSITION_ROOT = "harness.console"
"""harness/console.py (a symlink to harness_cli.py): composes the command line from every layer."""
FACADE = "harness"
"""harness/__init__.py: the package's public names, resolved on first use; ``evaluate`` comes from the
composition root (which gives it the report package's builder)."""
MODULE_STRING = re.compile(r"harness(\.[A-Za-z_]\w*)+(:[A-Za-z_]\w*)?")


def layer(module: str, table: dict[str, int]) -> tuple[str, int] | None:
    """The longest layer prefix of ``module`` in ``table``.

    >>> layer("harness.judge.gateway", HARNESS)
    ('harness.judge', 2)
    >>> layer("harness", HARNESS)
    ('harness', 5)
    """
    best = None
    for prefix, n in table.items():
        if module == prefix or module.startswith(prefix + "."):
            if best is None or len(prefix) > len(best[0]):
                best = (prefix, n)
    return best


def imports(path: str):
    """Every import in a file, function-level included, and every string naming a module of the tree:
    (line, dotted names it may name)."""
    tree = ast.parse(open(path, encoding="utf-8").read(), path)
    docstrings = {id(n.body[0].value) for n in ast.walk(tree)
                  if isinstance(n, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
                  and n.body and isinstance(n.body[0], ast.Expr) and isinstance(n.body[0].value, ast.Constant)}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield node.lineno, [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            yield node.lineno, [node.module] + [f"{node.module}.{a.name}" for a in node.names]
        elif (isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings
              and MODULE_STRING.fullmatch(node.value) and is_module(node.value.partition(":")[0])):
            yield node.lineno, [node.value.partition(":")[0]]


def is_module(dotted: str) -> bool:
    """Is ``dotted`` a module or package of the installed tree (``harness.reports.x`` is reports/x.py)?"""
    path = os.path.join(ROOT, *dotted.split("."))
    return os.path.isfile(path + ".py") or os.path.isdir(path)


def modules(top: str):
    for dirpath, _, files in os.walk(os.path.join(ROOT, top)):
        for f in sorted(files):
            if f.endswith(".py"):
                path = os.path.join(dirpath, f)
                dotted = os.path.relpath(path, os.path.join(ROOT, top))[:-3].replace(os.sep, ".")
                dotted = f"{PACKAGE[top]}.{dotted}".removesuffix(".__init__")
                if dotted != COMPOSITION_ROOT:
                    yield path, dotted


def violations(top: str, table: dict[str, int]) -> list[str]:
    out = []
    for path, mod in modules(top):
        mine = layer(mod, table)
        for line, names in imports(path):
            for name in names:
                if mod == FACADE and name == COMPOSITION_ROOT:
                    continue
                banned = [f for f in FORBIDDEN.get(top, ()) if name == f or name.startswith(f + ".")]
                if banned:
                    out.append(f"{mod} line {line} imports {name} ({top}/ must not import {banned[0]})")
                    continue
                pkg = PACKAGE[top]
                if not name.startswith(pkg + ".") or (top == "harness" and name.startswith(FORBIDDEN["harness"])):
                    continue   # another package, or the package itself (``from harness.reports import export``)
                theirs = layer(name, table)
                if mine and theirs and theirs[1] > mine[1]:
                    out.append(f"{mod} ({mine[0]}) line {line} imports {name} from the higher layer {theirs[0]}")
    return sorted(set(out))


@pytest.mark.parametrize("top,table", [("harness", HARNESS), ("reports", REPORTS)], ids=["harness", "reports"])
def test_no_import_reaches_a_higher_layer(top, table):
    assert violations(top, table) == []


def test_every_module_belongs_to_a_layer():
    for top, table in (("harness", HARNESS), ("reports", REPORTS)):
        loose = [mod for _, mod in modules(top) if layer(mod, table)[0] == PACKAGE[top] and mod != PACKAGE[top]]
        allowed = {"harness.__main__"}
        assert set(loose) <= allowed, f"modules outside any layer folder: {sorted(set(loose) - allowed)}"


def test_the_checker_catches_an_upward_import(tmp_path, monkeypatch):
    """A core module that imports the runner is reported (the test would pass on any tree otherwise)."""
    pkg = tmp_path / "harness" / "core"
    pkg.mkdir(parents=True)
    (pkg / "bad.py").write_text("def f():\n    from harness.run import runner\n    import harness.reports.build\n"
                                "BUILD = 'harness.reports.build:report_for_run'\n")
    (tmp_path / "harness" / "run").mkdir()
    (tmp_path / "harness" / "reports").mkdir()
    (tmp_path / "harness" / "reports" / "build.py").write_text("")
    monkeypatch.setattr("tests.cli.test_layers.ROOT", str(tmp_path))
    found = violations("harness", HARNESS)
    assert any("harness.core.bad (harness.core) line 2 imports harness.run" in v for v in found), found
    assert any("must not import harness.reports" in v for v in found), found
    assert any("line 4 imports harness.reports.build" in v for v in found), found


def test_top_level_entries_stay_few():
    def entries(top):
        return sorted(e for e in os.listdir(os.path.join(ROOT, top)) if e not in ("__pycache__", "out"))   # out: runs
    # harness/ also holds the three symlinks that install the top-level reports/, adapters/ and harness_cli.py
    assert len(entries("harness")) <= 13, entries("harness")
    assert len(entries("reports")) <= 9, entries("reports")
    assert len(entries("tests")) <= 15, entries("tests")   # laid out like the code (docs/development.md)


def test_the_status_type_and_the_vocabulary_name_the_same_statuses():
    from typing import get_args

    from harness.core import records, vocab

    assert get_args(records.Status) == vocab.CELL_STATUSES == records.STATUSES
