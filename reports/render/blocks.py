"""A :class:`reports.model.blocks.Block` laid out as Markdown lines or as one HTML section (every text escaped)."""
from __future__ import annotations

from reports.model.blocks import Block, Plot, Table
from reports.render.markup import e, m, table
from reports.render.svgplot import render as svg


def markdown(block: Block) -> list[str]:
    """The section as Markdown lines (every text escaped).

    >>> print("\\n".join(markdown(Block("k", "T", ["a|b", Table(["x"], [["1"]]), ["i"]]))))
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
            out += [table([m(h) for h in p.heads], [[m(c) for c in r] for r in p.rows]), ""]
        elif isinstance(p, Plot):
            out += [f"![{m(p.alt)}]({p.file})", ""]
        elif isinstance(p, list):
            out += [f"- {m(x)}" for x in p] + [""]
        else:
            out += [m(p), ""]
    return out


def html(block: Block) -> str:
    """The section as one HTML ``<section>`` (every text escaped).

    >>> html(Block("k", "T", ["<b>"]))
    '<section id="k"><h2>T</h2><p>&lt;b&gt;</p></section>'
    """

    out = [f'<section id="{e(block.key)}"><h2>{e(block.title)}</h2>']
    for p in block.parts:
        if isinstance(p, Table):
            cap = f"<h3>{e(p.caption)}</h3>" if p.caption else ""
            head = "".join(f"<th>{e(h)}</th>" for h in p.heads)
            rows = "".join("<tr>" + "".join(f"<td>{e(c)}</td>" for c in r) + "</tr>" for r in p.rows)
            out.append(f'{cap}<div class="scroll"><table><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table></div>')
        elif isinstance(p, Plot):
            out.append(f'<figure class="scroll">{svg(p.model)}</figure>')
        elif isinstance(p, list):
            out.append('<ul class="small">' + "".join(f"<li>{e(x)}</li>" for x in p) + "</ul>")
        else:
            out.append(f"<p>{e(p)}</p>")
    return "".join(out) + "</section>"
