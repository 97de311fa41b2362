"""`harness run` on the canonical set with every metric and the reference judge: the report it
writes, and what it prints."""
from __future__ import annotations

import os

from harness.metric import registry

from tests.helpers.synthetic import canonical_run


def test_run_prints_report_path_and_top_divergences():
    run_dir, out = canonical_run()
    lines = out.splitlines()
    report = next(l for l in lines if l.startswith("report: "))
    assert report == f"report: {os.path.join(run_dir, 'index.html')}"
    top = lines[lines.index("largest divergences:") + 1:][:3]
    assert len(top) == 3 and all(" spread " in l and " vs " in l and " - " in l for l in top)
    assert os.path.isfile(os.path.join(run_dir, "report.md"))


def test_canonical_divergences_explain_the_classic_case():
    from harness.reports.build import build

    run_dir, _ = canonical_run()
    built = build(run_dir, os.path.join(run_dir, "rebuilt"))
    divs = {d.case_id: d for d in built.report.divergences}
    cookie = divs["cookie-yield"]
    assert cookie.scores["inhouse.span"] == 0.75 and cookie.scores["deepeval.faithfulness"] == 1.0
    # the lowest is Ragas ResponseGroundedness (an answer-level rating); the reason says so, and names
    # DeepEval's borderline pass on the unstated yield
    assert cookie.rule == "definition" and "rates the whole answer" in cookie.reason
    assert "counting 'borderline' on 'The recipe makes two dozen cookies' as faithful" in cookie.reason
    unstated_at = [i for i, r in enumerate(cookie.rows) if r.label == "not_found"][0]
    unstated = cookie.rows[unstated_at]
    assert unstated.verdicts("deepeval.faithfulness") == {"ambiguous"}
    assert unstated.verdicts("inhouse.span") == {"unsupported"}
    assert cookie.row_reasons[unstated_at].startswith("definition: ") and "'borderline'" in cookie.row_reasons[unstated_at]
    # the inference case: the lowest is a whole-answer judge (MLflow's "no": its prompt forbids inference)
    assert divs["product-age"].rule == "definition" and "rates the whole answer" in divs["product-age"].reason
    assert "Human labels: " in divs["product-age"].reason and "1 inference (follows from the passages" \
        in divs["product-age"].reason
    mixed = divs["mixed-sentence"]
    assert any(t.startswith("decomposition: ") for t in mixed.row_reasons.values())  # the shared sentence
    assert "leave-grounded" not in divs
    # every metric is in the matrix, and the evidence check sees the quoting metrics
    assert len(built.report.data.metrics) == len(registry.names())
    ev = {e.metric for e in built.report.evidence}
    assert "inhouse.span" in ev
