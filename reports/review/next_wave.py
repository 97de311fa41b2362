"""``harness review RUN --labels L --next N``: the next N answers to label, drawn from the answers not yet in the
sample and leaning toward those where the two best metrics so far (highest design-weighted kappa against the
labels: :func:`harness.reports.analysis.label_estimates.plan`) disagree. The draw is the review's own design
(:func:`harness.reports.review.sampling.draw`: a uniform share plus a share by disagreement), so each answer's
inclusion probability given the earlier waves is known and stored; :mod:`harness.reports.review.waves` combines the
waves into unbiased weights. Before any label exists, the lean is toward the spread of every metric's score.
"""
from __future__ import annotations

import time

from harness.reports.analysis import label_estimates as LE
from harness.reports.analysis.data import load_run
from harness.reports.analysis.orient import oriented, unit
from harness.reports.review import sampling, source
from harness.reports.review.store import LabelStore


def candidates(data, labels_path: str) -> list[str]:
    """The two best metrics on the labels so far ([] before labels give two kappas)."""
    from harness.reports.review.agree import with_labels  # noqa: PLC0415 - agree imports this module's neighbours

    labelled, _, weights = with_labels(data, labels_path)
    if not weights:
        return []
    results = LE.compute(labelled, weights, resamples=200)
    ranked = sorted((r for r in results if r.answers.point.get("kappa") is not None),
                    key=lambda r: -r.answers.point["kappa"])
    return [r.metric for r in ranked[:2]] if len(ranked) >= 2 else []


def disagreement(data, pair: list[str], ids: list[str]) -> dict[str, float]:
    """case id -> how far the two metrics disagree: 1 when one calls the answer ungrounded and the other does not,
    plus the gap between their scores on a 0-1 scale."""
    out = {}
    for cid in ids:
        cells = [data.cell(cid, m) for m in pair]
        if any(c is None or c.status != "scored" for c in cells):
            out[cid] = 0.0
            continue
        s = [float(c.score) for c in cells]
        span = [data.info[m].scale for m in pair]
        flags = [oriented(sp, v) < sp[1] for sp, v in zip(span, s)]
        out[cid] = float(flags[0] != flags[1]) + abs(unit(span[0], s[0]) - unit(span[1], s[1]))
    return out


def draw_next(store: LabelStore, labels_path: str, run: str, out: str, n: int, seed: int,
              uniform_share: float) -> tuple[int, list[str], int]:
    """Draw and store the next wave; (answers drawn, the candidates leaned toward, answers left to draw from)."""
    src = source.load(run, out)
    if src.kind != "run":
        raise ValueError("--next needs the run the sample was drawn from (a case file has no metrics to compare)")
    meta = store.meta()
    if meta.get("name") != src.name:
        raise ValueError(f"{labels_path} was drawn from {meta.get('source')} {meta.get('name')!r}, not run {src.name!r}")
    taken = {p.case_id for p in store.picks()}
    rest = [c for c in src.order if c not in taken]
    if not rest:
        raise ValueError(f"every answer of run {src.name!r} is already in the sample: nothing left to draw")
    data = load_run(run, out)
    pair = candidates(data, labels_path)
    lean = disagreement(data, pair, rest) if pair else {c: src.disagreement.get(c, 0.0) for c in rest}
    waves = meta.get("waves") or [{}]
    picks = sampling.draw(rest, lean, n, seed + len(waves), uniform_share)
    store.append_wave(picks, src.cases, src.verdicts, {
        "population": len(rest), "candidates": pair, "seed": seed + len(waves), "uniform_share": uniform_share,
        "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())})
    return len(picks), pair, len(rest)
