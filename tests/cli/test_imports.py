"""The import graph of the project's own modules, read with ``ast`` (every import statement,
function-level ones included; nothing is imported): no cycles, and nothing pointing up — harness/
(the engine) imports neither reports/ nor adapters/, adapters/ never import reports/ (but for a
metric's own report sections, ``adapters/<vendor>/report.py``, loaded only when a report is built) nor
the reference judge."""
from __future__ import annotations

import ast
import os

from tests.conftest import ROOT

PACKAGES = {"harness": "harness", "adapters": "harness.adapters", "reports": "harness.reports"}
"""Folder -> the package it is installed as (harness/adapters and harness/reports are symlinks to the folders)."""
TOP_MODULES = {"harness_cli": "harness.console"}
"""Top-level file -> the module it is installed as (harness/console.py is a symlink to it)."""
FORBIDDEN = {"harness": ("reports", "adapters", "console"), "adapters": ("reports", "console"),
             "reports": ("console",)}
"""layer -> the layers it must not import (the composition root, harness.console, imports them all)."""
REPORT_PLUGIN = "report"
"""``adapters.<vendor>.report``: a metric's own report and card sections (its ``report_sections`` and
``card_sections`` hooks import it lazily); it builds report blocks, so it may import reports/."""
FORBIDDEN_MODULES = {"adapters": ("harness.judge.reference",)}
"""layer -> modules it must not import: adapters' code (scoring or judge handlers) reads a case's
annotation through the Case's own views, never through the reference judge."""


def project_modules() -> dict[str, str]:
    """Dotted module name -> file, for every module of the project's packages and top modules."""
    out = {name: os.path.join(ROOT, f"{top}.py") for top, name in TOP_MODULES.items()}
    for folder_name, pkg in PACKAGES.items():
        top = os.path.join(ROOT, folder_name)
        for folder, _dirs, files in os.walk(top):   # the symlinks under harness/ are not followed
            for f in files:
                path = os.path.join(folder, f)
                if f.endswith(".py") and not os.path.islink(path):
                    rel = f"{pkg}." + os.path.relpath(path, top)[:-3].replace(os.sep, ".")
                    out[rel[: -len(".__init__")] if rel.endswith(".__init__") else rel] = path
    return out


def layer_of(module: str) -> str:
    """The layer a module belongs to: harness (the engine), adapters, reports or console.

    >>> layer_of("harness.adapters.ragas.faithfulness"), layer_of("harness.reports"), layer_of("harness.core.vocab")
    ('adapters', 'reports', 'harness')
    """
    for name in ("adapters", "reports", "console"):
        if module == f"harness.{name}" or module.startswith(f"harness.{name}."):
            return name
    return "harness"


def imports_of(path: str, module: str, known: set[str]) -> set[str]:
    """The project modules that ``module`` imports anywhere in its file."""
    tree = ast.parse(open(path, encoding="utf-8").read(), path)
    is_pkg = path.endswith("__init__.py")
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = module.split(".")[: len(module.split(".")) - node.level + (1 if is_pkg else 0)]
                base = ".".join(parts + ([base] if base else []))
            targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in known else base for a in node.names]
        else:
            continue
        for t in targets:
            while t and t not in known:   # "harness.judge.reference.handler" -> "harness.judge.reference"
                t = t.rpartition(".")[0]
            if t and t != module:
                out.add(t)
    return out


def graph() -> dict[str, set[str]]:
    mods = project_modules()
    return {m: imports_of(p, m, set(mods)) for m, p in mods.items()}


def cycles(g: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan), each sorted."""
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in g.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(g):
        if v not in index:
            visit(v)
    return sorted(out)


def test_the_graph_is_read():
    g = graph()
    assert "harness.metric.registry" in g and "harness.metric.protocol" in g["harness.metric.registry"]
    assert "harness.cli.run" in g["harness.console"] and "harness.reports.commands.report" in g["harness.console"]
    assert "harness.adapters.inhouse.span" in g and "harness.reports.build" in g


def test_no_import_cycles():
    found = cycles(graph())
    assert not found, "import cycles: " + "; ".join(" <-> ".join(c) for c in found)


def test_cycle_detection_finds_a_cycle():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_nothing_points_up():
    bad = [f"{m} imports {t}" for m, targets in graph().items() for t in sorted(targets)
           if (layer_of(t) in FORBIDDEN.get(layer_of(m), ()) and not is_report_plugin(m, t))
           or t in FORBIDDEN_MODULES.get(layer_of(m), ())]
    assert not bad, "\n".join(bad)


def is_report_plugin(module: str, target: str) -> bool:
    """A metric's report module importing reports/ (its sections are report blocks).

    >>> is_report_plugin("harness.adapters.cascade.report", "harness.reports.model.blocks")
    True
    >>> is_report_plugin("harness.adapters.cascade.similarity_span", "harness.reports.model.blocks")
    False
    """
    parts = module.split(".")
    return (len(parts) == 4 and parts[:2] == ["harness", "adapters"] and parts[3] == REPORT_PLUGIN
            and target.startswith("harness.reports."))
