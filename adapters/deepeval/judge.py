"""Reference-judge handlers for DeepEval's FaithfulnessMetric (both variants; no vendor imports).

DeepEval asks four things per case: truths (from the contexts), claims (from the answer), one
verdict per claim, and a reason. Each step is recognised by its json_schema name (``Truths``,
``Claims``, ``Verdicts``, ``FaithfulnessScoreReason``) and by the first words of its prompt; when
both are present they must agree. Without a schema (DeepEval's loose-JSON path) the prompt alone
decides. The reply is a JSON object in exactly the shape the step's schema parses.

How each step is answered:

- truths: the sentences of the contexts, context by context (``harness.core.spans.sentence_spans``).
  Not the annotation's evidence quotes: the truths call sees only the contexts, and quoting the
  evidence would leak the answer's labels into it and drop every context statement no claim
  uses. The verdict step judges claims against these truths, not against the raw contexts (a
  real judge can lose a fact at the truths step and then call its claim borderline); the
  reference judge answers verdicts from the labels, so under it the truths never move a score.
- claims: the judged claims' texts, in answer order (``[]`` for an empty answer or an abstention).
- verdicts: one per claim of the rendered claims list, from the label table
  (``DeepEvalFaithfulnessBase.label_reading``: supported and inference -> yes, not_found ->
  borderline, contradicted -> no; ``idk`` for borderline where the prompt offers that word instead, as
  DeepEval before 4.2.4 does), with a reason for no / borderline and null for yes. A claim
  that maps to no annotated claim is an :class:`UnrecognisedRequest`, never a guess.
- reason: "The score is <score> because ...", naming the contradictions list the prompt gives
  (DeepEval leaves borderline verdicts out of that list unless ``penalize_ambiguous_claims``).
"""
from __future__ import annotations

import ast
import json
import re

from harness.adapters.deepeval.faithfulness import DeepEvalFaithfulnessBase
from harness.core.records import Case, Claim
from harness.core.spans import sentence_spans
from harness.metric import JudgeRequest, UnrecognisedRequest

SCHEMA_STEP = {"Truths": "truths", "Claims": "claims", "Verdicts": "verdicts",
               "FaithfulnessScoreReason": "reason"}
"""json_schema name -> step."""

PROMPT_STEP = (
    ("Based on the given text, please generate a comprehensive list of", "truths"),
    ("Based on the given text, please extract a comprehensive list of", "claims"),
    ("Based on the given claims, which is a list of strings", "verdicts"),
    ("Below is a list of Contradictions.", "reason"),
)
"""Prompt start -> step (DeepEval 4.3.1 templates, text-only)."""

SECTION = {"truths": "\nText:\n", "claims": "\nAI Output:\n", "verdicts": "\nClaims:\n",
           "reason": "\nContradictions:\n"}
"""The header of the case-specific section each handler reads (the section runs to the end)."""

END = "\n\nJSON:"
INSTRUCTIONS_END = "\n**\n"
_SCORE = re.compile(r"\nFaithfulness Score:\n([0-9.]+)\n")


def step_of(req: JudgeRequest) -> str:
    """Which DeepEval step a request is (UnrecognisedRequest when unknown or inconsistent)."""
    prompt = req.prompt.lstrip()
    by_prompt = next((step for start, step in PROMPT_STEP if prompt.startswith(start)), None)
    name = req.schema_name
    if name is not None:
        by_schema = SCHEMA_STEP.get(name)
        if by_schema is None or (by_prompt is not None and by_prompt != by_schema):
            raise UnrecognisedRequest(req.metric, f"schema {name!r}, prompt step {by_prompt}", req.prompt)
        return by_schema
    if by_prompt is None:
        raise UnrecognisedRequest(req.metric, "unknown DeepEval prompt", req.prompt)
    return by_prompt


def section(req: JudgeRequest, step: str) -> str:
    """The case-specific text of a step: from its section header to the closing ``JSON:``.

    Truths and claims: the first header after the template's IMPORTANT block (the case text is
    the only thing after it, and may itself contain the header). Verdicts and reason: the last
    header (what follows is a Python list literal, which holds no raw newline).

    >>> body = {"messages": [{"role": "user", "content": "IMPORTANT: x\\n**\\n\\nAI Output:\\nHi.\\n\\nJSON:"}]}
    >>> section(JudgeRequest("m", None, body), "claims")
    'Hi.'
    """
    prompt, head = req.prompt, SECTION[step]
    if step in ("truths", "claims"):
        block = prompt.find(INSTRUCTIONS_END, max(0, prompt.find("IMPORTANT:")))
        start = prompt.find(head, block) if block >= 0 else -1
    else:
        start = prompt.rfind(head)
    if start < 0 or not prompt.endswith(END):
        raise UnrecognisedRequest(req.metric, f"{step}: no {head.strip()!r} section", prompt)
    return prompt[start + len(head):len(prompt) - len(END)]


def _literal_list(req: JudgeRequest, step: str, text: str) -> list:
    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError):
        value = None
    if not isinstance(value, list):
        raise UnrecognisedRequest(req.metric, f"{step}: the list is not a Python list literal", req.prompt)
    return value


def truths(req: JudgeRequest) -> list[str]:
    """The contexts' sentences, after checking the prompt's text is this case's contexts."""
    case = req.case
    text = section(req, "truths")
    if " ".join(text.split()) != " ".join("\n\n".join(case.context_texts).split()):
        raise UnrecognisedRequest(req.metric, "truths: the text is not this case's contexts", req.prompt)
    return [ctx.text[s:e] for ctx in case.contexts for s, e in sentence_spans(ctx.text)]


def claims(req: JudgeRequest) -> list[str]:
    """The judged claims' texts, after checking the prompt's output is this case's answer."""
    case = req.case
    if " ".join(section(req, "claims").split()) != " ".join(case.answer.split()):
        raise UnrecognisedRequest(req.metric, "claims: the AI output is not this case's answer", req.prompt)
    return [c.text for c in case.judged_claims()]


def verdicts(req: JudgeRequest) -> list[dict]:
    """One verdict per claim of the rendered list, from the label table."""
    out = []
    for text in _literal_list(req, "verdicts", section(req, "verdicts")):
        claim = req.case.claim_for_text(text) if isinstance(text, str) else None
        if claim is None:
            raise UnrecognisedRequest(req.metric, f"verdicts: claim {text!r} matches no annotated claim",
                                      req.prompt)
        verdict = DeepEvalFaithfulnessBase.label_reading[claim.label]
        if verdict == "borderline" and unsure_word(req.prompt) == "idk":
            verdict = "idk"
        out.append({"verdict": verdict, "reason": verdict_reason(req.case, claim, verdict)})
    return out


def unsure_word(prompt: str) -> str:
    """The unsure verdict the prompt offers: ``borderline`` (DeepEval 4.2.4 on), or ``idk`` where an older
    release's template offers that instead (the rubric's own word for the same reading).

    >>> unsure_word("either 'yes', 'no', or 'idk', which"), unsure_word("either 'yes', 'no', or 'borderline'")
    ('idk', 'borderline')
    """
    return "idk" if "'idk'" in prompt and "'borderline'" not in prompt else "borderline"


def verdict_reason(case: Case, claim: Claim, verdict: str) -> str | None:
    """The reason given with a verdict: none for yes, the contradicting text for no.

    >>> from harness.core.records import Claim
    >>> verdict_reason(None, Claim("Shipping is free.", (0, 1), "not_found"), "borderline")
    'The retrieval context does not mention this claim: Shipping is free.'
    """
    if verdict == "yes":
        return None
    if verdict in ("borderline", "idk"):
        return f"The retrieval context does not mention this claim: {claim.text}"
    quotes = [case.evidence_text(ev) for ev in claim.evidence if case.evidence_text(ev).strip()]
    said = f' It says: "{" ... ".join(quotes)}"' if quotes else ""
    return f"The retrieval context contradicts this claim: {claim.text}{said}"


def reason(req: JudgeRequest) -> str:
    """A deterministic reason naming the prompt's score and contradictions.

    >>> p = "Below is a list of Contradictions.\\n**\\n\\nFaithfulness Score:\\n0.50\\n\\nContradictions:\\n['A.']\\n\\nJSON:"
    >>> reason(JudgeRequest("m", None, {"messages": [{"role": "user", "content": p}]}))
    'The score is 0.50 because of 1 contradiction(s): A.'
    """
    found = _SCORE.search(req.prompt)
    if found is None:
        raise UnrecognisedRequest(req.metric, "reason: no faithfulness score", req.prompt)
    items = [str(c).strip() for c in _literal_list(req, "reason", section(req, "reason"))]
    if not items:
        return (f"The score is {found.group(1)} because the contradictions list is empty: "
                "no claim contradicts the retrieval context.")
    joined = " ".join(i if i.endswith((".", "!", "?")) else i + "." for i in items)
    return f"The score is {found.group(1)} because of {len(items)} contradiction(s): {joined}"


def reference_reply(req: JudgeRequest) -> str:
    """The reply to one DeepEval faithfulness request, as the JSON its step's schema parses."""
    step = step_of(req)
    if step == "truths":
        return json.dumps({"truths": truths(req)})
    if step == "claims":
        return json.dumps({"claims": claims(req)})
    if step == "verdicts":
        return json.dumps({"verdicts": verdicts(req)})
    return json.dumps({"reason": reason(req)})
