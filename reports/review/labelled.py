"""A review's labels as annotated cases (the case format), so the reference judge, every report and
``harness agree --labels`` read them like any annotation.

Which reviewer's labels an answer takes: with ``reviewers`` given, the first of them who finished the
answer (list the adjudicator first); without, the one reviewer who finished it, or the labels every
reviewer who finished it agrees on. An answer nobody finished, or on which finished reviewers disagree
with no one named to settle it, is left out and counted.
"""
from __future__ import annotations

import json
from dataclasses import dataclass

from harness.cases.load import parse_case
from harness.core.records import Case

from reports.review.answers import annotated_case, answer_done
from reports.review.sampling import Pick
from reports.review.store import LabelStore


@dataclass(frozen=True)
class Labelled:
    """The labelled answers of a sample."""

    cases: dict[str, Case]
    """case id -> the case annotated with the chosen labels."""
    objects: dict[str, dict]
    """case id -> the same case as a JSONL object of the case format."""
    picks: list[Pick]
    """The whole sample (with inclusion probabilities), labelled or not."""
    left_out: dict[str, int]
    """reason -> answers of the sample without usable labels."""
    chosen: dict[str, str]
    """case id -> whose labels were taken."""


def _same(a: dict, b: dict) -> bool:
    def key(s):
        return json.dumps({k: s[k] for k in ("claims", "abstention", "answerable")}, sort_keys=True)
    return key(a) == key(b)


def collect(store: LabelStore, reviewers: list[str] | None = None) -> Labelled:
    """Pick each answer's labels (see the module docstring)."""
    latest = store.latest()
    unknown = [r for r in reviewers or [] if r not in latest]
    if unknown:
        raise ValueError(f"no labels by reviewer {unknown[0]!r} in {store.path}; "
                         f"reviewers: {', '.join(sorted(latest)) or '(none yet)'}")
    picks = store.picks()
    cases, objects, chosen, left = {}, {}, {}, {}
    for p in picks:
        done = {r: s[p.case_id] for r, s in latest.items() if answer_done(s.get(p.case_id))}
        if reviewers:
            who = next((r for r in reviewers if r in done), None)
            why = "not finished by " + ", ".join(reviewers)
        else:
            states = list(done.values())
            who = next(iter(done)) if states and all(_same(states[0], s) for s in states) else None
            why = "reviewers disagree (name --reviewers to settle)" if len(done) > 1 else "not finished"
        if who is None:
            left[why] = left.get(why, 0) + 1
            continue
        obj = annotated_case(store.case_json(p.case_id), done[who])
        objects[p.case_id], chosen[p.case_id] = obj, who
        cases[p.case_id] = parse_case(obj, f"{store.path} answer {p.case_id}")
    return Labelled(cases, objects, picks, left, chosen)


def write_cases(labelled: Labelled, path: str) -> int:
    """Write the labelled answers as a case file (JSONL, sample order); return how many."""
    with open(path, "w", encoding="utf-8") as fh:
        n = 0
        for p in labelled.picks:
            if p.case_id in labelled.objects:
                fh.write(json.dumps(labelled.objects[p.case_id], ensure_ascii=False) + "\n")
                n += 1
    return n
