"""The report leads with the decision: "which metric for which need" first, divergences grouped by reason
with counts (each reason once in the summary), one score matrix, Markdown plots as files linked relatively."""
from __future__ import annotations

import os
import re

import pytest

from tests.helpers.synthetic import canonical_run


@pytest.fixture(scope="module")
def canonical():
    from harness.reports.build import build

    run_dir, _ = canonical_run()
    return build(run_dir, run_dir)


def test_decision_table_from_the_card_facts(canonical):
    from harness.reports.analysis.decision import needs

    by = {n.need: n.recommended for n in needs(canonical.report)}
    assert list(by) == ["a citation promised per claim", "cheap monitoring of production traffic",
                        "answers that may abstain", "non-English answers"]
    # the citation check applies to 2 labelled answers, none ungrounded: its agreement is not measured, so it
    # stays a candidate named in the row, not a recommendation
    assert by["a citation promised per claim"] == ["inhouse.span"]
    row = next(n for n in needs(canonical.report) if n.need == "a citation promised per claim")
    assert "trulens.citation" in row.candidates
    assert by["answers that may abstain"] == ["trulens.groundedness_answerability"]
    assert "deepeval.faithfulness" not in by["cheap monitoring of production traffic"] + by["non-English answers"]
    assert by["cheap monitoring of production traffic"] and by["non-English answers"]


def test_html_and_markdown_lead_with_the_decision(canonical):
    html = open(canonical.html_path, encoding="utf-8").read()
    md = open(canonical.md_path, encoding="utf-8").read()
    h2 = re.findall(r"<h2>([^<]+)</h2>", html)
    assert h2[:3] == ["Which metric for which need", "At a glance", "Score matrix"]
    assert [ln[3:] for ln in md.splitlines() if ln.startswith("## ")][:3] == h2[:3]
    row = next(ln for ln in md.splitlines() if ln.startswith("| a citation promised per claim |"))
    assert row.startswith("| a citation promised per claim | **inhouse.span** |")
    # the canonical cases carry human labels: under the reference judge the column is a definition ceiling,
    # with its interval, n and base rate, and the row links to its evidence
    from harness.reports.render.markup import m

    assert "| " + m("definition ceiling (reference judge): balanced accuracy [95% CI], target hallucinated") + " |" in md
    assert "| " + m("inhouse.span 0.90 [0.62, 1.00] n=21, 52% ungrounded, at ") in row
    assert re.search(r", at \d+\.\d judge calls and [\d,]+ tokens per answer \|", row), row   # and its cost
    assert "[Behaviour facts](#behaviour-facts)" in row and "agreement with labels (balanced accuracy)" not in md


def test_divergences_grouped_by_reason_with_counts(canonical):
    from harness.reports.analysis.decision import groups

    rep = canonical.report
    gs = groups(rep.divergences)
    assert sum(g.count for g in gs) == len(rep.divergences)
    assert len({g.reason for g in gs}) == len(gs) and gs[0].count == max(g.count for g in gs) > 1
    md = open(canonical.md_path, encoding="utf-8").read()
    from harness.reports.render.markdown import m

    assert "**Why:**" not in md   # the reason is the group's, not repeated per case
    for g in gs:   # once in the summary table with its count, once as the group's heading
        assert md.count(f"| {g.count} | {m(g.reason)} |") == 1, g.reason
        assert md.count(f"### {m(g.reason)} ({g.count} case") == 1, g.reason


def test_one_score_matrix_and_relative_plot_files(canonical):
    html = open(canonical.html_path, encoding="utf-8").read()
    md = open(canonical.md_path, encoding="utf-8").read()
    assert html.count('<table class="matrix">') == 1 and "heatmap" not in html and "heatmap" not in md
    links = re.findall(r"!\[[^\]]*\]\(([^)]+)\)", md)
    assert links == ["cost.png", "frontier.svg"]
    for link in links:
        assert not os.path.isabs(link) and os.path.isfile(os.path.join(os.path.dirname(canonical.md_path), link))


def test_agreement_shown_when_known(canonical, monkeypatch):
    from harness.reports.analysis import decision
    from harness.reports.render import decision as decision_render

    monkeypatch.setattr(decision, "standings", lambda rep: {
        "inhouse.span": decision.Standing(0.91, 0.8, 0.97, 60, 30),
        "trulens.citation": decision.Standing(0.6, 0.52, 0.74, 60, 30)})
    monkeypatch.setattr(canonical.report, "decision", decision.compute(canonical.report))
    md = "\n".join(decision_render.markdown(canonical.report))
    assert "definition ceiling (reference judge)" in md
    from harness.reports.render.markup import m

    # each recommendation names the figures it rests on: agreement with its interval and n, then cost
    assert re.search(re.escape(m("inhouse.span 0.91 [0.80, 0.97] n=60, 50% ungrounded, at ")) + r"\d+\.\d judge calls "
                     r"and [\d,]+ tokens per answer; " + re.escape(m("trulens.cite 0.60 [0.52, 0.74] n=60")), md), md


def test_a_run_without_the_probe_cases_reads_the_cards(tmp_path):
    """A team's own cases hold none of the canonical probes: the facts come from the committed cards, the
    report says so, and the recommendations are the cards' (here on two cases and two metrics)."""
    import json

    import harness
    from harness.reports.analysis.data import load_run
    from harness.reports.analysis.decision import needs
    from harness.reports.analysis.facts import from_card, merged, sources
    from harness.reports.build import compute

    from tests.conftest import CANONICAL

    rows = [json.loads(line) for line in open(CANONICAL, encoding="utf-8")][:2]
    for r in rows:
        r["id"] = "own-" + r["id"]
        r["tags"] = ["own"]
    res = harness.evaluate(rows, metrics=["inhouse.span", "deepeval.faithfulness"], out_dir=str(tmp_path),
                           run_id="own", progress=False, report=False)
    rep = compute(load_run(res.run_dir))
    f = merged(rep.data, rep.cells)
    assert {x.source for m in f.values() for x in m.values()} == {"card"}
    assert f["inhouse.span"]["passes-unstated"].answer == from_card("inhouse.span")["passes-unstated"].answer == "no"
    assert "facts files" in sources(f)
    rows = {n.need: n for n in needs(rep)}
    # the cards make inhouse.span the candidate; two labelled answers leave every interval reaching chance
    assert rows["a citation promised per claim"].candidates == ("inhouse.span",)
    assert rows["cheap monitoring of production traffic"].candidates == ("inhouse.span",)
    assert all(not n.recommended for n in rows.values())
    assert rows["cheap monitoring of production traffic"].held == "none: no candidate's agreement is clear of chance"
