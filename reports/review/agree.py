"""``harness agree RUN --labels LABELS``: each metric's agreement with a team's own labels (a review's
labels file), on the run's stored scores (never re-scored).

The run's cases take the review's labels as their annotation (the texts must be the run's: a label is
only about the answer it was given for). Two sets of figures follow: the usual agreement over the labelled
answers (n, base rate, intervals, the threshold sweep; :mod:`harness.reports.analysis.agreement`), and, because a
review sample may lean toward answers where the metrics disagree, the figures weighted by each answer's
inclusion probability, which estimate every answer of the run even when labelling stopped partway, with the
corrected ungrounded share, fitted thresholds, the human ceiling and the planner
(:mod:`harness.reports.review.estimates`, docs/statistics.md). The seeds' rule is stated next to both.
"""
from __future__ import annotations

import dataclasses
import json

from harness.reports.analysis import agreement
from harness.reports.analysis import weighted_agreement as W
from harness.reports.analysis.data import load_run
from harness.reports.model import agreement_section, estimates_section
from harness.reports.review.estimates import gather
from harness.reports.review.labelled import collect
from harness.reports.review.store import LabelStore
from harness.reports.review.waves import design_weights

TEXT_FIELDS = ("question", "answer", "contexts")


def with_labels(data, labels_path: str, reviewers: list[str] | None = None, adjudicators: list[str] | None = None):
    """(run data whose cases carry the review's labels, restricted to them; the labels; weights)."""
    store = LabelStore.open_existing(labels_path)
    try:
        lab = collect(store, reviewers, adjudicators)
        waves = store.meta().get("waves")
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
    weights = design_weights(lab.picks, waves, set(lab.cases))
    return dataclasses.replace(data, cases=cases, case_ids=ids), lab, weights


def run(args) -> int:
    """Print (or ``--json``) both sets of figures; the labels are a review's labels file or annotated cases
    (:mod:`harness.reports.review.team`)."""
    from harness.reports.review import team  # noqa: PLC0415 - lazy: the labels' loader

    data = load_run(args.run, args.out, args.cases)
    reviewers = [r.strip() for r in (args.reviewers or "").split(",") if r.strip()] or None
    adjudicators = [args.adjudicator] if getattr(args, "adjudicator", None) else None
    data, lab = team.apply(data, team.load(args.labels, data.cases, data.run_id, reviewers, adjudicators))
    prov = lab.provenance
    results = agreement.compute(data)
    est = gather(data, args.labels, lab.weights, reviewers, adjudicators) if lab.weights else None
    if args.json:
        doc = agreement.as_json(data, results)
        doc["labels"] = {"file": args.labels, "kind": prov.kind, "labelled": prov.labelled, "sample": prov.drawn,
                         "unlabelled": prov.unlabelled, "left_out": prov.left_out,
                         "reviewers": sorted(prov.chosen), "saved": [prov.first, prov.last]}
        if est is not None:   # a review's sample: the design-weighted estimates
            keys = ("base_rate", "accuracy", "balanced_accuracy", "kappa")
            doc["weighted"] = {m.metric: {"n": m.answers.n, **{k: m.answers.point[k] for k in keys},
                                          **{f"{k}_ci": list(m.answers.ci[k]) for k in keys},
                                          "rule": W.Weighted(m.metric, m.answers.n,
                                                             *(m.answers.point[k] for k in keys), {}).rule}
                               for m in est.results}
            doc["estimates"] = estimates_json(est)
        print(json.dumps(doc, indent=2, sort_keys=True, allow_nan=False))
        return 0
    names = {m: data.info[m].short_name for m in data.metrics}
    print(prov.text())
    print(agreement_section.terminal(data, results, names))
    if est is not None:
        print()
        print(estimates_section.terminal(est.results, est.plan, names, est.human, est.alt))
    return 0


def estimates_json(est) -> dict:
    """The ``estimates`` object of ``harness agree --labels --json``."""
    def r(v):
        return None if v is None else round(float(v), 6)

    def fig(e):
        return None if e is None else {"n": e.n, "items": e.items, "n_effective": r(e.n_eff),
                                       **{k: r(v) for k, v in e.point.items()},
                                       **{f"{k}_ci": [r(x) for x in v] for k, v in e.ci.items()}}

    out = {"metrics": {}, "planner": None, "human": None}
    for m in est.results:
        rt, f = m.rate, m.fitted
        out["metrics"][m.metric] = {
            "answers": fig(m.answers), "claims": fig(m.claims), "excluded": m.excluded,
            "rate": {"scored": rt.scored, "raw": r(rt.raw), "raw_ci": [r(x) for x in rt.raw_ci], "ppi": r(rt.ppi),
                     "ppi_ci": [r(x) for x in rt.ppi_ci], "lambda": r(rt.lam), "rogan_gladen": r(rt.rogan_gladen),
                     "rogan_gladen_ci": [r(x) for x in rt.rg_ci], "n": rt.n},
            "fitted_threshold": None if f is None else {
                "threshold": r(f.threshold), "folds": f.folds, "out_of_fold": fig(f.out_of_fold),
                "default_threshold": r(f.default_threshold), "default": fig(f.default)},
            "alt_test": None if est.alt.get(m.metric) is None else dataclasses.asdict(est.alt[m.metric])}
    if est.plan is not None:
        out["planner"] = dataclasses.asdict(est.plan)
    h = est.human
    if h is not None:
        out["human"] = {"reviewers": h.reviewers, "adjudicators": h.adjudicators, "answers": h.answers,
                        "answer_kappa": r(h.answer_kappa), "answer_agreement": r(h.answer_agreement),
                        "claim_kappa": r(h.claim_kappa), "statistic": h.statistic,
                        "disagreements_open": len(h.disagreements), "disagreements_settled": len(h.settled)}
    return out
