"""The run report, on a synthetic store (no vendor code): matrix marks, divergences, statistics,
cost, evidence, escaping, and the ``harness report`` command."""
from __future__ import annotations

import json
import os
import re

from harness.cases.load import load_cases

import pytest

from tests.conftest import CANONICAL
from tests.helpers.synthetic import SCRIPT_A, SCRIPT_Q, synthetic_run, write_hostile_cases


@pytest.fixture(scope="module")
def synthetic(tmp_path_factory):
    """A synthetic 8-metric run of the canonical cases plus one case full of markup."""
    d = tmp_path_factory.mktemp("synthetic")
    lines = open(CANONICAL, encoding="utf-8").read().rstrip("\n")
    hostile = write_hostile_cases(str(d / "h.jsonl"), case_id="xss-<script>document.title='ID'</script>")
    path = str(d / "cases.jsonl")
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(lines + "\n" + open(hostile, encoding="utf-8").read())
    synthetic_run(str(d / "run"), load_cases(path))
    from harness.reports.build import build

    return build(str(d / "run"))


def test_matrix_marks_are_not_numbers(synthetic):
    from harness.reports.analysis.matrix import build

    data = synthetic.report.data
    cells = build(data)
    assert cells[("empty-answer", "inhouse.span")].label == "unscored"
    assert cells[("empty-answer", "ragas.faithfulness")].label == "NaN"
    assert cells[("cookie-yield", "trulens.citation")].label == "n/a"
    assert cells[("abstain-answerable", "deepeval.faithfulness")].label == "1.00*"
    html = open(synthetic.html_path, encoding="utf-8").read()
    assert ('<td class="s-unscored" title="no claims: the answer asserts nothing checkable">'
            '<a href="#c-empty-answer">unscored</a></td>') in html   # a matrix cell links to its case
    assert '<td class="s-vendor_nan"' in html and '<td class="s-not_applicable"' in html
    md = open(synthetic.md_path, encoding="utf-8").read()
    row = next(line for line in md.splitlines() if line.startswith("| empty-answer |"))
    assert "_unscored_" in row and "_NaN_" in row and " 0.00 " not in row.split("|")[2]


def test_divergences_sorted_with_reasons(synthetic):
    divs = synthetic.report.divergences
    spreads = [d.spread for d in divs]
    assert spreads == sorted(spreads, reverse=True)
    by_id = {d.case_id: d for d in divs}
    cookie = by_id["cookie-yield"]
    assert cookie.rule == "definition" and cookie.high == ("deepeval.faithfulness", 1.0)
    assert "counting 'borderline'" in cookie.reason
    from harness.reports.analysis.reasons import FALLBACK, KINDS

    for d in divs:   # every reason names its kind (or is the plain fallback)
        assert d.reason == FALLBACK if d.rule == "unexplained" else (d.rule in KINDS and d.reason.startswith(d.rule))
    assert by_id["product-age"].rule == "judgement" and "Human label: inference" in by_id["product-age"].reason
    # cases whose scored metrics agree are not divergent
    assert "leave-grounded" not in by_id and "release-date-contradicted" not in by_id
    # the alignment: the annotation's four cookie claims are the rows; the last is the unstated one
    claims = [r for r in cookie.rows if r.kind == "claim"]
    assert [r.label for r in claims] == ["supported", "supported", "supported", "not_found"]
    assert claims[3].verdicts("deepeval.faithfulness") == {"ambiguous"}
    assert claims[3].verdicts("inhouse.span") == {"unsupported"}
    assert any(r.kind == "answer" for r in cookie.rows)  # Ragas RG judges the whole answer


def test_threshold_is_configurable(synthetic, tmp_path):
    from harness.reports.build import build

    run = synthetic.report.data.run_dir
    high = build(run, str(tmp_path / "hi"), threshold=0.6)
    assert {d.case_id for d in high.report.divergences} <= {d.case_id for d in synthetic.report.divergences}
    assert all(d.spread >= 0.6 for d in high.report.divergences)
    assert "cookie-yield" not in {d.case_id for d in high.report.divergences}
    assert "at least 0.60 apart" in open(high.md_path, encoding="utf-8").read()


def test_summary_counts_and_interval(synthetic):
    by_metric = {s.metric: s for s in synthetic.report.summaries}
    span = by_metric["inhouse.span"]
    assert span.counts["unscored"] == 3 and span.n_scored == 22
    assert span.low <= span.mean <= span.high
    reasons = dict(span.reasons["unscored"])
    assert reasons["no claims: the answer asserts nothing checkable"] == [
        "abstain-answerable", "abstain-unanswerable", "empty-answer"]
    cite = by_metric["trulens.citation"]
    assert cite.counts["not_applicable"] == 23 and cite.n_scored == 2


def test_bootstrap_is_seeded():
    from harness.reports.analysis.stats import bootstrap_ci

    xs = [((i * 7919) % 101) / 100 for i in range(15)]
    assert bootstrap_ci(xs) == bootstrap_ci(xs)
    assert bootstrap_ci(xs, seed=1) != bootstrap_ci(xs, seed=2)


def test_cost_and_evidence(synthetic):
    costs = {c.metric: c for c in synthetic.report.costs}
    assert costs["inhouse.span"].calls == 1.0  # the synthetic ledger: 1 + position % 3
    assert costs["ragas.faithfulness"].calls == 2.0
    assert costs["trulens.citation"].answers == 2  # not-applicable cells are not answers
    ev = {e.metric: e for e in synthetic.report.evidence}
    assert set(ev) == {"inhouse.span"}  # only it quotes evidence in the synthetic run
    assert ev["inhouse.span"].share == 1.0 and ev["inhouse.span"].checked > 20


def test_html_is_self_contained_and_escaped(synthetic):
    from harness.reports.render.case_browser import STATIC

    page = open(synthetic.html_path, encoding="utf-8").read()
    # the only scripts: the case browser's data (JSON, with < > & escaped) and its own code, as shipped
    scripts = re.findall(r"<script([^>]*)>(.*?)</script>", page, flags=re.S | re.I)
    assert [a for a, _ in scripts] == [' type="application/json" id="cb-data"', ""]
    assert "<" not in scripts[0][1] and json.loads(scripts[0][1])["cases"]
    assert scripts[1][1] == open(os.path.join(STATIC, "case_browser.js"), encoding="utf-8").read()
    html = re.sub(r"<script[^>]*>.*?</script>", "", page, flags=re.S | re.I)
    assert "<script" not in html.lower()
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", page)
    assert "&lt;script&gt;document.title=&#x27;ID&#x27;&lt;/script&gt;" in html  # the case id
    assert "&lt;script&gt;document.title=&#x27;PWNED-Q&#x27;&lt;/script&gt;" in html  # the question
    assert "onerror=" not in html.replace("onerror=&quot;", "")
    assert html.count("data:image/png;base64,") == 1   # the cost chart; the score matrix is the table alone
    for title in ("Score matrix", "Where they diverge", "Per metric", "Cost per metric", "Evidence check"):
        assert f">{title}</h2>" in html
    assert "judge: reference (annotation-driven)" in html


def test_markdown_is_escaped(synthetic):
    md = open(synthetic.md_path, encoding="utf-8").read()
    assert "<script" not in md.lower()
    assert SCRIPT_Q not in md and SCRIPT_A not in md
    assert "&lt;script&gt;" in md
    assert "](cost.png)" in md and "heatmap" not in md
    assert os.path.isfile(os.path.join(os.path.dirname(synthetic.md_path), "cost.png"))
    # every row of every table has as many unescaped cell separators as its header
    widths = []
    for line in md.splitlines() + [""]:
        if line.startswith("|"):
            widths.append(len(re.findall(r"(?<!\\)\|", line)))
        elif widths:
            assert len(set(widths)) == 1, widths
            widths = []


def test_changed_case_file_hides_texts(synthetic, tmp_path):
    """A case edited since the run is shown without its text, with a note."""
    from harness.reports.analysis.data import load_run

    data = synthetic.report.data
    path = tmp_path / "edited.jsonl"
    rows = [json.loads(line) for line in open(CANONICAL, encoding="utf-8")]
    rows[0]["question"] = "edited?"
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    again = load_run(data.run_dir, cases_path=str(path))
    assert "cookie-yield" not in again.cases and "product-age" in again.cases
    assert "changed or missing" in again.case_note


def test_report_command(synthetic, tmp_path, capsys):
    from harness.console import main

    run = synthetic.report.data.run_dir
    assert main(["report", run, "--report-dir", str(tmp_path), "--divergence-threshold", "0.5"]) == 0
    out = capsys.readouterr().out
    assert f"report: {tmp_path}/index.html" in out
    top = out.split("largest divergences:\n", 1)[1].splitlines()
    assert len(top) == 3 and all("spread 1.00" in line for line in top)
    assert main(["report", "no-such-run", "--out", str(tmp_path)]) == 2
    assert main(["report", run, "--divergence-threshold", "1.5"]) == 2
