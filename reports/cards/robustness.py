"""The robustness figures the cards show: computed from runs of the perturbed canonical set (``harness perturb
datasets/canonical.jsonl``), one under the reference judge and one under a real judge, and kept beside the cards
as ``robustness.json`` (``harness cards --robustness-runs REF_RUN,REAL_RUN`` writes it), so a card reads the
figures the runs gave and its text is generated from them (the card model
:func:`harness.reports.model.card.robustness_lines` puts them in words, :func:`harness.reports.render.card.robustness`
lays them out)."""
from __future__ import annotations

import json
import os

from harness.reports.analysis import robustness as R

FILE = "robustness.json"
HERE = os.path.dirname(os.path.abspath(__file__))


def _rate(r: R.Rate | None):
    return None if r is None else {"hits": r.hits, "n": r.n, "low": r.low, "high": r.high, "moved": r.moved,
                                   "lost": r.lost, "floor": r.floor}


def figures(run: str, runs_dir: str = "reports/out") -> dict:
    """One run's figures: ``{"judge", "reference", "variants", "metrics": {metric: {"flips", "detected",
    "cite_move", "by_kind"}}}``."""
    from harness.reports.analysis.data import load_run  # noqa: PLC0415 - lazy: pandas

    data = load_run(run, runs_dir)
    rob = R.compute(data)
    if not rob.variants:
        raise ValueError(f"run {run}: holds no perturbed cases (harness perturb CASES --out FILE, then run FILE)")
    judge = (data.spec.get("judge") or {}).get("model") or "reference"
    return {"judge": "reference" if rob.reference else judge, "reference": rob.reference, "variants": rob.variants,
            "metrics": {mr.metric: {"flips": _rate(mr.flips.get(R.ALL)), "detected": _rate(mr.detections.get(R.ALL)),
                                    "cite_move": _rate(mr.detections.get("cite-move")),
                                    "by_kind": {k: [r.hits, r.n] for k, r in {**mr.flips, **mr.detections}.items()
                                                if k != R.ALL}}
                        for mr in rob.metrics}}


def write(runs: list[str], cards_dir: str, runs_dir: str = "reports/out") -> str:
    """Write ``robustness.json`` from the runs (the reference-judge run first); its path."""
    path = os.path.join(cards_dir, FILE)
    os.makedirs(cards_dir, exist_ok=True)
    with open(path, "w", encoding="utf-8") as fh:
        json.dump([figures(r, runs_dir) for r in runs], fh, indent=1, sort_keys=True)
        fh.write("\n")
    return path


def load(cards_dir: str = HERE) -> list[dict]:
    """The kept figures ([] when none were written)."""
    path = os.path.join(cards_dir, FILE)
    if not os.path.isfile(path):
        return []
    with open(path, encoding="utf-8") as fh:
        return json.load(fh)

