"""The report as Markdown for a pull request: the same sections as the HTML, plots as linked PNGs."""
from __future__ import annotations

from harness.reports.model import sections as S
from harness.reports.model.blocks import Notes, Table
from harness.reports.model.divergence_view import GroupView
from harness.reports.render import blocks
from harness.reports.render import decision as decision_render
from harness.reports.render.markup import m, table  # noqa: F401 - re-exported for the cards and renderers


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
    rows = [[m(cid)] + [_cell(rep.cells[(cid, x)]) for x in d.metrics] for cid in d.case_ids]
    out = [f"## {S.TITLES['matrix']}", "", S.INTRO["matrix"], ""]
    out += ["Legend: " + "; ".join(f"`{lab}` {mean}" for lab, mean, _ in rep.legend), ""]
    return out + [table(["case"] + [m(rep.shorts[x]) for x in d.metrics], rows), ""]


def _cell(cell) -> str:
    return m(cell.label) if cell.status == "scored" else f"_{m(cell.label)}_"


def _divergences(rep) -> list[str]:

    sec = rep.sections["divergences"]
    out = [f"## {sec.title}", "", sec.parts[0], ""]
    if not isinstance(sec.parts[1], GroupView):
        return out + [sec.parts[1], ""]
    for g in sec.parts[1:]:
        out += [f"### {m(g.reason)} ({g.count} case{'s' if g.count != 1 else ''})", ""]
        out += _cases(g.cases)
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
    notes = [f"- **{m(n.short)}** · {m(n.text)}" + (f" [{m(', '.join(n.ids))}]" if n.ids else "")
             for n in notes_part.lines]
    return [f"## {sec.title}", "", sec.parts[0], "", table(t.heads, [[m(v or "-") for v in r] for r in t.rows]), "",
            f"{notes_part.title}:", ""] + (notes or ["- none"]) + [""]


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
