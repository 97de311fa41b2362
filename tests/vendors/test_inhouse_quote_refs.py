"""inhouse.span reads evidence the way models write it when they copy the prompt's layout: a quote that
keeps the passage prefix ("[1] Heat the oven..."), a quote that names the sentence instead of quoting it
("Passage 1, sentence 2"), a context_id that names the sentence; and the sentence splitter the scorer
counts sentences with keeps "Jr.", initials and "U.S." inside their sentence (issue 37, item 5)."""
from __future__ import annotations

import pytest

from tests.vendors.test_inhouse_model_replies import CASE, edit, score

# where each claim's evidence is in CASE: (passage, sentence number, the sentence)
WHERE = [("1", 1, "Heat the oven to 350 F."), ("1", 2, "Bake for 8 to 10 minutes, until golden."),
         ("2", 1, "Let the cookies cool on a wire rack.")]


def _restyle(style):
    def fn(verdicts, nth):
        for v, (pid, n, _) in zip(verdicts, WHERE):
            ev = v["evidence"][0]
            if style == "prefix-bracket":
                ev["quote"] = f"[{pid}] {ev['quote']}"
            elif style == "prefix-word":
                ev["quote"] = f"Passage {pid}: {ev['quote']}"
            elif style == "named-sentence":
                ev["quote"] = f"Passage {pid}, sentence {n}"
            elif style == "bare-sentence":
                ev["quote"] = f"Sentence {n}"
            elif style == "sentence-in-id":
                ev["context_id"], ev["quote"] = f"Passage {pid}, sentence {n}", ""
        return verdicts
    return fn


@pytest.mark.parametrize("style", ["prefix-bracket", "prefix-word", "named-sentence", "bare-sentence",
                                   "sentence-in-id"])
def test_quotes_written_with_the_prompts_passage_layout_are_located(style):
    s, _ = score("inhouse.span", edit(_restyle(style)))
    r = s.result
    assert (r.status, r.score) == ("scored", 1.0), [u.reason for u in r.units]
    found = [(q.context_id, q.match, CASE.context(q.context_id).text[q.start:q.end]) for u in r.units for q in u.quotes]
    if "sentence" in style:
        assert found == [(pid, "sentence", text) for pid, _, text in WHERE]
        assert all("sentence named by number" in u.detail["check"] for u in r.units)
    else:
        assert [m for _, m, _ in found] == ["near"] * 3
        assert [t for _, _, t in found] == [CASE.evidence_text(c.evidence[0]) for c in CASE.annotation.claims]


def test_a_named_sentence_that_is_not_there_or_in_another_passage_grounds_nothing():
    from harness.adapters.inhouse.span import check_evidence

    def check(ref, quote):
        return check_evidence(CASE, {"verdict": "supported", "evidence": [{"context_id": ref, "quote": quote}]})

    ok, quotes, why = check("1", "Passage 1, sentence 3")             # passage 1 has two sentences
    assert not ok and quotes[0].match is None and why.startswith("span not found")
    ok, quotes, why = check("2", "Passage 1, sentence 1")             # the quote and the verdict disagree
    assert not ok and why == "span not found (the quote names passage '1', the verdict '2')"
    ok, quotes, _ = check("", "[2] Let the cookies cool on a wire rack")   # the prefix names the passage
    assert not ok                                                     # a bare prefix is not a passage id
    ok, quotes, _ = check("", "Passage 2, sentence 2")                # ... but a named sentence is
    assert ok and quotes[0].context_id == "2" and quotes[0].match == "sentence"
    # strict mode reads verbatim quotes only: neither a prefix nor a sentence number
    assert not check_evidence(CASE, {"verdict": "supported", "evidence": [
        {"context_id": "1", "quote": "[1] Heat the oven to 350 F"}]}, strict=True)[0]
    assert not check_evidence(CASE, {"verdict": "supported", "evidence": [
        {"context_id": "1", "quote": "sentence 1"}]}, strict=True)[0]


def test_a_wrong_quote_behind_a_prefix_stays_unlocated():
    from harness.adapters.inhouse.quotes import locate_quote

    assert locate_quote("[1] Heat the oven to 400 F", CASE.contexts[0].text) is None
    assert locate_quote("[1]", CASE.contexts[0].text) is None


@pytest.mark.parametrize("text, sentences", [
    ("Martin Luther King Jr. gave the speech in 1963. It drew 250,000 people.",
     ["Martin Luther King Jr. gave the speech in 1963.", "It drew 250,000 people."]),
    ("The novels are by George R. R. Martin. He began them in 1991.",
     ["The novels are by George R. R. Martin.", "He began them in 1991."]),
    ("The U.S. Senate passed the bill in 2010. The House followed.",
     ["The U.S. Senate passed the bill in 2010.", "The House followed."]),
    ("She moved to the U.S. in 1990 and to Canada in 1995.", ["She moved to the U.S. in 1990 and to Canada in 1995."]),
    ("He grew up in the U.S. He later moved to Paris.", ["He grew up in the U.S.", "He later moved to Paris."]),
    ("Bake at 350 F. Then let it cool.", ["Bake at 350 F.", "Then let it cool."]),
    ("Heat to 350 F. Bake it.", ["Heat to 350 F.", "Bake it."]),
])
def test_sentences_split_as_the_docstring_says(text, sentences):
    from harness.core.spans import sentence_spans

    assert [text[s:e] for s, e in sentence_spans(text)] == sentences


def test_a_named_sentence_counts_across_a_jr_and_an_initial():
    """Sentence 2 of a passage with "Jr." and "R." in sentence 1 is the second real sentence."""
    from harness.adapters.inhouse.quotes import locate_quote

    text = "The speech was given by Martin Luther King Jr. in Washington. It was drafted with Clarence B. Jones."
    m = locate_quote("Passage 1, sentence 2", text)
    assert text[m.start:m.end] == "It was drafted with Clarence B. Jones."
