"""``harness calibrate``: a cascade's confidence thresholds chosen on labelled answers of a run, and what the
calibrated cascade does on held-out labels (coverage, agreement, cost, escalation).

The run must have scored every stage on the labelled cases. The labelled answers are split at random
(seeded) into a calibration part, on which :func:`harness.reports.analysis.selective.calibrate` picks the thresholds,
and a held-out part, on which the cascade is replayed from the stored cells: each answer goes to the first
stage confident on it, or to a person. Cost on the held-out answers: every stage an answer reached is paid
for (its cell's calls and tokens), against the last stage (the strongest) run on every answer.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from harness.reports.analysis import selective as S
from harness.reports.analysis.agreement import answer_truth, is_labelled
from harness.reports.analysis.data import metric_facts
from harness.run.cascade_file import Cascade, Stage, decisions, default_threshold
from harness.store.runstore import RunStore

import numpy as np


def parse_stages(spec: str) -> list[tuple[str, float | None]]:
    """``a,b@0.8,c`` -> [(a, None), (b, 0.8), (c, None)] (ValueError naming the bad item).

    >>> parse_stages("baseline.similarity@0.8, inhouse.span")
    [('baseline.similarity', 0.8), ('inhouse.span', None)]
    """
    out = []
    for raw in spec.split(","):
        item = raw.strip()
        if not item:
            continue
        name, _, thr = item.partition("@")
        try:
            value = float(thr) if thr else None
        except ValueError:
            raise ValueError(f"--stages: {item!r}: the verdict threshold after @ must be a number") from None
        out.append((name.strip(), value))
    if not out:
        raise ValueError("--stages: name at least one metric")
    names = [n for n, _ in out]
    if len(set(names)) != len(names):
        raise ValueError("--stages: a metric appears twice")
    return out


@dataclass
class StageRow:
    metric: str
    confidence: float | None
    ran: int
    """Held-out answers the stage was run on."""
    decided: int
    agree: int
    calls: int
    tokens: int

    @property
    def interval(self):
        return S.clopper_pearson(self.agree, self.decided)


@dataclass
class Calibration:
    cascade: Cascade
    labelled: int
    calibration: int
    held_out: int
    stages: list[StageRow] = field(default_factory=list)
    escalated: int = 0
    strongest_calls: int = 0
    strongest_tokens: int = 0
    missing: dict[str, int] = field(default_factory=dict)
    """stage -> labelled answers with no scored cell of it (never decided by it)."""
    naive_agreement: tuple[int, int] = (0, 0)
    """The naive thresholds on the same held-out answers: (agree, decided)."""

    @property
    def decided(self) -> int:
        return sum(s.decided for s in self.stages)

    @property
    def agree(self) -> int:
        return sum(s.agree for s in self.stages)

    @property
    def calls(self) -> int:
        return sum(s.calls for s in self.stages)

    @property
    def tokens(self) -> int:
        return sum(s.tokens for s in self.stages)

    @property
    def interval(self):
        """The cascade's realised agreement: a 95% exact (Clopper-Pearson) interval over the decided answers."""
        return S.clopper_pearson(self.agree, self.decided)


def labels_of(cases, target: str) -> dict[str, bool]:
    """case id -> does the human call the answer ungrounded (labelled cases only)."""
    return {c.id: answer_truth(c, target) for c in cases if is_labelled(c)}


def calibrate_run(store_path: str, labels: dict[str, bool], stages: list[tuple[str, float | None]], target: float,
                  delta: float, holdout: float = 0.5, seed: int = 0,
                  label_target: str = "hallucinated") -> Calibration:
    """Calibrate on a seeded part of the labelled answers, report on the rest (module docstring)."""
    store = RunStore.open(store_path)
    try:
        scored = [r[0] for r in store.rows("SELECT DISTINCT metric FROM cells")]
        _, facts = metric_facts(store.spec(), scored, store.metric_facts())
        for m, _ in stages:
            if m not in facts:
                raise ValueError(f"--stages: {m} is not a metric of the run {store_path} (it has {', '.join(facts)})")
        classes = [facts[m] for m, _ in stages]   # each stage's recorded range and direction
        thresholds = [t if t is not None else default_threshold(c) for c, (_, t) in zip(classes, stages)]
        seen = [decisions(store, c, t) for c, t in zip(classes, thresholds)]
    finally:
        store.close()
    ids = [cid for cid in labels if any(cid in s for s in seen)]
    if len(ids) < 2:
        raise ValueError(f"{len(ids)} labelled answer(s) of the labels are in the run: nothing to calibrate on "
                         "(run every stage on the labelled cases first)")
    K = len(stages)
    conf = np.zeros((len(ids), K))
    right = np.zeros((len(ids), K), dtype=bool)
    calls = np.zeros((len(ids), K), dtype=int)
    tokens = np.zeros((len(ids), K), dtype=int)
    missing = {}
    for k, s in enumerate(seen):
        for i, cid in enumerate(ids):
            d = s.get(cid)
            if d is None or d.grounded is None:
                missing[stages[k][0]] = missing.get(stages[k][0], 0) + 1
            if d is None:
                continue
            conf[i, k] = d.confidence
            right[i, k] = d.grounded is not None and d.grounded == (not labels[cid])
            calls[i, k], tokens[i, k] = d.calls, d.tokens
    perm = np.random.default_rng(seed).permutation(len(ids))
    n_test = min(len(ids) - 1, max(1, int(round(holdout * len(ids))))) if holdout > 0 else 0
    test, cal = perm[:n_test], perm[n_test:]
    lams = S.calibrate(conf[cal], right[cal], target, delta)
    cascade = Cascade(tuple(Stage(m, float(t), lam) for (m, _), t, lam in zip(stages, thresholds, lams)),
                      target, delta, S.METHOD, label_target)
    out = Calibration(cascade, len(ids), len(cal), len(test), missing=missing)
    if n_test:
        where = S.route(conf[test], lams)
        reached = np.where(where < 0, K - 1, where)
        for k, (m, _) in enumerate(stages):
            on = (reached >= k) & (lams[k] is not None)   # a stage that decides nothing is not run
            mine = where == k
            out.stages.append(StageRow(m, lams[k], int(on.sum()), int(mine.sum()),
                                       int(right[test][mine, k].sum()), int(calls[test][on, k].sum()),
                                       int(tokens[test][on, k].sum())))
        out.escalated = int((where < 0).sum())
        out.strongest_calls, out.strongest_tokens = int(calls[test, K - 1].sum()), int(tokens[test, K - 1].sum())
        naive = S.route(conf[test], S.calibrate(conf[cal], right[cal], target, delta, naive=True))
        kept = naive >= 0
        out.naive_agreement = (int(right[test][kept, naive[kept]].sum()), int(kept.sum()))
    return out
