"""Up-front checks of ``harness run``'s options: a bad option is exit 2 and one line before anything
runs or is created, never a traceback after every cell is scored.

Each check raises ValueError with the line to print; the CLI turns it into exit 2.
"""
from __future__ import annotations

import math
import os
import tempfile
from urllib.parse import urlsplit

from harness.core.redact import scrub
from harness.run.rundir import check_run_id

SQLITE_MAGIC = b"SQLite format 3\x00"


def reply_cap_mb(value: float) -> float:
    """``--max-reply-mb`` when it is a size between 1 KB and 1 GB, in megabytes.

    >>> reply_cap_mb(8.0), reply_cap_mb(0.5)
    (8.0, 0.5)
    >>> reply_cap_mb(0)
    Traceback (most recent call last):
    ...
    ValueError: --max-reply-mb must be between 0.001 and 1024 (megabytes), got 0
    """
    if not (isinstance(value, (int, float)) and math.isfinite(value) and 0.001 <= value <= 1024):
        raise ValueError(f"--max-reply-mb must be between 0.001 and 1024 (megabytes), got {value:g}")
    return value


def positive_seconds(name: str, value: float) -> float:
    """``value`` when it is a finite number of seconds above 0.

    >>> positive_seconds("--call-timeout", 2.5)
    2.5
    >>> positive_seconds("--call-timeout", 0)
    Traceback (most recent call last):
    ...
    ValueError: --call-timeout must be more than 0 seconds, got 0
    """
    if not (isinstance(value, (int, float)) and math.isfinite(value) and value > 0):
        raise ValueError(f"{name} must be more than 0 seconds, got {value:g}")
    return value


def http_url(name: str, url: str | None) -> str | None:
    """``url`` when it is an http(s) URL with a host (None passes).

    >>> http_url("--judge-url", "http://localhost:11434/v1")
    'http://localhost:11434/v1'
    >>> http_url("--judge-url", "file:///etc/passwd")
    Traceback (most recent call last):
    ...
    ValueError: --judge-url must be an http:// or https:// URL with a host, got 'file:///etc/passwd'
    """
    if url is None:
        return None


    try:
        parts = urlsplit(url)
        ok = parts.scheme.lower() in ("http", "https") and bool(parts.hostname)
        parts.port  # noqa: B018 - raises ValueError on a port out of range
    except ValueError:
        ok = False
    if not ok:
        raise ValueError(f"{name} must be an http:// or https:// URL with a host, got {scrub(url)!r}")
    return url


def metrics_spec(spec: str) -> str:
    """An empty ``--metrics`` selects nothing (as ``,`` does), not everything."""
    if not spec.strip():
        raise ValueError("no metrics selected")
    return spec


def port(value: int) -> int:
    """A TCP port number (0: any free port)."""
    if not 0 <= value <= 65535:
        raise ValueError(f"--port must be between 0 and 65535, got {value}")
    return value


def _probe_dir(path: str) -> str | None:
    """Why files cannot be created in the existing directory ``path``, or None."""
    try:
        fd, probe = tempfile.mkstemp(prefix=".harness-probe-", dir=path)
    except OSError as e:
        return e.strerror or type(e).__name__
    os.close(fd)
    os.unlink(probe)
    return None


def writable_dir(name: str, path: str) -> str:
    """``path`` is a directory the run can write into, or can be created as one."""
    here = os.path.abspath(path)
    while not os.path.exists(here):
        parent = os.path.dirname(here)
        if parent == here:
            break
        here = parent
    if not os.path.isdir(here):
        what = "is a file" if here == os.path.abspath(path) else f"is under {here}, which is a file"
        raise ValueError(f"{name} {path}: {what}, expected a directory")
    problem = _probe_dir(here)
    if problem:
        where = "" if here == os.path.abspath(path) else f" (in {here})"
        raise ValueError(f"{name} {path}: cannot write there{where}: {problem}")
    return path


def writable_file(name: str, path: str) -> str:
    """``path`` can be written as a file: not a directory, in a writable directory."""
    if os.path.isdir(path):
        raise ValueError(f"{name} {path}: is a directory, expected a file path")
    writable_dir(name, os.path.dirname(os.path.abspath(path)))
    if os.path.exists(path) and not os.access(path, os.W_OK):
        raise ValueError(f"{name} {path}: the file is not writable")
    return path


def sqlite_file(name: str, path: str) -> str:
    """``path`` is an SQLite database (or empty, or absent in a writable directory)."""
    writable_file(name, path)
    if os.path.isfile(path) and os.path.getsize(path) > 0:
        try:
            with open(path, "rb") as fh:
                head = fh.read(len(SQLITE_MAGIC))
        except OSError as e:
            raise ValueError(f"{name} {path}: cannot be read: {e.strerror}") from None
        if head != SQLITE_MAGIC:
            raise ValueError(f"{name} {path}: is not an SQLite database (a judge cache file)")
    return path


def run_outputs(out: str, run_id: str | None, scores_csv: str | None, cache_path: str | None,
                uses_cache: bool) -> None:
    """Every place ``harness run`` will write, checked before the run starts."""

    if run_id is not None:
        check_run_id(run_id)
    writable_dir("--out", out)
    if run_id is not None and os.path.exists(os.path.join(out, run_id)):
        writable_dir("--out", os.path.join(out, run_id))
    if scores_csv:
        writable_file("--scores-csv", scores_csv)
    if cache_path and uses_cache:
        sqlite_file("--cache-path", cache_path)
