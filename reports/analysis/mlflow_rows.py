"""What an MLflow export holds beyond the run spec and the means: one row per case and metric, and the
agreement figures, computed from a loaded run (:class:`harness.reports.analysis.data.RunData`).

The rows are the table MLflow's evaluation view browses (``inputs`` / ``outputs`` / ``context``
columns as ``mlflow.evaluate`` names them, then the cell: score, status, reason, flags, and the
per-claim verdicts as the metric's units gave them).
"""
from __future__ import annotations

import hashlib
import json

from harness.reports.analysis.agreement import as_json, compute
from harness.reports.analysis.matrix import build

import pandas as pd

ROWS_FILE = "harness_results.json"
"""The table artifact (MLflow's ``log_table`` JSON, ``split`` orientation)."""


def rows(data):
    """A DataFrame: one row per case and metric of the run."""
    cells = build(data)
    units = {}
    for u in data.units.itertuples(index=False):
        units.setdefault((u.case_id, u.metric), []).append(
            {"unit": u.text, "verdict": u.verdict, "raw": u.raw_verdict, "reason": u.reason})
    out = []
    for cid in data.case_ids:
        case = data.cases.get(cid)
        for m in data.metrics:
            cell = cells[(cid, m)]
            out.append({
                "case_id": cid, "metric": m,
                "inputs": case.question if case else None, "outputs": case.answer if case else None,
                "context": "\n\n".join(f"[{c.id}] {c.text}" for c in case.contexts) if case else None,
                "score": cell.score, "status": cell.status, "label": cell.label, "reason": cell.reason,
                "flags": list(cell.flags), "claims": units.get((cid, m), []),
            })
    return pd.DataFrame(out)


def digest(table) -> str:
    """A short fingerprint of the rows: a re-export of an unchanged run has the same one."""
    text = table.to_json(orient="split", index=False, date_format="iso")
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def agreement_metrics(data) -> dict[str, float]:
    """Answer-level agreement with the human labels per metric (``agreement.<metric>.kappa``,
    ``.balanced_accuracy``, ``.auroc``, ``.best_threshold``, ``.n``); empty when no case is labelled."""
    figures = as_json(data, compute(data))["metrics"]
    out = {}
    for m, f in figures.items():
        if not f.get("n"):
            continue
        out[f"agreement.{m}.n"] = float(f["n"])
        for k in ("kappa", "balanced_accuracy", "auroc", "best_threshold"):
            if f.get(k) is not None:
                out[f"agreement.{m}.{k}"] = float(f[k])
    return out


def as_json_records(table) -> str:
    """The rows as MLflow writes a logged table (``split`` JSON)."""
    return table.to_json(orient="split", index=False, date_format="iso", default_handler=json.dumps)


def rationale(row) -> str:
    r"""An assessment's rationale: the cell's status and reason, then the metric's own claim verdicts.

    >>> rationale({"status": "scored", "label": "0.50", "reason": None, "claims": [
    ...     {"unit": "Bake at 350 F.", "verdict": "supported", "raw": "yes", "reason": "stated"},
    ...     {"unit": "It is vegan.", "verdict": "unsupported", "raw": "no", "reason": None}]})
    'scored 0.50\n- supported (yes): Bake at 350 F. (stated)\n- unsupported (no): It is vegan.'

    A raw verdict that is the normalised one is not said twice:

    >>> rationale({"status": "scored", "label": "1.00", "reason": None, "claims": [
    ...     {"unit": "Bake at 350 F.", "verdict": "supported", "raw": "supported", "reason": None}]})
    'scored 1.00\n- supported: Bake at 350 F.'

    A missing reason read back from the store is NaN, not None; it is left out the same way:

    >>> rationale({"status": "scored", "label": "0.75", "reason": float("nan"), "claims": []})
    'scored 0.75'
    """
    said = lambda v: isinstance(v, str) and v != ""   # NaN (a missing reason in a frame) is truthy
    head = f"{row['status']} {row['label']}" + (f": {row['reason']}" if said(row.get("reason")) else "")
    lines = [f"- {c['verdict']}" + (f" ({c['raw']})" if str(c["raw"]) != c["verdict"] else "")   # the vendor's word,
             + f": {c['unit']}" + (f" ({c['reason']})" if said(c.get("reason")) else "")    # when it is another
             for c in row.get("claims") or []]
    return "\n".join([head, *lines])


def traces(data):
    """One record per case for MLflow's trace view: the question, the retrieved passages, the answer, and one
    assessment per metric (its value, None where the cell is not a score, and its rationale)."""
    table = rows(data)
    out = []
    for cid, d in table.groupby("case_id", sort=False):
        case = data.cases.get(cid)
        out.append({
            "case_id": cid, "question": case.question if case else None, "answer": case.answer if case else None,
            "passages": [{"page_content": c.text, "metadata": {"doc_uri": c.id}} for c in case.contexts] if case else [],
            "assessments": [{"name": r["metric"], "value": r["score"] if r["status"] == "scored" else None,
                             "status": r["status"], "rationale": rationale(r)} for r in d.to_dict("records")]})
    return out
