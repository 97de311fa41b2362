"""Answers of a sample assigned to named reviewers (``harness review --assign alice,bob [--overlap K]``).

The first ``overlap`` answers of the sample go to every reviewer (so the team's kappa has answers every rater
labelled); the rest are dealt out in turn, so each reviewer gets an even share of every part of the sample (the
sample's order is the draw's, not sorted by anything). The assignment is kept in the labels file's meta as
``{"reviewers": [...], "overlap": K, "positions": {name: [pos, ...]}}``; a reviewer not named sees the whole sample.
"""
from __future__ import annotations


def split(total: int, names: list[str], overlap: int = 0) -> dict[str, list[int]]:
    """Positions (0-based) of a sample of ``total`` answers for each of ``names``.

    >>> split(7, ["alice", "bob"], overlap=2)
    {'alice': [0, 1, 2, 4, 6], 'bob': [0, 1, 3, 5]}
    """
    if not names:
        raise ValueError("--assign: name at least one reviewer")
    if len(set(names)) != len(names):
        raise ValueError(f"--assign: {next(n for n in names if names.count(n) > 1)!r} is named twice")
    if not 0 <= overlap <= total:
        raise ValueError(f"--overlap {overlap}: expected 0 to {total} (the sample's size)")
    shared = list(range(overlap))
    return {n: shared + list(range(overlap + k, total, len(names))) for k, n in enumerate(names)}


def progress(assignment: dict | None, latest: dict[str, dict[str, dict]], order: list[str], done, skipped) -> list[dict]:
    """Each assigned reviewer's progress on their answers: ``{"reviewer", "assigned", "done", "skipped"}``."""
    out = []
    for name, positions in ((assignment or {}).get("positions") or {}).items():
        mine = latest.get(name, {})
        states = [mine.get(order[p]) for p in positions if p < len(order)]
        out.append({"reviewer": name, "assigned": len(states), "done": sum(map(done, states)),
                    "skipped": sum(map(skipped, states))})
    return out
