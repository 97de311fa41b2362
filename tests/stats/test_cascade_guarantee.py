"""The calibrated cascade's guarantee, measured: over many random calibration / test splits of one labelled
set, the verdicts the cascade keeps agree with the labels at least at the target in at least 1 - delta
of the splits; the naive threshold (the lowest level whose calibration agreement reaches the target)
misses it far more often. Pure numpy, no run: the statistics of :mod:`harness.reports.analysis.selective`."""
from __future__ import annotations

from harness.reports.analysis import selective as S

import numpy as np
import pytest

TARGET, DELTA, SPLITS, N_CAL = 0.9, 0.1, 300, 300


def labelled_set(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """A labelled set of ``n`` answers judged by three stages: each stage's confidence in [0, 1] and
    whether its verdict agrees with the label, agreement rising with confidence (as a calibrated judge's
    does) from below the target to above it; the stronger stages are right more often."""
    rng = np.random.default_rng(seed)
    hard = rng.random(n)[:, None]                          # how hard the answer is: shared by the stages
    conf = np.clip(rng.beta(2, 2, (n, 3)) * (1.3 - 0.6 * hard), 0, 1)
    base = np.array([0.50, 0.60, 0.70])
    p = np.clip(base + (1 - base) * np.sqrt(conf) - 0.05 * hard, 0, 1)
    return conf, rng.random((n, 3)) < p


def failure_rates(conf, correct, seed: int):
    """(splits where the kept verdicts of the rest of the set agree below target) / splits, for the
    calibrated and the naive thresholds; and the calibrated cascade's mean coverage."""
    rng = np.random.default_rng(seed)
    n = len(conf)
    fails = {"calibrated": 0, "naive": 0}
    coverage = []
    for _ in range(SPLITS):
        cal = rng.choice(n, N_CAL, replace=False)
        for kind in fails:   # judged on the whole set: its agreement is the population's, up to 1 / n
            th = S.calibrate(conf[cal], correct[cal], TARGET, DELTA, naive=kind == "naive")
            stage = S.route(conf, th)
            kept = stage >= 0
            if kept.any():
                agree = correct[kept, stage[kept]].mean()
                fails[kind] += agree < TARGET
            if kind == "calibrated":
                coverage.append(kept.mean())
    return fails["calibrated"] / SPLITS, fails["naive"] / SPLITS, float(np.mean(coverage))


@pytest.mark.parametrize("seed", [0, 1])
def test_guarantee_holds_in_at_least_one_minus_delta_of_splits(seed):
    conf, correct = labelled_set(20_000, seed)
    calibrated, naive, coverage = failure_rates(conf, correct, seed + 10)
    print(f"seed {seed}: failure rate calibrated {calibrated:.3f}, naive {naive:.3f} over {SPLITS} splits "
          f"(n_cal {N_CAL}, target {TARGET}, delta {DELTA}); mean coverage {coverage:.3f}")
    # the guarantee, with the Monte Carlo slack of SPLITS draws (3 binomial standard errors at delta)
    assert calibrated <= DELTA + 3 * np.sqrt(DELTA * (1 - DELTA) / SPLITS)
    assert naive > 2 * DELTA > calibrated           # the correction is what keeps the promise
    assert coverage > 0.1                           # and it still decides a share itself


def test_a_stage_that_is_always_right_enough_keeps_everything_and_one_that_never_is_keeps_nothing():
    conf = np.ones((200, 2))
    right = np.ones((200, 2), dtype=bool)
    th = S.calibrate(conf, right, TARGET, DELTA)
    assert th[0] is not None and th[1] is None                       # stage 1 keeps all; nothing left for 2
    assert (S.route(conf, th) == 0).all()
    wrong = np.zeros((200, 2), dtype=bool)
    assert S.calibrate(conf, wrong, TARGET, DELTA) == [None, None]
    assert (S.route(conf, [None, None]) == -1).all()                 # every answer goes to a person


def test_too_few_labels_to_pass_any_level_decide_nothing():
    # 20 answers, all right: 0.9 ** 20 = 0.12 > delta / 1, so no level can be certified
    assert S.stage_threshold(np.ones(20), np.ones(20, dtype=bool), 0.9, 0.1) is None
    assert S.stage_threshold(np.ones(22), np.ones(22, dtype=bool), 0.9, 0.1) is not None   # 0.9 ** 22 = 0.098


def test_exact_binomial_tail_and_clopper_pearson_stay_in_range():
    assert S.binom_tail(0, 0, 0.9) == 1.0
    rng = np.random.default_rng(3)
    for _ in range(30):
        n = int(rng.integers(1, 60))
        a = int(rng.integers(0, n + 1))
        lo, hi = S.clopper_pearson(a, n)
        assert 0.0 <= lo <= a / n <= hi <= 1.0
    # coverage of the exact interval: at least its level, over many draws
    p, n = 0.83, 40
    draws = rng.binomial(n, p, 400)
    ints = {int(a): S.clopper_pearson(int(a), n) for a in np.unique(draws)}
    covered = np.mean([ints[int(a)][0] <= p <= ints[int(a)][1] for a in draws])
    assert covered >= 0.95 - 3 * np.sqrt(0.05 * 0.95 / 400)
