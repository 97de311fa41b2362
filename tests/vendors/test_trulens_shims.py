"""The two TruLens shims: each test here fails without its shim."""
from __future__ import annotations

import builtins

from harness.adapters.trulens.common import load_vendor
from harness.adapters.trulens.judge import GROUNDEDNESS, TRIVIAL
from harness.cases.load import load_cases
from harness.judge.reference import completion
from harness.judge.responses_api import chat_view, is_responses, response_of
from harness.judge.upstream import ReferenceUpstream

import pytest

from tests.conftest import CANONICAL
from tests.helpers.scoring import score_one

CASES = load_cases(CANONICAL)


@pytest.fixture(scope="module")
def vendor():
    shims, provider = load_vendor()
    import trulens.feedback.llm_provider as llm_provider

    return shims, provider, llm_provider


def system_prompt(body: dict) -> str:
    """The request's system prompt, chat completions or the Responses API (TruLens asks there first)."""
    view = chat_view(body) if is_responses(body) else body
    return (view.get("messages") or [{}])[0].get("content") or ""


class Override(ReferenceUpstream):
    """The reference judge, except that one step (by system-prompt prefix) gets a fixed reply, in the
    shape of the endpoint asked (a ``response`` for the Responses API)."""

    def __init__(self, case, prefix: str, content: str):
        super().__init__({("test", case.id): case})
        self.prefix, self.content = prefix, content

    async def complete(self, cell, body):
        system = system_prompt(body)
        if system.startswith(self.prefix):
            reply = completion(self.content, body.get("model") or "x", system)
            return response_of(reply) if is_responses(body) else reply
        return await super().complete(cell, body)


def test_shims_are_installed(vendor):
    shims, _, llm_provider = vendor
    assert shims.applied() == {"punkt_offline": True, "literal_eval": True}
    assert llm_provider.nltk.download("punkt_tab", quiet=True) is True
    assert llm_provider.nltk.tokenize is __import__("nltk").tokenize  # everything else is real nltk


def test_nltk_english_punkt_is_not_installed_here(vendor):
    """Why shim 1 exists: the real ``nltk.sent_tokenize`` has no ``punkt_tab`` data here."""
    import nltk

    with pytest.raises(LookupError):
        nltk.sent_tokenize("Bake at 350 F. Cool on a rack.")


def test_groundedness_never_calls_nltk_download(vendor, monkeypatch):
    """With the shim, the real ``nltk.download`` is never reached (it would need the network)."""
    import nltk

    def no_network(*a, **k):
        raise AssertionError("nltk.download was called")

    monkeypatch.setattr(nltk, "download", no_network)
    s = score_one("trulens.groundedness", CASES.by_id("cookie-yield"))
    assert s.result.status == "scored", s.result.reason


def test_without_the_punkt_shim_the_cell_fails(vendor, monkeypatch):
    """Restore TruLens's own names: the download is refused offline and the split raises."""
    _, _, llm_provider = vendor
    import nltk

    monkeypatch.setattr(llm_provider, "nltk", nltk)
    monkeypatch.setattr(llm_provider, "sent_tokenize", nltk.sent_tokenize)
    monkeypatch.setattr(nltk, "download", lambda *a, **k: False)  # what an offline download amounts to
    s = score_one("trulens.groundedness", CASES.by_id("cookie-yield"))
    assert s.result.status == "error" and "LookupError" in s.result.reason


HOSTILE = "__import__('pathlib').Path({path!r}).touch() or ['Bake the cookies at 350 F for 8 to 10 minutes.']"


@pytest.mark.filterwarnings("ignore:Failed to process and remove trivial statements")
def test_hostile_filter_reply_runs_no_code(vendor, tmp_path):
    """Shim 2: a judge reply that tries to create a file is not executed; TruLens proceeds with all
    statements, as on any parse failure, and the cell still scores."""
    target = tmp_path / "pwned"
    case = CASES.by_id("cookie-yield")
    up = Override(case, TRIVIAL, HOSTILE.format(path=str(target)))
    s = score_one("trulens.groundedness", case, upstream=up)
    assert not target.exists()
    assert s.result.status == "scored" and abs(s.result.score - 2 / 3) < 1e-9
    assert "trivial_filter_unparsed_all_kept" in s.result.flags
    assert s.result.detail["filter_parsed"] is False and s.result.detail["judged"] == 3
    assert s.ledger.calls == 4


def test_builtin_eval_would_run_the_hostile_reply(vendor, tmp_path, monkeypatch):
    """Control: with TruLens's builtin ``eval`` back in place, the same reply creates the file."""
    _, _, llm_provider = vendor
    monkeypatch.setattr(llm_provider, "eval", builtins.eval)
    target = tmp_path / "pwned"
    case = CASES.by_id("cookie-yield")
    s = score_one("trulens.groundedness", case, upstream=Override(case, TRIVIAL, HOSTILE.format(path=str(target))))
    assert target.exists()
    assert s.result.status == "scored"


def test_literal_list_reply_still_filters(vendor):
    shims, _, _ = vendor
    assert shims.literal_eval("['a', \"b's\"]") == ["a", "b's"]
    for bad in ("__import__('os')", "['a'] + ['b']", "open('x')"):
        with pytest.raises(ValueError):
            shims.literal_eval(bad)


def test_out_of_range_score_fails_the_cell_naming_it(vendor):
    """TruLens raises ParseError for a 0-3 score outside the range: the cell is an error, never 0."""
    case = CASES.by_id("leave-grounded")
    reply = '{"criteria": "x", "supporting_evidence": "NOTHING FOUND", "score": 7}'
    s = score_one("trulens.groundedness", case, upstream=Override(case, GROUNDEDNESS, reply))
    assert s.result.status == "error" and "ParseError" in s.result.reason and "7" in s.result.reason


class Failing(ReferenceUpstream):
    """The reference judge, except that one step (by system-prompt prefix) always fails."""

    def __init__(self, case, prefix: str):
        super().__init__({("test", case.id): case})
        self.prefix = prefix

    async def complete(self, cell, body):
        from harness.judge.upstream import UpstreamError

        if system_prompt(body).startswith(self.prefix):
            raise UpstreamError("injected: this step fails", status=400, retryable=False)
        return await super().complete(cell, body)


def test_swallowed_judge_failure_is_flagged(vendor):
    """TruLens treats a failed abstention check as "not an abstention": the refusal is then judged
    for groundedness and scores 1.0 instead of 0.0. The value is TruLens's; the flag says why. A cell
    with a failed judge call is an error whatever the vendor made of it (issue 13: an outage is never
    a finished score), so the 1.0 and the flag are kept in the error cell's detail."""
    from harness.adapters.trulens.judge import ABSTENTION

    case = CASES.by_id("abstain-answerable")
    s = score_one("trulens.groundedness_answerability", case, upstream=Failing(case, ABSTENTION))
    assert s.result.status == "error" and s.result.detail["vendor_score"] == 1.0
    assert s.result.detail["vendor_status"] == "scored" and s.ledger.errors == 1
    assert "judge_failure_fallback" in s.result.detail["vendor_flags"]
    assert s.result.detail["failed_calls"][0].startswith("BadRequestError")
