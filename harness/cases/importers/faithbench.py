"""FaithBench (Bao et al., 2024): human-annotated hallucinations in summaries, one batch JSON per file.

Input, the release format: a JSON object with ``samples`` (or a bare list of samples), each with
``sample_id``, ``source`` (the article), ``summary`` (the model's summary) and ``annotations``
[{``annotator_id``, ``label``: [...], ``summary_start``, ``summary_end``, ``summary_span``, ...}].

How a sample becomes a case:

- question: a summarisation instruction (:data:`QUESTION`); the one context is the source article;
  the answer is the summary; the case id is ``faithbench-<batch file name>-<sample_id>``;
- labels, per annotation (its ``label`` list; the most specific one decides):
  ``Unwanted.Intrinsic`` -> ``contradicted`` (the summary says something the source contradicts);
  ``Unwanted.Extrinsic`` and bare ``Unwanted`` -> ``not_found`` (not in the source);
  ``Questionable`` -> ``not_found`` (the annotator could not attribute it to the source: for a
  groundedness harness that is unattributed, though the authors call it a gray area);
  ``Benign`` -> ignored (true or harmless additions, which the authors do not count as
  hallucinations; counted in the summary); any other label -> ignored and counted;
- several annotators: the union of their spans. A sentence any annotator marks is not grounded, the
  RAGTruth reading ("some annotator found a hallucination here"); where annotators disagree on the
  kind, contradicted wins (the reference judge takes the worst label a sentence overlaps);
- every ``summary[summary_start:summary_end]`` must equal ``summary_span``, or the sample is dropped.
"""
from __future__ import annotations

import os

from harness.cases.importers.labelled import Imported, ImportFileError, check_span, read_json, span_case, validated

FORMAT = "faithbench"
DESCRIPTION = "FaithBench batch JSON files (summaries with human hallucination spans by several annotators)"
QUESTION = "Summarise the following article."
CONTRADICTED, NOT_FOUND = ("Unwanted.Intrinsic",), ("Unwanted.Extrinsic", "Unwanted", "Questionable")
IGNORED = ("Benign",)


def span_label(labels: list[str]) -> str | None:
    """The harness label of one annotation's label list (None: the policy ignores it).

    >>> span_label(["Unwanted", "Unwanted.Intrinsic"]), span_label(["Unwanted"]), span_label(["Questionable"])
    ('contradicted', 'not_found', 'not_found')
    >>> span_label(["Benign"]) is None
    True
    """
    if any(x in CONTRADICTED for x in labels):
        return "contradicted"
    if any(x in NOT_FOUND for x in labels):
        return "not_found"
    return None


def import_files(paths: list[str]) -> Imported:
    """Import one or more FaithBench batch files."""
    out = Imported()
    seen: set = set()
    for path in paths:
        doc = read_json(path)
        samples = doc.get("samples") if isinstance(doc, dict) else doc
        if not isinstance(samples, list):
            raise ImportFileError(f"{path}: expected an object with a 'samples' list (or a list of samples)")
        batch = os.path.splitext(os.path.basename(path))[0]
        for k, s in enumerate(samples):
            where = f"{path} samples[{k}]"
            case = _case(s, batch, out, where)
            if case is not None:
                validated(case, out, where, seen)
    return out


def _case(s, batch: str, out: Imported, where: str) -> dict | None:
    if not isinstance(s, dict):
        out.drop("sample is not an object", where)
        return None
    source, summary, sid = s.get("source"), s.get("summary"), s.get("sample_id")
    if not isinstance(source, str) or not source.strip() or not isinstance(summary, str) or not summary.strip():
        out.drop("sample without source or summary text", where)
        return None
    if sid is None:
        out.drop("sample without sample_id", where)
        return None
    annotations = s.get("annotations")
    if annotations is not None and not isinstance(annotations, list):
        out.drop("annotations is not a list",
                 f"{where}, field annotations: got {type(annotations).__name__} {str(annotations)[:40]}")
        return None
    spans, annotators = [], set()
    for j, a in enumerate(annotations or []):
        if not isinstance(a, dict) or not isinstance(a.get("label"), list):
            out.drop("annotation without a label list", f"{where}, annotations[{j}]")
            return None
        annotators.add(str(a.get("annotator_id")))
        label = span_label([str(x) for x in a["label"]])
        if label is None:
            kinds = ", ".join(str(x) for x in a["label"]) or "(empty)"
            out.notes[f"annotations ignored by the policy ({kinds})"] += 1
            continue
        problem = check_span(summary, a.get("summary_start"), a.get("summary_end"), a.get("summary_span"))
        if problem:
            out.drop("annotation offsets do not match their text", f"{where}, annotations[{j}]: {problem}")
            return None
        spans.append({"start": a["summary_start"], "end": a["summary_end"], "label": label})
    tags = ["faithbench", f"batch:{batch}", f"annotators:{len(annotators)}"]
    summarizer = (s.get("metadata") or {}).get("summarizer") if isinstance(s.get("metadata"), dict) else None
    if isinstance(summarizer, str) and summarizer:
        tags.append(f"model:{summarizer}")
    unique = {(sp["start"], sp["end"], sp["label"]): sp for sp in spans}
    return span_case(f"faithbench-{batch}-{sid}", QUESTION, [source], summary, list(unique.values()), tags)
