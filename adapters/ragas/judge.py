"""The reference judge's handlers for the Ragas steps (pure: no vendor import).

Ragas renders every collections prompt the same way (``BasePrompt.to_string``)::

    <instruction>
    Please return the output in a JSON format that complies with the following schema ...:
    <output schema JSON>Do not use single quotes ...
    <examples>
    -----------------------------

    Now perform the same with the following input
    input: <input JSON>
    Output:

and instructor (``Mode.JSON``, what ``llm_factory`` picks for provider "openai") sends it as the
user message after its own system message, with ``response_format={"type": "json_object"}``, and
parses the reply strictly with ``model_validate_json``: so every reply is a bare JSON object.

A re-ask (the rejected reply plus instructor's "Correct your JSON ONLY RESPONSE...") is answered
like the request it repeats. A step is recognised by the start of its instruction, the title of the output schema and the keys
of the input JSON, all three; the input is parsed as JSON after the "Now perform the same" marker
(never from the examples). The instruction prefixes below are pinned to ragas 0.4.3 by
``tests/vendors/test_ragas_contract.py``, which names the step whose prompt or schema changed.

What each step answers (the label readings are the metric classes' ``label_reading``):

- ``statements``: the judged claims' texts, in order (no claims, e.g. a pure abstention: ``[]``);
- ``nli``: per statement, the claim with that text (``claim_for_text``) and its NLI
  verdict (``RagasFaithfulness.label_reading``); a statement that maps to no claim is an :class:`UnrecognisedRequest`, never a guess;
- ``rg_judge1`` / ``rg_judge2``: :func:`rg_rating` over the judged claims.
"""
from __future__ import annotations

import json
from dataclasses import dataclass

from harness.adapters.ragas.faithfulness import RagasFaithfulness
from harness.adapters.ragas.response_groundedness import RagasResponseGroundedness
from harness.core.records import Case, Claim
from harness.metric import JudgeRequest, UnrecognisedRequest

INPUT_MARKER = "Now perform the same with the following input\ninput: "
"""What precedes the input JSON in every rendered collections prompt."""
OUTPUT_MARKER = "Output:"
"""What follows it (``"\\nOutput: "``)."""
REASK = "Correct your JSON ONLY RESPONSE, based on the following errors:"
"""How instructor (Mode.JSON) re-asks after a reply that failed to parse."""
SCHEMA_LINE = "Please return the output in a JSON format that complies with the following schema"
"""The line before the output schema JSON."""


@dataclass(frozen=True)
class Step:
    """One Ragas LLM step as the reference judge recognises it."""

    name: str
    """Short step name used in errors and contracts."""
    metric: str
    """The harness metric that sends it."""
    instruction_start: str
    """How the step's instruction begins."""
    schema_title: str
    """The ``title`` of the output schema in the prompt."""
    input_keys: frozenset
    """The keys of the input JSON."""


STEPS: tuple[Step, ...] = (
    Step("statements", "ragas.faithfulness",
         "Given a question and an answer, analyze the complexity of each sentence in the answer.",
         "StatementGeneratorOutput", frozenset({"question", "answer"})),
    Step("nli", "ragas.faithfulness",
         "Your task is to judge the faithfulness of a series of statements based on a given context.",
         "NLIStatementOutput", frozenset({"context", "statements"})),
    Step("rg_judge1", "ragas.response_groundedness",
         "You are a world class expert designed to evaluate the groundedness of an assertion.",
         "ResponseGroundednessOutput", frozenset({"response", "context"})),
    Step("rg_judge2", "ragas.response_groundedness",
         "As a specialist in assessing the strength of connections between statements and their "
         "given contexts, I will evaluate the level of support an assertion receives",
         "ResponseGroundednessOutput", frozenset({"response", "context"})),
)


def prompt_input(prompt: str) -> dict | None:
    """The input JSON of a rendered Ragas prompt (the object after the last input marker), or None.

    >>> prompt_input('...Example 1\\nInput: {"a": 0}\\n' + INPUT_MARKER + '{\\n    "a": "x"\\n}\\nOutput: ')
    {'a': 'x'}
    >>> prompt_input("no marker") is None
    True
    """
    at = prompt.rfind(INPUT_MARKER)
    if at < 0:
        return None
    try:
        obj, end = json.JSONDecoder().raw_decode(prompt, at + len(INPUT_MARKER))
    except ValueError:
        return None
    if not isinstance(obj, dict) or prompt[end:].strip() != OUTPUT_MARKER:
        return None
    return obj


def prompt_schema_title(prompt: str) -> str | None:
    """The ``title`` of the output schema a rendered Ragas prompt asks for, or None.

    >>> prompt_schema_title('Do X.\\n' + SCHEMA_LINE + ' ...:\\n{"title": "Out", "type": "object"}Do not ...')
    'Out'
    """
    at = prompt.find(SCHEMA_LINE)
    if at < 0:
        return None
    start = prompt.find("\n", at)
    try:
        schema, _ = json.JSONDecoder().raw_decode(prompt, start + 1)
    except ValueError:
        return None
    return schema.get("title") if isinstance(schema, dict) else None


def _text(message: dict) -> str:
    c = message.get("content")
    if isinstance(c, list):
        c = "".join(p.get("text", "") for p in c if isinstance(p, dict))
    return c or ""


def _first_prompt(req: JudgeRequest) -> str:
    """The Ragas prompt: the first user message of ``[system], user, (assistant, re-ask)*``.

    A re-ask (instructor appends the rejected reply and "Correct your JSON ONLY RESPONSE...") asks
    for the same output again, so it gets the same answer as the original request."""
    msgs = req.messages
    if msgs and msgs[0].get("role") == "system":
        msgs = msgs[1:]
    tail = msgs[1:]
    reasks = all(a.get("role") == "assistant" and u.get("role") == "user" and _text(u).startswith(REASK)
                 for a, u in zip(tail[::2], tail[1::2]))
    if not msgs or msgs[0].get("role") != "user" or len(tail) % 2 or not reasks:
        raise UnrecognisedRequest(req.metric, "expected instructor's [system], user, then only "
                                  "(assistant, re-ask) pairs", req.prompt)
    return _text(msgs[0])


def recognise(req: JudgeRequest) -> tuple[Step, dict, str]:
    """The step of a request, its parsed input and its prompt (the user message);
    :class:`UnrecognisedRequest` otherwise."""
    if req.response_type != "json_object":
        raise UnrecognisedRequest(req.metric, f"expected response_format json_object (instructor Mode.JSON), "
                                  f"got {req.response_type}", req.prompt)
    prompt = _first_prompt(req)
    title, data = prompt_schema_title(prompt), prompt_input(prompt)
    for step in STEPS:
        if step.metric != req.metric or not prompt.startswith(step.instruction_start):
            continue
        if title != step.schema_title:
            raise UnrecognisedRequest(req.metric, f"{step.name}: output schema {title!r}, "
                                      f"expected {step.schema_title!r}", prompt)
        if data is None or set(data) != step.input_keys:
            keys = sorted(data) if data is not None else "no input JSON"
            raise UnrecognisedRequest(req.metric, f"{step.name}: input {keys}, expected "
                                      f"{sorted(step.input_keys)}", prompt)
        return step, data, prompt
    raise UnrecognisedRequest(req.metric, "no ragas step of this metric starts this way", prompt)


def _same(req: JudgeRequest, step: Step, prompt: str, what: str, got, expected) -> None:
    if got != expected:
        raise UnrecognisedRequest(req.metric, f"{step.name}: the prompt's {what} is not case "
                                  f"{req.case.id!r}'s: {str(got)[:80]!r}", prompt)


def joined_context(case: Case) -> str:
    """The context string Ragas builds: the passages joined with newlines."""
    return "\n".join(case.context_texts)


def statement_texts(case: Case) -> list[str]:
    """What the statement generator answers: the judged claims' texts in order; nothing for an
    empty answer or a pure abstention (an abstention with no annotated claims)."""
    ann = case.annotation
    if not case.answer.strip() or (ann.abstention and not ann.claims):
        return []
    return [c.text for c in case.judged_claims()]


def nli_reason(case: Case, claim: Claim) -> str:
    """A short reason for an NLI verdict, from the claim's label and evidence."""
    quotes = "; ".join(f'"{case.evidence_text(ev)}"' for ev in claim.evidence)
    if claim.label == "supported":
        return f"The context states this: {quotes}." if quotes else "The context states this."
    if claim.label == "inference":
        return "This can be directly inferred from the context, though no passage states it."
    if claim.label == "contradicted":
        return f"The context contradicts this: {quotes}." if quotes else "The context contradicts this."
    return "The context does not mention this."


def faithfulness_reply(req: JudgeRequest) -> str:
    """Reply to a Ragas Faithfulness step (statement generation or NLI verdicts)."""
    step, data, prompt = recognise(req)
    case = req.case
    if step.name == "statements":
        _same(req, step, prompt, "answer", data["answer"], case.answer)
        _same(req, step, prompt, "question", data["question"], case.question)
        return json.dumps({"statements": statement_texts(case)}, ensure_ascii=False)
    _same(req, step, prompt, "context", data["context"], joined_context(case))
    out = []
    for text in data["statements"]:
        claim = case.claim_for_text(text) if isinstance(text, str) else None
        if claim is None:
            raise UnrecognisedRequest(req.metric, f"nli: statement {str(text)[:80]!r} maps to no "
                                      f"annotated claim of case {case.id!r}", prompt)
        out.append({"statement": text, "reason": nli_reason(case, claim), "verdict": RagasFaithfulness.label_reading[claim.label]})
    return json.dumps({"statements": out}, ensure_ascii=False)


def response_groundedness_reply(req: JudgeRequest) -> str:
    """Reply to either ResponseGroundedness judge: :func:`rg_rating` over the judged claims."""
    step, data, prompt = recognise(req)
    _same(req, step, prompt, "response", data["response"], req.case.answer)
    _same(req, step, prompt, "context", data["context"], joined_context(req.case))
    return json.dumps({"rating": rg_rating(req.case.judged_claims())})


def rg_rating(claims: list[Claim]) -> int:
    """Ragas ResponseGroundedness rating (0/1/2) from the claims' labels: 2 if every claim is
    grounded, 0 if none is, else 1; no claims (an abstention) asserts nothing ungrounded: 2.

    >>> from harness.core.records import Claim
    >>> c = lambda l: Claim("x", (0, 1), l)
    >>> rg_rating([c("supported"), c("inference")]), rg_rating([c("supported"), c("not_found")])
    (2, 1)
    >>> rg_rating([c("contradicted")]), rg_rating([])
    (0, 2)
    """
    reading = RagasResponseGroundedness.label_reading
    grounded = [reading[c.label] == "grounded" for c in claims]
    if all(grounded):
        return 2
    return 0 if not any(grounded) else 1
