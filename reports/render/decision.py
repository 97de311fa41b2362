"""The report's lead, in HTML and Markdown: "which metric for which need", then the divergences grouped
by reason with their counts (each reason once)."""
from __future__ import annotations

import re

from harness.reports.model.sections import TITLES
from harness.reports.render.markup import e, m, table

TITLE = "Which metric for which need"
INTRO = ("Each need is a set of requirements over behaviour facts (found by what the cases are tagged to probe, "
         "never by case id: reports/analysis/behaviours.py, reports/analysis/facts.py), then measured agreement with "
         "human labels and stability across repeats where the run has them, and only then cost: a metric whose "
         "agreement lies below another candidate's interval is never picked for being cheaper, one whose interval "
         "reaches chance (balanced accuracy 0.50) never at all, and nothing before the run's answers are labelled.")
GLANCE_INTRO = ("Divergent cases grouped by the kind and mechanism of their reason, derived from the metrics' unit "
                "verdicts (reports/analysis/reasons.py), largest group first.")


def slug(title: str) -> str:
    """The anchor a Markdown viewer gives a heading.

    >>> slug("Cost and quality: the frontier")
    'cost-and-quality-the-frontier'
    """
    return re.sub(r"\s", "-", re.sub(r"[^\w\s-]", "", title.strip().lower()))


def _use(rep, n) -> str:
    return ", ".join(rep.shorts[m] for m in n.recommended) or getattr(n, "held", "") or "none of these"


def html(rep) -> str:
    d = rep.decision
    rows = "".join(
        f"<tr><th>{e(n.need)}</th><td><b>{e(_use(rep, n))}</b></td><td class=\"small\">{e(n.why)}</td>"
        + (f"<td class=\"num\">{e(n.agreement)}</td>" if d.agreement_title else "")
        + "<td class=\"small\">" + " ".join(f'<a href="#{e(a)}">{e(what)}</a>' for a, what in n.evidence) + "</td>"
        + "</tr>" for n in d.needs)
    head = ("<th>need</th><th>use</th><th>because it</th>" + (f"<th>{e(d.agreement_title)}</th>" if d.agreement_title
                                                             else "") + "<th>evidence</th>")
    note = f" {d.note}" if d.note else ""
    return (f'<section id="decision"><h2>{e(TITLE)}</h2><p>{e(INTRO)} {e(d.sources)}{e(note)}</p>'
            f"<table><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table></section>")


def markdown(rep) -> list[str]:
    d = rep.decision
    heads = ["need", "use", "because it"] + ([d.agreement_title] if d.agreement_title else []) + ["evidence"]
    rows = [[m(n.need), "**" + m(_use(rep, n)) + "**", m(n.why)] + ([m(n.agreement)] if d.agreement_title else [])
            + [", ".join(f"[{m(what)}](#{slug(what)})" for _, what in n.evidence)] for n in d.needs]
    note = f" {m(d.note)}" if d.note else ""
    return [f"## {TITLE}", "", f"{m(INTRO)} {m(d.sources)}{note}", "", table(heads, rows), ""]


GLANCE_IDS = 5
"""Cases linked on one reason's row at a glance; past them the row gives the count."""
GLANCE_IDS_MD = 100
"""Case ids the Markdown's glance table lists per reason; past them it gives the count."""


def glance_html(rep, anchors: dict[str, int]) -> str:
    """Divergences grouped by reason; ``anchors`` maps a case id to its detail anchor."""

    if not rep.divergences:
        body = f"<p>No case has scored metrics {rep.threshold:.2f} or more apart.</p>"
    else:
        rows = "".join(
            f'<tr><td class="num">{g.count}</td><td class="reason">{e(g.reason)}</td><td>'
            + ", ".join(f'<a href="#case-{anchors[dv.case_id]}">{e(dv.case_id)}</a> '
                        f'<span class="muted small">{dv.spread:.2f}</span>' for dv in g.divergences[:GLANCE_IDS])
            + (f" and {len(g.divergences) - GLANCE_IDS:,} more" if len(g.divergences) > GLANCE_IDS else "")
            + "</td></tr>" for g in rep.glance)
        body = (f"<p>{e(GLANCE_INTRO)}</p><table><thead><tr><th>cases</th><th>reason</th>"
                f"<th>divergent cases (spread)</th></tr></thead><tbody>{rows}</tbody></table>")
    return f'<section id="glance"><h2>{e(TITLES["glance"])}</h2>{body}</section>'


def glance_markdown(rep) -> list[str]:

    out = [f"## {TITLES['glance']}", ""]
    if not rep.divergences:
        return out + [f"No case has scored metrics {rep.threshold:.2f} or more apart.", ""]
    rows = [[str(g.count), m(g.reason),
             ", ".join(f"{m(dv.case_id)} ({dv.spread:.2f})" for dv in g.divergences[:GLANCE_IDS_MD])
             + (f" and {len(g.divergences) - GLANCE_IDS_MD:,} more" if len(g.divergences) > GLANCE_IDS_MD else "")]
            for g in rep.glance]
    return out + [GLANCE_INTRO, "", table(["cases", "reason", "divergent cases (spread)"], rows), ""]
