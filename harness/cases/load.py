"""Load and validate a JSONL case file.

Every problem is reported with the file, the line, the field and what was expected; offsets are
checked against the texts; duplicate ids are rejected. A file with any problem loads nothing.
The format is documented in ``datasets/README.md``.
"""
from __future__ import annotations

import hashlib
import json
import os
import weakref
from dataclasses import asdict, dataclass
from typing import Any

from harness.core.records import LABELS, Annotation, Case, Claim, Context, Evidence, HallucinationSpan

MAX_TEXT_CHARS = 200_000
"""Longest answer, question or context accepted (characters)."""
MAX_ERRORS_SHOWN = 20

CASE_FIELDS = {"id", "question", "contexts", "answer", "reference_answer", "annotation", "tags"}
ANNOTATION_FIELDS = {"claims", "answerable", "abstention", "abstention_span", "spans"}
CLAIM_FIELDS = {"text", "answer_span", "answer_quote", "label", "evidence", "cited_context_id"}
EVIDENCE_FIELDS = {"context_id", "start", "end", "quote"}


class CaseFileError(ValueError):
    """A case file that cannot be used; ``problems`` lists every (line, field, message)."""

    def __init__(self, path: str, problems: list[tuple[int | None, str, str]]):
        self.path, self.problems = path, problems
        lines = [_fmt(path, ln, fld, msg) for ln, fld, msg in problems[:MAX_ERRORS_SHOWN]]
        more = len(problems) - MAX_ERRORS_SHOWN
        if more > 0:
            lines.append(f"... and {more} more problem(s)")
        super().__init__("\n".join(lines))


def _fmt(path: str, line: int | None, fld: str, msg: str) -> str:
    where = f"{path} line {line}" if line is not None else path
    return f"{where}, field {fld}: {msg}" if fld else f"{where}: {msg}"


class _Problem(Exception):
    def __init__(self, fld: str, msg: str):
        self.fld, self.msg = fld, msg


@dataclass(frozen=True)
class CaseSet:
    """The cases of one file, with the file's digest (a resumed run checks it per case)."""

    path: str
    cases: tuple[Case, ...]
    sha256: str

    def __iter__(self):
        return iter(self.cases)

    def __len__(self):
        return len(self.cases)

    def by_id(self, case_id: str) -> Case:
        for c in self.cases:
            if c.id == case_id:
                return c
        raise KeyError(case_id)


def case_digest(case: Case) -> str:
    """A digest of everything a metric can read from the case (the annotation included, because the
    reference judge answers from it). Remembered per case object: the runner, the store and the
    reference judge's cache scope all ask, and a digest costs ~0.1 ms."""

    hit = _DIGESTS.get(id(case))
    if hit is not None and hit[0]() is case:
        return hit[1]
    d = asdict(case)
    d.pop("source", None)
    digest = hashlib.sha256(json.dumps(d, sort_keys=True, ensure_ascii=False).encode()).hexdigest()[:16]
    remember_digest(case, digest)
    return digest


_DIGESTS: dict = {}
"""id(case) -> (weak reference to the case, digest); a dead case's entry never matches."""
DIGESTS_KEPT = 4096
"""At most this many digests are remembered (then the memo starts again): a long run's memory stays flat,
and a digest computed again costs ~0.1 ms."""


def remember_digest(case: Case, digest: str) -> None:
    """Take ``digest`` as the case's digest without computing it: a worker process gets each case
    unpickled with the digest the runner computed from it (the same content), so the reference judge's
    cache scope does not hash every case again."""
    if len(_DIGESTS) >= DIGESTS_KEPT:
        _DIGESTS.clear()
    _DIGESTS[id(case)] = (weakref.ref(case), digest)


def case_to_json(case: Case) -> dict:
    """The case as one JSONL object of the case format (quotes included), for the run store.

    ``parse_case(case_to_json(c))`` gives back an equal case (``source`` aside).
    """
    ann = case.annotation
    out = {
        "id": case.id, "question": case.question,
        "contexts": [{"id": c.id, "text": c.text} for c in case.contexts],
        "answer": case.answer, "reference_answer": case.reference_answer, "tags": list(case.tags),
    }
    if ann is None:
        return out
    return {
        **out,
        "annotation": {
            "answerable": ann.answerable, "abstention": ann.abstention,
            "abstention_span": list(ann.abstention_span) if ann.abstention_span else None,
            "claims": [{"text": c.text, "answer_span": list(c.answer_span),
                        "answer_quote": case.answer[c.answer_span[0]:c.answer_span[1]], "label": c.label,
                        "evidence": [{"context_id": e.context_id, "start": e.start, "end": e.end,
                                      "quote": case.evidence_text(e)} for e in c.evidence],
                        "cited_context_id": c.cited_context_id} for c in ann.claims],
            "spans": [{"start": s.start, "end": s.end, "label": s.label} for s in ann.spans]
            if ann.spans is not None else None,
        },
    }


def parse_case(obj: dict, source: str = "") -> Case:
    """Validate one case object (as in a JSONL line); ValueError naming the field otherwise."""
    try:
        return _case(obj, source)
    except _Problem as p:
        raise ValueError(f"{source or 'case'}, field {p.fld}: {p.msg}") from None


def load_cases(path: str) -> CaseSet:
    """Load ``path``; raise :class:`CaseFileError` listing every problem (nothing is returned then)."""
    if not os.path.exists(path):
        raise CaseFileError(path, [(None, "", "no such file")])
    if os.path.isdir(path):
        raise CaseFileError(path, [(None, "", "is a directory, expected a JSONL file of cases")])
    try:
        with open(path, "rb") as fh:
            raw = fh.read()
    except OSError as e:
        raise CaseFileError(path, [(None, "", f"cannot be read: {e.strerror or type(e).__name__}")]) from None
    problems: list[tuple[int | None, str, str]] = []
    cases: list[Case] = []
    seen: dict[str, int] = {}
    if raw.startswith(b"\xef\xbb\xbf"):   # a UTF-8 byte-order mark, as some editors write: not content
        raw = raw[3:]
    lines = raw.split(b"\n")
    for lineno, bline in enumerate(lines, start=1):
        if not bline.strip():
            continue
        try:
            text = bline.decode("utf-8")
        except UnicodeDecodeError as e:
            problems.append((lineno, "", f"not valid UTF-8 (byte 0x{bline[e.start]:02x} at column {e.start + 1})"))
            continue
        try:
            obj = json.loads(text)
        except json.JSONDecodeError as e:
            problems.append((lineno, "", f"not valid JSON at column {e.colno}: {e.msg}"))
            continue
        except RecursionError:
            problems.append((lineno, "", "not usable JSON: nested too deeply"))
            continue
        except ValueError as e:   # e.g. an integer of more than 4,300 digits
            problems.append((lineno, "", f"not usable JSON: {str(e).split(';')[0]}"))
            continue
        try:
            _check_strings(obj)
            case = _case(obj, f"{path}:{lineno}")
        except _Problem as p:
            problems.append((lineno, p.fld, p.msg))
            continue
        if case.id in seen:
            problems.append((lineno, "id", f"duplicate id {case.id!r} (first on line {seen[case.id]})"))
            continue
        seen[case.id] = lineno
        cases.append(case)
    if not problems and not cases:
        problems.append((None, "", "no cases: the file is empty (expected one JSON object per line)"))
    if problems:
        raise CaseFileError(path, problems)
    return CaseSet(path, tuple(cases), hashlib.sha256(raw).hexdigest())


# --- field checks -------------------------------------------------------------------------------

def _check_strings(obj: Any) -> None:
    """A lone surrogate (``"\\ud800"`` is valid JSON, not valid text) in any string, named by field.

    >>> try:
    ...     _check_strings({"contexts": [{"text": "ok"}, {"text": "bad \\ud800"}]})
    ... except _Problem as p:
    ...     print(p.fld, p.msg)
    contexts[1].text contains a lone surrogate (U+D800) at character 4: not valid text
    """
    stack = [(obj, "")]
    while stack:
        v, fld = stack.pop()
        if isinstance(v, str):
            try:
                v.encode("utf-8")
            except UnicodeEncodeError as e:
                raise _Problem(fld or "(line)", f"contains a lone surrogate (U+{ord(v[e.start]):04X}) at "
                                                f"character {e.start}: not valid text") from None
        elif isinstance(v, dict):
            for k, x in reversed(list(v.items())):
                stack.append((k, fld or "(field name)"))
                stack.append((x, f"{fld}.{k}" if fld else k))
        elif isinstance(v, list):
            stack.extend((x, f"{fld}[{i}]") for i, x in reversed(list(enumerate(v))))


def _type(v: Any, t, fld: str, expected: str):
    ok = isinstance(v, t) and not (t is int and isinstance(v, bool)) and not (t == (int,) and isinstance(v, bool))
    if not ok:
        raise _Problem(fld, f"expected {expected}, got {_show(v)}")
    return v


def _show(v: Any) -> str:
    if v is None:
        return "null"
    s = json.dumps(v, ensure_ascii=False)
    return f"{type(v).__name__} {s[:60]}{'...' if len(s) > 60 else ''}"


def _text(obj: dict, key: str, fld: str, *, required=True, allow_empty=True) -> str | None:
    if key not in obj or obj[key] is None:
        if required:
            raise _Problem(fld, "missing (expected a string)")
        return None
    v = _type(obj[key], str, fld, "a string")
    if not allow_empty and not v.strip():
        raise _Problem(fld, "is empty (expected a non-empty string)")
    if len(v) > MAX_TEXT_CHARS:
        raise _Problem(fld, f"is {len(v):,} characters; the limit is {MAX_TEXT_CHARS:,}")
    return v


def _unknown(obj: dict, known: set[str], fld: str):
    extra = sorted(set(obj) - known)
    if extra:
        where = f"{fld}." if fld else ""
        raise _Problem(f"{where}{extra[0]}", f"unknown field; known fields here: {', '.join(sorted(known))}")


def _span(v: Any, fld: str, length: int, what: str) -> tuple[int, int]:
    if not (isinstance(v, list) and len(v) == 2 and all(isinstance(x, int) and not isinstance(x, bool) for x in v)):
        raise _Problem(fld, f"expected [start, end] (two integers), got {_show(v)}")
    s, e = v
    if s > e:
        raise _Problem(fld, f"[{s}, {e}] is reversed: start must not be after end")
    if not (0 <= s <= e <= length):
        raise _Problem(fld, f"[{s}, {e}] is out of range for {what} of length {length}")
    return s, e


def _case(obj: Any, source: str) -> Case:
    if not isinstance(obj, dict):
        raise _Problem("", f"expected a JSON object, got {_show(obj)}")
    _unknown(obj, CASE_FIELDS, "")
    cid = _text(obj, "id", "id", allow_empty=False)
    if cid.strip() in (".", ".."):
        raise _Problem("id", f"{cid!r} cannot be a case id: HTTP clients drop it as a dot segment of the "
                             f"cell's URL; rename the case")
    question = _text(obj, "question", "question")
    answer = _text(obj, "answer", "answer")
    ref = _text(obj, "reference_answer", "reference_answer", required=False)
    if "contexts" not in obj:
        raise _Problem("contexts", "missing (expected a list of {id, text} or of strings)")
    raw_ctx = _type(obj["contexts"], list, "contexts", "a list of {id, text} or of strings")
    contexts, ctx_ids = [], set()
    for i, c in enumerate(raw_ctx):
        fld = f"contexts[{i}]"
        if isinstance(c, str):   # a plain string: its id is its position, from "1"
            c = {"id": str(i + 1), "text": c}
        _type(c, dict, fld, "an object {id, text} or a string")
        _unknown(c, {"id", "text"}, fld)
        if isinstance(c.get("id"), int) and not isinstance(c.get("id"), bool):
            c = {**c, "id": str(c["id"])}
        ctx_id = _text(c, "id", f"{fld}.id", allow_empty=False)
        if ctx_id in ctx_ids:
            raise _Problem(f"{fld}.id", f"duplicate context id {ctx_id!r}")
        ctx_ids.add(ctx_id)
        contexts.append(Context(ctx_id, _text(c, "text", f"{fld}.text")))
    tags = obj.get("tags") or []
    _type(tags, list, "tags", "a list of strings")
    for i, t in enumerate(tags):
        _type(t, str, f"tags[{i}]", "a string")
    ann = None   # optional: a real judge needs none; the reference judge refuses such a case
    if obj.get("annotation") is not None:
        ann = _annotation(obj["annotation"], answer, {c.id: c for c in contexts})
    return Case(cid, question, tuple(contexts), answer, ann, ref, tuple(tags), source)


def _annotation(a: Any, answer: str, contexts: dict[str, Context]) -> Annotation:
    _type(a, dict, "annotation", "an object {claims, answerable, abstention}")
    _unknown(a, ANNOTATION_FIELDS, "annotation")
    for key in ("answerable", "abstention"):
        if key not in a:
            raise _Problem(f"annotation.{key}", "missing (expected true or false)")
        _type(a[key], bool, f"annotation.{key}", "true or false")
    if "claims" not in a:
        raise _Problem("annotation.claims", "missing (expected a list; [] for an answer with no claims)")
    raw_claims = _type(a["claims"], list, "annotation.claims", "a list of claims")
    claims = tuple(_claim(c, f"annotation.claims[{i}]", answer, contexts) for i, c in enumerate(raw_claims))
    abst = None
    if a.get("abstention_span") is not None:
        abst = _span(a["abstention_span"], "annotation.abstention_span", len(answer), "the answer")
        if not a["abstention"]:
            raise _Problem("annotation.abstention_span", "given, but annotation.abstention is false")
    spans = None
    if a.get("spans") is not None:
        raw = _type(a["spans"], list, "annotation.spans", "a list of {start, end, label}")
        out = []
        for i, sp in enumerate(raw):
            fld = f"annotation.spans[{i}]"
            _type(sp, dict, fld, "an object {start, end, label}")
            _unknown(sp, {"start", "end", "label"}, fld)
            s, e = _span([sp.get("start"), sp.get("end")], fld, len(answer), "the answer")
            if sp.get("label") not in ("not_found", "contradicted"):
                raise _Problem(f"{fld}.label", f"expected 'not_found' or 'contradicted', got {_show(sp.get('label'))}")
            out.append(HallucinationSpan(s, e, sp["label"]))
        spans = tuple(out)
    return Annotation(claims, a["answerable"], a["abstention"], abst, spans)


def _claim(c: Any, fld: str, answer: str, contexts: dict[str, Context]) -> Claim:
    _type(c, dict, fld, "an object {text, answer_span, answer_quote, label, evidence}")
    _unknown(c, CLAIM_FIELDS, fld)
    text = _text(c, "text", f"{fld}.text", allow_empty=False)
    if "answer_span" not in c:
        raise _Problem(f"{fld}.answer_span", "missing (expected [start, end] in the answer)")
    s, e = _span(c["answer_span"], f"{fld}.answer_span", len(answer), "the answer")
    quote = _text(c, "answer_quote", f"{fld}.answer_quote")
    if answer[s:e] != quote:
        raise _Problem(f"{fld}.answer_span", f"[{s}, {e}] is {answer[s:e]!r}, annotation says {quote!r}")
    label = c.get("label")
    if label not in LABELS:
        raise _Problem(f"{fld}.label", f"expected one of {', '.join(LABELS)}, got {_show(label)}")
    evidence = []
    raw_ev = c.get("evidence")
    if raw_ev is not None:
        _type(raw_ev, list, f"{fld}.evidence", "a list of {context_id, start, end, quote} (or null)")
        for j, ev in enumerate(raw_ev):
            evidence.append(_evidence(ev, f"{fld}.evidence[{j}]", contexts))
    if label == "supported" and not evidence:
        raise _Problem(f"{fld}.evidence", "a 'supported' claim needs at least one evidence span "
                                          "(use 'inference' when no span states it)")
    if label in ("inference", "not_found") and evidence:
        raise _Problem(f"{fld}.evidence", f"a {label!r} claim has no span stating it; expected [] or null")
    cited = c.get("cited_context_id")
    if isinstance(cited, int) and not isinstance(cited, bool):
        cited = str(cited)
    if cited is not None:
        _type(cited, str, f"{fld}.cited_context_id", "a context id (string) or null")
        if cited not in contexts:
            raise _Problem(f"{fld}.cited_context_id", f"no context {cited!r}; known: {', '.join(contexts)}")
    return Claim(text, (s, e), label, tuple(evidence), cited)


def _evidence(ev: Any, fld: str, contexts: dict[str, Context]) -> Evidence:
    _type(ev, dict, fld, "an object {context_id, start, end, quote}")
    _unknown(ev, EVIDENCE_FIELDS, fld)
    cid = ev.get("context_id")
    if isinstance(cid, int) and not isinstance(cid, bool):
        cid = str(cid)
    if cid not in contexts:
        raise _Problem(f"{fld}.context_id", f"no context {cid!r}; known: {', '.join(contexts) or '(none)'}")
    text = contexts[cid].text
    s, e = _span([ev.get("start"), ev.get("end")], f"{fld}.start/end", len(text), f"context {cid!r}")
    if s == e:
        raise _Problem(f"{fld}.start/end", "empty span: evidence must cover at least one character")
    quote = _text(ev, "quote", f"{fld}.quote")
    if text[s:e] != quote:
        raise _Problem(f"{fld}.start/end", f"[{s}, {e}] of context {cid!r} is {text[s:e]!r}, annotation says {quote!r}")
    return Evidence(cid, s, e)
