"""The report as one self-contained HTML page: inline CSS, plots as base64 PNG, no external resource; the
only script is the case browser's (:mod:`harness.reports.render.case_browser`), inlined, which reads the cases as
JSON and writes their text as text. Every piece of run or case text goes through :func:`e` (HTML-escaped,
quotes included)."""
from __future__ import annotations

from harness.reports.model import sections as S
from harness.reports.model.blocks import Notes, Table
from harness.reports.render import blocks, case_browser, html_divergence, plots
from harness.reports.render import decision as decision_render
from harness.reports.render.decision import glance_html
from harness.reports.render.html_divergence import anchors
from harness.reports.render.markup import e
from harness.reports.render.plots import data_uri, score_style

CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif;margin:0;color:#1d2733;background:#f6f7f9;line-height:1.45}
main{max-width:1320px;margin:0 auto;padding:18px 28px 60px;background:#fff}
h1{font-size:1.55em;margin:.2em 0 .1em} h2{font-size:1.25em;margin-top:2em;border-bottom:2px solid #dfe3e8;padding-bottom:.2em}
h3{font-size:1.05em;margin:1.6em 0 .4em} .muted{color:#5b6673} .small{font-size:.86em}
.judge{background:#eef5ff;border-left:5px solid #3b7dbf;padding:10px 14px;margin:12px 0;border-radius:4px}
.judge b{font-size:1.08em} .facts{display:flex;flex-wrap:wrap;gap:10px;margin:10px 0}
.fact{background:#f3f5f7;border-radius:6px;padding:6px 12px;min-width:90px} .fact .v{font-size:1.3em;font-weight:600;display:block}
nav a{margin-right:14px} table{border-collapse:collapse;margin:8px 0;font-size:.9em}
th,td{border:1px solid #dfe3e8;padding:4px 8px;text-align:left;vertical-align:top} th{background:#f3f5f7}
td.num{text-align:right;font-variant-numeric:tabular-nums} .matrix td{text-align:center;min-width:64px}
.s-unscored{background:repeating-linear-gradient(45deg,#e4e4e4 0 5px,#f4f4f4 5px 10px);font-style:italic}
.s-vendor_nan{background:repeating-linear-gradient(-45deg,#f2c6f0 0 5px,#fbe8fa 5px 10px);font-style:italic}
.s-error{background:#ff6b6b;color:#fff;font-weight:600} .s-not_applicable{background:#fff;color:#777;font-style:italic;border-style:dotted}
.s-missing{background:#fff;color:#aaa} .v-supported{background:#e3f4e6} .v-unsupported{background:#fde2e0}
.v-ambiguous{background:#fff3cd} .v-excluded{background:#eeeeee;color:#666}
.glance li{margin:4px 0} blockquote{margin:6px 0;padding:6px 12px;background:#f8f9fb;border-left:3px solid #c9d1da;white-space:pre-wrap}
.reason{font-weight:600;color:#7a3e00} img{max-width:100%;height:auto} details{margin:4px 0} code{background:#f1f3f5;padding:0 3px}
.scroll{overflow-x:auto} figure svg{max-width:100%;height:auto} .align{font-size:.82em;width:100%} .align th,.align td{padding:3px 5px}
.align td:nth-child(2){width:17em} .align td:last-child{width:14em}
.legend span.k{display:inline-block;min-width:60px;text-align:center;border:1px solid #ccc;margin-right:6px;padding:0 4px}
"""


MATRIX_ROWS = 200
"""Cases the score matrix shows (in a box that scrolls); past them it says how many more there are and links the
case browser, which pages every case: the report stays one size whatever the run."""
NOTE_IDS = 20
"""Case ids listed on one note line under the per-metric table; past them the line gives the count."""
NOTES = 60
"""Note lines under the per-metric table; past them the rest are counted per metric."""
DASH = "\u2013"
"""What a cell the model leaves empty shows (a metric with no interval)."""


def cell_td(cell, href: str | None = None) -> str:
    label = f'<a href="{e(href)}">{e(cell.label)}</a>' if href else e(cell.label)
    if cell.status == "scored":
        return f'<td style="{score_style(cell.score)}" title="{e(", ".join(cell.flags))}">{label}</td>'
    return f'<td class="s-{e(cell.status)}" title="{e(cell.reason)}">{label}</td>'


def render(rep, cost_png: bytes | None = None) -> str:
    """The page for the report model ``rep`` (:class:`harness.reports.model.report.Report`); ``cost_png``: the cost
    chart already drawn (:func:`harness.reports.render.plots.cost_chart`), else drawn here."""

    d = rep.data

    long = [html_divergence.section(rep), metrics(rep)]
    rest = [blocks.html(b) for b in rep.extra]
    if len(d.case_ids) > MATRIX_ROWS:   # a large run: the long sections open on a click (the page stays short)
        long, rest = [fold(x) for x in long], [fold(x) for x in rest]
    parts = ([header(rep), decision_render.html(rep), glance(rep), matrix(rep), case_browser.section(rep)] + long
             + [cost(rep, cost_png), evidence(rep)] + rest)
    parts.append(case_browser.cards(rep))
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
            f"<title>Groundedness report: {e(d.run_id)}</title><style>{CSS}{case_browser.CSS}</style></head>"
            f"<body><main>{''.join(parts)}<p class=\"muted small\">Built from the run store by "
            "<code>harness report</code>; nothing was re-scored.</p></main></body></html>\n")


def fold(section: str) -> str:
    """A section's body (all after its heading) in a closed ``<details>``: its heading stays in the page and in
    the navigation, its body opens on a click.

    >>> fold('<section id="k"><h2>T</h2><p>x</p></section>')
    '<section id="k"><h2>T</h2><details class="fold"><summary>Show this section (a large run)</summary><p>x</p></details></section>'
    """
    head, sep, body = section.partition("</h2>")
    if not sep or not body.endswith("</section>"):
        return section
    return (f'{head}</h2><details class="fold"><summary>Show this section (a large run)</summary>'
            f'{body[:-len("</section>")]}</details></section>')


def header(rep) -> str:

    d, h = rep.data, rep.header
    jl, jmeaning, main, rest = h.judge, h.meaning, h.versions, h.other_versions

    calls, pt, ct = rep.totals
    facts = [("cases", len(d.case_ids)), ("metrics", len(d.metrics)), ("judge calls", f"{calls:,}"),
             ("tokens billed", f"{pt + ct:,}"), ("money", h.money), ("divergent cases", len(rep.divergences))]
    fh = "".join(f'<div class="fact"><span class="v">{e(v)}</span>{e(k)}</div>' for k, v in facts)
    fh += f'<p class="small muted">{e(h.traffic)}</p>'
    vers = ", ".join(f"{e(p)} {e(v)}" for p, v in main)
    other = ", ".join(f"{e(p)} {e(v)}" for p, v in rest)
    cases = d.spec.get("cases") or {}
    note = f'<p class="muted small">{e(d.case_note)}</p>' if d.case_note else ""
    nav = "".join(f'<a href="#{k}">{e(t)}</a>' for k, t in S.TITLES.items())
    nav += "".join(f'<a href="#{e(b.key)}">{e(b.title)}</a>' for b in getattr(rep, "extra", []))
    nav += '<a href="#cases">Cases</a><a href="#cards">Metric cards</a>'
    return (f"<header><h1>Groundedness report: run {e(d.run_id)}</h1>"
            f'<div class="judge"><b>{e(jl)}</b><br>{e(jmeaning)}</div><div class="facts">{fh}</div>'
            f'<p class="small"><b>Vendor versions:</b> {vers}</p>'
            f'<details class="small"><summary>Everything else the run recorded</summary>'
            f"<p>Other packages: {other}</p><p>Case file: <code>{e(cases.get('path'))}</code> "
            f"(sha256 {e(str(cases.get('sha256', ''))[:16])}), git {e(d.spec.get('git'))}, "
            f"python {e(d.spec.get('python'))}, created {e(d.spec.get('created'))}, "
            f"metrics: {e(', '.join(f'{m} v{d.info[m].version}' for m in d.metrics))}</p></details>"
            f"{note}<nav class=\"small\">{nav}</nav></header>")


def glance(rep) -> str:

    return glance_html(rep, anchors(rep))


def matrix(rep) -> str:

    d = rep.data
    leg = "".join(f'<li><span class="k {"s-" + st if st != "scored" else ""}">{e(lab)}</span>{e(mean)}</li>'
                  for lab, mean, st in rep.legend)
    head = "".join(f'<th title="{e(d.info[m].display_name)}">'
                   + (f'<a href="{e(case_browser.card_href(m))}">{e(rep.shorts[m])}</a>' if m in rep.cards
                      else e(rep.shorts[m])) + "</th>" for m in d.metrics)
    shown = d.case_ids[:MATRIX_ROWS]
    rows = "".join(f"<tr><th>{e(cid)}</th>"
                   f"{''.join(cell_td(rep.cells[(cid, m)], case_browser.case_href(cid)) for m in d.metrics)}</tr>"
                   for cid in shown)
    rest = len(d.case_ids) - len(shown)
    more = (f'<p class="small">The first {len(shown):,} of {len(d.case_ids):,} cases, in run order; every case, '
            f'with the same cells, sorting and filters, is under <a href="#cases">Cases</a>.</p>') if rest else ""
    return (f'<section id="matrix"><h2>{e(S.TITLES["matrix"])}</h2><p>{e(S.INTRO["matrix"])}</p>'
            f'<ul class="legend small">{leg}</ul>'
            f'<div class="matrix-box"><table class="matrix"><thead><tr><th>case</th>{head}</tr></thead>'
            f'<tbody>{rows}</tbody></table></div>{more}'
            "</section>")


def metrics(rep) -> str:
    sec = rep.sections["metrics"]
    intro, table, notes_part = sec.parts[0], sec.part(Table), sec.part(Notes)
    lines = notes_part.lines
    heads = "".join(f"<th>{e(h)}</th>" for h in table.heads)
    rows = "".join(f"<tr><th>{e(r[0])}<br><code class=\"small\">{e(s.metric)}</code></th>"
                   + "".join(f'<td class="num">{e(v or DASH)}</td>' for v in r[1:]) + "</tr>"
                   for r, s in zip(table.rows, rep.summaries))
    notes = "".join(f"<li><b>{e(n.short)}</b> &middot; {e(n.text)}"
                    + (f" <span class=\"muted\">[{e(ids_text(n.ids))}]</span>" if n.ids else "") + "</li>"
                    for n in lines[:NOTES])
    if len(lines) > NOTES:
        left: dict[str, int] = {}
        for n in lines[NOTES:]:
            left[n.short] = left.get(n.short, 0) + 1
        notes += ("<li class=\"muted\">" + e(f"{len(lines) - NOTES:,} more lines (" + ", ".join(
            f"{k}: {v:,}" for k, v in left.items()) + "); the Cases section filters by status and metric") + "</li>")
    return (f'<section id="{sec.key}"><h2>{e(sec.title)}</h2><p>{e(intro)}</p>'
            f"<table><thead><tr>{heads}</tr></thead><tbody>{rows}</tbody></table>"
            f"<h3>{e(notes_part.title)}</h3><ul class=\"small\">{notes or '<li>none</li>'}</ul>"
            "</section>")


def ids_text(ids) -> str:
    """The case ids of a note: all of them up to :data:`NOTE_IDS`, else the first ones and the count.

    >>> ids_text(["a", "b"]), ids_text([str(i) for i in range(25)])[-21:]
    ('a, b', '17, 18, 19 and 5 more')
    """
    if len(ids) <= NOTE_IDS:
        return ", ".join(ids)
    return ", ".join(ids[:NOTE_IDS]) + f" and {len(ids) - NOTE_IDS:,} more"


def cost(rep, png: bytes | None = None) -> str:
    sec = rep.sections["cost"]
    table = sec.part(Table)
    png = png if png is not None else plots.cost_chart(rep.costs, rep.shorts)
    heads = "".join(f"<th>{e(h)}</th>" for h in table.heads)
    rows = "".join(f"<tr><th>{e(r[0])}</th>" + "".join(f'<td class="num">{e(v)}</td>' for v in r[1:]) + "</tr>"
                   for r in table.rows)
    return (f'<section id="{sec.key}"><h2>{e(sec.title)}</h2><p>{e(sec.parts[0])}</p>'
            f'<img alt="judge calls, tokens and latency per answer, by metric" src="{data_uri(png)}">'
            f"<table><thead><tr>{heads}</tr></thead><tbody>{rows}</tbody></table></section>")


def evidence(rep) -> str:
    sec = rep.sections["evidence"]
    table = sec.part(Table)
    if table is None:
        body = f"<p>{e(sec.parts[1])}</p>"
    else:
        rows = "".join(f"<tr><th>{e(r[0])}</th>" + "".join(f'<td class="num">{e(v)}</td>' for v in r[1:-1])
                       + f'<td class="small">{"<br>".join(e(q) for q in r[-1]) or "none"}</td></tr>'
                       for r in table.rows)
        heads = "".join(f"<th>{e(h)}</th>" for h in table.heads)
        body = f"<table><thead><tr>{heads}</tr></thead><tbody>{rows}</tbody></table>"
    return f'<section id="{sec.key}"><h2>{e(sec.title)}</h2><p>{e(sec.parts[0])}</p>{body}</section>'

