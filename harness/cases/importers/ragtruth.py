"""RAGTruth (Wu et al., 2024): word-level human hallucination spans on LLM answers, QA rows only.

Input, as the authors publish it: ``response.jsonl`` (one answer a line: ``id``, ``source_id``,
``model``, ``labels`` [{start, end, text, label_type, implicit_true, due_to_null, meta}], ``split``,
``quality``, ``response``) and ``source_info.jsonl`` (``source_id``, ``task_type``, ``source``,
``source_info``; for QA ``{question, passages}``, the passages one string
``"passage 1:...\\n\\npassage 2:..."``).

What is kept, and how:

- task: QA only (Summary and Data2txt rows are dropped: they have no question and no retrieved
  passages in the harness's sense);
- quality: the authors' own filter, ``quality == "good"``; ``incorrect_refusal`` and ``truncated``
  answers are dropped (each counted);
- passages: split at each ``passage N:`` marker into contexts "1", "2", ... (empty ones skipped);
- labels: ``Evident Conflict`` / ``Subtle Conflict`` -> ``contradicted``; ``Evident Baseless Info`` /
  ``Subtle Baseless Info`` -> ``not_found`` (``implicit_true`` spans stay ``not_found``: true, but not
  in the passages, so not grounded; they are counted in the summary); every ``response[start:end]``
  must equal the label's ``text``, or the whole answer is dropped;
- the case id is ``ragtruth-<id>``; tags name the model, the split and the source.
"""
from __future__ import annotations

import re

from harness.cases.importers.labelled import Imported, ImportFileError, check_span, read_jsonl, span_case, validated

FORMAT = "ragtruth"
DESCRIPTION = "RAGTruth response.jsonl + source_info.jsonl (QA rows, human hallucination spans)"
LABELS = {"Evident Conflict": "contradicted", "Subtle Conflict": "contradicted",
          "Evident Baseless Info": "not_found", "Subtle Baseless Info": "not_found"}
KEEP_QUALITY = "good"
_PASSAGE = re.compile(r"passage\s*(\d+)\s*:", re.IGNORECASE)


def split_passages(text: str) -> list[str]:
    """The passages of a RAGTruth QA ``passages`` string, in order, stripped, empty ones left out.

    >>> split_passages("passage 1:Bake at 350 F.\\n\\npassage 2:Cool on a rack.\\n\\n")
    ['Bake at 350 F.', 'Cool on a rack.']
    >>> split_passages("no marker at all")
    ['no marker at all']
    """
    marks = list(_PASSAGE.finditer(text))
    if not marks:
        return [text.strip()] if text.strip() else []
    ends = [m.start() for m in marks[1:]] + [len(text)]
    return [p for p in (text[m.end():e].strip() for m, e in zip(marks, ends)) if p]


def import_files(paths: list[str]) -> Imported:
    """Import ``[response.jsonl, source_info.jsonl]``."""

    if len(paths) != 2:
        raise ImportFileError("ragtruth takes two files: RESPONSE_JSONL SOURCE_INFO_JSONL")
    responses, sources = paths
    out = Imported()
    info = {}
    for line, row in read_jsonl(sources, out):
        sid = row.get("source_id")
        if sid is None:
            out.drop("source row without source_id", f"{sources} line {line}")
            continue
        info[str(sid)] = (line, row)
    seen: set = set()
    for line, row in read_jsonl(responses, out):
        where = f"{responses} line {line}"
        case = _case(row, info, out, where, sources)
        if case is not None:
            validated(case, out, where, seen)
    return out


def _case(row: dict, info: dict, out: Imported, where: str, sources: str) -> dict | None:
    sid = str(row.get("source_id"))
    if sid not in info:
        out.drop("no source_info row for its source_id", f"{where}: source_id {sid}")
        return None
    sline, src = info[sid]
    task = src.get("task_type")
    if task != "QA":
        out.drop(f"task {task} (QA only)", where)
        return None
    quality = row.get("quality")
    if quality != KEEP_QUALITY:
        out.drop(f"quality {quality} (the authors keep only 'good')", where)
        return None
    si = src.get("source_info")
    if not isinstance(si, dict) or not isinstance(si.get("question"), str) or not isinstance(si.get("passages"), str):
        out.drop("QA source_info without a question and passages string", f"{sources} line {sline}")
        return None
    answer = row.get("response")
    if not isinstance(answer, str) or not answer.strip():
        out.drop("empty or missing response", where)
        return None
    labels = row.get("labels")
    if labels is not None and not isinstance(labels, list):
        out.drop("labels is not a list", f"{where}, field labels: got {type(labels).__name__} {str(labels)[:40]}")
        return None
    spans = []
    for k, lab in enumerate(labels or []):
        if not isinstance(lab, dict) or not isinstance(lab.get("label_type"), str) or lab["label_type"] not in LABELS:
            got = lab.get("label_type") if isinstance(lab, dict) else lab
            out.drop("unknown label_type", f"{where}, labels[{k}]: {str(got)[:60]!r}")
            return None
        problem = check_span(answer, lab.get("start"), lab.get("end"), lab.get("text"))
        if problem:
            out.drop("label offsets do not match their text", f"{where}, labels[{k}]: {problem}")
            return None
        if lab.get("implicit_true"):
            out.notes["implicit_true spans kept as not_found (true, but not in the passages)"] += 1
        spans.append({"start": lab["start"], "end": lab["end"], "label": LABELS[lab["label_type"]]})
    passages = split_passages(si["passages"])
    if not passages:
        out.drop("no passage text", f"{sources} line {sline}")
        return None
    tags = ["ragtruth"] + [f"{k}:{v}" for k, v in (("model", row.get("model")), ("split", row.get("split")),
                                                   ("source", src.get("source"))) if isinstance(v, str) and v]
    return span_case(f"ragtruth-{row.get('id')}", si["question"], passages, answer, spans, tags)
