"""``harness perturb CASES --out FILE``: write the cases and their rule-based variants (meaning-preserving
and meaning-changing edits, annotations moved to match) for flip and detection rates; see
``docs/robustness.md`` and :mod:`harness.cases.perturb`."""
from __future__ import annotations

import json
import os

from harness.cases.defaults import resolve_cases
from harness.cases.load import CaseFileError, case_to_json, load_cases
from harness.cases.perturb import KINDS, perturb, tags_of
from harness.core.errors import BadInput

NAME = "perturb"


def add_parser(sub):
    """Register ``perturb`` on the ``harness`` subparsers; return its parser."""
    p = sub.add_parser("perturb", help="write seeded meaning-preserving and meaning-changing variants of "
                                       "annotated cases, for flip and detection rates")
    p.add_argument("cases", help="a JSONL case file (annotated cases; an unannotated case gets no variant)")
    p.add_argument("--out", required=True, help="the JSONL file to write: every case, then its variants")
    p.add_argument("--seed", type=int, default=0, help="seed of every rule's choice (default 0)")
    p.add_argument("--kinds", default=",".join(KINDS), help=f"comma-separated edit kinds (default all: {', '.join(KINDS)})")
    p.add_argument("--variants-only", action="store_true", help="leave the original cases out of --out")
    return p


def run(args) -> int:
    """Write ``--out``; print how many variants of each kind; BadInput (one line) on a bad file or kind."""
    kinds = [k.strip() for k in args.kinds.split(",") if k.strip()]
    bad = [k for k in kinds if k not in KINDS]
    if bad or not kinds:
        raise BadInput(f"--kinds: unknown edit kind {bad[0]!r}; known: {', '.join(KINDS)}" if bad
                       else f"--kinds: no kind given; known: {', '.join(KINDS)}")
    try:
        cases = load_cases(resolve_cases(args.cases))
    except CaseFileError as e:
        first = str(e).splitlines()[0]
        more = len(e.problems) - 1
        raise BadInput(first + (f" (and {more} more problem(s); harness validate lists them)" if more else "")) from None
    if os.path.abspath(args.out) == os.path.abspath(cases.path):
        raise BadInput(f"--out {args.out}: is the input file; write the variants to another file")
    variants = {c.id: perturb(c, kinds, args.seed) for c in cases}
    lines = [] if args.variants_only else [case_to_json(c) for c in cases]
    for c in cases:
        lines += [case_to_json(v) for v in variants[c.id]]
    tmp = f"{args.out}.tmp"
    try:
        with open(tmp, "w", encoding="utf-8") as fh:
            fh.writelines(json.dumps(o, ensure_ascii=False) + "\n" for o in lines)
        os.replace(tmp, args.out)
    except OSError as e:
        raise BadInput(f"--out {args.out}: cannot be written: {e.strerror or type(e).__name__}") from None
    counts: dict[str, int] = {}
    for vs in variants.values():
        for v in vs:
            counts[tags_of(v)["kind"]] = counts.get(tags_of(v)["kind"], 0) + 1
    total = sum(counts.values())
    print(f"{args.out}: {len(cases)} cases, {total} variants (seed {args.seed}): "
          + ", ".join(f"{k} {counts.get(k, 0)}" for k in kinds))
    return 0
