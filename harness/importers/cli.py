"""``harness import FORMAT FILE --out CASES``: the subcommand (parser and command)."""
from __future__ import annotations

import sys

NAME = "import"


def add_parser(sub):
    """Add ``import`` to the ``harness`` subcommands."""
    from harness.importers import FORMATS

    p = sub.add_parser("import", help="turn a Ragas or DeepEval dataset export into a case file",
                       description="Convert a dataset export (JSONL, JSON or CSV) into a harness case file. "
                                   "The cases carry no annotation: score them with a real judge (--judge-url).")
    p.add_argument("format", choices=sorted(FORMATS), help="the export's format")
    p.add_argument("file", help="the export file (.jsonl, .json or .csv)")
    p.add_argument("--out", required=True, help="the case file to write (JSONL)")
    return p


def run(args) -> int:
    """Exit 0 with a summary; exit 2 with one line per problem (file, line, field) and nothing written."""
    from harness.cases import CaseFileError
    from harness.importers import convert, write

    try:
        cases = convert(args.format, args.file)
    except CaseFileError as e:
        print(f"harness: cannot import: {e}", file=sys.stderr)
        return 2
    try:
        write(cases, args.out)
    except OSError as e:
        print(f"harness: cannot write {args.out}: {e.strerror or e}", file=sys.stderr)
        return 2
    print(f"{args.out}: {len(cases)} case(s) from {args.file} ({args.format}), no annotations: "
          f"score them with --judge-url URL --judge-model ID")
    return 0
