"""One scrubber for everything the harness writes or prints: the judge key never leaves memory.

A judge can echo what it was sent (the ``Authorization`` header, in an error body or inside a 200
reply, as text or inside JSON), and a vendor can copy that text into a reason. So the harness does not
trust any one path: every writer (the run store, ``spec.json``, the judge cache, the reports, the
scores CSV, stdout and stderr) passes its text through :func:`scrub`, whatever the reply's status.

What is removed:

- every registered secret (:func:`register`: the judge key, the password of URL credentials), in
  its plain, URL-quoted and JSON-escaped forms;
- the value after ``Authorization:`` / ``X-Api-Key:`` / ``api-key:`` (as a header line, a Python
  dict repr or JSON, escaped or not);
- a ``Bearer`` token (8+ characters with a digit, so prose such as "bearer bonds" is kept);
- URL userinfo (``https://user:pass@host`` becomes ``https://***@host``).

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

MASK = "***"

MIN_SECRET_CHARS = 4
"""Shorter values are not registered: scrubbing every "abc" would mangle ordinary text."""

_secrets: set[str] = set()
_lock = threading.Lock()
_pattern: re.Pattern | None = None

_HEADER = re.compile(
    r"""(?i)((?:proxy-)?authorization|x-api-key|api[-_]key)(\\*["']?\s*[:=]\s*\\*["']?)"""
    r"""((?:bearer|basic)\s+)?(?!\*\*\*|(?:bearer|basic)\b)[^\s"'\\,;}\]]+""")
_BEARER = re.compile(r"(?i)\b(bearer\s+)(?!\*\*\*)(?=[A-Za-z0-9._~+/=-]*\d)[A-Za-z0-9._~+/=-]{8,}")
_USERINFO = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)(?!\*\*\*@)[^/\s@'\"<>]+@")


def register(value: str | None) -> None:
    """Remember a secret so that :func:`scrub` removes it from every text (in memory only).

    >>> register("sk-doctest-1234"); scrub("key=sk-doctest-1234.")
    'key=***.'
    """
    global _pattern
    if not value or len(value) < MIN_SECRET_CHARS:
        return
    forms = {value, quote(value, safe=""), json.dumps(value)[1:-1], html.escape(value)}
    with _lock:
        if forms <= _secrets:
            return
        _secrets.update(f for f in forms if len(f) >= MIN_SECRET_CHARS)
        alts = sorted(_secrets, key=len, reverse=True)
        _pattern = re.compile("|".join(re.escape(s) for s in alts))


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
    """``text`` without any secret, header value, bearer token or URL credentials.

    >>> scrub("echo: {'Authorization': 'Bearer abc123xyz'}")
    "echo: {'Authorization': 'Bearer ***'}"
    >>> scrub('{"authorization": "Bearer t0ken-value"} from https://u:pw@h/v1')
    '{"authorization": "Bearer ***"} from https://***@h/v1'
    >>> scrub("the bearer bonds were sold")
    'the bearer bonds were sold'
    """
    if not isinstance(text, str) or not text:
        return text
    pat = _pattern
    if pat is not None:
        text = pat.sub(MASK, text)
    if "://" in text:
        text = _USERINFO.sub(lambda m: m.group(1) + MASK + "@", text)
    low = text.lower()
    if "auth" in low or "key" in low:
        text = _HEADER.sub(lambda m: m.group(1) + m.group(2) + (m.group(3) or "") + MASK, text)
    if "bearer" in low:
        text = _BEARER.sub(lambda m: m.group(1) + MASK, text)
    return text


def scrub_obj(obj):
    """:func:`scrub` applied to every string (keys too) of a JSON-like value.

    >>> scrub_obj({"u": ["http://a:b@h"], "n": 1})
    {'u': ['http://***@h'], 'n': 1}
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

    >>> has_secret("plain text"), has_secret("Authorization: Bearer abc12345")
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
    """A text stream wrapper whose ``write`` scrubs (stdout / stderr of the CLI)."""

    def __init__(self, inner):
        self._inner = inner

    def write(self, s):
        return self._inner.write(scrub(s))

    def writelines(self, lines):
        for line in lines:
            self.write(line)

    def __getattr__(self, name):
        return getattr(self._inner, name)
