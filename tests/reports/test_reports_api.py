"""The report's public entry point (``from harness import reports``): a run's report as data for notebooks, from an
:class:`harness.EvalResult` or a run directory, read from the store."""
from __future__ import annotations

import subprocess
import sys

import harness
from harness import reports

import pytest


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    out = tmp_path_factory.mktemp("runs")
    return harness.evaluate("datasets/canonical.jsonl", metrics=["inhouse.span", "baseline.similarity"],
                            out_dir=str(out), run_id="api", progress=False, report=False)


def test_importing_reports_loads_nothing():
    code = ("import sys; from harness import reports; "
            "print(sorted(m for m in sys.modules if m.startswith(('harness.reports.', 'pandas'))))")
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True).stdout.strip() == "[]"


def test_load_from_a_result_or_its_folder(run):
    rep = reports.load(run)
    assert rep.data.case_ids == run.case_ids and rep.data.metrics == run.metrics
    again = reports.load(run.run_dir)
    assert [(s.metric, s.mean, s.n_scored) for s in again.summaries] == [(s.metric, s.mean, s.n_scored)
                                                                           for s in rep.summaries]
    means = {s.metric: s.mean for s in rep.summaries}
    assert means["inhouse.span"] == pytest.approx(run.scores["inhouse.span"].mean())


def test_sections_as_tables_and_markdown(run):
    rep = reports.load(run)
    tables = reports.frames(rep, "agreement")
    answers = next(t for cap, t in tables.items() if cap.startswith("Answers, target: hallucinated"))
    assert list(answers["metric"]) == [rep.names[m] for m in run.metrics]
    assert reports.markdown(rep, "agreement").startswith("## ")
    with pytest.raises(KeyError, match="no section 'nope' in this report; it has: .*agreement"):
        reports.section(rep, "nope")


def test_alignment_puts_each_metric_on_the_claims(run):
    rep = reports.load(run)
    table = reports.alignment(rep, "cookie-yield")
    claims = table[table["row"] == "claim"]
    assert list(claims["label"]) == ["supported", "supported", "supported", "not_found"]
    assert claims["inhouse.span"].iloc[-1].startswith("\u2717 unsupported")
    with pytest.raises(KeyError, match="no case 'nope' in run api"):
        reports.alignment(rep, "nope")


def test_write_puts_the_report_where_asked(run, tmp_path):
    reports.load(run)   # imports the module harness.reports.build: the entry point's names must not be shadowed by it
    built = reports.write(run, str(tmp_path))
    assert built.html_path.startswith(str(tmp_path)) and open(built.md_path, encoding="utf-8").read().startswith("# ")
