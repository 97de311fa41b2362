"""Agreement with labels from a weighted sample: each labelled answer counts ``1 / inclusion probability``,
so a sample that leans toward the answers where the metrics disagree still estimates each metric's agreement
over every answer of the run.

Raw agreement and the base rate are Horvitz-Thompson estimates (the weighted sum over the labelled answers
divided by the number of the run's answers the metric scored, which the run knows): unbiased under the
design. Balanced accuracy and kappa are ratios of weighted counts (Hajek's form): nearly unbiased once the
sample is not tiny.

Superseded for ``harness agree --labels`` by :mod:`harness.reports.analysis.design_estimates` (Hajek ratios, right when
labelling stops partway, intervals inside the range); kept for its callers. The Horvitz-Thompson totals here are
unbiased only when every drawn answer is labelled.

Same target and threshold as :mod:`harness.reports.analysis.agreement` (answer level, "hallucinated": some claim
not_found or contradicted; the metric calls an answer ungrounded below the top of its range). Intervals: a
seeded percentile bootstrap over the labelled answers, weights carried along.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from harness.reports.analysis import agreement_stats as A
from harness.reports.analysis.agreement import RULE_AGREEMENT, RULE_N, _top, answer_truth
from harness.reports.analysis.orient import oriented

import numpy as np

TARGET = "hallucinated"


@dataclass(frozen=True)
class Weighted:
    """One metric's weighted figures."""

    metric: str
    n: int
    """Labelled answers with a score."""
    base_rate: float | None
    """Estimated share of the run's answers that the labels call ungrounded."""
    accuracy: float | None
    balanced_accuracy: float | None
    kappa: float | None
    ci: dict[str, tuple[float | None, float | None]]

    @property
    def rule(self) -> str:
        """The seeds' rule on the weighted raw agreement."""
        if self.n < RULE_N:
            return f"too few labelled answers to apply the rule (n = {self.n} < {RULE_N})"
        if self.accuracy is None or self.accuracy < RULE_AGREEMENT:
            return f"weighted agreement under {RULE_AGREEMENT:.2f} on {self.n} answers: treat absolute scores as unusable"
        return f"weighted agreement {self.accuracy:.2f} on {self.n} answers: meets the rule"


def stats(t, p, w, total: float | None = None):
    """(base rate, accuracy, balanced accuracy, kappa) with weights ``w``: one weight per answer, or a
    (resamples x answers) array for every bootstrap resample at once. With ``total`` (the population's
    size) accuracy and base rate are Horvitz-Thompson totals over it; else ratios of the weights.

    >>> import numpy as np
    >>> [round(float(x), 4) for x in stats(np.array([1, 1, 0, 0], bool), np.array([1, 0, 0, 0], bool), np.array([1., 3., 1., 1.]))]
    [0.6667, 0.5, 0.625, 0.1818]
    """
    tp, fp = w @ (t & p), w @ (~t & p)
    fn, tn = w @ (t & ~p), w @ (~t & ~p)
    n = tp + fp + fn + tn
    with np.errstate(divide="ignore", invalid="ignore"):
        po = (tp + tn) / n
        share = (tp + tn) / total if total else po
        pe = ((tp + fp) * (tp + fn) + (fn + tn) * (fp + tn)) / (n * n)
        kappa = np.where(pe < 1, (po - pe) / (1 - pe), np.nan)
        ba = (tp / (tp + fn) + tn / (tn + fp)) / 2
        return (tp + fn) / (total or n), share, ba, kappa


def _f(v) -> float | None:
    v = float(v)
    return None if math.isnan(v) else v


def compute(data, weights: dict[str, float], resamples: int = A.RESAMPLES,
            population: list[str] | None = None) -> list[Weighted]:
    """Weighted figures of every metric over the labelled answers of ``data`` (``weights``: case id -> 1/pi);
    ``population``: the case ids the sample was drawn from (default: every case of the run's cells)."""
    out, cells = [], data.cells[data.cells["case_id"].isin(population)] if population else data.cells
    ids_all = [c for c in data.case_ids if c in weights and c in data.cases and data.cases[c].annotation is not None]
    for m in data.metrics:
        ids, truth, pred, w = [], [], [], []
        top = _top(data, m)
        for cid in ids_all:
            cell = data.cell(cid, m)
            if cell is None or cell.status != "scored":
                continue
            ids.append(cid)
            truth.append(answer_truth(data.cases[cid], TARGET))
            pred.append(oriented(data.info[m].scale, float(cell.score)) < top)   # lower-is-better scores turned round
            w.append(weights[cid])
        t, p, wa = np.asarray(truth, bool), np.asarray(pred, bool), np.asarray(w, float)
        if not len(ids):
            out.append(Weighted(m, 0, None, None, None, None, {}))
            continue
        total = float(((cells["metric"] == m) & (cells["status"] == "scored")).sum())
        base, acc, ba, kappa = stats(t, p, wa, total)
        c = A.multiplicities(len(ids), resamples) * wa
        boot = stats(t, p, c, total)   # (resamples x n) weights: every resample at once
        ci = {k: A._interval(np.asarray(v, float)) for k, v in zip(("base_rate", "accuracy", "balanced_accuracy", "kappa"), boot)}
        out.append(Weighted(m, len(ids), _f(base), _f(acc), _f(ba), _f(kappa), ci))
    return out

