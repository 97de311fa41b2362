"""A review sample in waves: the first drawn by ``harness review RUN --sample N``, each later one by ``--next N``
from the answers not drawn yet, leaning toward the answers where the two best metrics disagree. Each wave's
answers record their inclusion probability *given the earlier waves*, and the design weights combine the waves
so the estimates stay unbiased:

wave ``k`` alone gives an unbiased total ``T_k = sum_{earlier waves} y + sum_{wave k} y / pi_k`` (the earlier
waves' answers are known, the rest of the run is sampled by wave ``k``); any fixed mix ``sum_k a_k T_k`` with
``a_k`` = the wave's share of all drawn answers is unbiased too, and gives an answer of wave ``j`` the weight
``a_j / pi_j + sum_{k > j} a_k``. A wave labelled only in part (the first answers of its seeded review order)
is a random subsample of itself: its weights are divided by its labelled share. The estimates are ratios of
weighted counts, so a factor common to every weight changes nothing.
"""
from __future__ import annotations

from harness.reports.review.sampling import Pick


def design_weights(picks: list[Pick], waves: list[dict] | None, labelled: set[str]) -> dict[str, float]:
    """case id -> design weight, for the labelled answers of the sample (``waves``: the labels file's
    ``[{"start", "size"}]``, in sample order; None or empty: one wave).

    >>> ps = [Pick("a", 0.5, 0), Pick("b", 0.25, 0), Pick("c", 0.5, 0), Pick("d", 0.5, 0)]
    >>> design_weights(ps[:2], None, {"a", "b"})
    {'a': 2.0, 'b': 4.0}
    >>> design_weights(ps, [{"start": 0, "size": 2}, {"start": 2, "size": 2}], {"a", "b", "c"})
    {'a': 1.5, 'b': 2.5, 'c': 2.0}
    """
    bounds = [(int(w["start"]), int(w["start"]) + int(w["size"])) for w in waves or []] or [(0, len(picks))]
    total = sum(e - s for s, e in bounds)
    share = [(e - s) / total for s, e in bounds]
    out = {}
    for j, (s, e) in enumerate(bounds):
        members = picks[s:e]
        done = [p for p in members if p.case_id in labelled]
        if not done:
            continue
        r = len(done) / len(members)
        later = sum(share[j + 1:])
        for p in done:
            out[p.case_id] = (share[j] / p.probability + later) / r
    return out
