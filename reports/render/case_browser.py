"""The report's case browser and metric cards, laid out from :mod:`harness.reports.model.case_index`: a case table
that sorts, filters (metric and score range, spread, status, tag, divergent only) and searches, with every
case's claim-by-claim view (open for divergent cases, collapsed otherwise), paged so that a run of 1,000
cases stays usable; and each metric's card, which the metric names link to. The data goes in as JSON
(``<`` ``>`` ``&`` escaped, so no case text can close the script), the script and style are the package
files under ``static/``, inlined: the report stays one file that opens offline."""
from __future__ import annotations

import json
import os
from urllib.parse import quote

from harness.core import vocab
from harness.reports.model.case_index import PAGE
from harness.reports.render.markup import e
from harness.reports.render.plots import score_style

STATIC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "static")
TITLE = "Cases"
INTRO = ("Every case of the run. Sort by a column's heading; filter by a metric's score range, the spread "
         "between metrics, a cell status or a tag; search the ids, questions, answers and tags. The triangle "
         "opens a case's claim-by-claim view (open already for divergent cases). A cell of the score matrix "
         "links here.")
CSS = """
#cases .cb-controls{display:flex;flex-wrap:wrap;gap:8px 14px;align-items:center;margin:8px 0;font-size:.9em}
#cases .cb-controls input[type=number]{width:5em} #cases .cb-controls input[type=search]{width:18em}
#cb-table th[data-sort]{cursor:pointer;user-select:none} #cb-table th[aria-sort=ascending]::after{content:" \\25b4"}
#cb-table th[aria-sort=descending]::after{content:" \\25be"} #cb-table td{text-align:center}
#cb-table .cb-toggle{border:0;background:none;cursor:pointer;font-size:1em;padding:0 2px}
#cb-table tr.cb-target>th{background:#fff3b0} #cb-table .cb-detail>td{text-align:left;background:#fbfcfd} #cb-table .cb-detail td{text-align:left}
.matrix-box{max-height:70vh;overflow:auto} .matrix-box thead th{position:sticky;top:0;z-index:1}
.matrix a{color:inherit;text-decoration:none;display:block} .matrix a:hover{text-decoration:underline} .matrix th a{text-decoration:underline dotted}
pre.card{white-space:pre-wrap;background:#f8f9fb;border:1px solid #dfe3e8;padding:10px 14px;font-size:.84em}
"""


def case_href(case_id: str) -> str:
    """The link to a case in the case browser.

    >>> case_href("a b/<x>")
    '#c-a%20b%2F%3Cx%3E'
    """
    return "#c-" + quote(case_id, safe="")


def card_href(metric: str) -> str:
    return "#card-" + quote(metric, safe="")


def _json_for_script(obj) -> str:
    """JSON that cannot end the ``<script>`` element it sits in.

    >>> _json_for_script({"a": "</script><b>&"})
    '{"a": "\\\\u003c/script\\\\u003e\\\\u003cb\\\\u003e\\\\u0026"}'
    """
    return (json.dumps(obj, ensure_ascii=False, allow_nan=False)
            .replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026"))


def _static(name: str) -> str:
    with open(os.path.join(STATIC, name), encoding="utf-8") as fh:
        return fh.read()


def metric_head(m: dict) -> str:
    """A metric's column heading: its short name, linked to its card when it has one."""
    name = e(m["short"])
    return f'<a href="{e(card_href(m["name"]))}">{name}</a>' if m["card"] else name


def palette() -> list[str]:
    """The matrix's cell style for each score in hundredths (0.00 .. 1.00), so the case table is coloured as
    the score matrix is."""

    return [score_style(i / 100) for i in range(101)]


def section(rep) -> str:
    page = rep.cases[PAGE]   # what the controls and the note read; not part of the browser's data
    idx = {**{k: v for k, v in rep.cases.items() if k != PAGE}, "palette": palette()}

    metrics = "".join(f'<option value="{i}">{e(m["short"])}</option>' for i, m in enumerate(idx["metrics"]))
    statuses = "".join(f'<option value="{e(s)}">{e(vocab.status(s).label)}</option>' for s in page["statuses"])
    tags = "".join(f'<option value="{e(t)}">{e(t)}</option>' for t in page["tags"])
    heads = "".join(f'<th data-sort="{i}" title="{e(m["display"])}">{metric_head(m)}</th>'
                    for i, m in enumerate(idx["metrics"]))
    controls = (f'<div class="cb-controls">'
                f'<label>search <input type="search" id="cb-q" placeholder="id, question, answer, tag"></label>'
                f'<label>metric <select id="cb-metric"><option value="">any</option>{metrics}</select></label>'
                f'<label>score from <input type="number" id="cb-min" min="0" max="1" step="0.05"></label>'
                f'<label>to <input type="number" id="cb-max" min="0" max="1" step="0.05"></label>'
                f'<label>spread at least <input type="number" id="cb-spread" min="0" max="1" step="0.05"></label>'
                f'<label>status <select id="cb-status"><option value="">any</option>{statuses}</select></label>'
                f'<label>tag <select id="cb-tag"><option value="">any</option>{tags}</select></label>'
                f'<label><input type="checkbox" id="cb-divergent"> divergent only</label>'
                f'<span id="cb-count" class="muted"></span>'
                f'<button id="cb-prev">&larr; page</button><button id="cb-next">page &rarr;</button></div>')
    left = (f'<p class="small muted">This page carries {page["carried"]:,} of the run\'s {page["cases"]:,} cases '
            "(those other sections link, and the divergent ones, first); every case\'s cells are in cases.csv "
            "beside report.md, and its texts and verdicts in <code>harness export RUN --format jsonl</code>.</p>"
            ) if idx.get("left") else ""
    return (f'<section id="cases"><h2>{e(TITLE)}</h2><p>{e(INTRO)}</p>{controls}{left}'
            f'<div class="scroll"><table id="cb-table" class="matrix"><thead><tr><th data-sort="id">case</th>'
            f'<th data-sort="tags">tags</th><th data-sort="spread">spread</th>{heads}</tr></thead>'
            f'<tbody id="cb-body"></tbody></table></div></section>'
            f'<script type="application/json" id="cb-data">{_json_for_script(idx)}</script>'
            + (f"<script>{_static('case_browser_more.js')}</script>" if "more" in idx else "")
            + f"<script>{_static('case_browser.js')}</script>")


def cards(rep) -> str:
    """Each metric's card (its Markdown, as text), collapsed; a metric name elsewhere links here."""
    parts = []
    for m in rep.data.metrics:
        text = rep.cards.get(m)
        note = (getattr(rep, "card_notes", None) or {}).get(m)
        if text is not None:
            parts.append(f'<details id="card-{e(m)}"><summary>{e(rep.names[m])} <code>{e(m)}</code></summary>'
                         + (f'<p class="small"><b>{e(note)}</b></p>' if note else "")
                         + f'<pre class="card">{e(text)}</pre></details>')
    body = "".join(parts) or "<p>No metric of this run has a generated card.</p>"
    return (f'<section id="cards"><h2>Metric cards</h2><p>The generated card of each metric '
            f'(<code>harness cards</code>), as written.</p>{body}</section>')
