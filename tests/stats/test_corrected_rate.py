"""The corrected ungrounded share (:mod:`harness.reports.analysis.corrected_rate`): over 1,000 partial labellings of a review
sample (the review's design, leaning toward the metric's errors), PPI++ and Rogan-Gladen land on the run's true
share on average while the metric's raw share does not, and their 95% intervals cover the true share 93-97% of
the time (Rogan-Gladen's a little wider: up to 98%)."""
from __future__ import annotations

from harness.reports.analysis import corrected_rate as R
from harness.reports.review.sampling import probabilities

import numpy as np
import pytest

from tests.stats.test_design_estimates import DRAWN, SIMS, N, pps_labelled

RESAMPLES = 400


@pytest.fixture(scope="module")
def sims():
    rng = np.random.default_rng(21)
    truth = rng.random(N) < 0.25
    flag = np.where(truth, rng.random(N) < 0.7, rng.random(N) < 0.15)   # sensitivity 0.7, false positives 0.15
    dis = np.where(truth != flag, 0.8, 0.1) + 0.1 * rng.random(N)
    pi = np.asarray(probabilities(list(0.5 / N + 0.5 * dis / dis.sum()), DRAWN))
    rates = [R.corrected(flag, truth[ix], flag[ix], 1.0 / pi[ix], resamples=RESAMPLES, seed=s)
             for s, ix in enumerate(pps_labelled(pi, rng, SIMS))]
    return float(truth.mean()), float(flag.mean()), rates


@pytest.mark.parametrize("which", ["ppi", "rogan_gladen"])
def test_corrected_rate_is_unbiased_and_covers(sims, which):
    true, raw, rates = sims
    ci = {"ppi": "ppi_ci", "rogan_gladen": "rg_ci"}[which]
    vals = np.array([getattr(r, which) for r in rates], float)
    bias = float(np.nanmean(vals) - true)
    cover = float(np.mean([getattr(r, ci)[0] is not None and getattr(r, ci)[0] <= true <= getattr(r, ci)[1]
                           for r in rates]))
    print(f"\n{which}: true {true:.3f}, raw {raw:.3f}, mean bias {bias:+.4f}, coverage {cover:.3f}")
    assert abs(raw - true) > 0.03          # the raw share is off: there is something to correct
    # PPI++ within 93-97%; Rogan-Gladen's percentile interval of a ratio runs a little wide (measured 0.969)
    assert abs(bias) <= 0.02 and 0.93 <= cover <= (0.97 if which == "ppi" else 0.98), (which, bias, cover)
    for r in rates:
        for lo, hi in (r.ppi_ci, r.rg_ci, r.raw_ci):
            assert lo is None or 0.0 <= lo <= hi <= 1.0


def test_a_metric_at_chance_has_no_rogan_gladen_and_ppi_leans_on_the_labels():
    rng = np.random.default_rng(0)
    y = rng.random(200) < 0.3
    f = rng.random(200) < 0.5          # unrelated to the labels
    r = R.corrected(rng.random(2000) < 0.5, y, f, np.ones(200), resamples=300)
    assert r.lam < 0.2 and abs(r.ppi - y.mean()) < 0.05
    y2 = np.array([True, False] * 10)
    r2 = R.corrected([True] * 50, y2, ~y2, np.ones(20), resamples=100)   # always wrong: J = -1
    assert r2.rogan_gladen is None and r2.rg_ci == (None, None)

