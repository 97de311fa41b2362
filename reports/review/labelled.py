"""A review's labels as annotated cases (the case format), so the reference judge, every report and
``harness agree --labels`` read them like any annotation.

The gold label of an answer: an adjudicator's labels where one has finished it (adjudicators are named in the
labels file, ``harness review --adjudicator NAME``, or passed in); else the labels every rater who finished it
agrees on (the raters: ``reviewers`` when given, else everyone who saved a label but the adjudicators). An answer
no one finished is left out as not labelled yet (drawn but not labelled); an answer on which the raters disagree
and no adjudicator has settled is left out and counted as an unresolved disagreement.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field

from harness.cases.load import parse_case
from harness.core.records import Case
from harness.reports.review.answers import annotated_case, answer_done
from harness.reports.review.sampling import Pick
from harness.reports.review.store import LabelStore


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
    gold: dict[str, str] = field(default_factory=dict)
    """case id -> how its gold label was reached: ``adjudicated``, ``agreed`` (two raters or more) or ``one
    reviewer``."""


def _same(a: dict, b: dict) -> bool:
    def key(s):
        return json.dumps({k: s[k] for k in ("claims", "abstention", "answerable")}, sort_keys=True)
    return key(a) == key(b)


NOT_LABELLED = "drawn, not labelled yet"
UNRESOLVED = "reviewers disagree, not adjudicated"


def collect(store: LabelStore, reviewers: list[str] | None = None,
            adjudicators: list[str] | None = None) -> Labelled:
    """Each answer's gold label (see the module docstring); ``adjudicators`` default to the labels file's."""
    latest = store.latest()
    adj = list(adjudicators) if adjudicators is not None else store.adjudicators()
    unknown = [r for r in reviewers or [] if r not in latest]
    if unknown:
        raise ValueError(f"no labels by reviewer {unknown[0]!r} in {store.path}; "
                         f"reviewers: {', '.join(sorted(latest)) or '(none yet)'}")
    raters = reviewers or [r for r in sorted(latest) if r not in adj]
    picks = store.picks()
    cases, objects, chosen, left, gold = {}, {}, {}, {}, {}
    for p in picks:
        settled = next((a for a in adj if answer_done(latest.get(a, {}).get(p.case_id))), None)
        done = {r: latest[r][p.case_id] for r in raters if answer_done(latest.get(r, {}).get(p.case_id))}
        states = list(done.values())
        if settled is not None:
            who, kind = settled, "adjudicated"
        elif states and all(_same(states[0], s) for s in states):
            who, kind = next(iter(done)), ("agreed" if len(done) > 1 else "one reviewer")
        else:
            why = UNRESOLVED if len(done) > 1 else NOT_LABELLED
            left[why] = left.get(why, 0) + 1
            continue
        state = latest[who][p.case_id]
        obj = annotated_case(store.case_json(p.case_id), state)
        objects[p.case_id], chosen[p.case_id], gold[p.case_id] = obj, who, kind
        cases[p.case_id] = parse_case(obj, f"{store.path} answer {p.case_id}")
    return Labelled(cases, objects, picks, left, chosen, gold)


def write_cases(labelled: Labelled, path: str) -> int:
    """Write the labelled answers as a case file (JSONL, sample order); return how many."""
    with open(path, "w", encoding="utf-8") as fh:
        n = 0
        for p in labelled.picks:
            if p.case_id in labelled.objects:
                fh.write(json.dumps(labelled.objects[p.case_id], ensure_ascii=False) + "\n")
                n += 1
    return n
