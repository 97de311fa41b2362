"""The drift sentinel's observations of one judge call: which prompt template the vendor sent, what the
judge said, and who the judge was (issue 35.3). The gateway computes them for every call it answers;
the run store keeps them per cell (:mod:`harness.store.drift`, which also sums a cell's calls up); ``harness compare`` names what changed.

What the prompt hash covers (:func:`template_hash`): the request's route (chat completions, Responses,
embeddings), every message's role and text (a Responses request read as the chat request it amounts
to), ``response_format`` and ``tools`` (a changed schema is a changed template), with the case-specific
text taken out:

- the case's own text: question, answer, every passage, every sentence of the answer and of the
  passages, every annotated claim and evidence quote; each also as it appears JSON-escaped and inside
  a Python string literal (Ragas writes JSON, DeepEval writes Python lists);
- every string the judge returned earlier in the same cell (a statement list, a claim list): what
  a later step quotes of an earlier answer;
- every number (a score a reason step quotes, list numbering);

- empty literals (``[]``, ``{}``, ``""``): an empty list of claims is a list of claims;

each replaced by one placeholder, and a run of placeholders with no letter between them (a list of
claims, however many, with its brackets, quotes, separators, escapes and the whitespace around it)
collapsed into one. Left: the vendor's own words and structure. Not covered: the model id, the temperature and
the other sampling parameters (the judge fingerprint and the cache key cover those); a template change
that only changes a number or punctuation next to case text. Limit: words a vendor writes into a prompt
from the judge's earlier verdicts (DeepEval's ``(Ambiguous)`` before a borderline reason) stay in, so
that step's hash differs between cases and moves when the judge's verdicts move.

The reply hash (:func:`reply_hash`) covers the judge's reply text as it came (case text included): two
runs whose cell has the same prompt hashes and the same reply hashes asked the same and were told the
same, so a changed verdict there is the vendor's parsing or scoring. The judge fingerprint
(:func:`judge_fingerprint`) is the reply's ``model`` and, where the server gives one,
``system_fingerprint``.
"""
from __future__ import annotations

import hashlib
import json
import re

from harness.core.spans import sentence_spans
from harness.judge.responses_api import chat_view, completion_view, is_responses

HOLE = "\ue000"
"""The placeholder left where case-specific text was (a private-use character no prompt carries)."""
_WORDS = re.compile(r"([A-Za-z]+)")
_HOLEY = re.compile(r"\d|\[\s*\]|\{\s*\}|\"\"|''")
"""What makes a stretch between two words case-specific: a number, an empty list, object or string."""
_ESCAPE = re.compile(r"\\[nrt\"'\\]")
HASH_CHARS = 16
"""Hex digits kept of each SHA-256 (64 bits: collisions are not a concern at a run's size)."""


def _digest(value) -> str:
    blob = json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str)
    return hashlib.sha256(blob.encode()).hexdigest()[:HASH_CHARS]


def case_pieces(case) -> list[str]:
    """The case-specific strings a prompt may carry, each in each of its forms, longest first (so a passage
    goes before its sentences).

    >>> from harness.core.records import Case, Context
    >>> case_pieces(Case("x", "Why?", (Context("1", "A b. C d."),), "Yes.", None))
    ['A b. C d.', 'A b.', 'C d.', 'Why?', 'Yes.']
    """
    if case is None:
        return []
    texts = [case.question, case.answer, *case.context_texts]
    texts += [t[s:e] for t in [case.answer, *case.context_texts] for s, e in sentence_spans(t)]
    if case.annotation is not None:
        for c in case.judged_claims():
            texts.append(c.text)
            texts += [case.evidence_text(ev) for ev in c.evidence]
    return _ordered(texts)


def merge(pieces: list[str], more) -> list[str]:
    """``pieces`` (as :func:`case_pieces` gives them) and the strings ``more``, longest first, once each."""
    return sorted(set(pieces) | set(_ordered(more)), key=lambda t: (-len(t), t))


def _ordered(texts) -> list[str]:
    """Each text in each of its forms (:func:`_forms`), once, longest text first: what :func:`mask` takes
    (the forms made once per cell, not once per call)."""
    texts = {t.strip() for t in texts if isinstance(t, str) and len(t.strip()) > 1}
    return sorted({f for t in texts for f in _forms(t)}, key=lambda t: (-len(t), t))


def _forms(text: str) -> tuple[str, ...]:
    """A piece as it may appear in a prompt: as is, JSON-escaped, inside a Python string literal."""
    return tuple(dict.fromkeys((text, json.dumps(text, ensure_ascii=False)[1:-1], repr(text)[1:-1])))


def mask(text: str, pieces) -> str:
    """``text`` with every piece (as :func:`case_pieces` and :func:`merge` give them: each in each of its
    forms) and every number replaced by :data:`HOLE`, runs of holes with no letter between them collapsed
    into one.

    >>> mask("Claims: ['It is red.', 'It is 5 m.']\\nScore: 0.5", ["It is red.", "It is 5 m."]) == f"Claims{HOLE}Score{HOLE}"
    True
    >>> mask("Claims: []\\nEnd", []) == mask("Claims: ['It is red.']\\nEnd", ["It is red."])
    True
    """
    for form in pieces:
        if form and form in text:
            text = text.replace(form, HOLE)
    parts = _WORDS.split(_ESCAPE.sub(" ", text))   # words at odd positions, what lies between them at even
    for i in range(0, len(parts), 2):
        if HOLE in parts[i] or _HOLEY.search(parts[i]):
            parts[i] = HOLE
    return "".join(parts)


def prompt_messages(route: str, body: dict) -> list[tuple[str, str]]:
    """(role, text) of each message of a request (the input texts of an embeddings request)."""
    if route == "embeddings":
        raw = body.get("input")
        return [("input", x) for x in (raw if isinstance(raw, list) else [raw]) if isinstance(x, str)]
    if is_responses(body):
        body = chat_view(body)
    out = []
    for m in body.get("messages") or []:
        if not isinstance(m, dict):
            continue
        c = m.get("content")
        if isinstance(c, list):
            c = "".join(p.get("text", "") for p in c if isinstance(p, dict))
        out.append((str(m.get("role", "")), c if isinstance(c, str) else ""))
    return out


def template_hash(route: str, body: dict, pieces) -> str:
    """The hash of the prompt template a request carries (see the module docstring for what it covers).

    >>> a = {"messages": [{"role": "user", "content": "Judge: It is red."}]}
    >>> b = {"messages": [{"role": "user", "content": "Judge: It is blue."}]}
    >>> template_hash("chat", a, ["It is red."]) == template_hash("chat", b, ["It is blue."])
    True
    >>> template_hash("chat", a, ["It is red."]) == template_hash("chat", {**a, "response_format": {"type": "json_object"}}, ["It is red."])
    False
    """
    if route != "embeddings" and is_responses(body):
        body = chat_view(body)
    return _digest({"route": route, "messages": [(r, mask(t, pieces)) for r, t in prompt_messages(route, body)],
                    "response_format": body.get("response_format"), "tools": body.get("tools")})


def reply_text(route: str, response: dict | None) -> str | None:
    """The judge's answer as text (a chat reply's content or tool calls; a response's output text); None
    when there is none (an embeddings reply: its vectors are not text)."""
    if not isinstance(response, dict) or route == "embeddings":
        return None
    if route == "responses" or response.get("object") == "response":
        response = completion_view(response)
    choices = response.get("choices") or []
    msg = (choices[0].get("message") or {}) if choices and isinstance(choices[0], dict) else {}
    content = msg.get("content")
    if msg.get("tool_calls"):
        return json.dumps({"content": content, "tool_calls": msg.get("tool_calls")}, sort_keys=True, default=str)
    return content if isinstance(content, str) else None


def reply_hash(route: str, response: dict | None) -> str:
    """The hash of the judge's reply text as it came ("" when there was none)."""
    text = reply_text(route, response)
    return _digest(text) if text is not None else ""


def said(route: str, response: dict | None) -> list[str]:
    """The strings the judge's reply holds (the string leaves of its JSON; the reply's lines when it is not
    JSON): what a later step of the same cell may quote.

    >>> said("chat", {"choices": [{"message": {"content": '{"claims": ["It is red.", "It is big."], "v": "yes"}'}}]})
    ['It is red.', 'It is big.']
    """
    text = reply_text(route, response)
    if not text:
        return []
    try:
        value = json.loads(text)
    except ValueError:
        return [ln for ln in text.splitlines() if _sentence_like(ln)]
    out: list[str] = []

    def walk(v):
        if isinstance(v, str):
            out.append(v)
        elif isinstance(v, dict):
            for x in v.values():
                walk(x)
        elif isinstance(v, list):
            for x in v:
                walk(x)

    walk(value)
    return [x for x in out if _sentence_like(x)]


def _sentence_like(text: str) -> bool:
    """A string worth taking out of later prompts: three words or more (a verdict word such as "yes" is
    also a word of the vendor's own template)."""
    return len(text.split()) >= 3


def judge_fingerprint(response: dict | None) -> str:
    """``model``, plus ``@system_fingerprint`` where the server gives one ("" for no reply).

    >>> judge_fingerprint({"model": "gpt-4o-mini-2024-07-18", "system_fingerprint": "fp_44709d6fcb"})
    'gpt-4o-mini-2024-07-18@fp_44709d6fcb'
    """
    if not isinstance(response, dict):
        return ""
    model = str(response.get("model") or "?")
    fp = response.get("system_fingerprint")
    return f"{model}@{fp}" if fp else model


SAMPLING_KEYS = ("temperature", "top_p", "seed", "n")


def sampling(route: str, body: dict) -> str:
    """The sampling settings a request asked for, as the stability figures name them ("" for embeddings). A
    temperature the vendor did not send is the server's default (1 at OpenAI), not 0.

    >>> sampling("chat/completions", {"temperature": 0, "messages": []})
    'temperature=0'
    >>> sampling("chat/completions", {"messages": [], "top_p": 0.9, "seed": 7})
    'temperature=default, top_p=0.9, seed=7'
    >>> sampling("embeddings", {"input": "x"})
    ''
    """
    if route == "embeddings" or not isinstance(body, dict):
        return ""
    t = body.get("temperature")
    out = [f"temperature={'default' if t is None else format(float(t), 'g')}"]
    out += [f"{k}={body[k]}" for k in SAMPLING_KEYS[1:] if body.get(k) is not None]
    return ", ".join(out)
