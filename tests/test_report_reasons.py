"""The divergence reason rules (reports/reasons.py), one table row per situation the report must
explain, plus the alignment they read."""
from __future__ import annotations

import pytest

from harness.model import Annotation, Case, Claim, Context, Evidence
from reports.alignment import Mark, Row, Unit, align
from reports.reasons import RULES, explain_case, explain_row, row_disagrees

CTX = (Context("1", "Bake at 350 F."), Context("2", "Cool on a rack."))


def row(label, kind="claim", claim=None, **verdicts):
    """A row whose metrics (keyword = metric with dots as __) gave (verdict, raw) pairs."""
    r = Row(kind, "text", (0, 4), label, claim)
    for key, (verdict, raw) in verdicts.items():
        metric = key.replace("__", ".")
        r.marks[metric] = [Mark(Unit(metric, 0, "text", verdict, raw))]
    return r


S, U, A = "supported", "unsupported", "ambiguous"
CASES = [
    # id, row, pair (low, high), expected rule
    ("unstated-claim-deepeval-passes",
     row("not_found", inhouse__span=(U, "not_found"), deepeval__faithfulness=(A, "borderline")),
     ("inhouse.span", "deepeval.faithfulness"), "borderline-passes"),
    ("penalized-variant-does-not-trigger-the-borderline-rule",
     row("not_found", inhouse__span=(U, "not_found"), deepeval__faithfulness_penalized=(U, "borderline"),
         ragas__faithfulness=(S, "1")),
     ("inhouse.span", "ragas.faithfulness"), "fallback"),
    ("inference-without-span",
     row("inference", inhouse__span=(U, "supported (no span)"), ragas__faithfulness=(S, "1")),
     ("inhouse.span", "ragas.faithfulness"), "inference-no-span"),
    ("trulens-two-of-three",
     row("inference", trulens__groundedness=(A, "2/3"), ragas__faithfulness=(S, "1")),
     ("trulens.groundedness", "ragas.faithfulness"), "inference-two-of-three"),
    ("abstention-grounded",
     row("abstention", "abstention", trulens__groundedness=(S, "3/3"), trulens__groundedness_answerability=(U, "x")),
     ("trulens.groundedness", "inhouse.span"), "abstention-grounded"),
    ("abstention-answerable",
     row("abstention", "abstention", trulens__groundedness=(S, "3/3"), trulens__groundedness_answerability=(U, "x")),
     ("trulens.groundedness_answerability", "ragas.response_groundedness"), "abstention-answerable"),
    ("contradiction-passed",
     row("contradicted", ragas__faithfulness=(S, "1"), inhouse__span=(U, "contradicted")),
     ("inhouse.span", "ragas.faithfulness"), "contradiction-passed"),
    ("stated-claim-failed",
     row("supported", ragas__faithfulness=(U, "0"), inhouse__span=(S, "supported")),
     ("ragas.faithfulness", "inhouse.span"), "stated-claim-failed"),
]


@pytest.mark.parametrize("r,pair,expected", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_case_rule(r, pair, expected):
    assert explain_case([r], pair)[0] == expected


def test_miscited_marker_explains_the_citation_metric():
    claim = Claim("Bake at 350 F.", (0, 13), "supported", (Evidence("1", 0, 13),), cited_context_id="2")
    case = Case("c", "q", CTX, "Bake at 350 F [2].", Annotation((claim,), True, False))
    rule, text = explain_case([], ("trulens.citation", "inhouse.span"), case)
    assert rule == "miscited-answer" and "[N] marker" in text
    assert explain_row(row("supported", claim=claim, trulens__citation=(U, "0")), ["trulens.citation"], case)


def test_empty_answer_rule_and_names():
    case = Case("e", "q", CTX, "", Annotation((), True, False))
    rule, _ = explain_case([], ("trulens.groundedness", "deepeval.faithfulness"), case)
    assert rule == "empty-answer"
    _, text = explain_case([row("contradicted", ragas__faithfulness=(S, "1"))], ("ragas.faithfulness", "x"),
                           names={"ragas.faithfulness": "Ragas Faithfulness"})
    assert text.startswith("Ragas Faithfulness passes")


def test_rule_names_unique_and_subjects_valid():
    names = [r.name for r in RULES]
    assert len(names) == len(set(names))
    assert all(r.scope in ("row", "case") for r in RULES)


def test_row_disagreement():
    agree = row("supported", inhouse__span=(S, "supported"), ragas__faithfulness=(S, "1"))
    assert not row_disagrees(agree, ["inhouse.span", "ragas.faithfulness"])
    lenient = row("not_found", deepeval__faithfulness=(A, "borderline"), inhouse__span=(U, "not_found"))
    assert row_disagrees(lenient, ["deepeval.faithfulness", "inhouse.span"])
    partial = row("inference", trulens__groundedness=(A, "2/3"))
    assert row_disagrees(partial, ["trulens.groundedness"])


def test_alignment_shared_sentence_and_whole_answer():
    answer = "Bake at 350 F for 8 minutes. Great question!"
    claims = (Claim("350 F", (0, 13), "supported"), Claim("8 minutes", (14, 27), "not_found"))
    case = Case("c", "q", CTX, answer, Annotation(claims, True, False))
    units = [Unit("trulens.groundedness", 0, answer[:28], A, "2/3", "sentence", (0, 28)),
             Unit("trulens.groundedness", 1, "Great question!", "excluded", "trivial", "sentence", (29, 44)),
             Unit("ragas.response_groundedness", 0, answer, A, "1", "judge", (0, 44)),
             Unit("deepeval.faithfulness", 0, "It takes 8 minutes.", A, "borderline", "claim", None)]
    rows = align(case, units)
    assert [r.kind for r in rows] == ["claim", "claim", "other", "answer", "unaligned"]
    assert all(r.marks["trulens.groundedness"][0].shared for r in rows[:2])
    assert rows[2].text == "Great question!"
    rule, text = explain_case(rows, ("trulens.groundedness", "ragas.response_groundedness"), case)
    assert rule == "shared-sentence" and "whole sentences" in text
