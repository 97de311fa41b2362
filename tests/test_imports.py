"""The import graph of the project's own modules, read with ``ast`` (every import statement,
function-level ones included; nothing is imported): no cycles, and nothing pointing up — harness/
(the engine) imports neither reports/ nor adapters/, adapters/ never import reports/ (but for a
metric's own report sections, ``adapters/<vendor>/report.py``, loaded only when a report is built) nor
the reference judge."""
from __future__ import annotations

import ast
import os

from tests.conftest import ROOT

PACKAGES = ("harness", "adapters", "reports")
TOP_MODULES = ("harness_cli",)
FORBIDDEN = {"harness": ("reports", "adapters", "harness_cli"), "adapters": ("reports", "harness_cli"),
             "reports": ("harness_cli",)}
"""layer -> the layers it must not import (the composition root, harness_cli, imports them all)."""
REPORT_PLUGIN = "report"
"""``adapters.<vendor>.report``: a metric's own report and card sections (its ``report_sections`` and
``card_sections`` hooks import it lazily); it builds report blocks, so it may import reports/."""
FORBIDDEN_MODULES = {"adapters": ("harness.judge.reference",)}
"""layer -> modules it must not import: adapters' code (scoring or judge handlers) reads a case's
annotation through the Case's own views, never through the reference judge."""


def project_modules() -> dict[str, str]:
    """Dotted module name -> file, for every module of the project's packages and top modules."""
    out = {name: os.path.join(ROOT, f"{name}.py") for name in TOP_MODULES}
    for pkg in PACKAGES:
        for folder, _dirs, files in os.walk(os.path.join(ROOT, pkg)):
            for f in files:
                if f.endswith(".py"):
                    rel = os.path.relpath(os.path.join(folder, f), ROOT)[:-3].replace(os.sep, ".")
                    out[rel[: -len(".__init__")] if rel.endswith(".__init__") else rel] = os.path.join(folder, f)
    return out


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
    assert "harness.cli.run" in g["harness_cli"] and "reports.commands.report" in g["harness_cli"]


def test_no_import_cycles():
    found = cycles(graph())
    assert not found, "import cycles: " + "; ".join(" <-> ".join(c) for c in found)


def test_cycle_detection_finds_a_cycle():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_nothing_points_up():
    bad = [f"{m} imports {t}" for m, targets in graph().items() for t in sorted(targets)
           if (t.split(".")[0] in FORBIDDEN.get(m.split(".")[0], ()) and not is_report_plugin(m, t))
           or t in FORBIDDEN_MODULES.get(m.split(".")[0], ())]
    assert not bad, "\n".join(bad)


def is_report_plugin(module: str, target: str) -> bool:
    """A metric's report module importing reports/ (its sections are report blocks).

    >>> is_report_plugin("adapters.cascade.report", "reports.model.blocks")
    True
    >>> is_report_plugin("adapters.cascade.similarity_span", "reports.model.blocks")
    False
    """
    parts = module.split(".")
    return len(parts) == 3 and parts[0] == "adapters" and parts[2] == REPORT_PLUGIN and target.startswith("reports.")
