"""The bootstraps past ``agreement_stats.BIG`` items (multinomial counts of the distinct items instead of a
resamples x n matrix): the same distribution as drawing items, so on the same data their intervals match the
item-drawing bootstrap's to within resampling noise, and they cover the true mean and AUROC at about 95%."""
from __future__ import annotations

from harness.reports.analysis import agreement_stats as A
from harness.reports.analysis.stats import bootstrap_ci

import numpy as np

N = A.BIG + 1000


def _index_interval(x, resamples=2000, seed=1):
    rng = np.random.default_rng(seed)
    means = x[rng.integers(0, x.size, size=(resamples, x.size))].mean(axis=1)
    return np.quantile(means, [0.025, 0.975])


def test_grouped_mean_interval_matches_the_item_bootstrap():
    x = np.random.default_rng(3).choice([0.0, 0.25, 0.5, 1.0], size=N, p=[0.2, 0.1, 0.3, 0.4])
    m, lo, hi = bootstrap_ci(x)
    ilo, ihi = _index_interval(x)
    assert m == x.mean() and lo < m < hi
    assert abs(lo - ilo) < 0.002 and abs(hi - ihi) < 0.002   # the width is ~0.02: the ends agree to 10%
    assert 0.0 <= lo and hi <= 1.0


def test_grouped_mean_interval_covers_and_is_unbiased():
    rng = np.random.default_rng(7)
    hits, bias = 0, []
    for k in range(200):
        x = (rng.random(N) < 0.3).astype(float)
        m, lo, hi = bootstrap_ci(x, seed=k)
        hits += lo <= 0.3 <= hi
        bias.append(m - 0.3)
    assert 0.91 <= hits / 200 <= 0.99
    assert abs(np.mean(bias)) < 0.002


def test_grouped_binary_and_auroc_intervals_cover():
    rng = np.random.default_rng(11)
    hits_acc, hits_auc = 0, 0
    true_auc = None
    for k in range(120):
        t = rng.random(N) < 0.4
        s = np.where(t, rng.choice([0.0, 0.5, 1.0], N, p=[0.5, 0.3, 0.2]), rng.choice([0.0, 0.5, 1.0], N, p=[0.1, 0.3, 0.6]))
        if true_auc is None:   # P(ungrounded scores lower) + ties / 2, from the two distributions
            p, q = np.array([0.5, 0.3, 0.2]), np.array([0.1, 0.3, 0.6])
            true_auc = sum(p[i] * (q[i + 1:].sum() + q[i] / 2) for i in range(3))
        pred = s < 1.0
        ci = A.binary_intervals(t, pred, seed=k)
        acc = 0.4 * 0.8 + 0.6 * 0.6   # P(pred == truth): ungrounded below 1, grounded at 1
        lo, hi = ci["accuracy"]
        hits_acc += lo <= acc <= hi
        alo, ahi = A.auroc_interval(t, s, seed=k)
        hits_auc += alo <= true_auc <= ahi
        assert 0.0 <= alo <= ahi <= 1.0
    assert 0.88 <= hits_acc / 120 <= 1.0 and 0.88 <= hits_auc / 120 <= 1.0
