"""One reviewer's labels for one answer (the *state* the app saves), checked as the case loader checks
an annotation, and turned into the case format's ``annotation``.

A state is ``{"claims": [{"start", "end", "label", "evidence": [{"context_id", "start", "end", "quote"}]}],
"abstention": bool, "answerable": bool}``. Offsets are characters (code points) of the answer and of the
passages, as in the case format; ``label`` is one of ``harness.core.records.LABELS`` or null while the
reviewer has not labelled the claim yet. A claim is *done* when its label is set and its evidence fits the
label (supported needs a span; inference and not_found have none); an answer is done when every claim is.
"""
from __future__ import annotations

from harness.cases.load import parse_case
from harness.core.records import LABELS
from harness.core.spans import sentence_spans

STATE_FIELDS = {"claims", "abstention", "answerable"}
OPTIONAL_FIELDS = {"comment", "skipped"}
"""A state may also carry the reviewer's ``comment`` on the answer (text, at most :data:`COMMENT_MAX` characters)
and ``skipped`` (true: the reviewer set the answer aside; it counts as neither labelled nor rated, and its claims
are kept for when it is unskipped)."""
COMMENT_MAX = 10_000
CLAIM_FIELDS = {"start", "end", "label", "evidence"}
NO_EVIDENCE = ("inference", "not_found")
"""Labels whose claims no span states (the loader refuses evidence on them)."""


def initial_state(case: dict) -> dict:
    """The claims a reviewer starts from: the annotated claims' spans where the case has them, else the
    answer's sentences; no label is filled in (labels from elsewhere would anchor the reviewer).

    >>> initial_state({"answer": "It is red. It is big.", "contexts": []})["claims"]
    [{'start': 0, 'end': 10, 'label': None, 'evidence': []}, {'start': 11, 'end': 21, 'label': None, 'evidence': []}]
    """
    ann = case.get("annotation") or {}
    spans = [tuple(c["answer_span"]) for c in ann.get("claims") or []] or sentence_spans(case["answer"])
    return {"claims": [{"start": s, "end": e, "label": None, "evidence": []} for s, e in spans],
            "abstention": bool(ann.get("abstention", False)) if ann else False,
            "answerable": bool(ann.get("answerable", True)) if ann else True}


def claim_done(claim: dict) -> bool:
    """Is the claim labelled, with evidence that fits its label?

    >>> claim_done({"label": "supported", "evidence": []}), claim_done({"label": "not_found", "evidence": []})
    (False, True)
    """
    label, ev = claim.get("label"), claim.get("evidence") or []
    if label not in LABELS:
        return False
    if label == "supported":
        return bool(ev)
    return not (label in NO_EVIDENCE and ev)


def answer_done(state: dict | None) -> bool:
    """Is every claim of the answer done (an answer with no claims is done: it asserts nothing)?"""
    return state is not None and not state.get("skipped") and all(claim_done(c) for c in state.get("claims", []))


def skipped(state: dict | None) -> bool:
    """Did the reviewer skip the answer (set it aside, not labelled)?"""
    return bool(state and state.get("skipped"))


def _annotation(case: dict, state: dict, *, for_check: bool) -> dict:
    known = {tuple(c["answer_span"]): c for c in (case.get("annotation") or {}).get("claims") or []}
    claims = []
    for c in state["claims"]:
        if not for_check and not claim_done(c):
            continue
        label = c["label"] if claim_done(c) else "contradicted"   # the one label that takes any evidence
        s, e = c["start"], c["end"]
        quote = case["answer"][s:e] if isinstance(s, int) and isinstance(e, int) else ""
        same = known.get((s, e)) or {}   # a claim the case already had: its text and citation are facts, kept
        claims.append({"text": same.get("text") or quote.strip() or quote or "?", "answer_span": [s, e],
                       "answer_quote": quote, "label": label, "evidence": c.get("evidence") or [],
                       "cited_context_id": same.get("cited_context_id")})
    return {"claims": claims, "answerable": state["answerable"], "abstention": state["abstention"]}


def check(case: dict, state: dict) -> dict:
    """The state, checked (ValueError naming the field otherwise); offsets and quotes go through the case
    loader's own checks.

    >>> case = {"id": "x", "question": "q", "answer": "It is red.", "contexts": [{"id": "1", "text": "Red it is."}]}
    >>> ok = check(case, {"claims": [{"start": 0, "end": 10, "label": "supported",
    ...     "evidence": [{"context_id": "1", "start": 0, "end": 3, "quote": "Red"}]}], "abstention": False, "answerable": True})
    >>> check(case, {"claims": [{"start": 0, "end": 10, "label": None, "evidence": [{"context_id": "1",
    ...     "start": 0, "end": 3, "quote": "Rex"}]}], "abstention": False, "answerable": True})
    Traceback (most recent call last):
    ...
    ValueError: answer x, field annotation.claims[0].evidence[0].start/end: [0, 3] of context '1' is 'Red', annotation says 'Rex'
    """
    if not isinstance(state, dict):
        raise ValueError("labels: expected an object {claims, abstention, answerable}")
    extra = sorted(set(state) - STATE_FIELDS - OPTIONAL_FIELDS)
    if extra:
        raise ValueError(f"labels, field {extra[0]}: unknown field; known: "
                         f"{', '.join(sorted(STATE_FIELDS | OPTIONAL_FIELDS))}")
    comment = state.get("comment", "")
    if not isinstance(comment, str):
        raise ValueError(f"labels, field comment: expected text, got {comment!r:.40}")
    if len(comment) > COMMENT_MAX:
        raise ValueError(f"labels, field comment: {len(comment)} characters; at most {COMMENT_MAX}")
    if not isinstance(state.get("skipped", False), bool):
        raise ValueError(f"labels, field skipped: expected true or false, got {state.get('skipped')!r:.40}")
    for key in ("abstention", "answerable"):
        if not isinstance(state.get(key), bool):
            raise ValueError(f"labels, field {key}: expected true or false, got {state.get(key)!r}")
    if not isinstance(state.get("claims"), list):
        raise ValueError("labels, field claims: expected a list of claims")
    for i, c in enumerate(state["claims"]):
        if not isinstance(c, dict) or set(c) - CLAIM_FIELDS:
            raise ValueError(f"labels, field claims[{i}]: expected an object with {', '.join(sorted(CLAIM_FIELDS))}")
        for end in ("start", "end"):
            if not isinstance(c.get(end), int) or isinstance(c.get(end), bool):
                raise ValueError(f"labels, field claims[{i}].{end}: expected a whole number, got {c.get(end)!r:.40}")
        if c.get("label") is not None and c["label"] not in LABELS:
            raise ValueError(f"labels, field claims[{i}].label: expected one of {', '.join(LABELS)} or null, "
                             f"got {c['label']!r}")
        if c.get("label") in NO_EVIDENCE and c.get("evidence"):
            raise ValueError(f"labels, field claims[{i}].evidence: a {c['label']!r} claim has no span stating it")
    spans = sorted((c["start"], c["end"]) for c in state["claims"])
    for (s1, e1), (s2, e2) in zip(spans, spans[1:]):
        if s2 < e1:
            raise ValueError(f"labels, field claims: the claims [{s1}, {e1}] and [{s2}, {e2}] overlap")
    parse_case({**_base(case), "annotation": _annotation(case, state, for_check=True)}, f"answer {case['id']}")
    out = {"claims": [{"start": c["start"], "end": c["end"], "label": c.get("label"),
                       "evidence": list(c.get("evidence") or [])} for c in state["claims"]],
           "abstention": state["abstention"], "answerable": state["answerable"]}
    if comment:
        out["comment"] = comment
    if state.get("skipped"):
        out["skipped"] = True
    return out


def _base(case: dict) -> dict:
    return {k: v for k, v in case.items() if k != "annotation"}


def annotated_case(case: dict, state: dict) -> dict:
    """The case (a JSONL object of the case format) with the reviewer's labels as its annotation; only
    done claims are kept (call it for done answers)."""
    out = {**_base(case), "annotation": _annotation(case, state, for_check=False)}
    parse_case(out, f"answer {case['id']}")
    return out
