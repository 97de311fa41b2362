"""The report's lead, in HTML and Markdown: "which metric for which need", then the divergences grouped
by reason with their counts (each reason once)."""
from __future__ import annotations

from reports.model.decision import agreement, groups, needs, sources
from reports.model.sections import TITLES
from reports.render.markup import e, m, table

TITLE = "Which metric for which need"
INTRO = ("Each need is a set of requirements over the metric cards' behaviour facts (one canonical case "
         "per fact, see reports/model/behaviours.py and reports/model/decision.py), so the table changes when a "
         "metric's behaviour or cost does.")
GLANCE_INTRO = ("Divergent cases grouped by the kind and mechanism of their reason, derived from the metrics' unit "
                "verdicts (reports/model/reasons.py), largest group first.")


def html(rep) -> str:

    rows = "".join(
        f"<tr><th>{e(n.need)}</th><td><b>{e(', '.join(rep.shorts[m] for m in n.recommended) or 'none of these')}</b></td>"
        f"<td class=\"small\">{e(n.why)}</td>" + (f"<td class=\"num\">{e(n.agreement)}</td>" if _agree(rep) else "")
        + "</tr>" for n in needs(rep))
    head = "<th>need</th><th>use</th><th>because it</th>" + ("<th>agreement with labels (balanced accuracy)</th>" if _agree(rep) else "")
    return (f'<section id="decision"><h2>{e(TITLE)}</h2><p>{e(INTRO)} {e(sources(rep))}{e(_note(rep))}</p>'
            f"<table><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table></section>")


def markdown(rep) -> list[str]:

    heads = ["need", "use", "because it"] + (["agreement with labels (balanced accuracy)"] if _agree(rep) else [])
    rows = [[m(n.need), "**" + m(", ".join(rep.shorts[x] for x in n.recommended) or "none of these") + "**", m(n.why)]
            + ([m(n.agreement)] if _agree(rep) else []) for n in needs(rep)]
    return [f"## {TITLE}", "", f"{m(INTRO)} {m(sources(rep))}{m(_note(rep))}", "", table(heads, rows), ""]


CEILING = ("Under the reference judge, agreement is each definition's ceiling (a judge that reads the labels "
           "perfectly); under a real judge it is the judge-and-definition agreement.")


def _note(rep) -> str:
    """The agreement caveat, when the table shows agreement."""
    return f" {CEILING}" if _agree(rep) and rep.data.is_reference else ""


def _agree(rep) -> bool:

    return bool(agreement(rep))


def glance_html(rep, anchors: dict[str, int]) -> str:
    """Divergences grouped by reason; ``anchors`` maps a case id to its detail anchor."""

    if not rep.divergences:
        body = f"<p>No case has scored metrics {rep.threshold:.2f} or more apart.</p>"
    else:
        rows = "".join(
            f'<tr><td class="num">{g.count}</td><td class="reason">{e(g.reason)}</td><td>'
            + ", ".join(f'<a href="#case-{anchors[dv.case_id]}">{e(dv.case_id)}</a> '
                        f'<span class="muted small">{dv.spread:.2f}</span>' for dv in g.divergences)
            + "</td></tr>" for g in groups(rep.divergences))
        body = (f"<p>{e(GLANCE_INTRO)}</p><table><thead><tr><th>cases</th><th>reason</th>"
                f"<th>divergent cases (spread)</th></tr></thead><tbody>{rows}</tbody></table>")
    return f'<section id="glance"><h2>{e(TITLES["glance"])}</h2>{body}</section>'


def glance_markdown(rep) -> list[str]:

    out = [f"## {TITLES['glance']}", ""]
    if not rep.divergences:
        return out + [f"No case has scored metrics {rep.threshold:.2f} or more apart.", ""]
    rows = [[str(g.count), m(g.reason), ", ".join(f"{m(dv.case_id)} ({dv.spread:.2f})" for dv in g.divergences)]
            for g in groups(rep.divergences)]
    return out + [GLANCE_INTRO, "", table(["cases", "reason", "divergent cases (spread)"], rows), ""]
