"""What the drift sentinel says about two runs (issue 35.3): which of a metric's vendor versions, prompt
templates and judge fingerprints changed, and which cells changed outcome with them, each with its causes.

Reads each run's ``cell_drift`` table (:mod:`harness.store.drift`) and its units; never re-scores. The
causes of a cell whose outcome (status, or score by more than 1e-9) changed, every one that applies:

- ``vendor version changed``: the metric's vendor distributions differ;
- ``prompt changed (step, ...)``: the prompt templates the vendor sent differ (the steps named);
- ``judge changed``: the judge fingerprint (model, system_fingerprint) differs;
- ``judge answered differently``: the same prompts, the same judge, other replies (sampling);
- ``parsing changed``: the same prompts and the same replies, other units (claims or raw verdicts): the
  vendor read the same answers otherwise;
- ``scoring rule changed``: the same normalised verdict on every unit, another outcome: the vendor
  computes another score from the same verdicts;
- ``not recorded``: a run written before the sentinel; ``unexplained``: none of the above moved.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from harness.reports.analysis.matrix import build
from harness.store.runstore import RunStore

TOLERANCE = 1e-9
"""Two scores closer than this are the same outcome."""


@dataclass(frozen=True)
class OutcomeChange:
    """One cell whose outcome differs between the runs, and what changed with it."""

    case_id: str
    metric: str
    label_a: str
    label_b: str
    causes: tuple[str, ...]


@dataclass
class MetricDrift:
    """One metric's sentinel facts over the cells both runs have."""

    metric: str
    cells: int
    vendor_a: list[str]
    vendor_b: list[str]
    prompt_changed: int
    """Cells whose prompt hash differs."""
    steps_changed: list[str]
    """Steps whose templates differ in some cell."""
    judge_a: list[str]
    judge_b: list[str]
    outcome_changed: int = 0
    verdicts_changed: int = 0
    """Cells whose units (claims, raw verdicts) differ, whatever their outcome (a renamed verdict)."""


@dataclass
class Drift:
    """The sentinel's comparison of two runs."""

    recorded: bool
    """Both runs carry the sentinel (a store written before it has no record)."""
    metrics: list[MetricDrift] = field(default_factory=list)
    changes: list[OutcomeChange] = field(default_factory=list)

    def lines(self) -> list[str]:
        """What changed, one line each (``harness compare``'s "what differs")."""
        out = []
        for d in self.metrics:
            if d.vendor_a != d.vendor_b:
                out.append(f"vendor: {d.metric} {' | '.join(d.vendor_a) or '?'} -> {' | '.join(d.vendor_b) or '?'}")
            if d.prompt_changed:
                out.append(f"prompt templates: {d.metric}: {d.prompt_changed} of {d.cells} cell(s) sent other "
                           f"templates (steps: {'; '.join(d.steps_changed) or '?'})")
            if d.judge_a != d.judge_b:
                out.append(f"judge fingerprint: {d.metric} {' | '.join(d.judge_a) or '?'} -> "
                           f"{' | '.join(d.judge_b) or '?'}")
        return out


def facts_of(data) -> dict[tuple[str, str], dict]:
    """A loaded run's drift facts per cell ({} for a run written before the sentinel)."""
    store = RunStore.open(data.run_dir)
    try:
        return store.drift()
    finally:
        store.close()


def _units(data) -> dict[tuple[str, str], list[tuple]]:
    out: dict = {}
    u = data.units
    if u is None or not len(u):
        return out
    for case_id, metric, idx, text, verdict, raw in sorted(zip(u["case_id"], u["metric"], u["idx"], u["text"],
                                                               u["verdict"], u["raw_verdict"]),
                                                           key=lambda r: (r[0], r[1], r[2])):
        out.setdefault((case_id, metric), []).append((text, verdict, raw))
    return out


def outcome_differs(a, b) -> bool:
    """Two matrix cells differ in outcome: another status, or scores apart by more than :data:`TOLERANCE`.

    >>> from harness.reports.analysis.matrix import Cell
    >>> outcome_differs(Cell("scored", 0.5), Cell("scored", 0.5 + 1e-12)), outcome_differs(Cell("scored", 1.0), Cell("error", None))
    (False, True)
    """
    if a.status != b.status:
        return True
    return a.status == "scored" and abs(a.score - b.score) > TOLERANCE


def causes(fa: dict | None, fb: dict | None, ua: list, ub: list, scoring: bool = True) -> tuple[str, ...]:
    """Why a cell's outcome changed, from its two drift records and unit lists (see the module docstring);
    ``scoring``: both cells ended with an outcome the vendor computed (no error on either side).

    >>> f = {"vendor": "v 1", "prompt_hash": "p", "reply_hash": "r", "judge": "j", "steps": {"S": ["x"]}}
    >>> causes(f, {**f, "vendor": "v 2"}, [("c", "supported", "yes")], [("c", "supported", "yes")])
    ('vendor version changed', 'scoring rule changed')
    >>> causes(f, {**f, "vendor": "v 2", "prompt_hash": "q", "reply_hash": "s", "steps": {"S": ["y"]}}, [], [("c", "unsupported", "no")])
    ('vendor version changed', 'prompt changed (S)')
    >>> causes(f, f, [("c", "supported", "yes")], [("c", "unsupported", "maybe")])
    ('parsing changed',)
    """
    if not fa or not fb:
        return ("not recorded",)
    out = []
    if fa["vendor"] != fb["vendor"]:
        out.append("vendor version changed")
    if fa["prompt_hash"] != fb["prompt_hash"]:
        steps = [s for s in sorted(set(fa["steps"]) | set(fb["steps"])) if fa["steps"].get(s) != fb["steps"].get(s)]
        out.append(f"prompt changed ({'; '.join(steps)})" if steps else "prompt changed")
    if fa["judge"] != fb["judge"]:
        out.append("judge changed")
    elif fa["prompt_hash"] == fb["prompt_hash"] and fa["reply_hash"] != fb["reply_hash"]:
        out.append("judge answered differently")
    same_asked = fa["prompt_hash"] == fb["prompt_hash"] and fa["reply_hash"] == fb["reply_hash"]
    if same_asked and [(t, r) for t, _, r in ua] != [(t, r) for t, _, r in ub]:
        out.append("parsing changed")
    if scoring and [v for _, v, _ in ua] == [v for _, v, _ in ub]:
        out.append("scoring rule changed")
    return tuple(out) or ("unexplained",)


def drift(a, b, metrics: list[str], shared: list[str]) -> Drift:
    """The sentinel's comparison of two loaded runs over their shared metrics and cases."""
    fa, fb = facts_of(a), facts_of(b)
    if not fa or not fb:
        return Drift(False)
    ca, cb = build(a), build(b)
    ua, ub = _units(a), _units(b)
    out = Drift(True)
    for m in metrics:
        keys = [(c, m) for c in shared if (c, m) in fa and (c, m) in fb]
        steps = sorted({s for k in keys if fa[k]["prompt_hash"] != fb[k]["prompt_hash"]
                        for s in set(fa[k]["steps"]) | set(fb[k]["steps"])
                        if fa[k]["steps"].get(s) != fb[k]["steps"].get(s)})
        d = MetricDrift(m, len(keys), sorted({fa[k]["vendor"] for k in keys}), sorted({fb[k]["vendor"] for k in keys}),
                        sum(fa[k]["prompt_hash"] != fb[k]["prompt_hash"] for k in keys), steps,
                        sorted({j for k in keys for j in fa[k]["judge"].split(", ") if j}),
                        sorted({j for k in keys for j in fb[k]["judge"].split(", ") if j}))
        for k in keys:
            d.verdicts_changed += [(t, r) for t, _, r in ua.get(k, [])] != [(t, r) for t, _, r in ub.get(k, [])]
            if outcome_differs(ca[k], cb[k]):
                d.outcome_changed += 1
                out.changes.append(OutcomeChange(k[0], m, ca[k].label, cb[k].label,
                                                 causes(fa[k], fb[k], ua.get(k, []), ub.get(k, []),
                                                        "error" not in (ca[k].status, cb[k].status))))
        out.metrics.append(d)
    return out
