"""Progress that tells time: a bar on a terminal, timed lines in a log.

On a terminal, tqdm's bar shows the cells done, the rate, the time elapsed and the time left. Off a
terminal (CI, a log file), one line at every tenth of the run, and at least every
:data:`LOG_EVERY_S` seconds while cells finish, each with the rate, the elapsed time and the estimate
of the time left (from the rate so far)::

    progress: 300/1000 cells (30%), 0 errors, 41.2 cells/s, elapsed 0:07, left ~0:17
"""
from __future__ import annotations

import sys
import time

LOG_EVERY_S = 30.0
"""Off a terminal, a progress line at least this often while cells finish."""


def clock(seconds: float) -> str:
    """``M:SS``, or ``H:MM:SS`` from an hour on.

    >>> clock(7.4), clock(75), clock(3725)
    ('0:07', '1:15', '1:02:05')
    """
    s = int(round(seconds))
    h, rest = divmod(s, 3600)
    m, sec = divmod(rest, 60)
    return f"{h}:{m:02d}:{sec:02d}" if h else f"{m}:{sec:02d}"


def line(done: int, total: int, errors: int, elapsed: float) -> str:
    """One log line.

    >>> line(300, 1000, 0, 7.28)
    'progress: 300/1000 cells (30%), 0 errors, 41.2 cells/s, elapsed 0:07, left ~0:17'
    >>> line(1000, 1000, 2, 20.0)
    'progress: 1000/1000 cells (100%), 2 errors, 50.0 cells/s, elapsed 0:20'
    """
    rate = done / elapsed if elapsed > 0 else 0.0
    text = (f"progress: {done}/{total} cells ({100 * done // max(total, 1)}%), {errors} errors, "
            f"{rate:.1f} cells/s, elapsed {clock(elapsed)}")
    if done < total and rate > 0:
        text += f", left ~{clock((total - done) / rate)}"
    return text


class Progress:
    """A progress bar on a terminal; timed lines elsewhere (logs, CI)."""

    def __init__(self, total: int, reused: int, enabled: bool = True, stream=None):
        self.total, self.done, self.errors = total, 0, 0
        self.enabled = enabled
        self.stream = stream or sys.stderr
        self.tty = self.stream.isatty()
        self.start = time.monotonic()
        self._last_line = self.start
        self._bar = None
        self._next = 0.1
        if enabled and reused:
            print(f"resume: {reused} finished cell(s) kept, {total} to compute", file=self.stream)
        if enabled and self.tty:
            from tqdm import tqdm  # noqa: PLC0415 - lazy: only a terminal draws a bar

            self._bar = tqdm(total=total, unit="cell", file=self.stream, dynamic_ncols=True, mininterval=0.2,
                             bar_format="{l_bar}{bar}| {n_fmt}/{total_fmt} [{elapsed}<{remaining}, "
                                        "{rate_fmt}{postfix}]")

    def tick(self, status: str) -> None:
        self.done += 1
        self.errors += status == "error"
        if not self.enabled:
            return
        if self._bar is not None:
            self._bar.update(1)
            if self.errors:
                self._bar.set_postfix(errors=self.errors)
            return
        now = time.monotonic()
        due = self.done / self.total >= self._next or self.done == self.total or now - self._last_line >= LOG_EVERY_S
        if due:
            print(line(self.done, self.total, self.errors, now - self.start), file=self.stream, flush=True)
            self._last_line = now
            while self._next <= self.done / self.total:
                self._next += 0.1

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
