"""Contract: DeepEval's FaithfulnessMetric prompts and schemas, step by step, as recorded for 4.3.1.

The contract case is scored through the real gateway; every request is recorded, its case-specific
values are masked (``{{retrieval_context}}``, ``{{actual_output}}``, ``{{claims}}``, ``{{score}}``,
``{{contradictions}}``) and the skeleton is compared with ``tests/helpers/contracts/deepeval.faithfulness.json``.
A change in a template, in a response schema, in the request shape or in the call sequence fails
here, naming the step, before it can silently change what the reference judge answers.

Re-record (only after reading the new templates and updating ``adapters/deepeval/judge.py``):
``.venv/bin/python tests/vendors/test_deepeval_contract.py --record``.
"""
from __future__ import annotations

import difflib
import hashlib
import json
import os
import sys

if __name__ == "__main__":  # pragma: no cover - recording entry point
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

import pytest

from tests.helpers.contracts.deepeval_case import (
    CASE,
    FIXTURE,
    METRICS,
    STEPS,
    RecordingUpstream,
    load_fixture,
    step_of_body,
)
from tests.helpers.scoring import score_cases


def observe() -> dict:
    """Score the contract case with both variants; return metric -> step -> masked request."""
    out: dict = {}
    for metric in METRICS:
        up = RecordingUpstream({("test", CASE.id): CASE})
        scored = score_cases(metric, [CASE], upstream=up)[CASE.id]
        assert scored.result.status == "scored", scored.result
        replies = {step_of_body(b): json.loads(c) for _, b, c in up.log}
        steps = {step_of_body(b): _masked(b, replies, metric) for _, b, _ in up.log}
        steps["_sequence"] = [step_of_body(b) for _, b, _ in up.log]
        out[metric] = steps
    return out


def _masked(body: dict, replies: dict, metric: str) -> dict:
    step = step_of_body(body)
    (msg,) = body["messages"]
    prompt = msg["content"]
    if isinstance(prompt, list):   # OpenAIModel's own list-of-parts content
        prompt = "".join(p.get("text", "") for p in prompt if isinstance(p, dict))
    if step == "truths":
        prompt = _mask(prompt, "\n\n".join(CASE.context_texts), "retrieval_context")
    elif step == "claims":
        prompt = _mask(prompt, CASE.answer, "actual_output")
    elif step == "verdicts":
        prompt = _mask(prompt, "\n\n".join(replies["truths"]["truths"]), "retrieval_context")
        prompt = _mask(prompt, str(replies["claims"]["claims"]), "claims")
    else:
        penalize = metric.endswith("_penalized")
        vs = replies["verdicts"]["verdicts"]
        # DeepEval's order: verdict order, a "no" as its reason, a penalized borderline prefixed
        ordered = [(v["reason"] if v["verdict"] == "no" else f"(Ambiguous) {v['reason']}")
                   for v in vs if v["verdict"] == "no" or (v["verdict"] == "borderline" and penalize)]
        prompt = _mask(prompt, str(ordered), "contradictions")
        passing = ("yes",) if penalize else ("yes", "borderline")
        score = sum(v["verdict"] in passing for v in vs) / len(vs)
        prompt = _mask(prompt, f"\n{score:.2f}\n", "score", wrap="\n")
    return {
        "template": prompt,
        "sha256": hashlib.sha256(prompt.encode()).hexdigest(),
        "head": prompt.splitlines()[:2],
        "body_keys": sorted(body),
        "roles": [m["role"] for m in body["messages"]],
        "content_type": type(msg["content"]).__name__,
        "temperature": body.get("temperature"),
        "response_format": body.get("response_format"),
    }


def _mask(prompt: str, value: str, name: str, wrap: str = "") -> str:
    if prompt.count(value) != 1:
        raise AssertionError(f"the {name} value occurs {prompt.count(value)} times in the prompt, not once: "
                             f"DeepEval changed how it renders it")
    return prompt.replace(value, f"{wrap}{{{{{name}}}}}{wrap}")


@pytest.fixture(scope="module")
def observed():
    return observe()


@pytest.fixture(scope="module")
def recorded():
    return load_fixture()


def test_pinned_version_recorded(recorded):
    assert recorded["deepeval_version"] == "4.3.1"


@pytest.mark.parametrize("metric", METRICS)
def test_call_sequence(metric, observed, recorded):
    got = observed[metric]["_sequence"]
    want = recorded["steps"][metric]["_sequence"]
    # truths and claims run concurrently: their order is not part of the contract
    assert sorted(got[:2]) == sorted(want[:2]) and got[2:] == want[2:], (
        f"DeepEval {_installed()} call sequence changed for {metric}: {got} (recorded {want})")


@pytest.mark.parametrize("step", STEPS)
@pytest.mark.parametrize("metric", METRICS)
def test_step_contract(metric, step, observed, recorded):
    got, want = observed[metric][step], recorded["steps"][metric][step]
    where = f"DeepEval {_installed()} (recorded {recorded['deepeval_version']}), {metric}, step '{step}'"
    if got["response_format"] != want["response_format"]:
        pytest.fail(f"{where}: the response schema changed shape:\n"
                    f"now:      {json.dumps(got['response_format'], sort_keys=True)}\n"
                    f"recorded: {json.dumps(want['response_format'], sort_keys=True)}")
    if got["sha256"] != want["sha256"]:
        diff = "\n".join(difflib.unified_diff(want["template"].splitlines(), got["template"].splitlines(),
                                              "recorded", "now", lineterm="", n=1))
        pytest.fail(f"{where}: the prompt template changed shape (sha256 {got['sha256'][:12]} != "
                    f"{want['sha256'][:12]}); check adapters/deepeval/judge.py, then re-record:\n{diff}")
    for key in ("body_keys", "roles", "content_type", "temperature"):
        assert got[key] == want[key], f"{where}: request {key} changed: {got[key]!r} (recorded {want[key]!r})"


def test_requests_use_deepevals_own_protocol_for_the_model_id(observed):
    """No protocol is forced: for a model id DeepEval's registry does not know (``reference-judge``,
    any local model) it sends plain text in its list-of-parts content and parses JSON from the text."""
    for metric in METRICS:
        for step in STEPS:
            got = observed[metric][step]
            assert got["response_format"] is None, (metric, step)
            assert got["content_type"] == "list", (metric, step)
            assert got["temperature"] == 0.0, (metric, step)


@pytest.mark.parametrize("model,kind", [("gpt-4o-2024-08-06", "json_schema"), ("reference-judge", None)])
def test_deepevals_registry_picks_structured_output_as_in_stock_use(model, kind):
    """The harness's model asks for structured output exactly when DeepEval's own class would."""
    from harness.adapters.deepeval._model import GatewayModel
    from harness.metric.endpoint import Endpoint

    from deepeval.models import OpenAIModel

    endpoint = Endpoint("http://127.0.0.1:9/cell/r/c/deepeval.faithfulness/v1", model)
    stock = OpenAIModel(model=model, base_url=endpoint.base_url, api_key="x")
    assert bool(GatewayModel(endpoint).supports_structured_outputs()) == bool(stock.supports_structured_outputs()) \
        == (kind == "json_schema")


def test_verdict_vocabulary_is_yes_no_borderline():
    from deepeval.metrics.faithfulness.schema import FaithfulnessVerdict

    schema = FaithfulnessVerdict.model_json_schema()
    assert schema["properties"]["verdict"]["enum"] == ["yes", "no", "borderline"]


def test_templates_hold_what_the_judge_parses(recorded):
    """The section headers and first words ``judge.py`` relies on are in the recorded templates."""
    from harness.adapters.deepeval import judge

    steps = recorded["steps"]["deepeval.faithfulness"]
    for start, step in judge.PROMPT_STEP:
        assert steps[step]["template"].startswith(start), step
        assert judge.SECTION[step] in steps[step]["template"], step
        assert steps[step]["template"].endswith(judge.END), step


def _installed() -> str:
    from importlib.metadata import version

    return version("deepeval")


def record() -> None:  # pragma: no cover - run by hand
    data = {"deepeval_version": _installed(), "case": CASE.id, "steps": observe()}
    with open(FIXTURE, "w", encoding="utf-8") as fh:
        json.dump(data, fh, indent=1, sort_keys=True, ensure_ascii=False)
        fh.write("\n")
    print(f"recorded {FIXTURE} for deepeval {data['deepeval_version']}")


if __name__ == "__main__":  # pragma: no cover
    if "--record" in sys.argv:
        record()
    else:
        print(__doc__)
