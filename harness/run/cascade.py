"""``harness run --cascade FILE``: score cases with a calibrated cascade, stage by stage, in one run.

Pass k runs stage k's metric, through the ordinary runner (same judge, gateway, caches, resume), on the
cases no earlier stage was confident on; a stage's cell is an ordinary cell of its metric in the run store.
After the last pass, each case's route is kept in the store (meta key ``cascade``: the file's settings and,
per case, the stage that decided it, its verdict and confidence, or ``person``), the run's spec lists every
stage, and the cases no stage decided are written to ``escalated.jsonl`` in the run folder: a case file the
review app (``harness review``) samples from.
"""
from __future__ import annotations

import dataclasses
import json
import os

from harness.cases.load import CaseSet, case_to_json
from harness.metric import registry
from harness.metric.facts import MetricFacts
from harness.run.cascade_file import PERSON, Cascade, decisions
from harness.run.rundir import check_run_id
from harness.run.runner import RunOptions, RunOutcome, default_run_id, effective_cache_mode, run, status_counts
from harness.run.spec import build_spec
from harness.store.runstore import RunStore

ESCALATED = "escalated.jsonl"


@dataclasses.dataclass
class Routed:
    """Where each case went."""

    route: dict[str, dict]
    """case id -> {"stage", "verdict" (grounded / ungrounded / None), "confidence"}."""
    ran: dict[str, int]
    """stage metric -> cases it was run on."""
    escalated_path: str | None


def run_cascade(opts: RunOptions, cascade: Cascade) -> tuple[RunOutcome, Routed]:
    """Run the cascade's stages in order on one run id; return the last pass's outcome (counts over all)."""
    run_id = opts.run_id or default_run_id()
    cases = list(opts.cases)
    left = [c.id for c in cases]
    route: dict[str, dict] = {}
    ran: dict[str, int] = {}
    outcome = None
    for stage in cascade.stages:
        if not left:
            break
        if stage.confidence is None:   # calibration certified no level: the stage would decide nothing
            continue
        cls = registry.get(stage.metric)
        subset = CaseSet(opts.cases.path, tuple(c for c in cases if c.id in set(left)), opts.cases.sha256)
        outcome = run(dataclasses.replace(opts, cases=subset, metrics=[stage.metric], run_id=run_id,
                                          metric_args={k: v for k, v in opts.metric_args.items()
                                                       if k == stage.metric}))
        ran[stage.metric] = len(subset)
        store = RunStore.open(outcome.store_path)
        try:
            seen = decisions(store, cls, stage.verdict_threshold)
        finally:
            store.close()
        still = []
        for cid in left:
            d = seen.get(cid)
            if d is not None and d.grounded is not None and stage.confidence is not None \
                    and d.confidence >= stage.confidence - 1e-12:
                route[cid] = {"stage": stage.metric, "verdict": "grounded" if d.grounded else "ungrounded",
                              "confidence": round(d.confidence, 6)}
            else:
                still.append(cid)
        left = still
    for cid in left:
        route[cid] = {"stage": PERSON, "verdict": None, "confidence": None}
    if outcome is None:   # no stage certified: no judge call, every case to a person, the run still recorded
        run_dir = os.path.join(opts.out_dir, check_run_id(run_id))
        os.makedirs(run_dir, exist_ok=True)
        outcome = RunOutcome(run_id, run_dir, os.path.join(run_dir, RunStore.FILENAME), 0, 0, {})
    store = RunStore.create(outcome.run_dir)   # the run's record: every case, every stage, the routes
    try:
        classes = {s.metric: registry.get(s.metric) for s in cascade.stages if s.metric in ran}
        store.write_cases(opts.cases)
        store.write_spec(build_spec(dataclasses.replace(opts, run_id=run_id), run_id, effective_cache_mode(opts),
                                    classes))
        store.write_metric_facts(MetricFacts.of(c) for c in classes.values())
        store.write_meta("cascade", {"file": cascade.to_json(), "ran": ran, "route": route})
        counts = status_counts(store)
    finally:
        store.close()
    path = None
    if left:
        path = os.path.join(outcome.run_dir, ESCALATED)
        with open(path, "w", encoding="utf-8") as fh:
            for c in cases:
                if c.id in set(left):
                    fh.write(json.dumps(case_to_json(c), ensure_ascii=False) + "\n")
    return dataclasses.replace(outcome, counts=counts), Routed(route, ran, path)


def summary_lines(cascade: Cascade, routed: Routed) -> list[str]:
    """What the terminal says after a cascade run: per stage, the cases it ran on and decided."""
    n = len(routed.route)
    out = [f"cascade: target agreement {cascade.target:.2f} with probability >= {1 - cascade.delta:.2f} "
           f"(calibrated); {n} case(s)"]
    for s in cascade.stages:
        kept = sum(r["stage"] == s.metric for r in routed.route.values())
        lam = "decides nothing" if s.confidence is None else f"confidence >= {s.confidence:.2f}"
        out.append(f"  {s.metric}: ran on {routed.ran.get(s.metric, 0)}, decided {kept} ({lam})")
    people = sum(r["stage"] == PERSON for r in routed.route.values())
    out.append(f"  {PERSON}: {people} case(s) no stage was confident on" +
               (f" -> {routed.escalated_path} (harness review {routed.escalated_path} --labels LABELS)"
                if routed.escalated_path else ""))
    return out
