"""The reference judge's label table (each metric's ``label_reading``, as DESIGN.md states it), on
every label, the vendors' rubric helpers, and the shared annotation views."""
from harness.core.records import Annotation, Case, Claim, Context, HallucinationSpan
from harness.judge import reference as ref
from harness.metric import registry

import pytest


def _reading(metric):
    return registry.get(metric).label_reading

TABLE = [
    # label,        ragas NLI, ragas grounded, deepeval,     trulens, in-house
    ("supported",    1, True,  "yes",        3, "supported"),
    ("inference",    1, True,  "yes",        2, "supported"),
    ("not_found",    0, False, "borderline", 0, "not_found"),
    ("contradicted", 0, False, "no",         0, "contradicted"),
]


@pytest.mark.parametrize("label,nli,grounded,deepeval,trulens,inhouse", TABLE, ids=[r[0] for r in TABLE])
def test_label_table(label, nli, grounded, deepeval, trulens, inhouse):
    assert _reading("ragas.faithfulness")[label] == nli
    assert (_reading("ragas.response_groundedness")[label] == "grounded") is grounded
    assert _reading("deepeval.faithfulness")[label] == _reading("deepeval.faithfulness_penalized")[label] == deepeval
    assert _reading("trulens.groundedness")[label] == _reading("trulens.groundedness_answerability")[label] == trulens
    assert _reading("inhouse.span")[label] == inhouse


def test_every_reading_covers_exactly_the_labels():
    from harness.core.records import LABELS

    for name in registry.names():
        reading = _reading(name)
        if reading is not None:
            assert set(reading.answers) == set(LABELS), name
            assert reading.meaning, name


def _c(label, span=(0, 1)):
    return Claim("x", span, label)


@pytest.mark.parametrize("labels,rating", [
    ([], 2), (["supported"], 2), (["inference", "supported"], 2), (["supported", "not_found"], 1),
    (["contradicted", "inference"], 1), (["not_found"], 0), (["contradicted", "not_found"], 0)])
def test_ragas_rg_rating(labels, rating):
    from harness.adapters.ragas.judge import rg_rating

    assert rg_rating([_c(l) for l in labels]) == rating


@pytest.mark.parametrize("labels,score", [
    (["supported"], 3), (["inference"], 2), (["not_found"], 0), (["contradicted"], 0),
    (["supported", "not_found"], 2),          # 1.5 rounds half up
    (["inference", "not_found"], 1), (["supported", "inference"], 3), (["supported", "supported", "not_found"], 2)])
def test_trulens_sentence_score(labels, score):
    from harness.adapters.trulens.judge import sentence_score

    assert sentence_score([_c(l) for l in labels]) == score


def test_ragtruth_spans_make_sentence_claims():
    answer = "The pool opens at 6. It has a sauna. Entry is free."
    case = Case("r", "q", (Context("1", "The pool opens at 6."),), answer,
                Annotation(claims=(), answerable=True, abstention=False,
                           spans=(HallucinationSpan(24, 35, "not_found"), HallucinationSpan(37, 50, "contradicted"))))
    claims = case.judged_claims()
    assert [(c.text, c.label) for c in claims] == [
        ("The pool opens at 6.", "supported"), ("It has a sauna.", "not_found"), ("Entry is free.", "contradicted")]
    assert case.claims_in((21, 36))[0].label == "not_found"


def test_claim_lookup_and_unit_span(canonical):
    case = canonical.by_id("cookie-yield")
    last = case.annotation.claims[-1]
    assert case.claim_for_text("  " + last.text.upper() + " ") == last
    assert case.claim_for_text("The oven explodes.") is None
    assert case.unit_span(last.text) == last.answer_span


def test_abstention_span_defaults_to_whole_answer(canonical):
    case = canonical.by_id("abstain-answerable")
    s = case.abstention_at()
    assert s is not None and case.answer[s[0]:s[1]].strip()
    assert canonical.by_id("cookie-yield").abstention_at() is None


def test_completion_shape_has_usage():
    out = ref.completion('{"a": 1}', "reference-judge", "prompt text")
    assert out["choices"][0]["message"]["content"] == '{"a": 1}'
    assert out["usage"]["total_tokens"] == out["usage"]["prompt_tokens"] + out["usage"]["completion_tokens"]


def test_the_label_table_is_read_from_the_metric_classes():
    from harness.judge.reference import label_table
    from harness.metric import registry

    table = {name: answers for name, _, answers in label_table()}
    assert table, "no metric declares a label reading"
    for name, answers in table.items():
        assert answers == dict(registry.get(name).label_reading.answers)
        assert set(answers) == {"supported", "inference", "not_found", "contradicted"}, name
