"""The "where they diverge" section of the HTML report, laid out from :mod:`harness.reports.model.divergence_view`."""
from __future__ import annotations

from harness.reports.model.divergence_view import ALL_IN_FULL, IN_FULL_PER_REASON, GroupView
from harness.reports.render.case_browser import case_href
from harness.reports.render.markup import e

FULL_PER_GROUP = IN_FULL_PER_REASON
"""Cases shown in full under each reason; the rest are links to their claim-by-claim view in the case
browser, so that a run with hundreds of divergent cases keeps a page one can scroll (the model builds the full
view of no more than these)."""
MANY = ALL_IN_FULL
"""Past this many divergent cases, the section shows one case in full under each of the first
:data:`FULL_WHEN_MANY` reasons and links the others (the page stays a few screens tall)."""
FULL_WHEN_MANY = 3
LINKS_PER_GROUP = 100
"""Links under each reason past the cases shown in full; the rest are counted (the case browser lists them)."""


def section(rep) -> str:
    sec = rep.sections["divergences"]
    intro, groups = sec.parts[0], [g for g in sec.parts[1:] if isinstance(g, GroupView)]
    if not groups:
        return (f'<section id="{sec.key}"><h2>{e(sec.title)}</h2><p>{e(intro)}</p>'
                f"<p>{e(sec.parts[1])}</p></section>")
    full = [FULL_PER_GROUP] * len(groups)
    if len(rep.divergences) > MANY:   # one case in full under each of the first reasons, the rest as links
        full = [1 if i < FULL_WHEN_MANY else 0 for i in range(len(groups))]
    body = "".join(f'<h3 class="reason">{e(g.reason)} <span class="muted small">({g.count} case'
                   f'{"s" if g.count != 1 else ""})</span></h3>'
                   + "".join(one_case(cv) for cv in g.cases[:k]) + more(g.cases[k:])
                   for g, k in zip(groups, full))
    return f'<section id="{sec.key}"><h2>{e(sec.title)}</h2><p>{e(intro)}</p>{body}</section>'


def more(rest) -> str:
    """The cases of a group past the first few: each a link to its view in the case browser (the old
    ``#case-N`` anchor kept on it, for links from elsewhere in the report)."""
    if not rest:
        return ""
    links = ", ".join(f'<a id="case-{cv.anchor}" href="{e(case_href(cv.case_id))}">{e(cv.case_id)}</a> '
                      f'<span class="muted">({cv.spread:.2f})</span>' for cv in rest[:LINKS_PER_GROUP])
    past = len(rest) - LINKS_PER_GROUP
    tail = (f'; and {past:,} more: under <a href="#cases">Cases</a>, tick "divergent only" and sort by spread'
            if past > 0 else "")
    return f'<p class="small">{len(rest)} more, each with its claim-by-claim view under Cases: {links}{tail}</p>'


def anchors(rep) -> dict[str, int]:
    """case id -> the number of its detail anchor (``#case-N``)."""
    return {dv.case_id: i for i, dv in enumerate(rep.divergences)}


def one_case(cv) -> str:
    case = cv.case
    scores = ", ".join(f"{e(short)} {v:.2f}" for short, v in cv.scores)
    if case is not None:
        ctx = "".join(f"<p><b>[{e(c.id)}]</b></p><blockquote>{e(c.text)}</blockquote>" for c in case.contexts)
        texts = (f"<p><b>Question:</b> {e(case.question)}</p><p><b>Answer:</b></p>"
                 f"<blockquote>{e(case.answer) or '<i>(empty)</i>'}</blockquote>"
                 f"<details><summary>Contexts ({len(case.contexts)})</summary>{ctx or '<p>none</p>'}</details>")
    else:
        texts = "<p class=\"muted\">The case text is not available (see the note at the top).</p>"
    return (f'<h4 id="case-{cv.anchor}">{e(cv.case_id)} <span class="muted small">spread {cv.spread:.2f}</span></h4>'
            f'<p class="small">Scores: {scores}</p>{texts}'
            f"{alignment_table(cv)}")


def alignment_table(cv) -> str:
    note = (f'<p class="muted small">No per-unit verdicts on this case from: {e(", ".join(cv.silent))} '
            "(not scored, or no units).</p>") if cv.silent else ""
    head = "".join(f'<th title="{e(name)}">{e(short)}</th>' for short, name in cv.shown)
    body = []
    for row in cv.rows:
        label = (f"<td>{e(row.label)}</td>" if row.label else "<td>&ndash;</td>") if cv.labelled else ""
        cells = []
        for marks in row.marks:
            if not marks:
                cells.append("<td></td>")
                continue
            cls = _cell_class({mk.verdict for mk in marks})
            inner = "<br>".join(f'<span title="{e(mk.unit_text)}{" | " + e(mk.unit_reason) if mk.unit_reason else ""}">'
                                f"{e(mk.text)}</span>" for mk in marks)
            cells.append(f'<td class="{cls} small">{inner}</td>')
        body.append(f"<tr><td class=\"small\">{e(row.kind)}</td><td>{e(row.text)}</td>"
                    f"{label}{''.join(cells)}<td class=\"small reason\">{e(row.why)}</td></tr>")
    ann = "<th>annotation</th>" if cv.labelled else ""   # no annotation: no annotation column
    return ("<div class=\"scroll\"><table class=\"align\"><thead><tr><th>row</th><th>answer text</th>"
            f"{ann}{head}<th>why they differ here</th></tr></thead><tbody>{''.join(body)}</tbody></table></div>{note}")


def _cell_class(verdicts: set[str]) -> str:
    """One colour for a cell: its verdict when all units agree, else ambiguous.

    >>> _cell_class({"supported"}), _cell_class({"supported", "unsupported"})
    ('v-supported', 'v-ambiguous')
    """
    return f"v-{next(iter(verdicts))}" if len(verdicts) == 1 else "v-ambiguous"
