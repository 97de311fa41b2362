"""Silent fallbacks are visible: when a vendor swallows a failed judge call and still returns a
score, the cell keeps the vendor's score, is flagged ``vendor_fallback`` (plus the specific flag),
says so in its reason, and the report counts such cells per metric."""
from __future__ import annotations

from harness.adapters.trulens.judge import ABSTENTION, GROUNDEDNESS
from harness.judge.reference import completion
from harness.judge.responses_api import is_responses
from harness.judge.upstream import ReferenceUpstream, UpstreamError
from harness.run.runner import RunOptions, run

import pytest

from tests.helpers.scoring import score_one

RG_JUDGE2 = "As a specialist in assessing the strength of connections"


def _declared(metric: str, flags) -> bool:
    """Every flag the cell raised is in the vocabulary (the metric's own or the shared ones)."""
    from harness.core import vocab
    from harness.metric import registry

    known = {f.key for f in getattr(registry.get(metric), "flags", ())} | set(vocab.FLAGS)
    return set(flags) <= known


def _user(body) -> str:
    return "\n".join(str(m.get("content") or "") for m in body.get("messages") or [] if m.get("role") == "user")


def _system(body) -> str:
    return str(((body.get("messages") or [{}])[0]).get("content") or "")


NO_RESPONSES_API = {"error": {"message": "The Responses API is not supported by this server",
                              "type": "invalid_request_error"}}


def refuse_responses_api(body) -> None:
    """Answer a Responses API request as a chat-only server does (400 "not supported"): TruLens then asks
    by chat completions without a format, where a model's reply can be anything, as these tests need
    (a server that honours TruLens's json_schema cannot send a score that is not a number)."""
    if is_responses(body):
        raise UpstreamError("judge HTTP 400: The Responses API is not supported by this server", status=400,
                            retryable=False, body=NO_RESPONSES_API)


class Garble(ReferenceUpstream):
    """The reference judge as a chat-only server, except requests matching ``when(body)`` get ``content`` back."""

    def __init__(self, cases, when, content: str):
        super().__init__({("test", c.id): c for c in cases})
        self.when, self.content = when, content

    async def complete(self, cell, body):
        refuse_responses_api(body)
        if self.when(body):
            return completion(self.content, body.get("model") or "x", _user(body))
        return await super().complete(cell, body)


@pytest.fixture(scope="module")
def cases(canonical):
    return canonical


def test_response_groundedness_scored_from_one_judge_says_so(cases):
    case = cases.by_id("cookie-yield")
    up = Garble([case], lambda b: _user(b).startswith(RG_JUDGE2) or "Correct your JSON" in _user(b),
                "I would say it is mostly supported.")
    s = score_one("ragas.response_groundedness", case, upstream=up)
    assert s.result.status == "scored" and s.result.score == 0.5   # judge 1 alone: rating 1 of 2
    assert {"one_judge_nan", "vendor_fallback"} <= set(s.result.flags)
    assert "Ragas scored from judge1 alone" in s.result.reason and "judge2 gave no valid rating" in s.result.reason
    assert _declared("ragas.response_groundedness", s.result.flags)


@pytest.mark.parametrize("reply", ["I cannot say.", "maybe"])
def test_a_failed_abstention_check_read_as_no_abstention_says_so(cases, reply):
    case = cases.by_id("abstain-answerable")
    up = Garble([case], lambda b: _system(b).startswith(ABSTENTION), reply)
    s = score_one("trulens.groundedness_answerability", case, upstream=up)
    assert s.result.status == "scored"
    assert {"abstention_check_fallback", "vendor_fallback"} <= set(s.result.flags), s.result
    assert "TruLens read it as not an abstention" in s.result.reason
    assert _declared("trulens.groundedness_answerability", s.result.flags)


def test_a_sentence_dropped_as_unparsable_says_so(cases):
    case = cases.by_id("cookie-yield")
    last = "The recipe makes two dozen cookies."
    # a score that is not a number: TruLens makes it its unparsable -1 and leaves the sentence out
    up = Garble([case], lambda b: _system(b).startswith(GROUNDEDNESS) and f"STATEMENT: {last}" in _user(b),
                '{"criteria": "x", "supporting_evidence": "NOTHING FOUND", "score": "high"}')
    s = score_one("trulens.groundedness", case, upstream=up)
    assert s.result.status == "scored"
    assert {"unparsable_sentence_dropped", "vendor_fallback"} <= set(s.result.flags), s.result
    assert "could not parse the judge's score" in s.result.reason and "two dozen" in s.result.reason
    assert [u.raw_verdict for u in s.result.units if u.text == last] == ["unparsable"]
    assert _declared("trulens.groundedness", s.result.flags)


def test_no_fallback_no_flag(cases):
    s = score_one("trulens.groundedness_answerability", cases.by_id("abstain-answerable"))
    assert "vendor_fallback" not in s.result.flags and not s.result.reason


def test_the_report_counts_fallback_cells_per_metric(cases, tmp_path):
    from harness.cases.load import CaseSet
    from harness.reports.analysis.data import load_run
    from harness.reports.analysis.stats import summarise

    picked = CaseSet(cases.path, tuple(cases.by_id(c) for c in ("cookie-yield", "abstain-answerable", "leave-notice")),
                     cases.sha256)

    def wrap(inner):
        class W:
            kind, model = inner.kind, inner.model

            def scope(self, cell):
                return inner.scope(cell)

            async def complete(self, cell, body):
                refuse_responses_api(body)
                if _system(body).startswith(ABSTENTION) or _user(body).startswith(RG_JUDGE2) \
                        or "Correct your JSON" in _user(body):
                    return completion("no idea", body.get("model") or "x", _user(body))
                return await inner.complete(cell, body)

            async def aclose(self):
                await inner.aclose()

        return W()

    metrics = ["ragas.response_groundedness", "trulens.groundedness_answerability", "trulens.groundedness"]
    out = run(RunOptions(cases=picked, metrics=metrics, out_dir=str(tmp_path), run_id="fb", progress=False,
                         upstream_wrapper=wrap))
    counts = {s.metric: s.fallbacks for s in summarise(load_run(out.run_dir))}
    # RG: judge 2 never answers, so every answer is scored from judge 1 alone; the answerability
    # variant reads every failed abstention check as "not an abstention"; plain groundedness has no
    # abstention check, so nothing fell back.
    assert counts == {"ragas.response_groundedness": 3, "trulens.groundedness_answerability": 3,
                      "trulens.groundedness": 0}
