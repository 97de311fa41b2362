"""``harness cards``: regenerate the metric cards (reports/cards/) from a reference run."""
from __future__ import annotations

import os

from harness.core.errors import BadInput
from harness.judge.accounting import PriceError, prices_from_args
from harness.reports.commands import add_out_argument

NAME = "cards"
DEFAULT_CARDS_DIR = "reports/cards"


def add_parser(sub):
    """Register ``cards`` on the ``harness`` subparsers; return its parser."""
    c = sub.add_parser("cards", help="regenerate the metric cards (reports/cards/) from a reference run",
                       description="Run the canonical set with the reference judge (or read --from-run) and "
                                   "write one Markdown card per metric.")
    c.add_argument("--from-run", metavar="RUN", help="use this run (a reference-judge run of the canonical set)")
    add_out_argument(c)
    c.add_argument("--cards-dir", default=DEFAULT_CARDS_DIR, help=f"output directory (default {DEFAULT_CARDS_DIR})")
    c.add_argument("--check", action="store_true", help="write nothing; exit 1 if any card would change")
    c.add_argument("--robustness-runs", metavar="RUN[,RUN]",
                   help="runs of the perturbed canonical set (reference judge first, then a real judge): write "
                        "their flip and detection figures to CARDS_DIR/robustness.json for the cards")
    c.add_argument("--prices", metavar="FILE",
                   help='JSON price table {"model id": {"input": X, "output": Y}} (money per million tokens): '
                        "each card shows money per answer at those prices (the shipped cards carry none)")
    return c


def run(args) -> int:
    """Dispatch ``harness cards`` (a missing run or a bad option is bad input)."""
    try:
        return cmd_cards(args)
    except FileNotFoundError as e:
        raise BadInput(str(e)) from None
    except ValueError as e:
        raise BadInput(str(e)) from None


def cmd_cards(args) -> int:
    from harness.reports.cards.generate import canonical_reference_run, generate, write_cards  # noqa: PLC0415 - lazy: keeps --help from importing the card builder

    try:
        prices = prices_from_args(args, None)
    except PriceError as e:
        raise BadInput(str(e)) from None
    if getattr(args, "robustness_runs", None) and not args.check:
        from harness.reports.cards.robustness import write  # noqa: PLC0415 - lazy: keeps --help from importing the card builder

        print(write([r.strip() for r in args.robustness_runs.split(",") if r.strip()], args.cards_dir, args.out))
    run = args.from_run or canonical_reference_run()
    cards = generate(run, args.out, prices)
    changed = write_cards(cards, args.cards_dir, check=args.check)
    verb = "would change" if args.check else "written"
    for name in sorted(cards):
        print(f"{'*' if name in changed else ' '} {os.path.join(args.cards_dir, name)}")
    print(f"{len(changed)} card(s) {verb}" if changed else f"all {len(cards)} cards up to date")
    return 1 if (args.check and changed) else 0
