"""The in-house scorer's two judge steps as requests, and reading a reply: the prompts (versioned files),
the schemas, the messages, one structured call, and the reply's JSON. Shared by the scorer
(:mod:`harness.adapters.inhouse.span`) and its verdict reader (:mod:`harness.adapters.inhouse.verdicts`)."""
from __future__ import annotations

import functools
import json
import re
from importlib import resources

from harness.core.records import Case
from harness.metric import Endpoint

PROMPT_VERSION = "v1"
VERDICTS = ("supported", "contradicted", "not_found")

CLAIMS_SCHEMA = {
    "name": "InhouseClaims",
    "strict": True,
    "schema": {
        "type": "object", "additionalProperties": False, "required": ["claims"],
        "properties": {"claims": {"type": "array", "items": {"type": "string"}}},
    },
}
VERDICTS_SCHEMA = {
    "name": "InhouseVerdicts",
    "strict": True,
    "schema": {
        "type": "object", "additionalProperties": False, "required": ["verdicts"],
        "properties": {"verdicts": {"type": "array", "items": {
            "type": "object", "additionalProperties": False,
            "required": ["claim", "verdict", "evidence", "reason"],
            "properties": {
                "claim": {"type": "integer"},
                "verdict": {"type": "string", "enum": list(VERDICTS)},
                "evidence": {"type": "array", "items": {
                    "type": "object", "additionalProperties": False, "required": ["context_id", "quote"],
                    "properties": {"context_id": {"type": "string"}, "quote": {"type": "string"}}}},
                "reason": {"type": "string"},
            }}}},
    },
}
CLAIMS_MARKER = "CLAIMS (JSON list, numbered from 1):"
_FENCE = re.compile(r"```(?:json)?\s*\n(.*?)\n?```", re.S)


@functools.lru_cache(maxsize=None)
def prompt(name: str) -> str:
    """The text of a versioned prompt file, e.g. ``prompt("verify")`` (read once per process)."""
    return resources.files(__package__).joinpath(f"prompts/{name}.{PROMPT_VERSION}.txt").read_text()


def decompose_messages(case: Case) -> list[dict]:
    return [{"role": "system", "content": prompt("decompose")},
            {"role": "user", "content": f"QUESTION:\n{case.question}\n\nANSWER:\n{case.answer}"}]


def verify_messages(case: Case, claims: list[str]) -> list[dict]:
    passages = "\n\n".join(f"[{c.id}] {c.text}" for c in case.contexts) or "(no passages)"
    return [{"role": "system", "content": prompt("verify")},
            {"role": "user", "content": f"PASSAGES:\n{passages}\n\n{CLAIMS_MARKER}\n"
                                        f"{json.dumps(claims, ensure_ascii=False)}"}]


class ReplyError(ValueError):
    """The judge's reply does not have the shape the step asked for."""


def _json(content: str):
    r"""The JSON object of a reply, read as a careful client reads a real model's reply: as is, else
    inside a Markdown code fence, else from the first ``{`` to the last ``}`` (prose around it).

    >>> _json('```json\n{"claims": []}\n```'), _json('Here it is:\n{"claims": ["a"]}')
    ({'claims': []}, {'claims': ['a']})
    """
    try:
        return json.loads(content)
    except (TypeError, ValueError) as e:
        first = e
    text = content if isinstance(content, str) else ""
    fence = _FENCE.search(text)
    for cand in ([fence.group(1)] if fence else []) + [text[text.find("{"):text.rfind("}") + 1]]:
        try:
            if cand.strip():
                return json.loads(cand)
        except ValueError:
            continue
    raise ReplyError(f"reply is not JSON ({first})") from None


async def _ask(endpoint: Endpoint, messages: list[dict], schema: dict) -> str:
    """One structured chat completion through the cell's endpoint; the reply's message content."""
    r = await endpoint.post_json("chat/completions", {
        "model": endpoint.model, "messages": messages, "temperature": 0,
        "response_format": {"type": "json_schema", "json_schema": schema}})
    try:
        return r["choices"][0]["message"]["content"] or ""
    except (KeyError, IndexError, TypeError) as e:
        raise ReplyError(f"not a chat completion: {type(e).__name__}") from None
