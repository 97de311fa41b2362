"""The ``report`` and ``cards`` subcommands, and the report step at the end of ``harness run``.

Only argparse at import time: ``harness --help`` stays instant.
"""
from __future__ import annotations

import os
import sys
import time

DEFAULT_CARDS_DIR = "reports/cards"


def add_parsers(sub) -> None:
    """Register ``report`` and ``cards`` on the ``harness`` subparsers."""
    from reports.divergence import DEFAULT_THRESHOLD

    p = sub.add_parser("report", help="(re)build a run's HTML and Markdown report from its store",
                       description="Build index.html and report.md for a run from its store (never re-scores).")
    p.add_argument("run", metavar="RUN", help="a run directory, a store.sqlite path, or a run id under --out")
    p.add_argument("--out", default="reports/out", help="where run ids are looked up (default reports/out)")
    p.add_argument("--report-dir", help="write the report here (default: the run directory)")
    p.add_argument("--cases", help="the case file to read case texts from (default: the one the run used)")
    p.add_argument("--divergence-threshold", type=float, default=DEFAULT_THRESHOLD,
                   help=f"smallest score spread that counts as a divergence (default {DEFAULT_THRESHOLD})")
    c = sub.add_parser("cards", help="regenerate the metric cards (reports/cards/) from a reference run",
                       description="Run the canonical set with the reference judge (or read --from-run) and "
                                   "write one Markdown card per metric.")
    c.add_argument("--from-run", metavar="RUN", help="use this run (a reference-judge run of the canonical set)")
    c.add_argument("--out", default="reports/out", help="where run ids are looked up (default reports/out)")
    c.add_argument("--cards-dir", default=DEFAULT_CARDS_DIR, help=f"output directory (default {DEFAULT_CARDS_DIR})")
    c.add_argument("--check", action="store_true", help="write nothing; exit 1 if any card would change")


def run_command(args) -> int:
    """Dispatch ``report`` / ``cards``."""
    from harness.cli import BadInput

    try:
        if args.command == "report":
            return cmd_report(args)
        return cmd_cards(args)
    except FileNotFoundError as e:
        raise BadInput(str(e)) from None
    except ValueError as e:
        raise BadInput(str(e)) from None


def check_threshold(v: float) -> float:
    """``--divergence-threshold`` as given, or ValueError when it is outside [0, 1]."""
    if not 0 <= v <= 1:
        raise ValueError(f"--divergence-threshold must be between 0 and 1, got {v}")
    return v


def cmd_report(args) -> int:
    from reports.build import build

    t0 = time.perf_counter()
    built = build(args.run, args.report_dir, check_threshold(args.divergence_threshold), args.cases, args.out)
    print(f"report: {built.html_path}")
    print(f"markdown: {built.md_path}")
    print_top(built)
    print(f"built in {time.perf_counter() - t0:.2f}s, {os.path.getsize(built.html_path) / 1024:.0f} KiB",
          file=sys.stderr)
    return 0


def print_top(built) -> None:
    lines = built.top_lines(3)
    if lines:
        print("largest divergences:")
        for line in lines:
            print(f"  {line}")
    else:
        print(f"largest divergences: none at threshold {built.report.threshold:.2f}")


def report_after_run(run_dir: str, threshold: float) -> int:
    """Build the report at the end of ``harness run``; print its path and the top divergences."""
    from reports.build import build

    try:
        built = build(run_dir, run_dir, check_threshold(threshold))
    except Exception as e:  # noqa: BLE001 - the run is kept; say why the report is missing
        print(f"report: not built ({type(e).__name__}: {e})", file=sys.stderr)
        return 1
    print(f"report: {built.html_path}")
    print_top(built)
    return 0


def cmd_cards(args) -> int:
    from reports.cards import canonical_reference_run, generate, write_cards

    run = args.from_run or canonical_reference_run()
    cards = generate(run, args.out)
    changed = write_cards(cards, args.cards_dir, check=args.check)
    verb = "would change" if args.check else "written"
    for name in sorted(cards):
        print(f"{'*' if name in changed else ' '} {os.path.join(args.cards_dir, name)}")
    print(f"{len(changed)} card(s) {verb}" if changed else f"all {len(cards)} cards up to date")
    return 1 if (args.check and changed) else 0
