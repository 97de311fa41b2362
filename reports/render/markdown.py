"""The report as Markdown for a pull request: the same sections as the HTML, plots as linked PNGs."""
from __future__ import annotations

from harness.reports.analysis.cost import traffic_line
from harness.reports.analysis.matrix import legend
from harness.reports.analysis.stats import RESAMPLES
from harness.reports.model import sections as S
from harness.reports.model.divergence_view import divergence_section
from harness.reports.model.header import judge_lines, versions
from harness.reports.render import blocks
from harness.reports.render import decision as decision_render
from harness.reports.render.markup import m, table  # noqa: F401 - re-exported for the cards and renderers


def render(rep, images: dict[str, str] | None = None) -> str:

    d, im = rep.data, images or {}
    jl, jmeaning = judge_lines(d.spec)
    main, _ = versions(d.spec)

    calls, pt, ct = rep.totals
    out = [f"# Groundedness report: run {m(d.run_id)}", "", f"**{m(jl)}**. {m(jmeaning)}", "",
           f"Cases: {len(d.case_ids)} · metrics: {len(d.metrics)} · judge calls: {calls:,} · "
           f"tokens billed: {pt + ct:,} · divergent cases: {len(rep.divergences)}", "",
           m(traffic_line(rep.totals)), "",
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
    out += ["Legend: " + "; ".join(f"`{lab}` {mean}" for lab, mean, _ in legend()), ""]
    return out + [table(["case"] + [m(rep.shorts[x]) for x in d.metrics], rows), ""]


def _cell(cell) -> str:
    return m(cell.label) if cell.status == "scored" else f"_{m(cell.label)}_"


def _divergences(rep) -> list[str]:

    sec = divergence_section(rep)
    out = [f"## {sec.title}", "", sec.intro, ""]
    if not sec.groups:
        return out + [sec.empty, ""]
    for g in sec.groups:
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
    sec = S.metrics_section(rep, RESAMPLES, dash="-")
    notes = [f"- **{m(n.short)}** · {m(n.text)}" + (f" [{m(', '.join(n.ids))}]" if n.ids else "") for n in sec.notes]
    return [f"## {sec.title}", "", sec.intro, "", table(sec.heads, [[m(v) for v in r] for r in sec.rows]), "",
            f"{sec.notes_title}:", ""] + (notes or ["- none"]) + [""]


def _cost(rep, im) -> list[str]:
    sec = S.cost_section(rep)
    out = [f"## {sec.title}", "", sec.intro, ""]
    if im.get("cost"):
        out += [f"![judge calls, tokens and latency per answer]({im['cost']})", ""]
    return out + [table(sec.heads, [[m(v) for v in r] for r in sec.rows]), ""]


def _evidence(rep) -> list[str]:
    sec = S.evidence_section(rep)
    out = [f"## {sec.title}", "", sec.intro, ""]
    if not sec.rows:
        return out + [sec.empty, ""]
    rows = [[m(v) for v in r[:-1]] + ["; ".join(m(q) for q in r[-1]) or "none"] for r in sec.rows]
    return out + [table(sec.heads, rows), ""]
