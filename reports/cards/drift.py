"""The drift card (issue 35.4): one vendor's metrics scored on the same cases under two of its versions,
side by side, with every case whose outcome changed and why (``harness compare A B --drift-card FILE``;
``scripts/drift_card.sh`` makes the two runs; docs/drift.md).

Built from a :class:`harness.reports.analysis.compare.Comparison` only (the two run stores; nothing re-scored), so a
test makes one from two recorded runs, offline.
"""
from __future__ import annotations

import os

from harness.reports.model import sections as S
from harness.reports.render.markdown import m, table

WHY = ("Why, per case: every cause the drift sentinel found, of: vendor version changed; prompt changed (the "
       "steps whose template differs: the prompt text the vendor sent, case text taken out); judge changed "
       "(model or system_fingerprint); judge answered differently (same prompts, other replies); parsing "
       "changed (same prompts and replies, other claims or raw verdicts); scoring rule changed (the same "
       "normalised verdict on every unit, another score).")


def _versions(drift, side: str) -> str:
    vs = sorted({v for d in drift.metrics for v in (d.vendor_a if side == "a" else d.vendor_b)})
    return " | ".join(vs) or "not recorded"


def _means(cmp) -> dict[str, tuple]:
    return {d.metric: (d.mean_a, d.mean_b, d.n_pairs) for d in cmp.metrics}


def card(cmp) -> str:
    """The drift card of a comparison, as Markdown."""
    drift = cmp.drift
    judge = (cmp.b.spec.get("judge") or {}).get("description", "?")
    out = [f"# Drift card: {m(_versions(drift, 'a'))} \u2192 {m(_versions(drift, 'b'))}", "",
           "The same cases scored by the same metrics under two versions of one vendor, through the same judge. "
           "Every cell records its vendor's package versions, a hash of the prompt templates it sent and the "
           "judge's fingerprint (docs/drift.md), so each case whose outcome changed is listed with what changed "
           "with it.", "",
           f"- A: run `{m(cmp.a.run_id)}`: {m(_versions(drift, 'a'))}",
           f"- B: run `{m(cmp.b.run_id)}`: {m(_versions(drift, 'b'))}",
           f"- judge: {m(judge)}; fingerprints A: "
           f"{m(' | '.join(sorted({j for d in drift.metrics for j in d.judge_a})) or '?')}, B: "
           f"{m(' | '.join(sorted({j for d in drift.metrics for j in d.judge_b})) or '?')}",
           f"- cases: {len(cmp.shared_cases)} shared ({m(str((cmp.a.spec.get('cases') or {}).get('path', '?')))})",
           "", "## Per metric", "",
           "n = cells both runs have; outcome = status, or score (apart by more than 1e-9); prompt changed = cells "
           "whose prompt-template hash differs; claims or raw verdicts changed = cells whose units differ in text "
           "or in the vendor's own verdict word, whatever their outcome; means over the cases both runs scored.",
           ""]
    means = _means(cmp)
    rows = []
    for d in drift.metrics:
        ma, mb, n = means.get(d.metric, (None, None, 0))
        rows.append([d.metric, str(d.cells), str(d.outcome_changed), str(d.prompt_changed), str(d.verdicts_changed),
                     "; ".join(d.steps_changed) or "none", f"{S.fmt(ma)} \u2192 {S.fmt(mb)} (n={n})"])
    out += [table(["metric", "n", "outcome changed", "prompt changed", "claims or raw verdicts changed",
                   "steps whose template changed", "mean A \u2192 B"], [[m(c) for c in r] for r in rows]), ""]
    out += ["## Every case whose outcome changed", "", WHY, ""]
    if drift.changes:
        out += [table(["case", "metric", "A", "B", "why"],
                      [[m(c.case_id), m(c.metric), m(c.label_a), m(c.label_b), m("; ".join(c.causes))]
                       for c in drift.changes]), ""]
    else:
        out += ["None: every cell ended with the same status and score under both versions.", ""]
    if cmp.changes:
        out += [f"Status changes among them: {len(cmp.changes)}.", ""]
    out += ["_Made by `harness compare A B --drift-card FILE` from the two run stores (nothing re-scored); "
            "`bash scripts/drift_card.sh` makes the runs and the card (docs/drift.md)._", ""]
    return "\n".join(out)


def write_card(cmp, path: str) -> str:
    """Write the drift card to ``path``; return the path."""
    if not (cmp.drift is not None and cmp.drift.recorded):
        raise ValueError("a drift card needs two runs that carry the drift sentinel (a run written before it has "
                         "no record of its prompts or vendor versions)")
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(card(cmp))
    return path

