"""inhouse.span (v3) with replies written the way real models write them, through a real gateway:
the reference judge's replies rewritten as a small model rewrites them (a code fence, prose before
the JSON, passages named "[1]", "Passage 1", "context 1", verdicts in capitals, one verdict where
several were asked), and the one re-ask for missing verdicts, in the in-house scorer and in the cascade."""
from __future__ import annotations

import json

from harness.core.records import Annotation, Case, Claim, Context, Evidence
from harness.judge.reference import completion

import pytest

P1 = "Heat the oven to 350 F. Bake for 8 to 10 minutes, until golden."
P2 = "Let the cookies cool on a wire rack. The recipe makes 24 cookies."
ANSWER = "Bake at 350 F. Bake for 8 to 10 minutes. Cool them on a wire rack."
CASE = Case(
    "model-like", "How do I bake them?", (Context("1", P1), Context("2", P2)), ANSWER,
    Annotation((Claim("Bake at 350 F.", (0, 14), "supported", (Evidence("1", 0, 22),)),
                Claim("Bake for 8 to 10 minutes.", (15, 40), "supported", (Evidence("2", 0, 0),)),
                Claim("Cool them on a wire rack.", (41, 66), "supported", (Evidence("2", 0, 35),))),
               True, False))
# claim 2's annotated evidence is fixed below (it is in passage 1)
CASE = Case(CASE.id, CASE.question, CASE.contexts, CASE.answer,
            Annotation((CASE.annotation.claims[0],
                        Claim("Bake for 8 to 10 minutes.", (15, 40), "supported", (Evidence("1", 24, 49),)),
                        CASE.annotation.claims[2]), True, False))


class ModelLike:
    """The reference judge, its verify replies rewritten by ``rewrite(content, nth)`` (``nth``: 0 for
    the first verify call of the cell, 1 for the next); every request is kept in ``bodies``."""

    kind = "reference"
    model = "reference-judge"

    def __init__(self, case: Case, rewrite):
        from harness.judge.upstream import ReferenceUpstream

        self.inner, self.rewrite, self.bodies = ReferenceUpstream({("test", case.id): case}), rewrite, []

    def scope(self, cell):
        return self.inner.scope(cell)

    async def complete(self, cell, body):
        self.bodies.append(body)
        reply = await self.inner.complete(cell, body)
        if (body.get("response_format") or {}).get("json_schema", {}).get("name") != "InhouseVerdicts":
            return reply
        nth = sum(1 for b in self.bodies if "InhouseVerdicts" in json.dumps(b.get("response_format"))) - 1
        return completion(self.rewrite(reply["choices"][0]["message"]["content"], nth), self.model, "model-like")

    async def aclose(self):
        return None


def score(metric, rewrite, case=CASE):
    from tests.helpers.scoring import score_one

    up = ModelLike(case, rewrite)
    return score_one(metric, case, upstream=up), up


def edit(fn):
    """A rewrite that edits the reply's verdict list with ``fn(verdicts, nth)`` and re-serialises it."""
    def rewrite(content, nth):
        data = json.loads(content)
        data["verdicts"] = fn(data["verdicts"], nth)
        return json.dumps(data)
    return rewrite


def claims_asked(body) -> list[str]:
    from harness.adapters.inhouse.span import CLAIMS_MARKER

    user = next(m["content"] for m in body["messages"] if m["role"] == "user")
    return json.loads(user.split(CLAIMS_MARKER, 1)[1])


def test_the_reference_replies_score_the_case_fully():
    s, up = score("inhouse.span", lambda c, n: c)
    assert (s.result.status, s.result.score, s.ledger.calls, s.result.reason) == ("scored", 1.0, 2, None)


@pytest.mark.parametrize("ref", ["1", 1, "[1]", "Passage 1", "passage 1", "Passage [1]", "context 1", "Context 1",
                                 "Context [1]", "CONTEXT_1", "passage_1", "Source #1", "(1)", " [1] ", "Document 1:"])
def test_a_passage_named_as_a_prompt_shows_it_or_a_model_writes_it_is_matched_to_its_id(ref):
    def name_it(verdicts, nth):
        for v in verdicts:
            for e in v["evidence"]:
                e["context_id"] = ref if e["context_id"] == "1" else e["context_id"]
        return verdicts

    s, _ = score("inhouse.span", edit(name_it))
    assert s.result.score == 1.0, [u.reason for u in s.result.units]
    assert {q.context_id for u in s.result.units for q in u.quotes} == {"1", "2"}


def test_passage_two_by_name_and_an_unknown_passage():
    from harness.adapters.inhouse.span import check_evidence

    ok = check_evidence(CASE, {"verdict": "supported", "evidence": [{"context_id": "Passage 2",
                                                                    "quote": "cool on a wire rack"}]})
    assert ok[0] and ok[1][0].context_id == "2"
    bad = check_evidence(CASE, {"verdict": "supported", "evidence": [{"context_id": "Passage 3",
                                                                     "quote": "cool on a wire rack"}]})
    assert not bad[0] and bad[2] == "span not found (no context 'Passage 3'; contexts: 1, 2)"
    # a passage number is an id, never a position: "Passage 1" never reads passage 2's text
    wrong = check_evidence(CASE, {"verdict": "supported", "evidence": [{"context_id": "Passage 1",
                                                                       "quote": "cool on a wire rack"}]})
    assert not wrong[0] and wrong[1][0].context_id == "1"


@pytest.mark.parametrize("style", ["fence", "prose", "capitals", "evidence-object", "claim-by-text"])
def test_replies_formatted_as_models_format_them_are_read(style):
    def rewrite(content, nth):
        data = json.loads(content)
        if style == "capitals":
            for v in data["verdicts"]:
                v["verdict"] = v["verdict"].replace("_", " ").title()
        if style == "evidence-object":
            for v in data["verdicts"]:
                v["evidence"] = v["evidence"][0]
        if style == "claim-by-text":
            for v, text in zip(data["verdicts"], ["Bake at 350 F.", "Bake for 8 to 10 minutes.",
                                                  "Cool them on a wire rack."]):
                v["claim"] = text
        text = json.dumps(data, indent=2)
        if style == "fence":
            return f"```json\n{text}\n```"
        if style == "prose":
            return f"Sure! Here are the verdicts for each claim:\n\n{text}\n\nLet me know if you need more."
        return text

    s, _ = score("inhouse.span", rewrite)
    assert (s.result.status, s.result.score, s.ledger.calls) == ("scored", 1.0, 2), s.result.reason


def test_a_reply_with_the_prompts_one_example_verdict_is_re_asked_once_for_the_missing_claims():
    """A small model copies the prompt's one-entry example: claims 2 and 3 get no verdict. The scorer
    asks once more for just those two, and the cell scores, with the re-ask in its reason and calls."""
    s, up = score("inhouse.span", edit(lambda vs, nth: vs[:1] if nth == 0 else vs))
    r = s.result
    assert (r.status, r.score) == ("scored", 1.0)
    assert r.detail["reasked_claims"] == [2, 3]
    assert "re-asked the judge once for claims [2, 3]" in r.reason and "returned 1 verdicts for 3 claims" in r.reason
    assert [c.step for c in s.calls] == ["InhouseClaims", "InhouseVerdicts", "InhouseVerdicts"]
    verify = [b for b in up.bodies if "InhouseVerdicts" in json.dumps(b["response_format"])]
    assert claims_asked(verify[1]) == ["Bake for 8 to 10 minutes.", "Cool them on a wire rack."]
    items = verify[1]["response_format"]["json_schema"]["schema"]["properties"]["verdicts"]
    assert (items["minItems"], items["maxItems"]) == (2, 2)       # the re-ask fixes the list's length
    assert "minItems" not in verify[0]["response_format"]["json_schema"]["schema"]["properties"]["verdicts"]
    assert [u.detail.get("reasked", False) for u in r.units] == [False, True, True]
    assert [u.text for u in r.units] == ["Bake at 350 F.", "Bake for 8 to 10 minutes.", "Cool them on a wire rack."]


@pytest.mark.parametrize("broken", ["bad-verdict", "duplicate-clash", "not-json"])
def test_unreadable_entries_are_re_asked_too(broken):
    def rewrite(content, nth):
        if nth:
            return content
        data = json.loads(content)
        if broken == "bad-verdict":
            data["verdicts"][1]["verdict"] = "probably"
        if broken == "duplicate-clash":
            data["verdicts"].append({**data["verdicts"][1], "verdict": "not_found"})
        if broken == "not-json":
            return "I checked every claim and they are all supported by the passages."
        return json.dumps(data)

    s, _ = score("inhouse.span", rewrite)
    assert (s.result.status, s.result.score) == ("scored", 1.0)
    assert s.result.detail["reasked_claims"] == ([1, 2, 3] if broken == "not-json" else [2])
    assert s.ledger.calls == 3


def test_still_missing_after_the_one_re_ask_is_unscored_with_both_shortfalls():
    s, _ = score("inhouse.span", edit(lambda vs, nth: vs[:1]))
    r = s.result
    assert r.status == "unscored" and r.score is None
    assert r.reason == ("judge reply unreadable: judge returned 1 verdicts for 3 claims (missing: [2, 3]); "
                        "re-asked once for claims [2, 3]: still missing [3]")
    assert s.ledger.calls == 3                                    # bounded: one re-ask, never more


def test_a_verdict_for_a_claim_never_asked_is_ignored_not_shifted():
    s, _ = score("inhouse.span", edit(lambda vs, nth: vs + [{**vs[0], "claim": 7}]))
    assert (s.result.status, s.result.score, s.ledger.calls) == ("scored", 1.0, 2)


def test_claims_a_judge_splits_into_fragments_are_joined():
    from harness.adapters.inhouse.span import parse_claims

    reply = json.dumps({"claims": ["1.", "The plan was drafted by Gen.", "Lansdale.", "It was approved in 1961."]})
    assert parse_claims(reply) == ["1. The plan was drafted by Gen. Lansdale.", "It was approved in 1961."]


def test_the_cascade_re_asks_its_verifier_the_same_way():
    """The cascade sends the sentences its similarity check flags to the same verifier; a reply that
    lacks some of their verdicts is re-asked once for those, as in inhouse.span."""
    s, _ = score("cascade.similarity_span", lambda c, n: c)
    flagged = s.result.detail["verified"]
    assert flagged >= 2, "the case must make the similarity check flag two sentences or more"
    s2, up = score("cascade.similarity_span", edit(lambda vs, nth: vs[:1] if nth == 0 else vs))
    assert (s2.result.status, s2.result.score) == ("scored", s.result.score)
    assert s2.result.detail["reasked_claims"] == list(range(2, flagged + 1))
    assert "re-asked the judge once" in s2.result.reason
