"""``harness report RUN``: (re)build a run's HTML and Markdown report from its store (never re-scores).

Only argparse at import time: ``harness --help`` stays instant.
"""
from __future__ import annotations

import os
import sys
import time

from harness.core.errors import BadInput
from harness.judge.accounting import PriceError, add_price_options, prices_from_args
from harness.reports.analysis.divergence import DEFAULT_THRESHOLD
from harness.reports.commands import add_out_argument

NAME = "report"


def add_parser(sub):
    """Register ``report`` on the ``harness`` subparsers; return its parser."""
    p = sub.add_parser("report", help="(re)build a run's HTML and Markdown report from its store",
                       description="Build index.html and report.md for a run from its store (never re-scores).")
    p.add_argument("run", metavar="RUN", help="a run directory, a store.sqlite path, or a run id under --out")
    add_out_argument(p)
    p.add_argument("--report-dir", help="write the report here (default: the run directory)")
    p.add_argument("--cases", help="the case file to read case texts from (default: the one the run used); a "
                                   "file of the run's answers with annotations added is read as --labels")
    p.add_argument("--labels", metavar="L",
                   help="the team's labels: a labels file of harness review or a case file of annotated cases; "
                        "agreement, the decision table, the frontier and the cards then use them (no judge call "
                        "is made again)")
    p.add_argument("--reviewers", help="with a labels file: whose labels count, first finished wins (list the "
                                       "adjudicator first; default: the labels every finished reviewer agrees on)")
    p.add_argument("--divergence-threshold", type=float, default=DEFAULT_THRESHOLD,
                   help=f"smallest score spread that counts as a divergence (default {DEFAULT_THRESHOLD})")
    add_price_options(p)
    return p


def run(args) -> int:
    """Dispatch ``harness report`` (a missing run or a bad option is bad input)."""
    try:
        return cmd_report(args)
    except FileNotFoundError as e:
        raise BadInput(str(e)) from None
    except ValueError as e:
        raise BadInput(str(e)) from None
    except OSError as e:        # the report directory cannot be written (read-only, a directory in the way)
        raise BadInput(f"cannot write the report to {e.filename or args.report_dir or args.run}: "
                       f"{e.strerror or e}; pass --report-dir DIR to write it elsewhere") from None


def check_threshold(v: float) -> float:
    """``--divergence-threshold`` as given, or ValueError when it is outside [0, 1]."""
    if not 0 <= v <= 1:
        raise ValueError(f"--divergence-threshold must be between 0 and 1, got {v}")
    return v


def cmd_report(args) -> int:
    from harness.reports.build import build  # noqa: PLC0415 - lazy: keeps --help from importing the report build

    t0 = time.perf_counter()
    try:
        prices = prices_from_args(args, _judge_model(args)) if _priced(args) else None
    except PriceError as e:
        raise BadInput(str(e)) from None
    cases, labels = args.cases, args.labels
    if cases and not labels and _labels_in(args):
        print(f"report: --cases {cases} holds the run's answers with labels added: read as --labels {cases}",
              file=sys.stderr)
        cases, labels = None, args.cases
    built = build(args.run, args.report_dir, check_threshold(args.divergence_threshold), cases, args.out,
                  prices=prices, labels=labels, reviewers=reviewer_list(args))
    print(f"report: {built.html_path}")
    print(f"markdown: {built.md_path}")
    print_labels(built)
    print_top(built)
    print(f"built in {time.perf_counter() - t0:.2f}s, {os.path.getsize(built.html_path) / 1024:.0f} KiB",
          file=sys.stderr)
    return 0


def reviewer_list(args) -> list[str] | None:
    """``--reviewers a,b`` as a list (None when not given)."""
    return [r.strip() for r in (getattr(args, "reviewers", None) or "").split(",") if r.strip()] or None


def _labels_in(args) -> bool:
    """Is ``--cases`` a file of this run's answers with labels added (texts as stored, annotations new)? Then
    the report reads it as labels: read as a case file, the new annotations change every case's digest
    and every case's text would be hidden."""
    from harness.reports.analysis.data import load_run  # noqa: PLC0415 - lazy: keeps --help from importing the report analysis
    from harness.reports.review import team  # noqa: PLC0415 - lazy: keeps --help from importing the review code

    try:
        data = load_run(args.run, args.out)
        if not data.cases or team.kind_of(args.cases) != "case file":
            return False
        team.load(args.cases, data.cases, data.run_id)
    except (ValueError, FileNotFoundError):
        return False
    return True


def print_labels(built) -> None:
    """Where the report's labels came from, and the decision table on them (with ``--labels``); with no
    label at all, the answers to label first and the command that draws them."""
    from harness.reports.analysis.decision import label_first, standings  # noqa: PLC0415 - lazy: keeps --help from importing the report analysis

    prov = built.report.labels
    if not standings(built.report):   # nothing to decide on yet: say what to label, and how
        print(f"decision: {label_first(built.report.data)}")
    if prov is None:
        return
    print(prov.text())
    for n in built.report.decision.needs:
        use = ", ".join(built.report.shorts[m] for m in n.recommended) or n.held or "none of these"
        print(f"  {n.need}: {use}" + (f" ({n.agreement})" if n.agreement else ""))


def print_top(built) -> None:
    lines = built.top_lines(3)
    if lines:
        print("largest divergences:")
        for line in lines:
            print(f"  {line}")
    else:
        print(f"largest divergences: none at threshold {built.report.threshold:.2f}")


def _priced(args) -> bool:
    return any(getattr(args, k, None) is not None for k in ("prices", "price_in", "price_out"))


def _judge_model(args) -> str | None:
    """The judge model the run recorded (what ``--price-in/--price-out`` price)."""
    from harness.reports.analysis.data import resolve_store  # noqa: PLC0415 - lazy: keeps --help from importing the report analysis
    from harness.store.runstore import RunStore  # noqa: PLC0415 - lazy: keeps --help from importing the engine

    store = RunStore.open(resolve_store(args.run, args.out))
    try:
        return (store.spec().get("judge") or {}).get("model")
    finally:
        store.close()
