"""One scrubber for everything the harness writes or prints: the run's secrets never leave memory.

A judge can echo what it was sent (the ``Authorization`` header, in an error body or inside a 200
reply, as text or inside JSON), and a vendor can copy that text into a reason. So the harness does not
trust any one path: every writer (the run store, ``spec.json``, the judge cache, the reports, the
scores CSV, stdout and stderr) passes its text through :func:`scrub`, whatever the reply's status.

What is removed is what the run holds, never text that merely looks like a credential (a case that
documents an API, "send the header Authorization: Bearer tok12345678", is stored, cached and
replayed unchanged):

- every registered secret (:func:`register`: the judge key, the embedding endpoint's key, the user
  and password of URL credentials and the ``Basic`` value an HTTP client makes of them: everything
  the harness itself sends in an ``Authorization`` header), in its plain, URL-quoted, JSON-escaped
  and HTML-escaped forms;
- any fragment of :data:`FRAGMENT_CHARS` or more characters of a registered secret, so a key cut in
  two by a truncation (an error body shortened to 200 characters) is removed too. Cut text with
  :func:`cut`, which scrubs before and after cutting.

:func:`has_secret` says whether a text holds any of these; the judge cache never stores such a reply.
"""
from __future__ import annotations

import base64
import html
import json
import os
import re
import threading
from urllib.parse import quote, unquote, urlsplit, urlunsplit

from harness.core.terminal import printable

MASK = "***"

MIN_SECRET_CHARS = 4
"""Shorter values are not registered: scrubbing every "abc" would mangle ordinary text."""

FRAGMENT_CHARS = 8
"""A run of this many characters of a registered secret, anywhere in a text, is removed (a key cut by
a truncation keeps its identifying part otherwise); shorter runs are ordinary text."""

_WORDLIKE = re.compile(r"[a-z_.-]+")
"""A fragment of lower-case letters and separators only (the ``harness-`` of ``sk-harness-canary-...``,
the ``sk-proj-`` every such key starts with) is ordinary text and identifies no key: it is not removed."""

_secrets: set[str] = set()
_grams: set[str] = set()
_lock = threading.Lock()
_pattern: re.Pattern | None = None
_fragments: frozenset[str] = frozenset()


def register(value: str | None) -> None:
    """Remember a secret so that :func:`scrub` removes it, and every fragment of it of
    :data:`FRAGMENT_CHARS` or more characters, from every text (in memory only).

    >>> register("sk-dt-Q7v2Lm9X"); scrub("key=sk-dt-Q7v2Lm9X.")
    'key=***.'
    >>> scrub("cut: sk-dt-Q7"), scrub("plain -dt- and sk-dt-Q text")
    ('cut: ***', 'plain -dt- and sk-dt-Q text')
    >>> register("unused"); scrub("The item has to be unused.")
    'The item has to be unused.'
    """
    global _pattern, _fragments
    if not value or len(value) < MIN_SECRET_CHARS or _WORDLIKE.fullmatch(value):
        return   # a "key" that is a plain word ("unused", "ollama": what local servers take) guards nothing
    forms = {value, quote(value, safe=""), json.dumps(value)[1:-1], html.escape(value)}
    grams = {g for g in (value[i:i + FRAGMENT_CHARS] for i in range(max(1, len(value) - FRAGMENT_CHARS + 1)))
             if not _WORDLIKE.fullmatch(g)}
    with _lock:
        if forms <= _secrets and grams <= _grams:
            return
        _secrets.update(f for f in forms if len(f) >= MIN_SECRET_CHARS)
        _grams.update(g for g in grams if len(g) >= FRAGMENT_CHARS)
        alts = sorted(_secrets, key=len, reverse=True)
        _pattern = re.compile("|".join(re.escape(s) for s in alts))
        _fragments = frozenset(_grams)


def register_url(url: str | None) -> None:
    """Register the password (and user) of a URL's credentials, if it has any."""
    if not url:
        return
    try:
        parts = urlsplit(url)
    except ValueError:
        return
    if parts.password:
        user, password = unquote(parts.username or ""), unquote(parts.password)
        register(password)
        register(user)
        register(base64.b64encode(f"{user}:{password}".encode()).decode())   # as an HTTP client sends it


def register_judge_key(spec: dict | None) -> None:
    """Register the key a run's spec names (``judge.key_env``) when this process has it, so a
    report built later, in another process, scrubs it too."""
    name = ((spec or {}).get("judge") or {}).get("key_env")
    if name:
        register(os.environ.get(name))


def scrub(text: str) -> str:
    """``text`` without any registered secret or fragment of one (a text that only looks like a
    credential is left alone).

    >>> register("tok-dt-Z3k8Wq1R")
    >>> scrub("echo: {'Authorization': 'Bearer tok-dt-Z3k8Wq1R'}")
    "echo: {'Authorization': 'Bearer ***'}"
    >>> scrub("docs: send Authorization: Bearer tok12345678, api_key=demo1234")
    'docs: send Authorization: Bearer tok12345678, api_key=demo1234'
    """
    if not isinstance(text, str) or not text:
        return text
    pat = _pattern
    if pat is not None:
        text = pat.sub(MASK, text)
    grams = _fragments
    if grams:
        text = _without_fragments(text, grams)
    return text


def _without_fragments(text: str, grams: frozenset[str]) -> str:
    """``text`` with every run covered by fragments of a secret replaced by one :data:`MASK`
    (``str.find`` per fragment: far faster than one regular expression of every fragment)."""
    spans = []
    for g in grams:
        i = text.find(g)
        while i >= 0:
            spans.append((i, i + len(g)))
            i = text.find(g, i + 1)
    if not spans:
        return text
    spans.sort()
    out, at, start, end = [], 0, *spans[0]
    for s, e in spans[1:] + [(len(text) + 1, 0)]:
        if s <= end:
            end = max(end, e)
            continue
        out += [text[at:start], MASK]
        at, start, end = end, s, e
    out.append(text[at:])
    return "".join(out)


def cut(text: str, limit: int) -> str:
    """``text`` scrubbed, cut to ``limit`` characters, and scrubbed again (a cut can leave a
    fragment that no longer matches a whole secret; :func:`scrub` removes fragments too).

    >>> register("sk-dt-P4n6Yt0Jc")
    >>> cut("x" * 10 + "sk-dt-P4n6Yt0Jc", 20)
    'xxxxxxxxxx***'
    """
    if not isinstance(text, str):
        return text
    return scrub(scrub(text)[:limit])


def scrub_obj(obj):
    """:func:`scrub` applied to every string (keys too) of a JSON-like value.

    >>> register("sk-dt-O9b1Kd3F"); scrub_obj({"sk-dt-O9b1Kd3F": ["a sk-dt-O9b1Kd3F"], "n": 1})
    {'***': ['a ***'], 'n': 1}
    """
    if isinstance(obj, str):
        return scrub(obj)
    if isinstance(obj, dict):
        return {scrub_obj(k): scrub_obj(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return type(obj)(scrub_obj(v) for v in obj)
    return obj


def has_secret(text: str) -> bool:
    """Would :func:`scrub` change ``text``?

    >>> register("sk-dt-H2s5Vb8N"); has_secret("plain text"), has_secret("key sk-dt-H2s5Vb8N")
    (False, True)
    """
    return scrub(text) != text


def url_without_credentials(url: str | None) -> str | None:
    """The URL with its userinfo removed (the judge's identity never includes credentials).

    >>> url_without_credentials("https://me:pw@Example.com:8443/v1")
    'https://Example.com:8443/v1'
    """
    if not url:
        return url
    try:
        parts = urlsplit(url)
    except ValueError:
        return scrub(url)
    if "@" not in parts.netloc:
        return url
    return urlunsplit(parts._replace(netloc=parts.netloc.rsplit("@", 1)[1]))


class ScrubbingStream:
    """A text stream wrapper whose ``write`` scrubs (stdout / stderr of the CLI) and escapes control
    characters (a case id holding an ANSI escape is shown, never obeyed: :func:`harness.core.terminal.printable`)."""

    def __init__(self, inner):
        self._inner = inner

    def write(self, s):
        return self._inner.write(printable(scrub(s)))

    def writelines(self, lines):
        for line in lines:
            self.write(line)

    def __getattr__(self, name):
        return getattr(self._inner, name)
