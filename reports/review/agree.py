"""``harness agree RUN --labels LABELS``: each metric's agreement with a team's own labels (a review's
labels file), on the run's stored scores (never re-scored).

The run's cases take the review's labels as their annotation (the texts must be the run's: a label is
only about the answer it was given for). Two sets of figures follow: the usual agreement over the labelled
answers (n, base rate, intervals, the threshold sweep; :mod:`reports.model.agreement`), and, because a
review sample may lean toward answers where the metrics disagree, the figures weighted by each answer's
inclusion probability, which estimate the agreement over every answer of the run
(:mod:`reports.model.weighted_agreement`). The seeds' rule is stated next to both.
"""
from __future__ import annotations

import dataclasses
import json

from reports.model import agreement, agreement_section
from reports.model import weighted_agreement as W
from reports.model.agreement_section import with_ci
from reports.model.data import load_run
from reports.review.labelled import collect
from reports.review.store import LabelStore

TEXT_FIELDS = ("question", "answer", "contexts")


def with_labels(data, labels_path: str, reviewers: list[str] | None = None):
    """(run data whose cases carry the review's labels, restricted to them; the labels; weights)."""
    store = LabelStore.open_existing(labels_path)
    try:
        lab = collect(store, reviewers)
    finally:
        store.close()
    cases = dict(data.cases)
    for cid, case in lab.cases.items():
        run_case = data.cases.get(cid)
        if run_case is None:
            raise ValueError(f"{labels_path}: answer {cid!r} is not a case of run {data.run_id!r} "
                             f"(were the labels drawn from another run?)")
        for f in TEXT_FIELDS:
            if getattr(run_case, f) != getattr(case, f):
                raise ValueError(f"{labels_path}: answer {cid!r} has another {f} than in run {data.run_id!r}: "
                                 "labels are only about the text they were given for")
        cases[cid] = case
    ids = [c for c in data.case_ids if c in lab.cases]
    weights = {p.case_id: 1.0 / p.probability for p in lab.picks if p.case_id in lab.cases}
    return dataclasses.replace(data, cases=cases, case_ids=ids), lab, weights


def run(args) -> int:
    """Print (or ``--json``) both sets of figures; the labels are a review's labels file or annotated cases
    (:mod:`reports.review.team`)."""
    from reports.review import team  # noqa: PLC0415 - lazy: the labels' loader

    data = load_run(args.run, args.out, args.cases)
    reviewers = [r.strip() for r in (args.reviewers or "").split(",") if r.strip()] or None
    data, lab = team.apply(data, team.load(args.labels, data.cases, data.run_id, reviewers))
    prov = lab.provenance
    results = agreement.compute(data)
    weighted = W.compute(data, lab.weights) if lab.weights else []
    if args.json:
        doc = agreement.as_json(data, results)
        doc["labels"] = {"file": args.labels, "kind": prov.kind, "labelled": prov.labelled, "sample": prov.drawn,
                         "unlabelled": prov.unlabelled, "left_out": prov.left_out,
                         "reviewers": sorted(prov.chosen), "saved": [prov.first, prov.last]}
        doc["weighted"] = {w.metric: {"n": w.n, "base_rate": w.base_rate, "accuracy": w.accuracy,
                                      "balanced_accuracy": w.balanced_accuracy, "kappa": w.kappa,
                                      **{f"{k}_ci": list(v) for k, v in w.ci.items()}, "rule": w.rule}
                           for w in weighted}
        print(json.dumps(doc, indent=2, sort_keys=True, allow_nan=False))
        return 0
    names = {m: data.info[m].short_name for m in data.metrics}
    print(prov.text())
    print(agreement_section.terminal(data, results, names))
    if weighted:
        print()
        print(weighted_text(weighted, names))
    return 0


def weighted_text(weighted: list[W.Weighted], names: dict[str, str]) -> str:
    """The weighted figures, one line per metric, then the rule on them."""
    lines = ["weighted by 1 / inclusion probability (estimates over every answer of the run; target hallucinated):"]
    w = max([len(n) for n in names.values()] + [6])
    lines.append(f"  {'metric':{w}}  {'n':>4}  {'base rate [95% CI]':22}  {'raw agreement [95% CI]':22}  "
                 f"{'bal.acc [95% CI]':22}  kappa [95% CI]")
    for x in weighted:
        lines.append(f"  {names.get(x.metric, x.metric):{w}}  {x.n:>4}  {with_ci(x.base_rate, x.ci.get('base_rate')):22}  "
                     f"{with_ci(x.accuracy, x.ci.get('accuracy')):22}  "
                     f"{with_ci(x.balanced_accuracy, x.ci.get('balanced_accuracy')):22}  {with_ci(x.kappa, x.ci.get('kappa'))}")
    lines.append("")
    lines += [f"{names.get(x.metric, x.metric)}: {x.rule}" for x in weighted]
    return "\n".join(lines)
