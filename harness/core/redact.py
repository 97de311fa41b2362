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

Whatever the key's shape (issue 33.3): a lower-case passphrase (``correct-horse-battery-staple``) or a
plain word is a key too and is removed whole (its fragments only from :data:`WORD_FRAGMENT_CHARS` on, so
that ordinary words are never cut). A key that occurs in the run's case text (a word such as ``unused``)
cannot be removed from every text without changing the cases, so the run says so up front and keeps
it *confined* (:func:`guard`, :func:`register` with ``judge_only``): it is removed only from what
could have come from the judge, its replies, errors and headers (:func:`scrub_judge`, applied where the
harness reads the judge: :class:`harness.judge.upstream.HttpEndpoint`), never from the cases.
"""
from __future__ import annotations

import base64
import html
import json
import os
import re
import threading
from contextlib import contextmanager
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
WORD_FRAGMENT_CHARS = 12
"""For a key that is all lower-case letters and separators (a passphrase), runs of this many of its
characters are removed (``correct-hors``); shorter runs are ordinary words."""

_values: set[str] = set()
"""Every registered secret as given."""
_confined: set[str] = set()
"""Registered secrets removed only from what the judge sent (:func:`scrub_judge`)."""
_guard = None
"""``text -> bool``: does a value occur in the run's cases (:func:`guard`)."""
_lock = threading.Lock()
_pattern: re.Pattern | None = None
_fragments: frozenset[str] = frozenset()
_judge_pattern: re.Pattern | None = None
_judge_fragments: frozenset[str] = frozenset()


def _forms(value: str) -> set[str]:
    return {f for f in (value, quote(value, safe=""), json.dumps(value)[1:-1], html.escape(value))
            if len(f) >= MIN_SECRET_CHARS}


def _grams_of(value: str) -> set[str]:
    """The fragments of ``value`` that are removed wherever they occur."""
    if _WORDLIKE.fullmatch(value):
        n = WORD_FRAGMENT_CHARS
        return {value[i:i + n] for i in range(len(value) - n + 1)} if len(value) > n else set()
    n = FRAGMENT_CHARS
    return {g for g in (value[i:i + n] for i in range(max(1, len(value) - n + 1)))
            if len(g) >= n and not _WORDLIKE.fullmatch(g)}


def _compiled(values) -> tuple[re.Pattern | None, frozenset[str]]:
    forms = set().union(*(_forms(v) for v in values)) if values else set()
    grams = frozenset(set().union(*(_grams_of(v) for v in values))) if values else frozenset()
    if not forms:
        return None, grams
    return re.compile("|".join(re.escape(f) for f in sorted(forms, key=len, reverse=True))), grams


def _rebuild() -> None:
    """Recompile both scrubbers from the registered values (under ``_lock``)."""
    global _pattern, _fragments, _judge_pattern, _judge_fragments
    everywhere = _values - _confined
    _pattern, _fragments = _compiled(everywhere)
    _judge_pattern, _judge_fragments = _compiled(_values)


def _in_cases(value: str) -> bool:
    g = _guard
    return bool(g is not None and any(g(f) for f in _forms(value) | _grams_of(value)))


def guard(occurs) -> int:
    """Name the run's case text: ``occurs(text) -> bool`` says whether ``text`` occurs in it. Every
    registered secret (and every one registered later) that occurs there, whole or as a removed
    fragment, is confined: removed from the judge's replies, errors and headers only. Returns how many
    registered secrets are confined now (the run warns when it is not 0; it never shows which)."""
    global _guard
    with _lock:
        _guard = occurs
        _confined.update(v for v in _values if _in_cases(v))
        _rebuild()
        return len(_confined)


def would_confine(value: str) -> bool:
    """Does ``value`` occur in the guarded case text (whole, or as a fragment that would be removed)?"""
    with _lock:
        return _in_cases(value)


def confined(value: str | None = None) -> bool:
    """Is any registered secret (or ``value``) confined to the judge's text?"""
    with _lock:
        return value in _confined if value is not None else bool(_confined)


def register(value: str | None, judge_only: bool = False) -> None:
    """Remember a secret so that :func:`scrub` removes it, and every fragment of it of
    :data:`FRAGMENT_CHARS` or more characters (:data:`WORD_FRAGMENT_CHARS` for a passphrase), from every
    text (in memory only); ``judge_only`` (or a value that occurs in the guarded cases: :func:`guard`)
    confines it to :func:`scrub_judge`.

    >>> register("sk-dt-Q7v2Lm9X"); scrub("key=sk-dt-Q7v2Lm9X.")
    'key=***.'
    >>> scrub("cut: sk-dt-Q7"), scrub("plain -dt- and sk-dt-Q text")
    ('cut: ***', 'plain -dt- and sk-dt-Q text')
    >>> register("dt-correct-horse-battery-staple"); scrub("said dt-correct-horse-battery-staple, then dt-correct-hors")
    'said ***, then ***'
    >>> scrub("a correct horse, a battery, a staple")
    'a correct horse, a battery, a staple'
    >>> register("dtunused", judge_only=True); scrub("The item has to be dtunused."), scrub_judge("echo dtunused")
    ('The item has to be dtunused.', 'echo ***')
    """
    if not value or len(value) < MIN_SECRET_CHARS:
        return   # "abc" guards nothing, and removing it would mangle ordinary text
    with _lock:
        confine = judge_only or _in_cases(value)
        if value in _values and (value in _confined) == confine:
            return
        _values.add(value)
        if confine:
            _confined.add(value)
        else:
            _confined.discard(value)
        _rebuild()


@contextmanager
def isolated():
    """Within the block, only secrets registered inside it are known; on leaving, the registry is
    what it was before (a test or an example that registers a key leaves no trace in the process)."""
    global _guard
    with _lock:
        saved = set(_values), set(_confined), _guard
        _values.clear(), _confined.clear()
        _guard = None
        _rebuild()
    try:
        yield
    finally:
        with _lock:
            _values.clear(), _confined.clear()
            _values.update(saved[0]), _confined.update(saved[1])
            _guard = saved[2]
            _rebuild()


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
    credential is left alone; a confined secret is left too: see :func:`scrub_judge`).

    >>> with isolated():
    ...     register("tok-dt-Z3k8Wq1R")
    ...     scrub("echo: {'Authorization': 'Bearer tok-dt-Z3k8Wq1R'}")
    ...     scrub("docs: send Authorization: Bearer tok12345678, api_key=demo1234")
    "echo: {'Authorization': 'Bearer ***'}"
    'docs: send Authorization: Bearer tok12345678, api_key=demo1234'
    """
    return _scrub(text, _pattern, _fragments)


def scrub_judge(text: str) -> str:
    """``text`` from the judge (a reply, an error, a header) without any registered secret, confined
    ones included."""
    return _scrub(text, _judge_pattern, _judge_fragments)


def scrub_judge_obj(obj):
    """:func:`scrub_judge` applied to every string (keys too) of a JSON-like value."""
    return _walk(obj, scrub_judge)


def _scrub(text: str, pat, grams) -> str:
    if not isinstance(text, str) or not text:
        return text
    if pat is not None:
        text = pat.sub(MASK, text)
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
    return _walk(obj, scrub)


def _walk(obj, fn):
    if isinstance(obj, str):
        return fn(obj)
    if isinstance(obj, dict):
        return {_walk(k, fn): _walk(v, fn) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return type(obj)(_walk(v, fn) for v in obj)
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
