"""What the human-labelled importers (RAGTruth, FaithBench) share: the kept/dropped tally, reading
JSON files with clear errors, and span-labelled case objects.

Unlike the Ragas and DeepEval importers, which refuse a file with any bad row, these read public
corpora in which some rows are out of scope by design (another task, a quality flag): every row is
either kept or dropped with a reason, every label offset is checked against its text (a row with
one offset that does not match is dropped whole, so no answer loses a hallucination mark), and the
command ends with a summary of what was kept and what was dropped, by reason.
"""
from __future__ import annotations

import json
import os
from collections import Counter
from dataclasses import dataclass, field

from harness.cases.importers.rows import unusable
from harness.cases.load import _case, _Problem, load_cases


@dataclass
class Imported:
    """The outcome of one import."""

    cases: list[dict] = field(default_factory=list)
    """Case objects, valid for :func:`harness.cases.load.load_cases`."""
    dropped: Counter = field(default_factory=Counter)
    """reason -> rows dropped for it."""
    notes: Counter = field(default_factory=Counter)
    """Things counted but not dropped (e.g. labels a policy ignores)."""
    examples: dict[str, str] = field(default_factory=dict)
    """reason -> where it first happened (file and line or id)."""
    each: list[str] = field(default_factory=list)
    """One line per dropped item, for importers that name every drop (otel: every trace and why)."""

    def drop(self, reason: str, where: str) -> None:
        self.dropped[reason] += 1
        self.examples.setdefault(reason, where)

    def summary(self) -> list[str]:
        """Lines for the terminal: kept, then each reason with its count and first occurrence.

        >>> r = Imported([{"id": "a"}]); r.drop("task Summary (QA only)", "x.jsonl line 2")
        >>> print("\\n".join(r.summary()))
        kept 1 case(s); dropped 1 row(s):
          1  task Summary (QA only)  (first: x.jsonl line 2)
        """
        total = sum(self.dropped.values())
        out = [f"kept {len(self.cases)} case(s); dropped {total} row(s)" + (":" if total else "")]
        out += [f"  {n}  {reason}  (first: {self.examples.get(reason, '?')})" for reason, n in
                sorted(self.dropped.items(), key=lambda kv: (-kv[1], kv[0]))]
        out += [f"  note: {n} {what}" for what, n in sorted(self.notes.items())]
        out += [f"  dropped {line}" for line in self.each]
        return out


class ImportFileError(ValueError):
    """A file that cannot be read at all (missing, not UTF-8, not JSON): one line naming it."""


def read_jsonl(path: str, out: Imported) -> list[tuple[int, dict]]:
    """(line, object) for every line; a line that is not a JSON object is dropped with its reason."""
    rows = []
    for n, line in enumerate(_text(path).split("\n"), start=1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as e:
            out.drop("line is not valid JSON", f"{path} line {n} (column {e.colno}: {e.msg})")
            continue
        except (RecursionError, ValueError) as e:   # the case loader's guards (harness.cases.load)
            out.drop("line is not usable JSON", f"{path} line {n} ({unusable(e)})")
            continue
        if not isinstance(obj, dict):
            out.drop("line is not a JSON object", f"{path} line {n}")
            continue
        rows.append((n, obj))
    return rows


def read_json(path: str):
    """The whole file as JSON (ImportFileError naming the file, line and column otherwise)."""
    try:
        return json.loads(_text(path))
    except json.JSONDecodeError as e:
        raise ImportFileError(f"{path} line {e.lineno}: not valid JSON (column {e.colno}: {e.msg})") from None
    except (RecursionError, ValueError) as e:
        raise ImportFileError(f"{path} line 1: {unusable(e)}") from None


def _text(path: str) -> str:
    try:
        with open(path, "rb") as fh:
            raw = fh.read()
    except OSError as e:
        raise ImportFileError(f"{path}: cannot read ({e.strerror or e})") from None
    if raw.startswith(b"\xef\xbb\xbf"):
        raw = raw[3:]
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as e:
        line = raw[:e.start].count(b"\n") + 1
        raise ImportFileError(f"{path} line {line}: not valid UTF-8") from None


def span_case(case_id: str, question: str, contexts: list[str], answer: str, spans: list[dict],
              tags: list[str]) -> dict:
    """A case object labelled RAGTruth-style: ``annotation.spans`` on the answer, no claim list.

    The reference judge reads each answer sentence as a claim: not_found or contradicted where it
    overlaps a span of that label, supported otherwise. Answerability is not labelled by these
    corpora: it is recorded as true, and the answers are not abstentions.
    """
    return {
        "id": case_id, "question": question,
        "contexts": [{"id": str(i), "text": t} for i, t in enumerate(contexts, start=1)],
        "answer": answer, "tags": tags,
        "annotation": {"answerable": True, "abstention": False, "abstention_span": None, "claims": [],
                       "spans": sorted(spans, key=lambda s: (s["start"], s["end"], s["label"]))},
    }


def check_span(text: str, start, end, quote) -> str | None:
    """Why ``text[start:end]`` is not a usable label span equal to ``quote``, or None.

    >>> check_span("abc def", 4, 7, "def") is None, check_span("abc def", 4, 7, "xyz")
    (True, "offsets [4, 7] give 'def', the label says 'xyz'")
    >>> check_span("abc", 2, 9, "c")
    'offsets [2, 9] outside the text (length 3)'
    """
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in (start, end)):
        return f"offsets {start!r}, {end!r} are not integers"
    if not 0 <= start < end <= len(text):
        return f"offsets [{start}, {end}] outside the text (length {len(text)})"
    if quote is not None and text[start:end] != quote:
        return f"offsets [{start}, {end}] give {text[start:end][:60]!r}, the label says {str(quote)[:60]!r}"
    return None


def validated(obj: dict, out: Imported, where: str, seen: set) -> bool:
    """Keep ``obj`` when the case loader accepts it and its id is new; otherwise drop it with the reason."""

    try:
        _case(obj, where)
    except _Problem as p:
        out.drop(f"not a valid case ({p.fld or 'case'})", f"{where}: {p.msg}")
        return False
    if obj["id"] in seen:
        out.drop("duplicate id", f"{where}: {obj['id']}")
        return False
    seen.add(obj["id"])
    out.cases.append(obj)
    return True


def write(cases: list[dict], out: str) -> None:
    """Write the cases (JSONL) through a temporary file, then check them with the case loader."""


    tmp = f"{out}.tmp-{os.getpid()}"
    with open(tmp, "w", encoding="utf-8") as fh:
        for obj in cases:
            fh.write(json.dumps(obj, ensure_ascii=False) + "\n")
    try:
        load_cases(tmp)
    except Exception:
        os.remove(tmp)
        raise
    os.replace(tmp, out)
