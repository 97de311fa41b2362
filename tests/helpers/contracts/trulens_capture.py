"""Capture the shape of what TruLens sends and parses, step by step, for the contract test.

Imports vendor code at module level (the leading ``_`` keeps adapter discovery away from it).
``tests/vendors/test_trulens_contract.py`` compares :func:`capture` with the recorded fixture
``tests/helpers/contracts/trulens.json`` and fails naming the step whose prompt, schema, signature or
parsing code changed. After a deliberate upgrade, re-read the vendor notes, check the adapters and
the reference handlers against the new prompts, then regenerate the fixture with::

    .venv/bin/python -m tests.helpers.contracts.trulens_capture > tests/helpers/contracts/trulens.json
"""
from __future__ import annotations

import hashlib
import inspect
import json
from importlib import metadata

from trulens.core.feedback.feedback import GroundednessConfigs
from trulens.feedback import llm_provider, output_schemas
from trulens.feedback.templates import base, rag

HEAD_LINES = 3


def _entry(text: str) -> dict:
    return {"sha256": hashlib.sha256(text.encode()).hexdigest(), "head": text.splitlines()[:HEAD_LINES],
            "text": text}


def prompts() -> dict[str, dict]:
    """Every prompt the three adapters make TruLens send, rendered as TruLens renders it."""
    g = rag.Groundedness
    c = rag.CitationAttribution
    return {
        "trivial.system": _entry(rag.Trivial.system_prompt),
        "trivial.user": _entry(rag.Trivial.user_prompt),
        "groundedness.system": _entry(g.generate_system_prompt(
            min_score=0, max_score=3, criteria=None, additional_instructions=None, examples=None,
            output_space=base.OutputSpace.LIKERT_0_3.name)),
        "groundedness.user": _entry(g.user_prompt),
        "abstention.system": _entry(rag.Abstention.system_prompt.format(min_score=0, max_score=1)),
        "abstention.user": _entry(rag.Abstention.user_prompt),
        "answerability.system": _entry(rag.Answerability.system_prompt.format(min_score=0, max_score=1)),
        "answerability.user": _entry(rag.Answerability.user_prompt),
        "citation.system": _entry(c.generate_system_prompt(
            min_score=0, max_score=1, criteria=None, additional_instructions=None, examples=None,
            output_space=base.OutputSpace.BINARY.name)),
        "citation.user": _entry(c.user_prompt),
        "citation.cot_template": _entry(base.COT_REASONS_TEMPLATE),
    }


def schemas() -> dict[str, dict]:
    """The JSON schemas TruLens asks for (sent as ``response_format``)."""
    return {name: getattr(output_schemas, name).model_json_schema()
            for name in ("BaseFeedbackResponse", "ChainOfThoughtResponse")}


CODE = ("_remove_trivial_statements", "groundedness_measure_with_cot_reasons",
        "groundedness_measure_with_cot_reasons_consider_answerability", "citation_attribution_with_cot_reasons",
        "generate_score", "generate_score_and_reasons", "_number_citation_sources")


def code() -> dict[str, dict]:
    """Signature and source hash of each TruLens function the adapters depend on."""
    out = {}
    for name in CODE:
        fn = getattr(llm_provider.LLMProvider, name)
        src = inspect.getsource(fn)
        out[name] = {"signature": str(inspect.signature(fn)), "sha256": hashlib.sha256(src.encode()).hexdigest()}
    for name in ("_mean_graded_score", "_validate_score_range"):
        src = inspect.getsource(getattr(llm_provider, name))
        out[name] = {"signature": str(inspect.signature(getattr(llm_provider, name))),
                     "sha256": hashlib.sha256(src.encode()).hexdigest()}
    out["GroundednessConfigs"] = {"fields": sorted(GroundednessConfigs.model_fields)}
    return out


def capture() -> dict:
    return {
        "versions": {p: metadata.version(p) for p in ("trulens-core", "trulens-feedback")},
        "prompts": prompts(),
        "schemas": schemas(),
        "code": code(),
    }


if __name__ == "__main__":
    print(json.dumps(capture(), indent=1, ensure_ascii=False, sort_keys=True))
