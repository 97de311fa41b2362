"""The compare page as self-contained HTML and as Markdown, laid out from one
:class:`harness.reports.model.compare_page.Page`."""
from __future__ import annotations

import os

from harness.reports.model.compare_page import DRIFT_HEADS, DRIFT_INTRO, HEADS, INTRO, STATUS_INTRO, Page
from harness.reports.render.html import CSS, e
from harness.reports.render.markdown import m, table


def markdown(p: Page) -> str:

    out = [f"# Comparison: {m(p.run_a)} vs {m(p.run_b)}", ""]
    out += [f"- {m(x)}" for x in p.scope] + ["", "## What differs", ""]
    out += [f"- {m(x)}" for x in p.differences] + ["", "## Per metric", "", m(INTRO), ""]
    out += [table(HEADS, [[m(c) for c in r] for r in p.rows]), ""]
    out += ["## Cells that changed status", "", STATUS_INTRO, ""]
    if p.changes:
        out += [table(["case", "metric", "A", "B"], [[m(c) for c in r] for r in p.changes]), ""]
    else:
        out += ["None.", ""]
    out += ["## Cells that changed outcome, and what changed with them", "", DRIFT_INTRO, ""]
    out += _drift_md(p)
    out += ["_Built from the two run stores by `harness compare`; nothing was re-scored._", ""]
    return "\n".join(out)


def _drift_md(p: Page) -> list[str]:
    if not p.drift_recorded:
        return ["Not recorded: a run was written before the drift sentinel.", ""]
    if not p.drift_rows:
        return ["None.", ""]
    return [table(DRIFT_HEADS, [[m(x) for x in r] for r in p.drift_rows]), ""]


def html(p: Page) -> str:

    def tr(cells, tag="td"):
        return "<tr>" + "".join(f"<{tag}>{e(c)}</{tag}>" for c in cells) + "</tr>"

    scope = "".join(f"<li>{e(x)}</li>" for x in p.scope)
    diffs = "".join(f"<li>{e(x)}</li>" for x in p.differences)
    metrics = (f"<table><thead>{tr(HEADS, 'th')}</thead><tbody>{''.join(tr(r) for r in p.rows)}</tbody></table>")
    if p.changes:
        changes = (f"<table><thead>{tr(['case', 'metric', 'A', 'B'], 'th')}</thead><tbody>"
                   + "".join(tr(r) for r in p.changes) + "</tbody></table>")
    else:
        changes = "<p>None.</p>"
    if not p.drift_recorded:
        drift = "<p>Not recorded: a run was written before the drift sentinel.</p>"
    elif p.drift_rows:
        drift = (f"<table><thead>{tr(DRIFT_HEADS, 'th')}</thead><tbody>"
                 + "".join(tr(r) for r in p.drift_rows) + "</tbody></table>")
    else:
        drift = "<p>None.</p>"
    title = f"Comparison: {p.run_a} vs {p.run_b}"
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


def write(p: Page, out_dir: str) -> tuple[str, str]:
    """Write ``compare.html`` and ``compare.md`` of the page ``p`` (:func:`harness.reports.model.compare_page.page`)
    into ``out_dir``; return their paths."""
    os.makedirs(out_dir, exist_ok=True)
    h, md = os.path.join(out_dir, "compare.html"), os.path.join(out_dir, "compare.md")
    with open(h, "w", encoding="utf-8") as fh:
        fh.write(html(p))
    with open(md, "w", encoding="utf-8") as fh:
        fh.write(markdown(p))
    return h, md
