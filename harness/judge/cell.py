"""The cell a judge request belongs to and a failed upstream attempt: the few names both the gateway's
upstream (:mod:`harness.judge.upstream`) and batch mode (:mod:`harness.judge.batch`) need, apart so that
neither imports the other for them."""
from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import quote

REPEAT_SEP = "@r"
"""A repeat's run label is ``<run>@r<k>`` (``@`` cannot occur in a run id)."""


def repeat_label(run_id: str, repeat: int) -> str:
    """The gateway's run label of one repeat of ``harness run --repeats`` (the run id for repeat 0), so a
    repeat's ledger, time budget and judge-cache keys never mix with another repeat's.

    >>> repeat_label("run-1", 0), repeat_label("run-1", 2)
    ('run-1', 'run-1@r2')
    """
    return run_id if repeat == 0 else f"{run_id}{REPEAT_SEP}{repeat}"


def repeat_of(run_label: str) -> int:
    """The repeat a gateway run label names.

    >>> repeat_of("run-1"), repeat_of("run-1@r2")
    (0, 2)
    """
    _, sep, tail = run_label.rpartition(REPEAT_SEP)
    return int(tail) if sep and tail.isdigit() else 0


@dataclass(frozen=True)
class Cell:
    """The cell a request belongs to (from the gateway URL)."""

    run: str
    case: str
    metric: str

    @property
    def label(self) -> str:
        return f"{self.run}/{self.case}/{self.metric}"

    @property
    def repeat(self) -> int:
        """The repeat of ``harness run --repeats`` this cell is (0: the run's own), from its run label."""
        return repeat_of(self.run)

    def header(self) -> str:
        """``X-Harness-Cell`` value: the three parts, URL-quoted, joined by ``/``."""
        return "/".join(quote(p, safe="") for p in (self.run, self.case, self.metric))


class UpstreamError(Exception):
    """A failed upstream attempt."""

    def __init__(self, message: str, *, status: int = 502, retryable: bool = True,
                 retry_after: float | None = None, body: dict | None = None):
        super().__init__(message)
        self.status, self.retryable, self.retry_after = status, retryable, retry_after
        self.body = body
        """The judge's own JSON error reply (a 4xx), scrubbed of the key: the gateway hands it on as it came."""
