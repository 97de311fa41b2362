"""What a review samples from: a run (its stored cases, how far its metrics disagree on each answer, and
what each metric said) or a case file (cases only: the sample is uniform)."""
from __future__ import annotations

import math
import os
from dataclasses import dataclass

from harness.cases.load import CaseFileError, case_to_json, load_cases
from harness.reports.analysis.data import load_run
from harness.reports.analysis.divergence import spread, spread_metrics
from harness.reports.analysis.matrix import build


@dataclass(frozen=True)
class Source:
    """The answers a sample can be drawn from."""

    kind: str
    """``run`` or ``cases``."""
    name: str
    """The run id, or the case file's path."""
    order: list[str]
    """Case ids, in run (or file) order."""
    cases: dict[str, dict]
    """case id -> the case as a JSONL object of the case format."""
    disagreement: dict[str, float]
    """case id -> spread of the scored metrics (empty for a case file)."""
    verdicts: dict[str, dict]
    """case id -> {"scores": {metric: {...}}, "units": [...]} (empty for a case file)."""


def is_case_file(path: str) -> bool:
    return os.path.isfile(path) and path.endswith((".jsonl", ".json")) and not path.endswith(".sqlite")


def load(source: str, out: str = "reports/out") -> Source:
    """A case file (``*.jsonl``) or a run (a run directory, store, or run id under ``out``)."""
    if is_case_file(source):
        try:
            cs = load_cases(source)
        except CaseFileError as e:
            raise ValueError(str(e).splitlines()[0]) from None
        cases = {c.id: case_to_json(c) for c in cs}
        return Source("cases", source, list(cases), cases, {}, {})
    return _from_run(source, out)


def _from_run(run: str, out: str) -> Source:
    data = load_run(run, out)
    cells = build(data)
    compared = spread_metrics(data)
    order = [cid for cid in data.case_ids if cid in data.cases]
    if not order:
        raise ValueError(f"run {data.run_id!r} stores no case text to review ({data.case_note or 'no cases'})")
    disagreement, verdicts = {}, {}
    units = data.units
    for cid in order:
        scores = {m: cells[(cid, m)].score for m in compared if cells[(cid, m)].status == "scored"}
        s = spread(scores)
        disagreement[cid] = s[0] if s else 0.0
        verdicts[cid] = {"scores": {m: {"short": data.info[m].short_name, "status": cells[(cid, m)].status,
                                        "label": cells[(cid, m)].label} for m in data.metrics}, "units": []}
    for r in units.itertuples(index=False):
        if r.case_id not in verdicts:
            continue
        located = r.span_start is not None and not (isinstance(r.span_start, float) and math.isnan(r.span_start))
        verdicts[r.case_id]["units"].append({
            "metric": r.metric, "short": data.info[r.metric].short_name if r.metric in data.info else r.metric,
            "kind": str(r.kind), "text": str(r.text), "verdict": str(r.verdict), "raw": str(r.raw_verdict),
            "start": int(r.span_start) if located else None, "end": int(r.span_end) if located else None})
    return Source("run", data.run_id, order, {c: case_to_json(data.cases[c]) for c in order}, disagreement, verdicts)
