"""`harness run` on the canonical set with every metric and the reference judge: the report it
writes, and what it prints."""
from __future__ import annotations

import os

from tests.synthetic import canonical_run


def test_run_prints_report_path_and_top_divergences():
    run_dir, out = canonical_run()
    lines = out.splitlines()
    report = next(l for l in lines if l.startswith("report: "))
    assert report == f"report: {os.path.join(run_dir, 'index.html')}"
    top = lines[lines.index("largest divergences:") + 1:][:3]
    assert len(top) == 3 and all(" spread " in l and " vs " in l and " - " in l for l in top)
    assert os.path.isfile(os.path.join(run_dir, "report.md"))


def test_canonical_divergences_explain_the_classic_case():
    from reports.build import build

    run_dir, _ = canonical_run()
    built = build(run_dir, os.path.join(run_dir, "rebuilt"))
    divs = {d.case_id: d for d in built.report.divergences}
    cookie = divs["cookie-yield"]
    assert cookie.scores["inhouse.span"] == 0.75 and cookie.scores["deepeval.faithfulness"] == 1.0
    assert cookie.rule == "borderline-passes"
    unstated = [r for r in cookie.rows if r.label == "not_found"][0]
    assert unstated.verdicts("deepeval.faithfulness") == {"ambiguous"}
    assert unstated.verdicts("inhouse.span") == {"unsupported"}
    assert divs["product-age"].rule == "inference-no-span"
    assert divs["mixed-sentence"].row_reasons  # the shared-sentence row is explained
    assert "leave-grounded" not in divs
    # every metric is in the matrix, and the evidence check sees the quoting metrics
    assert len(built.report.data.metrics) == 10
    ev = {e.metric for e in built.report.evidence}
    assert "inhouse.span" in ev
