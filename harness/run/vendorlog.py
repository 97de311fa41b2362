"""Vendors' log records and warnings go to the run's ``vendor.log``, never to the terminal.

A vendor that cannot parse a judge reply logs it, often with a traceback per cell (Opik's "Failed to parse model
output", LiteLLM's own console handler). During a run every record a vendor logs (and every ``warnings.warn``)
is written, scrubbed of secrets, to ``<run dir>/vendor.log`` (a worker process to ``vendor-w<N>.log``), and the
terminal gets one summary line per kind at the end (:func:`summary`). Handlers of the user's own that write to a
file are left alone; console handlers (a stream on the terminal) are silenced for the run and given back after.
"""
from __future__ import annotations

import logging
import os
import re
import sys
import warnings
from collections import Counter

from harness.core.redact import scrub

LOG_NAME = "vendor.log"
_HEAD = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} (DEBUG|INFO|WARNING|ERROR|CRITICAL) ([^:\s]+): (.*)$")
_MARK = "_harness_vendor_logged"


def log_path(run_dir: str, worker: int | None = None) -> str:
    return os.path.join(run_dir, LOG_NAME if worker is None else f"vendor-w{worker}.log")


def _on_console(stream) -> bool:
    inner = getattr(stream, "_inner", stream)   # the command's ScrubbingStream wraps the terminal
    if inner in (sys.__stderr__, sys.__stdout__) or stream in (sys.stderr, sys.stdout):
        return True
    try:
        return bool(inner.isatty())
    except (AttributeError, ValueError, OSError):
        return False


class _Scrubbed(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        return scrub(super().format(record))


class _Divert(logging.Filter):
    """On a console handler: write the record to the run's log instead, and keep it off the terminal."""

    def __init__(self, capture: VendorLog):
        super().__init__()
        self.capture = capture

    def filter(self, record: logging.LogRecord) -> bool:
        if not getattr(record, _MARK, False):
            self.capture.handler.handle(record)
            setattr(record, _MARK, True)
        return False


class _Once(logging.Filter):
    """On the run's own handler: a record already written by a diverted console handler is not written twice."""

    def filter(self, record: logging.LogRecord) -> bool:
        if getattr(record, _MARK, False):
            return False
        setattr(record, _MARK, True)
        return True


class VendorLog:
    """The context of a run (or a worker): vendors' records to ``path``; the logging setup given back on exit.

    A console handler is found when a record would reach it (``logging.Logger.handle`` is wrapped for the length
    of the run: the logger chain the record walks is checked first), so a handler a vendor attaches at import, or
    on its first call, is silenced before its first record prints."""

    def __init__(self, path: str):
        self.path = path
        self.handler = logging.FileHandler(path, encoding="utf-8", delay=True)
        self.handler.setFormatter(_Scrubbed("%(asctime)s %(levelname)s %(name)s: %(message)s"))
        self.handler.addFilter(_Once())
        self.divert = _Divert(self)
        self.diverted: list[logging.Handler] = []

    def _check(self, logger: logging.Logger) -> None:
        c = logger
        while c is not None:
            for h in c.handlers:
                if (h is not self.handler and not isinstance(h, logging.FileHandler)
                        and isinstance(h, logging.StreamHandler) and self.divert not in h.filters
                        and _on_console(h.stream)):
                    h.addFilter(self.divert)
                    self.diverted.append(h)
            c = c.parent if c.propagate else None

    def __enter__(self) -> VendorLog:
        self._last_resort = logging.lastResort
        logging.lastResort = self.handler   # a logger with no handler anywhere (propagate off) lands here too
        logging.getLogger().addHandler(self.handler)
        logging.captureWarnings(True)
        self._filters = warnings.filters[:]
        self._handle = original = logging.Logger.handle
        check = self._check

        def handle(logger, record):
            check(logger)
            return original(logger, record)

        logging.Logger.handle = handle
        return self

    def __exit__(self, *exc) -> None:
        logging.Logger.handle = self._handle
        logging.captureWarnings(False)
        warnings.filters[:] = self._filters
        for h in self.diverted:
            h.removeFilter(self.divert)
        self.diverted.clear()
        logging.getLogger().removeHandler(self.handler)
        logging.lastResort = self._last_resort
        self.handler.close()


def _logs(run_dir: str) -> list[str]:
    """The run's vendor log files (``vendor.log`` and each worker's ``vendor-w<N>.log``), sorted."""
    return sorted(f for f in os.listdir(run_dir) if f == LOG_NAME or re.fullmatch(r"vendor-w\d+\.log", f))


def summary(run_dir: str, since: dict[str, int] | None = None) -> list[str]:
    """One line per kind (level, the logger's top name, the message's first six words: a case id or a number
    further on does not make a new kind) written to the run's vendor logs since the
    offsets in ``since`` (file name -> byte offset; a file not named: from its start), most frequent first."""
    kinds: Counter = Counter()
    for f in _logs(run_dir):
        with open(os.path.join(run_dir, f), encoding="utf-8", errors="replace") as fh:
            fh.seek((since or {}).get(f, 0))
            for line in fh:
                m = _HEAD.match(line.rstrip("\n"))
                if m:
                    kinds[(m.group(1), m.group(2).split(".")[0], " ".join(m.group(3).split()[:6])[:70])] += 1
    lines = [f"vendor log: {n} x {level} {name}: {msg}" for (level, name, msg), n in kinds.most_common(8)]
    if len(kinds) > 8:
        lines.append(f"vendor log: {len(kinds) - 8} more kind(s)")
    if lines:
        lines.append(f"vendor log: every record in {os.path.join(run_dir, LOG_NAME)} (and vendor-w<N>.log per worker)")
    return lines


def offsets(run_dir: str) -> dict[str, int]:
    """The current size of each vendor log of the run (what :func:`summary` should skip: earlier sessions)."""
    return {f: os.path.getsize(os.path.join(run_dir, f)) for f in _logs(run_dir)}
