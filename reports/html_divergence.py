"""The "where they diverge" section of the HTML report."""
from __future__ import annotations

from reports import sections as S
from reports.markup import e


def section(rep) -> str:
    intro = S.INTRO["divergences"].format(threshold=rep.threshold)
    if not rep.divergences:
        return (f'<section id="divergences"><h2>{e(S.TITLES["divergences"])}</h2><p>{e(intro)}</p>'
                "<p>None at this threshold.</p></section>")
    from reports.decision import groups

    at = anchors(rep)
    body = "".join(f'<h3 class="reason">{e(g.reason)} <span class="muted small">({g.count} case'
                   f'{"s" if g.count != 1 else ""})</span></h3>'
                   + "".join(one_case(rep, at[dv.case_id], dv) for dv in g.divergences)
                   for g in groups(rep.divergences))
    return (f'<section id="divergences"><h2>{e(S.TITLES["divergences"])}</h2><p>{e(intro)}</p>'
            f"{body}</section>")


def anchors(rep) -> dict[str, int]:
    """case id -> the number of its detail anchor (``#case-N``)."""
    return {dv.case_id: i for i, dv in enumerate(rep.divergences)}


def one_case(rep, i: int, dv) -> str:
    d = rep.data
    case = d.cases.get(dv.case_id)
    scores = ", ".join(f"{e(rep.shorts[m])} {v:.2f}" for m, v in dv.scores.items())
    if case is not None:
        ctx = "".join(f"<p><b>[{e(c.id)}]</b></p><blockquote>{e(c.text)}</blockquote>" for c in case.contexts)
        texts = (f"<p><b>Question:</b> {e(case.question)}</p><p><b>Answer:</b></p>"
                 f"<blockquote>{e(case.answer) or '<i>(empty)</i>'}</blockquote>"
                 f"<details><summary>Contexts ({len(case.contexts)})</summary>{ctx or '<p>none</p>'}</details>")
    else:
        texts = "<p class=\"muted\">The case text is not available (see the note at the top).</p>"
    return (f'<h4 id="case-{i}">{e(dv.case_id)} <span class="muted small">spread {dv.spread:.2f}</span></h4>'
            f'<p class="small">Scores: {scores}</p>{texts}'
            f"{alignment_table(rep, dv)}")


def alignment_table(rep, dv) -> str:
    metrics = [m for m in rep.data.metrics if any(r.marks.get(m) for r in dv.rows)]
    silent = [rep.shorts[m] for m in rep.data.metrics if m not in metrics]
    note = (f'<p class="muted small">No per-unit verdicts on this case from: {e(", ".join(silent))} '
            "(not scored, or no units).</p>") if silent else ""
    head = "".join(f'<th title="{e(rep.names[m])}">{e(rep.shorts[m])}</th>' for m in metrics)
    body = []
    for k, row in enumerate(dv.rows):
        label = e(row.label) if row.label else "&ndash;"
        cells = []
        for m in metrics:
            marks = row.marks.get(m, [])
            if not marks:
                cells.append("<td></td>")
                continue
            cls = _cell_class({mk.unit.verdict for mk in marks})
            inner = "<br>".join(f'<span title="{e(mk.unit.text)}{" | " + e(mk.unit.reason) if mk.unit.reason else ""}">'
                                f"{e(S.mark_text(mk))}</span>" for mk in marks)
            cells.append(f'<td class="{cls} small">{inner}</td>')
        why = dv.row_reasons.get(k)
        body.append(f"<tr><td class=\"small\">{e(S.ROW_KIND.get(row.kind, row.kind))}</td><td>{e(row.text)}</td>"
                    f"<td>{label}</td>{''.join(cells)}<td class=\"small reason\">{e(why or '')}</td></tr>")
    return ("<div class=\"scroll\"><table class=\"align\"><thead><tr><th>row</th><th>answer text</th><th>annotation</th>"
            f"{head}<th>why they differ here</th></tr></thead><tbody>{''.join(body)}</tbody></table></div>{note}")


def _cell_class(verdicts: set[str]) -> str:
    """One colour for a cell: its verdict when all units agree, else ambiguous.

    >>> _cell_class({"supported"}), _cell_class({"supported", "unsupported"})
    ('v-supported', 'v-ambiguous')
    """
    return f"v-{next(iter(verdicts))}" if len(verdicts) == 1 else "v-ambiguous"
