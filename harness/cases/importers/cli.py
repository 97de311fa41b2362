"""``harness import FORMAT FILE --out CASES``: the subcommand (parser and command)."""
from __future__ import annotations

import sys

from harness.cases.importers import FORMATS, convert, module, write
from harness.cases.importers.labelled import ImportFileError
from harness.cases.importers.labelled import write as write_labelled
from harness.cases.load import CaseFileError

NAME = "import"


def add_parser(sub):
    """Add ``import`` to the ``harness`` subcommands."""

    p = sub.add_parser("import", help="turn a Ragas/DeepEval export, a RAGTruth/FaithBench release or "
                            "production traces (otel) into a case file",
                       description="Convert a dataset export (JSONL, JSON or CSV) into a harness case file. "
                                   "Ragas and DeepEval cases carry no annotation: score them with a real judge "
                                   "(--judge-url). RAGTruth (RESPONSE_JSONL SOURCE_INFO_JSONL) and FaithBench "
                                   "(BATCH_JSON...) cases carry the human hallucination spans; a summary says "
                                   "what was kept and what was dropped, by reason. otel: OpenTelemetry / "
                                   "OpenInference spans as Phoenix, Langfuse, MLflow tracing or OpenLLMetry "
                                   "export them, one case per trace (retriever documents as contexts, the root "
                                   "span's input or the LLM span's user message as question, the LLM span's "
                                   "output as answer; every dropped trace named with its reason).")
    p.add_argument("format", choices=sorted(FORMATS), help="the export's format")
    p.add_argument("files", nargs="+", metavar="FILE",
                   help="the export file (.jsonl, .json or .csv); ragtruth: RESPONSE_JSONL SOURCE_INFO_JSONL; "
                        "faithbench: one or more batch JSON files; otel: one or more span exports")
    p.add_argument("--sample", type=int, metavar="N", help="otel: keep N of the usable traces, drawn at random")
    p.add_argument("--seed", type=int, default=0, help="otel: the seed of --sample (default 0)")
    p.add_argument("--out", required=True, help="the case file to write (JSONL)")
    return p


def run(args) -> int:
    """Exit 0 with a summary; exit 2 with one line per problem (file, line, field) and nothing written."""

    if args.format != "otel" and (args.sample is not None or args.seed):
        print("harness: --sample and --seed apply to otel imports only", file=sys.stderr)
        return 2
    if args.sample is not None and args.sample < 1:
        print("harness: --sample must be at least 1", file=sys.stderr)
        return 2
    if hasattr(module(args.format), "import_files"):
        return run_labelled(args)
    if len(args.files) != 1:
        print(f"harness: import {args.format} takes one file, got {len(args.files)}", file=sys.stderr)
        return 2
    args.file = args.files[0]
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


def run_labelled(args) -> int:
    """RAGTruth / FaithBench: keep or drop every row, print the summary; exit 2 when nothing is kept."""

    mod = module(args.format)
    try:
        result = mod.import_files(args.files, sample=args.sample, seed=args.seed) if args.format == "otel" \
            else mod.import_files(args.files)
    except ImportFileError as e:
        print(f"harness: cannot import: {e}", file=sys.stderr)
        return 2
    for line in result.summary():
        print(line)
    if not result.cases:
        print(f"harness: cannot import: no {args.format} row was kept; nothing written", file=sys.stderr)
        return 2
    try:
        write_labelled(result.cases, args.out)
    except OSError as e:
        print(f"harness: cannot write {args.out}: {e.strerror or e}", file=sys.stderr)
        return 2
    said = getattr(mod, "WRITTEN", "with human span labels; the reference judge reads each answer sentence as a claim")
    print(f"{args.out}: {len(result.cases)} case(s) ({args.format}), {said}")
    return 0
