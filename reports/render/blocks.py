"""A :class:`harness.reports.model.blocks.Section` laid out as Markdown lines or as one HTML section (every text escaped)."""
from __future__ import annotations

from harness.reports.model.blocks import Plot, Section, Table
from harness.reports.render.markup import e, m, table
from harness.reports.render.svgplot import render as svg


def markdown(block: Section) -> list[str]:
    """The section as Markdown lines (every text escaped).

    >>> print("\\n".join(markdown(Section("k", "T", ["a|b", Table(["x"], [["1"]]), ["i"]]))))
    ## T
    <BLANKLINE>
    a\\|b
    <BLANKLINE>
    | x |
    |---|
    | 1 |
    <BLANKLINE>
    - i
    <BLANKLINE>
    """

    out = [f"## {m(block.title)}", ""]
    for p in block.parts:
        if isinstance(p, Table):
            if p.caption:
                out += [f"**{m(p.caption)}**", ""]
            out += [table([m(h) for h in p.heads], [[m(c) for c in r] for r in p.rows[:MD_ROWS]]), ""]
            if len(p.rows) > MD_ROWS:
                out += [f"_The first {MD_ROWS:,} of {len(p.rows):,} rows._", ""]
        elif isinstance(p, Plot):
            out += [f"![{m(p.alt)}]({p.file})", ""]
        elif isinstance(p, list):
            out += [f"- {m(x)}" for x in p[:MD_ROWS]]
            out += ([f"- _and {len(p) - MD_ROWS:,} more_"] if len(p) > MD_ROWS else []) + [""]
        else:
            out += [m(p), ""]
    return out


MD_ROWS = 500
"""Rows of a section's table, or items of its list, the Markdown report shows; past them it gives the count."""
TABLE_ROWS = 100
"""Rows a section's table shows in the HTML page; past them it says how many it left out (the Markdown report
lists up to :data:`MD_ROWS`), so a section's table or list stays a page long whatever the run (a cascade's residual errors at
100,000 answers, say)."""


def html(block: Section) -> str:
    """The section as one HTML ``<section>`` (every text escaped); a table shows its first :data:`TABLE_ROWS`
    rows, a bullet list as many items.

    >>> html(Section("k", "T", ["<b>"]))
    '<section id="k"><h2>T</h2><p>&lt;b&gt;</p></section>'
    >>> long = html(Section("k", "T", [Table(["x"], [[str(i)] for i in range(TABLE_ROWS + 5)])]))
    >>> long.count("<tr>") - 1, "The first 100 of 105 rows" in long
    (100, True)
    """

    out = [f'<section id="{e(block.key)}"><h2>{e(block.title)}</h2>']
    for p in block.parts:
        if isinstance(p, Table):
            cap = f"<h3>{e(p.caption)}</h3>" if p.caption else ""
            head = "".join(f"<th>{e(h)}</th>" for h in p.heads)
            rows = "".join("<tr>" + "".join(f"<td>{e(c)}</td>" for c in r) + "</tr>" for r in p.rows[:TABLE_ROWS])
            more = (f'<p class="small muted">The first {TABLE_ROWS:,} of {len(p.rows):,} rows; the Markdown report '
                    f"(report.md) lists {'them all' if len(p.rows) <= MD_ROWS else f'the first {MD_ROWS:,}'}.</p>") if len(p.rows) > TABLE_ROWS else ""
            out.append(f'{cap}<div class="scroll"><table><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table></div>'
                       f"{more}")
        elif isinstance(p, Plot):
            out.append(f'<figure class="scroll">{svg(p.model)}</figure>')
        elif isinstance(p, list):
            left = (f'<li class="muted">and {len(p) - TABLE_ROWS:,} more; the Markdown report (report.md) lists '
                    f"{'them all' if len(p) <= MD_ROWS else f'the first {MD_ROWS:,}'}</li>") if len(p) > TABLE_ROWS else ""
            out.append('<ul class="small">' + "".join(f"<li>{e(x)}</li>" for x in p[:TABLE_ROWS]) + left + "</ul>")
        else:
            out.append(f"<p>{e(p)}</p>")
    return "".join(out) + "</section>"
