"""One report model, built once, laid out twice: the HTML and the Markdown report come from the same
:class:`harness.reports.model.report.Report`, and rendering builds nothing (issue 31.2).

reports/analysis/ computes, reports/model/ builds the sections from its results, reports/render/ only lays
them out: a renderer imports nothing from the analysis and calls no function of the model.
"""
from __future__ import annotations

import ast
import importlib
import inspect
import os
import pkgutil

import pytest

from tests.conftest import ROOT
from tests.helpers.synthetic import synthetic_run

RENDER = os.path.join(ROOT, "reports", "render")


@pytest.fixture(scope="module")
def store(tmp_path_factory, canonical):
    return synthetic_run(str(tmp_path_factory.mktemp("model")), canonical)


def _modules(package: str):
    pkg = importlib.import_module(package)
    for info in pkgutil.iter_modules(pkg.__path__):
        yield importlib.import_module(f"{package}.{info.name}")


def _computing_functions():
    """(module, name) of every function the analysis and the model define: what builds a report's content."""
    for package in ("harness.reports.analysis", "harness.reports.model"):
        for mod in _modules(package):
            for name, obj in vars(mod).items():
                if inspect.isfunction(obj) and obj.__module__ == mod.__name__:
                    yield mod, name


def _forbid_building(monkeypatch) -> list[str]:
    """Every analysis and model function replaced by one that records its name and raises, both where it is
    defined and wherever a renderer holds it by name; the list of the names called."""
    called: list[str] = []

    def trap(qual):
        def raiser(*args, **kwargs):
            called.append(qual)
            raise AssertionError(f"{qual} called while rendering")
        return raiser

    for mod, name in _computing_functions():
        monkeypatch.setattr(mod, name, trap(f"{mod.__name__}.{name}"))
    for mod in _modules("harness.reports.render"):
        for name, obj in list(vars(mod).items()):
            if inspect.isfunction(obj) and obj.__module__.startswith(("harness.reports.analysis",
                                                                       "harness.reports.model")):
                monkeypatch.setattr(mod, name, trap(f"{obj.__module__}.{obj.__name__} (as {mod.__name__}.{name})"))
    return called


def test_html_and_markdown_are_laid_out_from_one_model_without_building_a_section(store, monkeypatch):
    from harness.reports.analysis.data import load_run
    from harness.reports.model.report import compute
    from harness.reports.render import html, markdown

    rep = compute(load_run(store))
    before_html, before_md = html.render(rep, b"png"), markdown.render(rep, images={"cost": "cost.png"})
    assert sum(1 for _ in _computing_functions()) > 100   # the trap below covers the analysis and the model
    called = _forbid_building(monkeypatch)

    page, md = html.render(rep, b"png"), markdown.render(rep, images={"cost": "cost.png"})

    assert called == []
    assert page == before_html and md == before_md   # the same model laid out again: the same report
    # both renderers show every section of the model, under the same titles
    for sec in list(rep.sections.values()) + rep.extra:
        assert f'id="{sec.key}"' in page and f"## {sec.title}" in md, sec.key


def test_the_trap_catches_a_renderer_that_builds(store, monkeypatch):
    """A renderer that built a section itself would be caught (the test above would pass on no tree otherwise)."""
    from harness.reports.analysis.data import load_run
    from harness.reports.model import sections as S
    from harness.reports.model.report import compute
    from harness.reports.render import markdown

    rep = compute(load_run(store))
    called = _forbid_building(monkeypatch)
    monkeypatch.setattr(markdown, "_cost", lambda rep, im: [str(S.cost_section(rep))])
    with pytest.raises(AssertionError, match="cost_section called while rendering"):
        markdown.render(rep)
    assert called == ["harness.reports.model.sections.cost_section"]


def test_each_section_is_built_exactly_once_per_report(store, tmp_path, monkeypatch):
    from harness.reports import build as build_module
    from harness.reports.model import divergence_view, report
    from harness.reports.model import sections as S

    counts: dict[str, int] = {}

    def counted(mod, name):
        real = getattr(mod, name)

        def wrapper(*args, **kwargs):
            counts[name] = counts.get(name, 0) + 1
            return real(*args, **kwargs)
        monkeypatch.setattr(mod, name, wrapper)

    for name in ("metrics_section", "cost_section", "evidence_section"):
        counted(S, name)
    counted(report, "divergence_section")
    counted(divergence_view, "divergence_section")
    counted(report.case_index, "build")
    counted(report.decision, "groups")

    built = build_module.build(os.path.dirname(store), str(tmp_path))

    assert counts == {"metrics_section": 1, "cost_section": 1, "evidence_section": 1, "divergence_section": 1,
                      "build": 1, "groups": 1}
    assert os.path.isfile(built.html_path) and os.path.isfile(built.md_path)


def test_every_section_of_the_model_is_one_type(store):
    from harness.reports.analysis.data import load_run
    from harness.reports.model import blocks, sections
    from harness.reports.model.report import compute

    rep = compute(load_run(store))
    assert all(type(s) is blocks.Section for s in list(rep.sections.values()) + rep.extra)
    kinds = [name for mod in _modules("harness.reports.model") for name, obj in vars(mod).items()
             if inspect.isclass(obj) and obj.__module__ == mod.__name__ and name.endswith(("Section", "Block"))]
    assert kinds == ["Section"], kinds
    assert not hasattr(sections, "TableSection") and not hasattr(blocks, "Block")


def _render_imports():
    """(file, line, imported dotted name, the names it binds) for every harness.reports import under render/."""
    for f in sorted(os.listdir(RENDER)):
        if not f.endswith(".py"):
            continue
        path = os.path.join(RENDER, f)
        tree = ast.parse(open(path, encoding="utf-8").read(), path)
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("harness.reports"):
                for a in node.names:
                    yield f, node.lineno, f"{node.module}.{a.name}", a.asname or a.name, tree
            elif isinstance(node, ast.Import):
                for a in node.names:
                    if a.name.startswith("harness.reports"):
                        yield f, node.lineno, a.name, a.asname or a.name, tree


def test_renderers_import_nothing_that_computes():
    """A renderer imports from the model only types and words (classes and constants), never a function, and
    nothing from the analysis; a model module imported whole is used only for its types and words."""
    bad = []
    for f, line, dotted, bound, tree in _render_imports():
        if dotted.startswith("harness.reports.analysis"):
            bad.append(f"{f}:{line} imports {dotted} (the analysis)")
            continue
        if not dotted.startswith("harness.reports.model"):
            continue
        mod_name, _, attr = dotted.rpartition(".")
        try:
            obj = importlib.import_module(dotted)   # a module imported whole
        except ImportError:
            obj = getattr(importlib.import_module(mod_name), attr)
        if inspect.ismodule(obj):
            used = {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute)
                    and isinstance(n.value, ast.Name) and n.value.id == bound}
            bad += [f"{f}:{line} uses {dotted}.{u} (a function)" for u in sorted(used)
                    if inspect.isfunction(getattr(obj, u, None))]
        elif inspect.isfunction(obj):
            bad.append(f"{f}:{line} imports {dotted} (a function)")
    assert bad == []


def test_no_analysis_module_builds_a_section_or_imports_a_renderer():
    from tests.cli.test_layers import imports

    analysis = os.path.join(ROOT, "reports", "analysis")
    bad = [f"{f}:{line} imports {n}" for f in sorted(os.listdir(analysis)) if f.endswith(".py")
           for line, names in imports(os.path.join(analysis, f)) for n in names
           if n.startswith(("harness.reports.model", "harness.reports.render"))]
    assert bad == []
