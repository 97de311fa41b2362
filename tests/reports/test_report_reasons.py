"""Divergence reasons (reports/analysis/reasons.py) derived from the metrics' unit verdicts and scoring rules:
one table row per situation, each with the kind it must name, plus the alignment they read."""
from __future__ import annotations

from harness.core.records import Annotation, Case, Claim, Context
from harness.metric import registry
from harness.metric.facts import MetricFacts
from harness.reports.analysis.alignment import Mark, Row, Unit, align
from harness.reports.analysis.reasons import KINDS, case_reason, credit, explain_case, explain_row, row_disagrees

import pytest

CTX = (Context("1", "Bake at 350 F."), Context("2", "Cool on a rack."))


class Facts(dict):
    """metric -> its facts as the installed adapter declares them (a name no adapter declares: the default rules)."""

    def __missing__(self, metric):
        try:
            got = MetricFacts.of(registry.get(metric))
        except registry.UnknownMetric:
            got = MetricFacts(metric)
        self[metric] = got
        return got


FACTS = Facts()


def row(label, kind="claim", shared=(), **verdicts):
    """A row whose metrics (keyword = metric with dots as __) gave (verdict, raw) pairs."""
    r = Row(kind, "text", (0, 4), label)
    for key, (verdict, raw) in verdicts.items():
        metric = key.replace("__", ".")
        r.marks[metric] = [Mark(Unit(metric, 0, "text", verdict, raw), shared=metric in shared)]
    return r


S, U, A, X = "supported", "unsupported", "ambiguous", "excluded"
CASES = [
    # id, row, pair (low, high), expected kind, words the reason must hold
    ("borderline-passes-by-default",
     row("not_found", inhouse__span=(U, "not_found"), deepeval__faithfulness=(A, "borderline")),
     ("inhouse.span", "deepeval.faithfulness"), "definition", ["'borderline'", "counts that as faithful",
                                                                "Human label: not_found (inhouse.span agrees)"]),
    ("penalized-variant-is-not-lenient",
     row("not_found", deepeval__faithfulness_penalized=(U, "borderline"), ragas__faithfulness=(S, "1")),
     ("deepeval.faithfulness_penalized", "ragas.faithfulness"), "judgement", ["'borderline'", "'1'"]),
    ("span-check-on-a-supported-verdict",
     row("inference", inhouse__span=(U, "supported (no span: the judge quoted no evidence)"),
         ragas__faithfulness=(S, "1")),
     ("inhouse.span", "ragas.faithfulness"), "definition", ["judge also said supported", "Human label: inference"]),
    ("judge-said-not-found-is-a-judgement-not-the-span-check",   # issue 11: never "the span check" here
     row("inference", inhouse__span=(U, "not_found"), ragas__faithfulness=(S, "1")),
     ("inhouse.span", "ragas.faithfulness"), "judgement", ["'not_found'", "judged differently"]),
    ("trulens-graded-scale",
     row("inference", trulens__groundedness=(A, "2/3"), ragas__faithfulness=(S, "1")),
     ("trulens.groundedness", "ragas.faithfulness"), "definition", ["0-3 scale", "'2/3'"]),
    ("abstention-rule",
     row("abstention", "abstention", trulens__groundedness=(S, "3/3"),
         trulens__groundedness_answerability=(U, "answerable_abstention")),
     ("trulens.groundedness_answerability", "trulens.groundedness"), "definition", ["'answerable_abstention'"]),
    ("merged-unit",
     row("not_found", shared=("trulens.groundedness",), trulens__groundedness=(A, "2/3"),
         inhouse__span=(U, "not_found")),
     ("inhouse.span", "trulens.groundedness"), "decomposition", ["one larger unit", "'2/3'"]),
    ("trivial-filter",
     row("supported", ragas__faithfulness=(U, "0"), trulens__groundedness=(X, "trivial")),
     ("ragas.faithfulness", "trulens.groundedness"), "coverage", ["did not judge it ('trivial'"]),
    ("no-unit-on-the-claim",
     row("not_found", inhouse__span=(U, "not_found")),
     ("inhouse.span", "ragas.faithfulness"), "decomposition", ["leave this part of the answer out"]),
    ("contradiction-passed",
     row("contradicted", ragas__faithfulness=(S, "1"), inhouse__span=(U, "contradicted")),
     ("inhouse.span", "ragas.faithfulness"), "judgement", ["Human label: contradicted (inhouse.span agrees)"]),
]


@pytest.mark.parametrize("r,pair,kind,words", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_reason_kind_and_what_it_cites(r, pair, kind, words):
    got = case_reason([r], pair, facts=FACTS)
    assert got.kind == kind and got.text.startswith(f"{kind}: ")
    for w in words:
        assert w in got.text
    for metric, raws in got.cited.items():   # every verdict quoted is one the metric gave on that row
        assert set(raws) <= {str(mk.unit.raw_verdict) for mk in r.marks[metric]}


def test_no_reason_when_the_lower_metric_does_not_give_less_credit():
    agree = row("supported", inhouse__span=(S, "supported"), ragas__faithfulness=(S, "1"))
    assert case_reason([agree], ("inhouse.span", "ragas.faithfulness"), facts=FACTS).kind == "unexplained"


def test_credit_follows_each_scoring_rule():
    r = row("not_found", deepeval__faithfulness=(A, "borderline"), deepeval__faithfulness_penalized=(A, "borderline"),
            trulens__groundedness=(A, "1/3"), ragas__faithfulness=(X, "x"))
    assert [credit(r, m, FACTS) for m in ("deepeval.faithfulness", "deepeval.faithfulness_penalized",
                                   "trulens.groundedness", "ragas.faithfulness")] == [1.0, 0.0, 0.333, None]


def test_no_claims_is_coverage_and_names_are_used():
    case = Case("e", "q", CTX, "", Annotation((), True, False))
    kind, text = explain_case([], ("trulens.groundedness", "deepeval.faithfulness"), case,
                              flags={"deepeval.faithfulness": ("no_claims_scored_1",)},
                              names={"deepeval.faithfulness": "DeepEval Faithfulness"}, facts=FACTS)
    assert kind == "coverage" and "DeepEval Faithfulness judged no unit" in text and "no_claims_scored_1" in text


def test_whole_answer_rating_against_claim_scores():
    r = row("not_found", deepeval__faithfulness=(A, "borderline"))
    whole = Row("answer", "the whole answer", (0, 4))
    whole.marks["ragas.response_groundedness"] = [Mark(Unit("ragas.response_groundedness", 0, "a", A, "1", "judge"))]
    got = case_reason([r, whole], ("ragas.response_groundedness", "deepeval.faithfulness"),
                      {"ragas.response_groundedness": 0.5}, facts=FACTS)
    assert got.kind == "definition" and "rates the whole answer" in got.text and "(score 0.50)" in got.text
    assert "counting 'borderline'" in got.text


def test_kinds_are_the_four():
    assert KINDS == ("definition", "judgement", "decomposition", "coverage")


def test_row_disagreement():
    agree = row("supported", inhouse__span=(S, "supported"), ragas__faithfulness=(S, "1"))
    assert not row_disagrees(agree, ["inhouse.span", "ragas.faithfulness"], FACTS)
    lenient = row("not_found", deepeval__faithfulness=(A, "borderline"), inhouse__span=(U, "not_found"))
    assert row_disagrees(lenient, ["deepeval.faithfulness", "inhouse.span"], FACTS)
    assert explain_row(lenient, ["inhouse.span", "deepeval.faithfulness"], facts=FACTS).startswith("definition: ")
    partial = row("inference", trulens__groundedness=(A, "2/3"))
    assert row_disagrees(partial, ["trulens.groundedness"], FACTS)


def test_alignment_shared_sentence_whole_answer_and_not_located():
    answer = "Bake at 350 F for 8 minutes. Great question!"
    claims = (Claim("350 F", (0, 13), "supported"), Claim("8 minutes", (14, 27), "not_found"))
    case = Case("c", "q", CTX, answer, Annotation(claims, True, False))
    units = [Unit("trulens.groundedness", 0, answer[:28], A, "2/3", "sentence", (0, 28)),
             Unit("trulens.groundedness", 1, "Great question!", "excluded", "trivial", "sentence", (29, 44)),
             Unit("ragas.response_groundedness", 0, answer, A, "1", "judge", (0, 44)),
             Unit("deepeval.faithfulness", 0, "It takes 8 minutes.", A, "borderline", "claim", None),
             Unit("inhouse.span", 0, "Bake at 350 F", S, "supported", "claim", (0, 13))]
    rows = align(case, units)
    assert [r.kind for r in rows] == ["claim", "claim", "other", "answer", "unaligned"]
    assert all(r.marks["trulens.groundedness"][0].shared for r in rows[:2])
    assert "inhouse.span" in rows[0].marks and "inhouse.span" not in rows[1].marks   # only where it overlaps
    assert rows[2].text == "Great question!"
    got = case_reason(rows, ("trulens.groundedness", "inhouse.span"), facts=FACTS)
    assert got.kind == "decomposition" and "one larger unit" in got.text


def test_unannotated_case_rows_are_the_answer_sentences():
    answer = "Bake at 350 F. Cool it on a rack."
    case = Case("c", "q", CTX, answer, None)
    units = [Unit("ragas.faithfulness", 0, "Cool it on a rack.", U, "0", "statement", (15, 33))]
    rows = align(case, units)
    assert [(r.kind, r.text, r.label) for r in rows] == [("sentence", "Bake at 350 F.", None),
                                                         ("sentence", "Cool it on a rack.", None)]
    assert "ragas.faithfulness" in rows[1].marks
    r = case_reason(rows, ("ragas.faithfulness", "x"), facts=FACTS)
    assert "Human label" not in r.text


def test_a_split_statement_is_shown_only_on_the_claim_it_states():
    """A statement that restates one claim of a two-claim sentence lands on that claim alone (the old
    sentence fallback showed it on the neighbouring claim too)."""
    from harness.core.aligner import locate

    answer = "Bake the cookies at 350 F for 8 to 10 minutes. The recipe makes two dozen cookies."
    claims = (Claim("350 F", (0, 25), "supported"), Claim("8-10 min", (26, 45), "supported"),
              Claim("yield", (47, 81), "not_found"))
    case = Case("c", "q", CTX, answer, Annotation(claims, True, False))
    text = "The cookies are baked for 8 to 10 minutes."
    span = locate(text, answer).span
    rows = align(case, [Unit("ragas.faithfulness", 0, text, S, "1", "statement", span)])
    assert [bool(r.marks) for r in rows] == [False, True, False]
