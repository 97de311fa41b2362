"""``harness check``: a CI gate on a finished run.

Each ``--min METRIC=VALUE`` asks that the metric's mean over its scored cells be at least VALUE, and
each ``--max METRIC=VALUE`` that it be at most VALUE: ``--min`` gates a metric whose higher score is
better (most of them), ``--max`` one whose lower score is better (Opik's hallucination score, 0 =
faithful); the wrong one for the metric is bad input, named. ``--max-errors N`` asks that no more than N
cells errored. The result is printed one line per criterion,
and optionally written as JUnit XML (one test case per criterion), which CI systems show natively.

Exit codes: 0 every criterion holds; 1 at least one fails; 2 bad input (no such run, a malformed
criterion, a metric the run does not have).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from xml.sax.saxutils import escape, quoteattr

from harness.core.terminal import printable


@dataclass(frozen=True)
class Outcome:
    """One criterion, checked."""

    name: str
    """E.g. ``inhouse.span mean >= 0.7``."""
    ok: bool
    detail: str
    """What was measured, e.g. ``mean 0.81 over 21 scored cells``."""
    case: str | None = None
    """The case a per-case criterion is about (``--min-case``), else None."""
    metric: str | None = None
    """The metric the criterion is about, when it is about one."""
    skipped: bool = False
    """The cell is not a score (unscored, NaN, n/a): neither a pass nor a failure."""


def parse_min(item: str, option: str = "--min") -> tuple[str, float]:
    """``METRIC=VALUE`` as (metric, value); ValueError naming the option and the problem.

    >>> parse_min("inhouse.span=0.7")
    ('inhouse.span', 0.7)
    >>> parse_min("inhouse.span")
    Traceback (most recent call last):
    ...
    ValueError: --min inhouse.span: expected METRIC=VALUE, e.g. inhouse.span=0.7
    """
    name, sep, value = item.partition("=")
    if not sep or not name.strip():
        raise ValueError(f"{option} {item}: expected METRIC=VALUE, e.g. inhouse.span=0.7")
    try:
        v = float(value)
    except ValueError:
        raise ValueError(f"{option} {item}: {value!r} is not a number") from None
    if math.isnan(v):
        raise ValueError(f"{option} {item}: the value must be a number, not NaN")
    return name.strip(), v


def bounds(floors: list[tuple[str, float]], ceilings: list[tuple[str, float]], data, per_case: bool = False
           ) -> list[tuple[str, float, bool]]:
    """``(metric, value, is_floor)`` for every ``--min`` (floors) and ``--max`` (ceilings), each checked
    against the run's metrics and the metric's direction (ValueError naming the option to use instead)."""
    suffix = "-case" if per_case else ""
    out = []
    for items, is_floor in ((floors, True), (ceilings, False)):
        option = ("--min" if is_floor else "--max") + suffix
        for metric, value in items:
            if metric not in data.metrics:
                raise ValueError(f"{option} {metric}: the run has no metric {metric!r}; it has "
                                 f"{', '.join(data.metrics)}")
            if data.info[metric].higher_is_better != is_floor:
                better, wrong, other = ("lower", "floor", "--max") if is_floor else ("higher", "ceiling", "--min")
                raise ValueError(f"{option} {metric}={value:g}: on {metric} a {better} score is better, so a "
                                 f"{wrong} is the wrong gate; use {other}{suffix} {metric}={value:g}")
            out.append((metric, value, is_floor))
    return out


def holds(score: float, value: float, is_floor: bool) -> bool:
    """``score`` at least ``value`` (a floor) or at most it (a ceiling)."""
    return score >= value if is_floor else score <= value


def check(data, minimums: list[tuple[str, float]], max_errors: int | None,
          maximums: list[tuple[str, float]] = ()) -> list[Outcome]:
    """Every criterion on one run (:class:`harness.reports.analysis.data.RunData`)."""
    cells = data.cells
    out = []
    for metric, value, is_floor in bounds(minimums, maximums, data):
        d = cells[cells["metric"] == metric]
        scored = d[d["status"] == "scored"]["score"].astype(float)
        name = f"{metric} mean {'>=' if is_floor else '<='} {value:g}"
        if scored.empty:
            out.append(Outcome(name, False, f"no scored cells ({len(d)} cells, none scored)", metric=metric))
            continue
        mean = float(scored.mean())
        out.append(Outcome(name, holds(mean, value, is_floor), f"mean {mean:.4f} over {len(scored)} scored cell(s)",
                           metric=metric))
    if max_errors is not None:
        errs = cells[cells["status"] == "error"]
        where = ", ".join(f"{r.case_id}/{r.metric}" for r in errs.head(5).itertuples())
        more = f" ({where}{', ...' if len(errs) > 5 else ''})" if len(errs) else ""
        out.append(Outcome(f"errors <= {max_errors}", len(errs) <= max_errors, f"{len(errs)} errored cell(s){more}"))
    return out


def lines(outcomes: list[Outcome]) -> list[str]:
    """One line per criterion for the terminal.

    >>> lines([Outcome("m mean >= 0.5", True, "mean 0.75")])
    ['PASS  m mean >= 0.5: mean 0.75']
    """
    return [f"{'SKIP' if o.skipped else 'PASS' if o.ok else 'FAIL'}  {o.name}: {o.detail}" for o in outcomes]


def junit_xml(run_id: str, outcomes: list[Outcome]) -> str:
    """JUnit XML: one ``testsuite`` for the run, one ``testcase`` per criterion.

    >>> print(junit_xml("r1", [Outcome("e <= 0", False, "1 errored cell(s)")]).splitlines()[2])
      <testsuite name="harness check r1" tests="1" failures="1" errors="0">
    """
    fails = sum(not o.ok for o in outcomes)
    out = ['<?xml version="1.0" encoding="UTF-8"?>',
           f'<testsuites name="harness check" tests="{len(outcomes)}" failures="{fails}" errors="0">',
           f'  <testsuite name={_attr("harness check " + run_id)} tests="{len(outcomes)}" '
           f'failures="{fails}" errors="0">']
    for o in outcomes:
        cls = "harness.check." + run_id + (f".{o.metric}" if o.metric else "")
        attrs = f'classname={_attr(cls)} name={_attr(o.name)}'
        if o.skipped:
            out.append(f"    <testcase {attrs}><skipped message={_attr(o.detail)}/></testcase>")
        elif o.ok:
            out.append(f"    <testcase {attrs}><system-out>{_text(o.detail)}</system-out></testcase>")
        else:
            out.append(f"    <testcase {attrs}><failure message={_attr(o.detail)} type=\"threshold\">"
                       f"{_text(o.detail)}</failure></testcase>")
    out += ["  </testsuite>", "</testsuites>", ""]
    return "\n".join(out)


def _text(s: str) -> str:
    """Element text: escaped, control characters (not allowed in XML 1.0) written as ``\\xNN``."""
    return escape(printable(s))


def _attr(s: str) -> str:
    """An attribute value, quoted, with control characters written as ``\\xNN``.

    >>> _attr("a\x01b")
    '"a\\\\x01b"'
    """
    return quoteattr(printable(s))
