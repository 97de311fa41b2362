"""Is a metric as good as a second reviewer? The reviewers' own agreement as the human ceiling, and the
alternative-annotator test (Calderon, Reichart and Dror 2025, "The Alternative Annotator Test for LLM-as-a-Judge").

For each rater ``j`` (adjudicators are not raters): on the answers ``j`` and at least one other rater labelled
(and the metric scored), ``d_i`` = (``j``'s agreement with the other raters on answer ``i``) - (the metric's
agreement with them). The metric *wins* against ``j`` when the mean of ``d`` is below ``epsilon`` at 95%: the
upper bound of a one-sided bootstrap interval of the mean lies under ``epsilon`` (the paper uses a paired t-test;
a bootstrap keeps it to numpy). The metric passes when it wins against at least half of the raters. ``epsilon``
is the cost-benefit margin: the paper suggests 0.2 for expert annotators and 0.1 for crowd workers; 0.1 here.
Labels are binary, answer level: ungrounded or not.
"""
from __future__ import annotations

from dataclasses import dataclass

from harness.reports.analysis import design_estimates as D

import numpy as np

EPSILON = 0.1
MIN_ANSWERS = 5


@dataclass(frozen=True)
class AltTest:
    """The test's outcome for one metric."""

    raters: int
    """Raters the metric was tested against."""
    wins: int
    winning_rate: float | None
    passed: bool
    epsilon: float
    answers: int
    """Answers in the test (labelled by two raters or more, scored by the metric)."""


def alt_test(human: dict[str, dict[str, bool]], metric: dict[str, bool], epsilon: float = EPSILON,
             resamples: int = D.RESAMPLES, seed: int = D.SEED) -> AltTest | None:
    """``human``: rater -> case id -> ungrounded; ``metric``: case id -> the metric flags it. None with fewer
    than two raters.

    >>> h = {"a": {str(i): i % 3 == 0 for i in range(30)}, "b": {str(i): i % 3 == 0 for i in range(30)}}
    >>> alt_test(h, {str(i): i % 3 == 0 for i in range(30)}, resamples=200).passed
    True
    >>> alt_test(h, {str(i): i % 2 == 0 for i in range(30)}, resamples=200).passed
    False
    """
    raters = sorted(human)
    if len(raters) < 2:
        return None
    rng = np.random.default_rng(seed)
    wins, tested, used = 0, 0, set()
    for j in raters:
        others = [k for k in raters if k != j]
        ids = [c for c in human[j] if c in metric and any(c in human[k] for k in others)]
        if len(ids) < MIN_ANSWERS:
            continue
        d = []
        for c in ids:
            ks = [human[k][c] for k in others if c in human[k]]
            d.append(np.mean([human[j][c] == x for x in ks]) - np.mean([metric[c] == x for x in ks]))
        d = np.asarray(d, float)
        means = (D.multiplicities(rng, len(d), (resamples,)) @ d) / len(d)
        tested += 1
        used.update(ids)
        wins += bool(np.quantile(means, 0.95) < epsilon)
    if not tested:
        return AltTest(0, 0, None, False, epsilon, 0)
    return AltTest(tested, wins, wins / tested, wins / tested >= 0.5, epsilon, len(used))


def ungrounded_by_rater(latest: dict[str, dict[str, dict]], raters: list[str]) -> dict[str, dict[str, bool]]:
    """rater -> case id -> ungrounded (some claim not_found or contradicted), over the answers each finished.

    >>> st = {"claims": [{"label": "not_found", "evidence": []}], "abstention": False, "answerable": True}
    >>> ungrounded_by_rater({"a": {"x": st}}, ["a"])
    {'a': {'x': True}}
    """
    from harness.reports.analysis.agreement import TARGETS  # noqa: PLC0415 - the one definition of the target

    bad = TARGETS["hallucinated"]
    out = {}
    for r in raters:
        out[r] = {}
        for cid, st in latest.get(r, {}).items():
            claims = st.get("claims") or []
            from_labels = [c.get("label") for c in claims]
            if all(lab is not None for lab in from_labels) and _done(claims):
                out[r][cid] = any(lab in bad for lab in from_labels)
    return out


def _done(claims) -> bool:
    return all(c.get("label") != "supported" or c.get("evidence") for c in claims)
