"""A seeded review sample: part uniform, part weighted toward the answers where the metrics disagree,
with each answer's exact inclusion probability recorded.

Design (systematic sampling with probability proportional to size, Madow 1949): every answer gets a size

    x_i = u / N + (1 - u) * d_i / sum(d)

(``u`` the uniform share, ``d_i`` the answer's disagreement: the spread of the metrics' scores), so a share
``u`` of the sample is spread evenly over all answers and the rest follows disagreement. The inclusion
probability is ``pi_i = n * x_i``, capped at 1 (a capped answer is always drawn and the others share the
rest). The answers are put in a seeded random order and one random start picks exactly ``n`` of them; each
answer is then in the sample with probability exactly ``pi_i``, which is stored with it. Agreement computed
with weights ``1 / pi_i`` estimates the agreement over all answers, however hard the sample leans toward
disagreement. With no disagreement known (a case file, not a run) every answer has ``pi_i = n / N``.
"""
from __future__ import annotations

import random
from dataclasses import dataclass

DEFAULT_UNIFORM_SHARE = 0.5
"""Half of the sample's probability mass spread evenly, half toward disagreement."""


@dataclass(frozen=True)
class Pick:
    """One answer of a sample."""

    case_id: str
    """The case the answer belongs to."""
    probability: float
    """Its inclusion probability under the design (1.0 when every answer is drawn)."""
    disagreement: float
    """The disagreement it was weighted by (the spread of the metrics' scores; 0 when unknown)."""


def probabilities(sizes: list[float], n: int) -> list[float]:
    """Inclusion probabilities ``n * size`` (sizes summing to 1), capped at 1 with the rest shared
    out again among the uncapped answers.

    >>> probabilities([0.25, 0.25, 0.25, 0.25], 2)
    [0.5, 0.5, 0.5, 0.5]
    >>> probabilities([0.7, 0.1, 0.1, 0.1], 2)
    [1.0, 0.3333333333333333, 0.3333333333333333, 0.3333333333333333]
    """
    pi = [0.0] * len(sizes)
    capped: set[int] = set()
    while True:
        free = [i for i in range(len(sizes)) if i not in capped]
        room = n - len(capped)
        total = sum(sizes[i] for i in free)
        over = [i for i in free if total > 0 and room * sizes[i] / total >= 1.0]
        if not over:
            for i in free:
                pi[i] = room * sizes[i] / total if total > 0 else room / len(free)
            for i in capped:
                pi[i] = 1.0
            return pi
        capped.update(over)


def draw(case_ids: list[str], disagreement: dict[str, float], n: int, seed: int,
         uniform_share: float = DEFAULT_UNIFORM_SHARE) -> list[Pick]:
    """Draw ``n`` answers (all of them when ``n`` is at least their number), in the seeded order the
    reviewer will see them.

    >>> ids = [f"c{i}" for i in range(10)]
    >>> s = draw(ids, {"c3": 1.0}, 4, seed=1)
    >>> len(s), any(p.case_id == "c3" for p in s), round(sum(p.probability for p in draw(ids, {}, 4, 1)), 6)
    (4, True, 1.6)
    >>> [p.case_id for p in s] == [p.case_id for p in draw(ids, {"c3": 1.0}, 4, seed=1)]
    True
    """
    if not 0.0 <= uniform_share <= 1.0:
        raise ValueError(f"--uniform-share {uniform_share} is out of range; expected 0 to 1")
    if n < 1:
        raise ValueError(f"--sample {n}: expected at least 1 answer")
    ids = list(dict.fromkeys(case_ids))
    d = {c: max(0.0, float(disagreement.get(c, 0.0))) for c in ids}
    if n >= len(ids):
        return [Pick(c, 1.0, d[c]) for c in ids]
    total = sum(d.values())
    share = uniform_share if total > 0 else 1.0
    sizes = [share / len(ids) + ((1 - share) * d[c] / total if total > 0 else 0.0) for c in ids]
    pi = probabilities(sizes, n)
    rng = random.Random(seed)
    order = list(range(len(ids)))
    rng.shuffle(order)
    start, cum, chosen = rng.random(), 0.0, []  # one random start, then every 1.0
    points = [start + k for k in range(n)]
    k = 0
    for i in order:
        cum += pi[i]
        while k < n and points[k] < cum:
            if not chosen or chosen[-1] != i:
                chosen.append(i)
            k += 1
    if len(chosen) < n:   # rounding left the last point just past the end: it falls in the last answer
        chosen += [i for i in reversed(order) if i not in chosen][: n - len(chosen)]
    return [Pick(ids[i], pi[i], d[ids[i]]) for i in chosen]


def weights(picks: list[Pick]) -> dict[str, float]:
    """case id -> design weight ``1 / inclusion probability``.

    >>> weights([Pick("a", 0.5, 0.0), Pick("b", 1.0, 0.2)])
    {'a': 2.0, 'b': 1.0}
    """
    return {p.case_id: 1.0 / p.probability for p in picks}
