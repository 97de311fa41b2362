"""The DeepEval reference-judge handlers on DeepEval's own (recorded) prompts, and the model shims."""
from __future__ import annotations

import json

from harness.adapters.deepeval import judge
from harness.metric.endpoint import Endpoint
from harness.metric.judge_request import JudgeRequest
from harness.metric.protocol import UnrecognisedRequest

import pytest

from tests.helpers.contracts.deepeval_case import CASE, fill, load_fixture

T = {step: v["template"] for step, v in load_fixture()["steps"]["deepeval.faithfulness"].items()
     if not step.startswith("_")}
SCHEMA = {"truths": "Truths", "claims": "Claims", "verdicts": "Verdicts", "reason": "FaithfulnessScoreReason"}
CLAIMS = [c.text for c in CASE.annotation.claims]


def request(step: str, prompt: str, schema: str | None = "auto", case=CASE) -> JudgeRequest:
    body = {"model": "reference-judge", "messages": [{"role": "user", "content": prompt}]}
    name = SCHEMA[step] if schema == "auto" else schema
    if name is not None:
        body["response_format"] = {"type": "json_schema", "json_schema": {"name": name, "strict": True}}
    return JudgeRequest("deepeval.faithfulness", case, body)


def reply(req: JudgeRequest) -> dict:
    return json.loads(judge.reference_reply(req))


def test_truths_are_the_sentences_of_each_context():
    req = request("truths", fill(T["truths"], retrieval_context="\n\n".join(CASE.context_texts)))
    assert reply(req) == {"truths": ["Bake at 350 F for 8 to 10 minutes.", "Cool on a wire rack.",
                                     "Store the cookies in a tin for up to a week."]}


def test_truths_of_another_text_are_unrecognised():
    with pytest.raises(UnrecognisedRequest, match="truths"):
        judge.reference_reply(request("truths", fill(T["truths"], retrieval_context="Some other passage.")))


def test_claims_are_the_judged_claims_in_order():
    assert reply(request("claims", fill(T["claims"], actual_output=CASE.answer))) == {"claims": CLAIMS}


def test_claims_of_another_answer_are_unrecognised():
    with pytest.raises(UnrecognisedRequest, match="claims"):
        judge.reference_reply(request("claims", fill(T["claims"], actual_output="Something else.")))


def test_verdicts_follow_the_label_table_one_per_rendered_claim():
    rendered = [CLAIMS[2], CLAIMS[0], CLAIMS[1].upper()]  # any order, case-insensitive match
    got = reply(request("verdicts", fill(T["verdicts"], retrieval_context="x", claims=str(rendered))))
    assert [v["verdict"] for v in got["verdicts"]] == ["borderline", "yes", "no"]
    assert got["verdicts"][1]["reason"] is None
    assert got["verdicts"][2]["reason"].endswith('It says: "Cool on a wire rack."')


def test_verdict_for_an_unknown_claim_is_unrecognised():
    prompt = fill(T["verdicts"], retrieval_context="x", claims=str([CLAIMS[0], "The oven is gas."]))
    with pytest.raises(UnrecognisedRequest, match="The oven is gas"):
        judge.reference_reply(request("verdicts", prompt))


def test_reason_names_score_and_contradictions():
    contradictions = ["(Ambiguous) The yield is not mentioned.", "The context says a wire rack."]
    prompt = fill(T["reason"], score="0.33", contradictions=str(contradictions))
    assert reply(request("reason", prompt)) == {"reason": (
        "The score is 0.33 because of 2 contradiction(s): (Ambiguous) The yield is not mentioned. "
        "The context says a wire rack.")}
    empty = reply(request("reason", fill(T["reason"], score="1.00", contradictions="[]")))["reason"]
    assert empty.startswith("The score is 1.00 because the contradictions list is empty")


def test_step_from_prompt_alone_on_the_loose_json_path():
    req = request("claims", fill(T["claims"], actual_output=CASE.answer), schema=None)
    assert judge.step_of(req) == "claims"


@pytest.mark.parametrize("schema", ["Verdicts", "Statements"])
def test_schema_and_prompt_must_agree(schema):
    with pytest.raises(UnrecognisedRequest):
        judge.step_of(request("claims", fill(T["claims"], actual_output=CASE.answer), schema=schema))


def test_unknown_prompt_is_unrecognised():
    with pytest.raises(UnrecognisedRequest, match="unknown DeepEval prompt"):
        judge.step_of(request("claims", "Rate this answer from 1 to 10.", schema=None))


# --- the judge model (imports deepeval) ---------------------------------------------------------

@pytest.fixture
def endpoint():
    from harness.metric.http import Pools

    return Endpoint("http://127.0.0.1:9/cell/r/c/deepeval.faithfulness/v1", "reference-judge", pool=Pools())


def test_model_reuses_one_client_on_the_shared_pool(endpoint):
    """Shim ``load_model``: one client per cell on the run's pool (stock: a new client per call)."""
    from harness.adapters.deepeval._model import GatewayModel

    from deepeval.models import OpenAIModel

    model = GatewayModel(endpoint)
    client = model.load_model(async_mode=True)
    assert model.load_model(async_mode=True) is client
    assert client._client is endpoint.pool.async_client()
    assert str(client.base_url).rstrip("/") == endpoint.base_url and client.max_retries == 0
    stock = OpenAIModel(model="reference-judge", base_url=endpoint.base_url, api_key="x")
    assert stock.load_model(async_mode=True) is not stock.load_model(async_mode=True)


def test_metric_is_fresh_per_cell_with_llm_eval_mode(endpoint, monkeypatch):
    from harness.adapters.deepeval._model import build_metric

    monkeypatch.setenv("DEEPEVAL_EVAL_MODE", "system_one")
    a, b = build_metric(endpoint, False), build_metric(endpoint, True)
    assert a is not b and a.model is not b.model
    assert str(a.eval_mode.value if hasattr(a.eval_mode, "value") else a.eval_mode) == "llm"
    assert (a.penalize_ambiguous_claims, b.penalize_ambiguous_claims) == (False, True)
    assert (a.threshold, a.include_reason, a.strict_mode, a.truths_extraction_limit) == (0.5, True, False, None)


def test_importing_the_model_module_first_leaves_no_files(tmp_path):
    """``_model`` imports harness before deepeval, so the telemetry opt-out is set first: without
    it, ``import deepeval`` creates ``./.deepeval/`` in the working directory."""
    import os
    import subprocess
    import sys

    from tests.conftest import ROOT

    env = {k: v for k, v in os.environ.items() if not k.startswith("DEEPEVAL_")}
    env["PYTHONPATH"] = ROOT
    out = subprocess.run([sys.executable, "-c", "import harness.adapters.deepeval._model"], cwd=tmp_path, env=env,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout == "" and sorted(os.listdir(tmp_path)) == []
