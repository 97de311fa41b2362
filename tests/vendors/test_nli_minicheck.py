"""``nli.minicheck`` through the judge: MiniCheck's prompt per (sentence, chunk), the support probability
from log-probabilities or from the yes/no text, max over chunks, the 0.5 label, the mean per answer.

The golden table (``adapters/nli/golden/nli.minicheck.csv``) is checked by ``test_golden_tables``; here:
what each unit keeps, the calls per answer, chunking of a long passage, unreadable replies, and the
realistic test judge in both of its modes (chat-only: no log-probabilities; OpenAI-like: with them).
"""
from __future__ import annotations

import json
import math
import os

from harness.adapters.nli.prompt import SYSTEM_PROMPT, support
from harness.core.records import Annotation, Case, Claim, Context, Evidence
from harness.judge.upstream import HttpUpstream, ReferenceUpstream

import pytest

from tests.helpers.scoring import score_cases, score_one

METRIC = "nli.minicheck"


def _reply(content, logprobs=None):
    return {"choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "logprobs": logprobs}]}


def _lp(*cands):
    top = [{"token": t, "logprob": math.log(p)} for t, p in cands]
    return {"content": [{**top[0], "top_logprobs": top}]}


@pytest.mark.parametrize("reply,prob,source", [
    (_reply("Yes"), 1.0, "text"),
    (_reply(" no."), 0.0, "text"),
    (_reply("**Yes**"), 1.0, "text"),
    (_reply("Maybe"), None, "unreadable"),
    (_reply(""), None, "unreadable"),
    (_reply("Yes", _lp(("Yes", 0.7), ("No", 0.2), (" yes", 0.05))), 0.75, "logprobs"),   # MiniCheck sums every yes
    (_reply("No", _lp(("No", 0.9), ("Yes", 0.1))), 0.1, "logprobs"),
    (_reply("No", _lp(("No", 1.0))), 0.0, "logprobs"),
    (_reply("Yes", _lp(("Sure", 0.6), ("Okay", 0.4))), 1.0, "text"),    # no yes/no candidate: the text decides
    ({"choices": []}, None, "unreadable"),
], ids=["yes", "no", "markdown", "maybe", "empty", "lp-yes", "lp-no", "lp-only-no", "lp-none", "no-choice"])
def test_support_probability_from_a_reply(reply, prob, source):
    got = support(reply)
    assert got.source == source
    assert (got.prob is None) if prob is None else math.isclose(got.prob, prob, abs_tol=1e-9)


class _Recording(ReferenceUpstream):
    """The reference judge, keeping every request body as it reached the judge."""

    def __init__(self, cases):
        super().__init__(cases)
        self.bodies = []

    async def complete(self, cell, body):
        self.bodies.append(body)
        return await super().complete(cell, body)


def test_reference_judge_scores_the_cookie_case_by_sentence(canonical):
    case = canonical.by_id("cookie-yield")
    up = _Recording({("test", case.id): case})
    s = score_cases(METRIC, [case], upstream=up)[case.id]
    r = s.result
    assert r.status == "scored" and math.isclose(r.score, 2 / 3)
    assert s.ledger.calls == 3 == len(up.bodies) and r.detail["checks"] == 3 and r.detail["backend"] == "judge"
    for b in up.bodies:     # MiniCheck's request, as the gateway forwarded it
        assert b["messages"][0] == {"role": "system", "content": SYSTEM_PROMPT}
        assert b["messages"][1]["content"].startswith("Document: Chewy chocolate chip cookies.")
        assert (b["logprobs"], b["top_logprobs"], b["max_tokens"], b["temperature"]) == (True, 5, 1, 0)
    assert sorted(b["messages"][1]["content"].split("\nClaim: ")[1] for b in up.bodies) == sorted(
        u.text for u in r.units)
    assert [u.verdict for u in r.units] == ["supported", "supported", "unsupported"]
    assert [case.answer[u.span[0]:u.span[1]] for u in r.units] == [u.text for u in r.units]
    assert all(u.detail["location"]["method"] == "exact" for u in r.units)
    assert {c["source"] for u in r.units for c in u.detail["chunks"]} == {"text"}   # no logprobs from it


def test_multi_hop_claim_is_in_no_single_chunk(canonical):
    r = score_one(METRIC, canonical.by_id("multi-hop")).result
    assert r.score == 0.0
    (unit,) = r.units
    assert [(c["context_id"], c["prob"]) for c in unit.detail["chunks"]] == [("1", 0.0), ("2", 0.0)]


def _long_case() -> Case:
    filler = " ".join(f"Rule {i} concerns the lobby of building {i}." for i in range(12))
    text = filler + " Parking is free for visitors on Sundays. " + filler
    at = text.index("Parking is free")
    answer = "Visitors park for free on Sundays. The lobby has a piano."
    claims = (Claim("Visitors park for free on Sundays.", (0, 34), "supported",
                    (Evidence("1", at, at + len("Parking is free for visitors on Sundays")),)),
              Claim("The lobby has a piano.", (35, 57), "not_found"))
    return Case("long-passage", "q", (Context("1", text),), answer, Annotation(claims, True, False))


def _stored(run_dir) -> tuple[dict, list[dict]]:
    """(the one cell: score, calls, detail; its units' details) from a run's store."""
    from harness.store.runstore import RunStore

    s = RunStore.open(os.path.join(run_dir, "store.sqlite"))
    try:
        ((score, calls, detail),) = s.rows("SELECT score, calls, detail FROM cells")
        units = [json.loads(d) for (d,) in s.rows("SELECT detail FROM units ORDER BY idx")]
    finally:
        s.close()
    return {"score": score, "calls": calls, "detail": json.loads(detail)}, units


def test_a_long_passage_is_chunked_and_only_the_chunk_with_the_evidence_says_yes(tmp_path, capsys):
    """Through ``harness run --nli-chunk-size``: the option reaches the metric, the passage is cut into
    chunks of whole sentences, and the sentence's Yes comes from the chunk that holds its evidence."""
    from harness.cases.load import case_to_json
    from harness.console import main

    case = _long_case()
    cases = tmp_path / "long.jsonl"
    cases.write_text(json.dumps(case_to_json(case)) + "\n")
    for run_id, extra in (("small", ["--nli-chunk-size", "20"]), ("whole", [])):
        assert main(["run", "--cases", str(cases), "--metrics", METRIC, "--out", str(tmp_path), "--run-id", run_id,
                     "--no-progress", *extra]) == 0
    capsys.readouterr()
    small, units = _stored(tmp_path / "small")
    n = small["detail"]["chunks"]
    assert n > 3 and small["calls"] == 2 * n == small["detail"]["checks"] and small["score"] == 0.5
    yes = [c for c in units[0]["chunks"] if c["prob"] == 1.0]
    assert len(yes) == 1 and yes[0]["span"][0] <= case.contexts[0].text.index("Parking") < yes[0]["span"][1]
    whole, _ = _stored(tmp_path / "whole")          # the default size: the passage is one chunk
    assert whole["calls"] == 2 and whole["score"] == 0.5


class _Says(ReferenceUpstream):
    """The reference judge, except that replies for the given sentences say ``text`` instead."""

    def __init__(self, cases, sentences, text):
        super().__init__(cases)
        self.sentences, self.text = sentences, text

    async def complete(self, cell, body):
        out = await super().complete(cell, body)
        if any(body["messages"][1]["content"].endswith("Claim: " + s) for s in self.sentences):
            out["choices"][0]["message"]["content"] = self.text
        return out


def test_an_unreadable_reply_leaves_the_answer_unscored_never_unsupported(canonical):
    case = canonical.by_id("leave-notice")
    second = "You have to notify your employer 8 weeks before the leave begins."
    up = _Says({("test", case.id): case}, [second], "I cannot determine that.")
    r = score_cases(METRIC, [case], upstream=up)[case.id].result
    assert r.status == "unscored" and "neither yes nor no" in r.reason
    assert [u.verdict for u in r.units] == ["supported", "ambiguous"]
    assert r.units[1].detail["chunks"][0]["reply"] == "I cannot determine that."


def test_an_unreadable_reply_does_not_matter_once_another_chunk_says_yes(canonical):
    case = canonical.by_id("citations-correct")
    first = "You have 30 days from the purchase date to ask for a refund [1]."

    class OneChunkMumbles(_Says):
        async def complete(self, cell, body):
            out = await super().complete(cell, body)
            if out["choices"][0]["message"]["content"] == "No" and body["messages"][1]["content"].endswith(first):
                out["choices"][0]["message"]["content"] = "Hmm"
            return out

    r = score_cases(METRIC, [case], upstream=OneChunkMumbles({("test", case.id): case}, [], ""))[case.id].result
    assert r.status == "scored" and r.score == 1.0
    assert sorted(c["source"] for c in r.units[0].detail["chunks"]) == ["text", "unreadable"]


@pytest.fixture(scope="module")
def realistic(canonical):
    """The canonical set scored by the realistic test judge in each mode: {mode: (results, judge's books)}."""
    from tests.helpers.judges.realistic import MODEL, serve

    out = {}
    for mode, with_logprobs in (("chat-only", False), ("openai-like", True)):
        with serve(logprobs=with_logprobs) as judge:
            got = score_cases(METRIC, list(canonical), upstream=HttpUpstream(judge.url, MODEL, None))
            out[mode] = got, judge.stats()
    return out


@pytest.mark.parametrize("mode", ["chat-only", "openai-like"])
def test_realistic_judge_in_each_mode(mode, realistic):
    got, books = realistic[mode]
    assert books["unrecognised"] == 0 and books["steps"] == {"nli.minicheck": books["calls"]}
    results = {cid: s.result for cid, s in got.items()}
    assert {r.status for cid, r in results.items() if cid != "empty-answer"} == {"scored"}
    assert sum(s.ledger.calls for s in got.values()) == books["calls"] == sum(
        r.detail.get("checks", 0) for r in results.values())
    chunks = [c for r in results.values() for u in r.units for c in u.detail["chunks"]]
    probs = {c["prob"] for c in chunks}
    if mode == "openai-like":          # log-probabilities asked and returned: graded probabilities
        assert {c["source"] for c in chunks} == {"logprobs"}
        assert all(0.0 < p < 1.0 for p in probs) and len(probs) > 5
    else:                              # a chat-only server ignores the request: the yes/no text
        assert {c["source"] for c in chunks} == {"text"} and probs == {0.0, 1.0}


def test_both_modes_give_the_same_labels(realistic):
    """The judge's word and its probability agree (above 0.5 exactly when it says Yes), so the sentence
    labels, and the scores, do not depend on whether the server returns log-probabilities."""
    text, lp = ({cid: s.result for cid, s in realistic[m][0].items()} for m in ("chat-only", "openai-like"))
    assert {c: r.score for c, r in text.items()} == {c: r.score for c, r in lp.items()}
    assert [u.verdict for r in text.values() for u in r.units] == [u.verdict for r in lp.values() for u in r.units]
    assert len({r.score for r in text.values() if r.score is not None}) > 2   # the judge does discriminate
