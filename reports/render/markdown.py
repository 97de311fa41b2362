"""The report as Markdown for a pull request: the same sections as the HTML, plots as linked PNGs. Like the
HTML page it stays the same size whatever the run: past :data:`MATRIX_ROWS` cases the score matrix shows the
first ones and every case's cells go to ``cases.csv`` beside it (:func:`cases_csv`), the divergence section shows
a few cases in full under each reason and lists a bounded number of others, and long lists are counted."""
from __future__ import annotations

import csv
import io

from harness.reports.model import sections as S
from harness.reports.model.blocks import Notes, Table
from harness.reports.model.divergence_view import IN_FULL_PER_REASON, CaseView, GroupView
from harness.reports.render import blocks
from harness.reports.render import decision as decision_render
from harness.reports.render.markup import m, table  # noqa: F401 - re-exported for the cards and renderers

MATRIX_ROWS = 200
"""Cases the score matrix lists; past them it names ``cases.csv`` (every case's cells), which the build writes
beside the report (:data:`CASES_CSV`)."""
CASES_CSV = "cases.csv"
FULL_PER_GROUP = IN_FULL_PER_REASON
"""Past :data:`harness.reports.model.divergence_view.ALL_IN_FULL` divergent cases (up to it, each is shown in
full), the cases shown in full under each reason; the next :data:`IDS_PER_GROUP` are listed by id and spread, the
rest counted."""
IDS_PER_GROUP = 100
NOTES = 60
"""Note lines under the per-metric table; past them the rest are counted per metric (as in the HTML)."""
NOTE_IDS = 100
"""Case ids on one note line; past them the line gives the count."""


def render(rep, images: dict[str, str] | None = None) -> str:

    d, im = rep.data, images or {}
    jl, jmeaning, main = rep.header.judge, rep.header.meaning, rep.header.versions

    calls, pt, ct = rep.totals
    out = [f"# Groundedness report: run {m(d.run_id)}", "", f"**{m(jl)}**. {m(jmeaning)}", "",
           f"Cases: {len(d.case_ids)} · metrics: {len(d.metrics)} · judge calls: {calls:,} · "
           f"tokens billed: {pt + ct:,} · divergent cases: {len(rep.divergences)}", "",
           m(rep.header.traffic), "",
           "Vendor versions: " + ", ".join(f"{m(p)} {m(v)}" for p, v in main), ""]
    if d.case_note:
        out += [f"_{m(d.case_note)}_", ""]

    out += decision_render.markdown(rep) + decision_render.glance_markdown(rep)

    out += _matrix(rep, im) + _divergences(rep) + _metrics(rep) + _cost(rep, im) + _evidence(rep)
    for b in rep.extra:
        out += blocks.markdown(b)
    out += ["_Built from the run store by `harness report`; nothing was re-scored._", ""]
    return "\n".join(out)


def _matrix(rep, im) -> list[str]:

    d = rep.data
    rows = [[m(cid)] + [_cell(rep.cells[(cid, x)]) for x in d.metrics] for cid in d.case_ids[:MATRIX_ROWS]]
    out = [f"## {S.TITLES['matrix']}", "", S.INTRO["matrix"], ""]
    out += ["Legend: " + "; ".join(f"`{lab}` {mean}" for lab, mean, _ in rep.legend), ""]
    out += [table(["case"] + [m(rep.shorts[x]) for x in d.metrics], rows), ""]
    if len(d.case_ids) > MATRIX_ROWS:
        out += [f"The first {MATRIX_ROWS:,} of {len(d.case_ids):,} cases, in run order; every case's cells, with "
                f"its spread and divergence reason, are in [{CASES_CSV}]({CASES_CSV}) beside this report.", ""]
    return out


def _cell(cell) -> str:
    return m(cell.label) if cell.status == "scored" else f"_{m(cell.label)}_"


def _divergences(rep) -> list[str]:

    sec = rep.sections["divergences"]
    out = [f"## {sec.title}", "", sec.parts[0], ""]
    if not isinstance(sec.parts[1], GroupView):
        return out + [sec.parts[1], ""]
    for g in sec.parts[1:]:
        out += [f"### {m(g.reason)} ({g.count} case{'s' if g.count != 1 else ''})", ""]
        full = [cv for cv in g.cases if isinstance(cv, CaseView)]   # the model gave these their full view
        out += _cases(full)
        rest = g.cases[len(full):]
        if rest:
            ids = ", ".join(f"{m(cv.case_id)} ({cv.spread:.2f})" for cv in rest[:IDS_PER_GROUP])
            past = len(rest) - IDS_PER_GROUP
            out += [f"{len(rest):,} more: {ids}" + (f"; and {past:,} more (every case's reason: {CASES_CSV})"
                                                     if past > 0 else ""), ""]
    return out


def _cases(cases) -> list[str]:
    out = []
    for cv in cases:
        out += [f"#### {m(cv.case_id)} (spread {cv.spread:.2f}: {m(cv.low[0])} {cv.low[1]:.2f}, "
                f"{m(cv.high[0])} {cv.high[1]:.2f})", ""]
        if cv.case is not None:
            out += [f"**Question:** {m(cv.case.question)}", "", f"**Answer:** {m(cv.case.answer) or '_(empty)_'}", ""]
        ann = ["annotation"] if cv.labelled else []   # no annotation: no annotation column
        heads = ["row", "answer text"] + ann + [m(short) for short, _ in cv.shown] + ["why they differ here"]
        rows = [[m(row.kind), m(row.text)] + ([m(row.label or "-")] if cv.labelled else [])
                + ["<br>".join(m(mk.text) for mk in marks) for marks in row.marks] + [m(row.why)]
                for row in cv.rows]
        out += [table(heads, rows), ""]
    return out


def _metrics(rep) -> list[str]:
    sec = rep.sections["metrics"]
    t, notes_part = sec.part(Table), sec.part(Notes)
    notes = [f"- **{m(n.short)}** · {m(n.text)}" + (f" [{m(_ids(n.ids))}]" if n.ids else "")
             for n in notes_part.lines[:NOTES]]
    if len(notes_part.lines) > NOTES:
        left: dict[str, int] = {}
        for n in notes_part.lines[NOTES:]:
            left[n.short] = left.get(n.short, 0) + 1
        notes.append(f"- {len(notes_part.lines) - NOTES:,} more lines ("
                     + ", ".join(f"{m(k)}: {v:,}" for k, v in left.items()) + f"); every cell's status: {CASES_CSV}")
    return [f"## {sec.title}", "", sec.parts[0], "", table(t.heads, [[m(v or "-") for v in r] for r in t.rows]), "",
            f"{notes_part.title}:", ""] + (notes or ["- none"]) + [""]


def _ids(ids) -> str:
    """A note's case ids: all of them up to :data:`NOTE_IDS`, else the first ones and the count.

    >>> _ids(["a", "b"]), _ids([str(i) for i in range(NOTE_IDS + 3)])[-17:]
    ('a, b', '98, 99 and 3 more')
    """
    if len(ids) <= NOTE_IDS:
        return ", ".join(ids)
    return ", ".join(ids[:NOTE_IDS]) + f" and {len(ids) - NOTE_IDS:,} more"


def cases_csv(rep) -> str | None:
    """Every case's cells as CSV (case, spread, divergence reason, then each metric's cell as the matrix reads
    it), for a run whose score matrix lists only the first :data:`MATRIX_ROWS` cases; None for a smaller run.

    The file goes beside ``report.md``, which names it."""
    d = rep.data
    if len(d.case_ids) <= MATRIX_ROWS:
        return None
    reasons = {dv.case_id: dv for dv in rep.divergences}
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["case", "divergence spread", "divergence reason"] + list(d.metrics))
    for cid in d.case_ids:
        dv = reasons.get(cid)
        w.writerow([cid, f"{dv.spread:.4f}" if dv else "", (getattr(dv, "summary", "") or dv.reason) if dv else ""]
                   + [_csv_cell(rep.cells[(cid, x)]) for x in d.metrics])
    return buf.getvalue()


def _csv_cell(cell) -> str:
    return cell.label if cell.status == "scored" else f"{cell.label} ({cell.status})"


def _cost(rep, im) -> list[str]:
    sec = rep.sections["cost"]
    t = sec.part(Table)
    out = [f"## {sec.title}", "", sec.parts[0], ""]
    if im.get("cost"):
        out += [f"![judge calls, tokens and latency per answer]({im['cost']})", ""]
    return out + [table(t.heads, [[m(v) for v in r] for r in t.rows]), ""]


def _evidence(rep) -> list[str]:
    sec = rep.sections["evidence"]
    t = sec.part(Table)
    out = [f"## {sec.title}", "", sec.parts[0], ""]
    if t is None:
        return out + [sec.parts[1], ""]
    rows = [[m(v) for v in r[:-1]] + ["; ".join(m(q) for q in r[-1]) or "none"] for r in t.rows]
    return out + [table(t.heads, rows), ""]
