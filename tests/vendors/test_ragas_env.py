"""The Ragas adapters' environment and failure behaviour: telemetry off, the data-dir shim, the
retry layers (instructor's stock policy: re-asks and repeats kept; the vendor's 5 tries per RG judge
kept), judge failures."""
from __future__ import annotations

import json
import os
import tempfile
from dataclasses import replace
from pathlib import Path

from harness.core.records import Annotation, Case, Claim, Context, Evidence
from harness.judge.reference import completion

F, RG = "ragas.faithfulness", "ragas.response_groundedness"


def small_case(answer="Bake at 350 F. It makes 24 cookies.") -> Case:
    claims = (Claim("Bake at 350 F.", (0, 14), "supported", (Evidence("1", 0, 13),)),
              Claim("The recipe makes 24 cookies.", (15, 35), "not_found"))
    return Case("small", "How do I bake them?", (Context("1", "Bake at 350 F for 8 to 10 minutes."),),
                answer, Annotation(claims, True, False))


class Scripted:
    """The reference judge, except for requests ``script(body)`` answers (content text, or None)."""

    kind = "reference"
    model = "reference-judge"

    def __init__(self, case: Case, script):
        from harness.judge.upstream import ReferenceUpstream

        self.inner, self.script = ReferenceUpstream({("test", case.id): case}), script

    def scope(self, cell):
        return self.inner.scope(cell)

    async def complete(self, cell, body):
        content = self.script(body)
        if content is None:
            return await self.inner.complete(cell, body)
        if isinstance(content, Exception):
            raise content
        return completion(content, self.model, "scripted")

    async def aclose(self):
        return None


def user_text(body) -> str:
    return next(m["content"] for m in body["messages"] if m["role"] == "user")


def run(metric, case, script=lambda body: None, attempts=1):
    from harness.judge.upstream import RetryPolicy

    from tests.helpers.scoring import score_one

    policy = RetryPolicy(max_attempts=attempts, base_delay_s=0.0)
    return score_one(metric, case, upstream=Scripted(case, script), policy=policy)


def is_nli(body) -> bool:
    return user_text(body).startswith("Your task is to judge")


def reasks(s) -> int:
    return sum(c.step.startswith("Correct your JSON ONLY RESPONSE") for c in s.calls)


def test_telemetry_is_off():
    from harness.adapters.ragas._llm import vendor

    vendor()
    from ragas._analytics import do_not_track

    assert os.environ["RAGAS_DO_NOT_TRACK"] == "true" and do_not_track()


def test_uuid_file_stays_out_of_the_home(tmp_path, monkeypatch):
    """The shim: ragas's analytics id goes to the harness's temp dir, not ~/.local/share/ragas."""
    from harness.adapters.ragas._llm import harness_data_dir, vendor

    vendor()
    import ragas._analytics as analytics

    home, tmp = tmp_path / "home", tmp_path / "tmp"
    home.mkdir(), tmp.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("XDG_DATA_HOME", raising=False)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp))
    analytics.get_userid.cache_clear()  # ragas caches the id per process
    try:
        assert run(F, small_case()).result.status == "scored"
        assert not (home / ".local").exists(), "ragas wrote under the user's home"
        uuid_file = Path(harness_data_dir("ragas")) / "uuid.json"
        assert str(uuid_file).startswith(str(tmp)) and json.loads(uuid_file.read_text())["userid"]
    finally:
        analytics.get_userid.cache_clear()


def test_faithfulness_wrong_schema_is_reasked_by_instructor_then_an_error_naming_the_step():
    """instructor's own re-asks are kept (3 attempts per step), each a request in the ledger."""
    s = run(F, small_case(), lambda body: '{"verdicts": []}' if is_nli(body) else None)
    assert s.result.status == "error" and "step 'nli'" in s.result.reason and "ValidationError" in s.result.reason
    assert s.ledger.calls == 1 + 3 and reasks(s) == 2


def test_faithfulness_recovers_from_one_bad_reply_through_the_reask():
    """The reference judge answers instructor's re-ask like the request it repeats."""
    bad = []

    def script(body):
        if is_nli(body) and not bad:
            bad.append(1)
            return '{"statements": "not a list"}'
        return None

    s = run(F, small_case(), script)
    assert (s.result.status, s.result.score, s.ledger.calls, reasks(s)) == ("scored", 0.5, 3, 1)


def test_api_errors_are_asked_again_by_instructor_as_in_stock_use():
    """Instructor's stock policy repeats a step after an API error (3 attempts), each after the gateway's
    own retries; then InstructorRetryException, the exception stock raises, recorded as the vendor's."""
    from harness.judge.upstream import UpstreamError

    s = run(F, small_case(), lambda body: UpstreamError("judge down", status=503) if is_nli(body) else None,
            attempts=3)
    assert s.result.status == "error" and "step 'nli'" in s.result.reason and "judge down" in s.result.reason
    assert s.result.detail["exception"] == "instructor.core.exceptions.InstructorRetryException"
    assert (s.ledger.calls, s.ledger.retries, s.ledger.errors) == (1 + 3, 3 * 2, 3)


def test_faithfulness_unmapped_statement_is_an_error_not_a_guess():
    def script(body):
        if user_text(body).startswith("Given a question"):
            return json.dumps({"statements": ["Bake at 350 F.", "Cookies are vegan."]})
        return None

    s = run(F, small_case(), script)
    assert s.result.status == "error" and "step 'nli'" in s.result.reason
    assert "maps to no annotated claim" in s.result.reason
    assert s.ledger.calls == 1 + 3   # the reference judge's 400, asked again by instructor's stock policy


def test_faithfulness_denominator_is_the_nli_list():
    """The judge drops one statement: Ragas divides by the NLI list, and so do the units."""
    def script(body):
        if user_text(body).startswith("Your task is to judge"):
            return json.dumps({"statements": [{"statement": "Bake at 350 F.", "reason": "r", "verdict": 1}]})
        return None

    s = run(F, small_case(), script)
    assert s.result.score == 1.0 and len(s.result.units) == 1 and s.result.flags == ("nli_count_mismatch",)
    assert s.result.detail["statements"] == ["Bake at 350 F.", "The recipe makes 24 cookies."]


def test_rg_keeps_the_vendor_five_tries_per_judge_and_flags_one_judge_nan():
    def script(body):
        return '{"rating": 7}' if user_text(body).startswith("You are a world class expert") else None

    s = run(RG, small_case(), script)
    assert s.ledger.calls == 5 + 1
    assert s.result.status == "scored" and s.result.score == 0.5 and s.result.flags == ("one_judge_nan", "vendor_fallback")
    j1, j2 = s.result.units
    assert (j1.raw_verdict, j1.verdict, j2.raw_verdict) == ("nan", "excluded", "1")
    assert "ratings given [7, 7, 7, 7, 7]" in j1.reason
    assert s.result.detail["ratings"] == {"judge1": None, "judge2": 1}


def test_rg_both_judges_failing_is_vendor_nan_with_the_errors():
    """2 judges x the vendor's 5 tries x instructor's 3 attempts."""
    s = run(RG, small_case(), lambda body: '{"score": 2}')
    assert s.ledger.calls == 2 * 5 * 3 and s.result.status == "vendor_nan"
    assert s.result.reason.startswith("unscored by the vendor: ") and "ValidationError" in s.result.reason
    assert [u.verdict for u in s.result.units] == ["excluded", "excluded"]
    assert s.result.flags == ("judge_errors",)


def test_rg_blank_answer_scores_zero_without_a_call_and_is_flagged():
    case = replace(small_case(), answer="   ", annotation=Annotation((), True, False))
    s = run(RG, case)
    assert (s.result.status, s.result.score, s.ledger.calls) == ("scored", 0.0, 0)
    assert s.result.flags == ("blank_input_scored_0",)
