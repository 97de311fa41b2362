"""Markup primitives shared by every renderer: HTML escaping, Markdown escaping, a Markdown table."""
from __future__ import annotations

import html as _html


def e(text) -> str:
    """HTML-escape any value (quotes included).

    >>> e('<script>alert("x")</script>')
    '&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;'
    """
    return _html.escape("" if text is None else str(text), quote=True)


_MD = str.maketrans({"|": "\\|", "\\": "\\\\", "`": "\\`", "*": "\\*", "_": "\\_", "[": "\\[", "]": "\\]",
                     "<": "&lt;", ">": "&gt;", "&": "&amp;", "\n": " ", "\r": " ", "#": "\\#"})


def m(text) -> str:
    """Escape any value for a Markdown table cell or line (no HTML, no formatting, no line breaks).

    >>> m("<script>a|b</script>")
    '&lt;script&gt;a\\\\|b&lt;/script&gt;'
    """
    return ("" if text is None else str(text)).translate(_MD)


def table(heads: list[str], rows: list[list[str]]) -> str:
    out = ["| " + " | ".join(heads) + " |", "|" + "---|" * len(heads)]
    out += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(out)
