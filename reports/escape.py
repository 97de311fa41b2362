"""HTML escaping for the report (one function, shared by the HTML renderers)."""
from __future__ import annotations

import html as _html


def e(text) -> str:
    """HTML-escape any value (quotes included).

    >>> e('<script>alert("x")</script>')
    '&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;'
    """
    return _html.escape("" if text is None else str(text), quote=True)
