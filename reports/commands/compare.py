"""``harness compare RUN_A RUN_B``: two runs side by side (see :mod:`harness.reports.analysis.compare`), as HTML and Markdown.

Only argparse at import time: ``harness --help`` stays instant.
"""
from __future__ import annotations

import os

from harness.reports.commands import RUN_HELP, add_out_argument, run_as_bad_input


def add_parser(sub):
    """Register the command on the ``harness`` subparsers."""
    p = sub.add_parser("compare", help="compare two runs: paired differences per metric, status changes",
                       description="Compare two runs of the same cases (two judges, two metric versions, two "
                                   "systems' answers): per metric the paired difference B - A over shared "
                                   "cases with a paired bootstrap 95% interval, cells that changed status, "
                                   "the biggest movers, and what the drift sentinel saw change (vendor versions, prompt "
                                   "templates, judge fingerprints) with the cells that changed outcome with them. "
                                   "Writes compare.html and compare.md.")
    p.add_argument("run_a", metavar="RUN_A", help=RUN_HELP)
    p.add_argument("run_b", metavar="RUN_B", help=RUN_HELP)
    add_out_argument(p)
    p.add_argument("--report-dir", help="write the pages here (default OUT/compare-<A>-vs-<B>)")
    p.add_argument("--drift-card", metavar="FILE",
                   help="also write a drift card (Markdown) of the two runs: one vendor's two versions side by "
                        "side, every case whose outcome changed and why (docs/drift.md)")
    return p


def run(args) -> int:
    """Run the command; bad input (no such run, a malformed option) raises BadInput (exit 2)."""
    return run_as_bad_input(_run, args)


def _run(args) -> int:
    from harness.reports.analysis.compare import compare  # noqa: PLC0415 - lazy: keeps --help from importing the report analysis
    from harness.reports.analysis.data import load_run  # noqa: PLC0415 - lazy: keeps --help from importing the report analysis
    from harness.reports.model.compare_page import page  # noqa: PLC0415 - lazy: keeps --help from importing the report model
    from harness.reports.model.sections import SIGNIFICANT  # noqa: PLC0415 - lazy: keeps --help from importing the report model
    from harness.reports.render.compare import write  # noqa: PLC0415 - lazy: keeps --help from importing the renderers

    a, b = load_run(args.run_a, args.out), load_run(args.run_b, args.out)
    cmp = compare(a, b)
    out = args.report_dir or os.path.join(args.out, f"compare-{a.run_id}-vs-{b.run_id}")
    html_path, md_path = write(page(cmp), out)
    for line in cmp.differences:
        print(f"differs: {line}")
    for d in cmp.metrics:
        if d.diff is None:
            print(f"{d.metric:36} no case scored in both runs")
            continue
        mark = f" {SIGNIFICANT}" if d.significant else ""
        print(f"{d.metric:36} {d.mean_a:.3f} -> {d.mean_b:.3f}  B-A {d.diff:+.3f} "
              f"[{d.low:+.3f}, {d.high:+.3f}]{mark}  ({d.n_pairs} paired)")
    print(f"status changes: {len(cmp.changes)}")
    if cmp.drift is not None and cmp.drift.recorded:
        print(f"outcome changes: {len(cmp.drift.changes)}")
        for c in cmp.drift.changes:
            print(f"  {c.metric} / {c.case_id}: {c.label_a} -> {c.label_b} ({'; '.join(c.causes)})")
    if args.drift_card:
        from harness.reports.cards.drift import write_card  # noqa: PLC0415 - lazy: keeps --help from importing the card builder

        print(f"drift card: {write_card(cmp, args.drift_card)}")
    print(f"compare: {html_path}")
    print(f"markdown: {md_path}")
    return 0
