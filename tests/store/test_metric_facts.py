"""The run records each metric's facts (score range and direction, unit credit, uses_judge, in_divergence, names,
vendor packages, the report-section handler) in its store, and a report of the run reads them there: a store
whose recorded facts differ from today's adapters reports by the recorded ones; a store written before the facts
table reports by the installed adapters, through the one fallback (``reports/analysis/data.py``); no other module
of reports/ imports the registry."""
from __future__ import annotations

import ast
import json
import os
import shutil
import sqlite3

from harness.metric import registry
from harness.metric.facts import MetricFacts
from harness.metric.protocol import UnitCredit
from harness.reports.analysis import gate
from harness.reports.analysis.data import load_run
from harness.reports.analysis.divergence import spread_metrics
from harness.run.runner import RunOptions, run
from harness.store.runstore import RunStore

import pytest

from tests.conftest import ROOT

METRICS = ["inhouse.span", "baseline.similarity", "deepeval.faithfulness"]
FALLBACK = "reports/analysis/data.py"
"""The one module of reports/ that reads the registry: facts for a store written before they were recorded."""
CARDS = "reports/cards/generate.py"
"""The card generator: it runs every installed metric on the canonical set and documents each class (definition,
flags, shims, hand-written card text), so it reads today's adapters by design; it writes no report of a stored run."""


@pytest.fixture(scope="module")
def stored(canonical, tmp_path_factory):
    """A reference-judge run of three metrics on the canonical cases (its run directory)."""
    out = run(RunOptions(cases=canonical, metrics=METRICS, out_dir=str(tmp_path_factory.mktemp("facts")),
                         run_id="facts", progress=False))
    return out.run_dir


def _copy(run_dir, tmp_path, name="copy") -> str:
    dst = tmp_path / name
    dst.mkdir()
    shutil.copy(os.path.join(run_dir, RunStore.FILENAME), dst / RunStore.FILENAME)
    return str(dst)


def _sql(run_dir, *statements):
    db = sqlite3.connect(os.path.join(run_dir, RunStore.FILENAME))
    try:
        for s, args in statements:
            db.execute(s, args)
        db.commit()
    finally:
        db.close()


def test_the_run_records_each_metrics_facts_as_its_class_declares_them(stored):
    store = RunStore.open(stored)
    try:
        got = store.metric_facts()
    finally:
        store.close()
    assert sorted(got) == sorted(METRICS)
    for m in METRICS:
        assert got[m] == MetricFacts.of(registry.get(m)), m
    assert got["deepeval.faithfulness"].unit_credit == UnitCredit(ambiguous=1.0)
    assert got["baseline.similarity"].in_divergence is False and got["baseline.similarity"].uses_judge is False
    assert got["deepeval.faithfulness"].vendor_packages == tuple(registry.get("deepeval.faithfulness").vendor_packages)


def test_a_report_follows_the_stored_facts_not_todays_adapters(stored, tmp_path):
    from harness.reports.build import build

    before = load_run(stored)
    assert before.info["inhouse.span"].higher_is_better and "baseline.similarity" not in spread_metrics(before)
    gate.bounds([("inhouse.span", 0.5)], [], before)   # a floor on a higher-is-better metric: fine

    run_dir = _copy(stored, tmp_path)
    credit_json = json.dumps({"ambiguous": 0.0, "graded": None, "raw": {}, "raw_rule": ""})
    _sql(run_dir,
         ("UPDATE metric_facts SET display_name = ?, short_name = ?, higher_is_better = 0 WHERE metric = ?",
          ("Span As Recorded", "span-rec", "inhouse.span")),
         ("UPDATE metric_facts SET in_divergence = 1, sort_order = -1 WHERE metric = ?", ("baseline.similarity",)),
         ("UPDATE metric_facts SET unit_credit = ? WHERE metric = ?", (credit_json, "deepeval.faithfulness")))
    data = load_run(run_dir)
    assert data.metrics[0] == "baseline.similarity"   # the recorded display order
    assert data.info["inhouse.span"].display_name == "Span As Recorded"
    assert data.info["inhouse.span"].scale == (0.0, 1.0, False)
    assert "baseline.similarity" in spread_metrics(data)
    assert data.info["deepeval.faithfulness"].unit_credit == UnitCredit()
    with pytest.raises(ValueError, match="a lower score is better"):   # the gate reads the recorded direction
        gate.bounds([("inhouse.span", 0.5)], [], data)
    built = build(run_dir, str(tmp_path / "out"))
    lenient = "counts that as faithful"   # deepeval.faithfulness's own credit rule, said of a borderline verdict
    assert any(lenient in d.reason for d in build(stored, str(tmp_path / "was")).report.divergences)
    assert not any(lenient in d.reason for d in built.report.divergences)   # the recorded rule counts it against
    md = open(built.md_path, encoding="utf-8").read()
    assert "Span As Recorded" in md and "span-rec" in md


def recorded_section(data) -> list:
    """A report-section handler for the test below (the store names it; no metric class does)."""
    from harness.reports.model.blocks import Section

    return [Section("recorded-section", "Section The Run Recorded", [f"{len(data.case_ids)} cases"])]


def test_the_report_calls_the_section_handler_the_run_recorded(stored, tmp_path):
    from harness.reports.build import build

    assert all(load_run(stored).info[m].report_sections is None for m in METRICS)
    run_dir = _copy(stored, tmp_path)
    _sql(run_dir, ("UPDATE metric_facts SET report_sections = ? WHERE metric = ?",
                   (f"{__name__}:recorded_section", "inhouse.span")))
    md = open(build(run_dir, str(tmp_path / "out")).md_path, encoding="utf-8").read()
    assert "Section The Run Recorded" in md


def test_an_older_store_reports_by_the_installed_adapters(stored, tmp_path):
    from harness.reports.build import build

    run_dir = _copy(stored, tmp_path)
    _sql(run_dir, ("DROP TABLE metric_facts", ()))
    store = RunStore.open(run_dir)   # read-only: the table stays absent
    try:
        assert store.metric_facts() == {}
    finally:
        store.close()
    data = load_run(run_dir)
    new = load_run(stored)
    assert data.metrics == new.metrics and data.info == new.info
    built = build(run_dir, str(tmp_path / "out"))
    assert os.path.isfile(built.md_path)


def test_an_older_store_gets_the_table_when_opened_for_writing(stored, tmp_path):
    run_dir = _copy(stored, tmp_path)
    _sql(run_dir, ("DROP TABLE metric_facts", ()))
    store = RunStore.open(run_dir, readonly=False)
    try:
        assert store.metric_facts() == {}
        store.write_metric_facts([MetricFacts.of(registry.get("inhouse.span"))])
        assert list(store.metric_facts()) == ["inhouse.span"]
    finally:
        store.close()


def _imports_registry(path: str) -> list[int]:
    """Lines of ``path`` that import harness.metric.registry (any spelling, function-level included)."""
    out = []
    for node in ast.walk(ast.parse(open(path, encoding="utf-8").read(), path)):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
        else:
            continue
        if any(n == "harness.metric.registry" or n.startswith("harness.metric.registry.") for n in names):
            out.append(node.lineno)
    return out


def test_only_the_fallback_reads_the_registry_in_reports():
    found = {}
    for dirpath, _, files in os.walk(os.path.join(ROOT, "reports")):
        for f in files:
            if f.endswith(".py"):
                rel = os.path.relpath(os.path.join(dirpath, f), ROOT).replace(os.sep, "/")
                lines = _imports_registry(os.path.join(ROOT, rel))
                if lines:
                    found[rel] = lines
    assert FALLBACK in found   # the scan sees it (else it would pass by seeing nothing)
    assert set(found) - {FALLBACK, CARDS} == set(), found


def test_the_stored_spec_reads_back_as_a_typed_record(stored):
    store = RunStore.open(stored)
    try:
        raw, spec = store.spec(), store.run_spec()
    finally:
        store.close()
    assert spec.to_json() == raw   # every key the run wrote, typed and back
    assert spec.run_id == "facts" and spec.is_reference and spec.judge.kind == "reference"
    assert spec.metric_names == tuple(METRICS) and spec.cases.n == len(load_run(stored).case_ids)
    assert spec.metrics[0].display_name == registry.get(METRICS[0]).display_name and spec.other == {}
