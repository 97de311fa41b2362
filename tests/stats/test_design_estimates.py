"""The design-weighted agreement estimates (:mod:`harness.reports.analysis.design_estimates`) are unbiased and their 95%
intervals cover the whole run's figure about 95% of the time when only part of a review sample is labelled.

A run of 1,500 answers with known truth and metric verdicts; 1,000 review samples of 150 drawn with the review's
design (probability proportional to size, half uniform and half toward the answers where metrics disagree, which
here are the metric's errors; :func:`harness.reports.review.sampling.probabilities`) and labelled only for the first 100 of
the seeded review order. The sample leans hard toward errors, so the plain mean is far off; the weighted one is
not. The claim-level check does the same with answers of one to five claims whose errors cluster by answer.
"""
from __future__ import annotations

from harness.reports.analysis import design_estimates as D
from harness.reports.review.sampling import probabilities

import numpy as np
import pytest

N, DRAWN, LABELLED, SIMS, RESAMPLES = 1500, 150, 100, 1000, 400


def pps_labelled(pi: np.ndarray, rng, sims: int) -> np.ndarray:
    """(sims x LABELLED) answers: a systematic PPS sample of DRAWN in a random order (the review's design with
    inclusion probabilities ``pi``), of which the first LABELLED in review order are labelled."""
    out = np.empty((sims, LABELLED), int)
    for s in range(sims):
        order = rng.permutation(len(pi))
        cum = np.cumsum(pi[order])
        pos = np.searchsorted(cum, rng.random() + np.arange(DRAWN), side="right")
        out[s] = order[np.minimum(pos, len(pi) - 1)][:LABELLED]
    return out


def simulate(c: np.ndarray, dis: np.ndarray, seed: int):
    """(population figures, estimates) over SIMS partial labellings; ``c``: answers x 4 counts."""
    rng = np.random.default_rng(seed)
    sizes = 0.5 / len(dis) + 0.5 * dis / dis.sum()
    pi = np.asarray(probabilities(list(sizes), DRAWN))
    full = {k: float(v) for k, v in D.statistics(c.sum(axis=0)).items()}
    est = [D.estimate(c[ix], 1.0 / pi[ix], boot=D.multiplicities(rng, LABELLED, (RESAMPLES,)))
           for ix in pps_labelled(pi, rng, SIMS)]
    plain = [D.statistics(c[ix].sum(axis=0)) for ix in pps_labelled(pi, rng, 200)]
    return full, est, plain


def summary(full, est, stat):
    vals = np.array([np.nan if e.point[stat] is None else e.point[stat] for e in est])
    covered = np.mean([e.ci[stat][0] is not None and e.ci[stat][0] <= full[stat] <= e.ci[stat][1] for e in est])
    return float(np.nanmean(vals) - full[stat]), float(covered)


@pytest.fixture(scope="module")
def answers():
    rng = np.random.default_rng(7)
    truth = rng.random(N) < 0.3
    err = rng.random(N) < np.where(truth, 0.25, 0.12)
    dis = np.where(err, 0.8, 0.1) + 0.1 * rng.random(N)   # the metrics disagree where this one errs
    return simulate(D.counts(truth, truth ^ err), dis, seed=11)


@pytest.mark.parametrize("stat", D.STATISTICS)
def test_answer_level_partial_labelling_is_unbiased_and_covers(answers, stat):
    full, est, _ = answers
    bias, cover = summary(full, est, stat)
    print(f"\n{stat}: whole run {full[stat]:.3f}, mean bias {bias:+.4f}, 95% interval coverage {cover:.3f}")
    assert abs(bias) <= 0.02, (stat, bias)
    assert 0.93 <= cover <= 0.97, (stat, cover)


def test_the_sample_leans_so_weighting_matters(answers):
    full, _, plain = answers
    plain_acc = np.mean([float(p["accuracy"]) for p in plain])
    assert full["accuracy"] - plain_acc > 0.1   # the unweighted figure on the labelled answers is far off


def test_every_interval_stays_inside_its_range(answers):
    _, est, _ = answers
    for e in est:
        for s, (lo, hi) in e.ci.items():
            r0, r1 = D.RANGE[s]
            assert lo is None or (r0 <= lo <= hi <= r1), (s, lo, hi)


def test_claim_level_clustered_by_answer_is_unbiased_and_covers():
    rng = np.random.default_rng(3)
    per = rng.integers(1, 6, N)
    hard = np.repeat(rng.random(N) < 0.3, per)            # errors cluster within an answer
    truth = rng.random(per.sum()) < 0.35
    err = rng.random(per.sum()) < np.where(hard, 0.4, 0.06)
    _, c = D.clustered(np.repeat(np.arange(N), per), truth, truth ^ err)
    dis = c[:, 1] + c[:, 2] + 0.2                          # disagreement: the answer's errors
    full, est, _ = simulate(c, dis, seed=5)
    for stat in ("accuracy", "kappa", "balanced_accuracy", "ac1"):
        bias, cover = summary(full, est, stat)
        print(f"\nclaims {stat}: whole run {full[stat]:.3f}, mean bias {bias:+.4f}, coverage {cover:.3f}")
        assert abs(bias) <= 0.02 and 0.93 <= cover <= 0.97, (stat, bias, cover)


def test_a_perfect_or_constant_sample_does_not_collapse_to_a_point():
    t = [True] * 8 + [False] * 12
    e = D.estimate(D.counts(t, t), np.ones(20), resamples=200)
    assert e.point["kappa"] == 1.0 and e.ci["kappa"][0] < 0.8 and e.ci["accuracy"] == pytest.approx((0.839, 1.0), abs=1e-3)
    e = D.estimate(D.counts(t, [True] * 20), np.ones(20), resamples=200)   # flags every answer: chance
    lo, hi = e.ci["balanced_accuracy"]
    assert e.point["balanced_accuracy"] == 0.5 and lo < 0.5 < hi
