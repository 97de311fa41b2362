"""``harness validate [FILE]``: check a case file and report every problem (exit 2 if any)."""
from __future__ import annotations

from harness.cli.run import DEFAULT_CASES, _load

NAME = "validate"


def add_parser(sub):
    """Register ``validate`` on the ``harness`` subparsers; return its parser."""
    v = sub.add_parser("validate", help="check a case file and report every problem")
    v.add_argument("cases", nargs="?", default=DEFAULT_CASES)
    return v


def run(args) -> int:
    """Print the file's case and claim counts, or raise BadInput naming every problem."""
    cases = _load(args.cases)
    n_claims = sum(len(c.annotation.claims) for c in cases if c.annotation is not None)
    bare = sum(c.annotation is None for c in cases)
    note = f" ({bare} without annotation: a real judge is needed for those)" if bare else ""
    print(f"{args.cases}: {len(cases)} cases, {n_claims} claims, valid{note}")
    return 0
