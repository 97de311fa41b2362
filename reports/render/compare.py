"""The compare page as self-contained HTML and as Markdown, from one :class:`harness.reports.analysis.compare.Comparison`."""
from __future__ import annotations

import os

from harness.reports.analysis.compare import SIGNIFICANT
from harness.reports.model import sections as S
from harness.reports.render.html import CSS, e
from harness.reports.render.markdown import m, table

INTRO = ("For each metric both runs have: the mean over the cases both runs scored, the mean paired "
         "difference B - A with a paired bootstrap 95% interval (cases resampled together), and the cases "
         "that moved most. A difference whose interval excludes 0 is marked " + SIGNIFICANT + ".")
DRIFT_INTRO = ("Cells whose outcome (status, or score) differs between the runs, and what the drift sentinel saw "
               "change with each: vendor version, prompt templates (by step), judge fingerprint, the judge's "
               "replies, the vendor's parsing (same replies, other verdicts) or its scoring rule (same verdicts, "
               "another score).")
STATUS_INTRO = "Cells whose status differs between the runs (a score on one side, no score on the other, or two kinds of no score)."


def _signed(v) -> str:
    """A signed number, or an en dash.

    >>> _signed(0.25), _signed(-0.5), _signed(None)
    ('+0.25', '-0.50', '\u2013')
    """
    return "\u2013" if v is None else f"{v:+.2f}"


def _rows(cmp) -> list[list[str]]:
    rows = []
    for d in cmp.metrics:
        ci = f"[{_signed(d.low)}, {_signed(d.high)}]" if d.diff is not None else "\u2013"
        ver = f"v{d.version_a}" if d.version_a == d.version_b else f"v{d.version_a} \u2192 v{d.version_b}"
        movers = "; ".join(f"{c}: {x:.2f} \u2192 {y:.2f}" for c, x, y in d.movers) or "none"
        rows.append([d.metric, ver, str(d.n_pairs), S.fmt(d.mean_a), S.fmt(d.mean_b),
                     _signed(d.diff) + (f" {SIGNIFICANT}" if d.significant else ""), ci, movers])
    return rows


HEADS = ["metric", "version", "paired cases", "mean A", "mean B", "B - A", "95% interval", "biggest movers"]


def _scope(cmp) -> list[str]:
    out = [f"A: run {cmp.a.run_id} ({(cmp.a.spec.get('judge') or {}).get('description', '?')})",
           f"B: run {cmp.b.run_id} ({(cmp.b.spec.get('judge') or {}).get('description', '?')})",
           f"shared cases: {len(cmp.shared_cases)}; only in A: {len(cmp.only_a)}; only in B: {len(cmp.only_b)}"]
    if cmp.only_metrics_a or cmp.only_metrics_b:
        out.append(f"metrics only in A: {', '.join(cmp.only_metrics_a) or 'none'}; "
                   f"only in B: {', '.join(cmp.only_metrics_b) or 'none'}")
    return out


def markdown(cmp) -> str:

    out = [f"# Comparison: {m(cmp.a.run_id)} vs {m(cmp.b.run_id)}", ""]
    out += [f"- {m(x)}" for x in _scope(cmp)] + ["", "## What differs", ""]
    out += [f"- {m(x)}" for x in cmp.differences] + ["", "## Per metric", "", m(INTRO), ""]
    out += [table(HEADS, [[m(c) for c in r] for r in _rows(cmp)]), ""]
    out += ["## Cells that changed status", "", STATUS_INTRO, ""]
    if cmp.changes:
        out += [table(["case", "metric", "A", "B"],
                      [[m(c.case_id), m(c.metric), m(c.label_a), m(c.label_b)] for c in cmp.changes]), ""]
    else:
        out += ["None.", ""]
    out += ["## Cells that changed outcome, and what changed with them", "", DRIFT_INTRO, ""]
    out += _drift_md(cmp.drift)
    out += ["_Built from the two run stores by `harness compare`; nothing was re-scored._", ""]
    return "\n".join(out)


def _drift_rows(drift) -> list[list[str]]:
    return [[c.case_id, c.metric, c.label_a, c.label_b, "; ".join(c.causes)] for c in drift.changes]


DRIFT_HEADS = ["case", "metric", "A", "B", "what changed with it"]


def _drift_md(drift) -> list[str]:
    if drift is None or not drift.recorded:
        return ["Not recorded: a run was written before the drift sentinel.", ""]
    if not drift.changes:
        return ["None.", ""]
    return [table(DRIFT_HEADS, [[m(x) for x in r] for r in _drift_rows(drift)]), ""]


def html(cmp) -> str:

    def tr(cells, tag="td"):
        return "<tr>" + "".join(f"<{tag}>{e(c)}</{tag}>" for c in cells) + "</tr>"

    scope = "".join(f"<li>{e(x)}</li>" for x in _scope(cmp))
    diffs = "".join(f"<li>{e(x)}</li>" for x in cmp.differences)
    metrics = (f"<table><thead>{tr(HEADS, 'th')}</thead><tbody>{''.join(tr(r) for r in _rows(cmp))}</tbody></table>")
    if cmp.changes:
        changes = (f"<table><thead>{tr(['case', 'metric', 'A', 'B'], 'th')}</thead><tbody>"
                   + "".join(tr([c.case_id, c.metric, c.label_a, c.label_b]) for c in cmp.changes)
                   + "</tbody></table>")
    else:
        changes = "<p>None.</p>"
    if cmp.drift is None or not cmp.drift.recorded:
        drift = "<p>Not recorded: a run was written before the drift sentinel.</p>"
    elif cmp.drift.changes:
        drift = (f"<table><thead>{tr(DRIFT_HEADS, 'th')}</thead><tbody>"
                 + "".join(tr(r) for r in _drift_rows(cmp.drift)) + "</tbody></table>")
    else:
        drift = "<p>None.</p>"
    title = f"Comparison: {cmp.a.run_id} vs {cmp.b.run_id}"
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>{e(title)}</title><style>{CSS}</style></head><body><main>"
            f"<h1>{e(title)}</h1><ul>{scope}</ul>"
            f'<section id="differs"><h2>What differs</h2><ul>{diffs}</ul></section>'
            f'<section id="metrics"><h2>Per metric</h2><p>{e(INTRO)}</p><div class="scroll">{metrics}</div></section>'
            f'<section id="status"><h2>Cells that changed status</h2><p>{e(STATUS_INTRO)}</p>{changes}</section>'
            f'<section id="drift"><h2>Cells that changed outcome, and what changed with them</h2>'
            f'<p>{e(DRIFT_INTRO)}</p>{drift}</section>'
            '<p class="muted small">Built from the two run stores by <code>harness compare</code>; '
            "nothing was re-scored.</p></main></body></html>\n")


def write(cmp, out_dir: str) -> tuple[str, str]:
    """Write ``compare.html`` and ``compare.md`` into ``out_dir``; return their paths."""
    os.makedirs(out_dir, exist_ok=True)
    h, md = os.path.join(out_dir, "compare.html"), os.path.join(out_dir, "compare.md")
    with open(h, "w", encoding="utf-8") as fh:
        fh.write(html(cmp))
    with open(md, "w", encoding="utf-8") as fh:
        fh.write(markdown(cmp))
    return h, md
