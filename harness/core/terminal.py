"""Text that is safe to show: no control character reaches a terminal or an XML file as itself.

A case id or a judge's reply can hold control characters (``\\x1b[31m`` recolours a terminal,
``\\x01`` makes XML 1.0 invalid). :func:`printable` writes each one as its Python escape, so it stays
visible and the text around it stays whole; newlines, carriage returns and tabs are kept.
"""
from __future__ import annotations

import re

_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff\ufffe\uffff]")
"""C0 and C1 controls, and the code points XML 1.0 forbids outright (lone surrogates, U+FFFE, U+FFFF)."""


def printable(text: str) -> str:
    """``text`` with every control character but newline, carriage return and tab escaped.

    >>> printable("bad\\x01id\\x1b[31mRED\\tok\\n")
    'bad\\\\x01id\\\\x1b[31mRED\\tok\\n'
    >>> printable("a\\ufffeb\\uffff")
    'a\\\\ufffeb\\\\uffff'
    """
    if not isinstance(text, str) or not _CONTROL.search(text):
        return text
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}" if ord(m.group()) < 0x100 else f"\\u{ord(m.group()):04x}",
                        text)
