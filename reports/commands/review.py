"""``harness review``: label a sample of answers claim by claim in a local web app (see
:mod:`harness.reports.review`), then read the reviewers' agreement or write the labels as annotated cases.

    harness review RUN --labels team.sqlite --sample 50 --reviewer alice   # draw, then serve
    harness review --labels team.sqlite --reviewer bob                     # a second reviewer, same sample
    harness review --labels team.sqlite --reviewer carol --adjudicator carol   # carol settles disagreements
    harness review --labels team.sqlite --guidelines rules.md              # rules shown beside every answer
    harness review --labels team.sqlite --kappa                            # inter-annotator kappa
    harness review --labels team.sqlite --export labelled.jsonl            # the labels as a case file
    harness agree RUN --labels team.sqlite                                 # metrics vs. the team's labels
"""
from __future__ import annotations

import asyncio
import os
import sqlite3
import time

from harness.core.errors import BadInput
from harness.reports.commands import add_out_argument

NAME = "review"


def add_parser(sub):
    """Register ``review`` on the ``harness`` subparsers; return its parser."""
    p = sub.add_parser("review", help="label a sample of answers claim by claim in a local web app",
                       description="Draw a seeded sample of answers from a run (part uniform, part weighted "
                                   "toward answers where the metrics disagree; inclusion probabilities recorded) "
                                   "or from a case file, and serve a labelling app on 127.0.0.1. Every action is "
                                   "saved to the labels file at once.")
    p.add_argument("source", nargs="?", metavar="SOURCE",
                   help="a run (directory, store.sqlite or run id under --out) or a case file (.jsonl); "
                        "needed only to draw the sample")
    add_out_argument(p)
    p.add_argument("--labels", required=True, help="the labels file (SQLite): made on the first call, kept after")
    p.add_argument("--sample", type=int, default=50, help="answers to draw (default 50, the seeds' figure)")
    p.add_argument("--seed", type=int, default=0, help="seed of the draw (default 0)")
    p.add_argument("--uniform-share", type=float, default=0.5,
                   help="share of the sample spread evenly over all answers; the rest leans toward "
                        "disagreement (default 0.5)")
    p.add_argument("--reviewer", default="reviewer", help="your name, saved with every label (default 'reviewer')")
    p.add_argument("--port", type=int, default=8765, help="port on 127.0.0.1 (default 8765; 0: any free port)")
    p.add_argument("--next", type=int, metavar="N", help="draw N more answers from RUN where the two best metrics so far "
                                                         "disagree (inclusion probabilities kept), then exit")
    p.add_argument("--kappa", action="store_true", help="print the reviewers' kappa and disagreements, then exit")
    p.add_argument("--export", metavar="CASES", help="write the labelled answers as a case file, then exit")
    p.add_argument("--reviewers", help="the raters whose kappa --kappa gives and whose agreed labels --export takes "
                                       "(default: everyone who labelled but the adjudicators)")
    p.add_argument("--guidelines", metavar="FILE", help="a Markdown or text file of labelling guidelines, kept in the "
                                                        "labels file and shown beside every answer to every reviewer "
                                                        "(a later --guidelines replaces them)")
    p.add_argument("--assign", metavar="A,B", help="assign the sample's answers to these reviewers: the first --overlap "
                                                   "answers to everyone, the rest dealt out in turn; each sees their own")
    p.add_argument("--overlap", type=int, default=0, metavar="K",
                   help="with --assign: the first K answers go to every reviewer, for their kappa (default 0)")
    p.add_argument("--adjudicator", metavar="NAME", help="record NAME in the labels file as an adjudicator: their "
                                                         "labels settle disagreements and they are not a rater")
    return p


def run(args) -> int:
    """Draw (when needed), then serve, report kappa or export."""
    from harness.reports.review.store import LabelsFileError, LabelStore  # noqa: PLC0415 - lazy: keeps --help from importing the review code

    _check_options(args)
    try:
        store = LabelStore(args.labels)
    except LabelsFileError as e:
        raise BadInput(str(e)) from None
    except Exception as e:  # noqa: BLE001 - not a SQLite file, unwritable folder: one line, exit 2
        raise BadInput(f"--labels {args.labels}: cannot be opened as a labels file ({e})") from None
    try:
        return _run(store, args)
    except sqlite3.Error as e:   # a file that opened but cannot be read through (cut short, damaged)
        raise BadInput(f"--labels {args.labels}: cannot be opened as a labels file ({e})") from None
    except LabelsFileError as e:
        raise BadInput(str(e)) from None
    finally:
        store.close()


def _check_options(args) -> None:
    """Options that are wrong whatever the labels file holds: said before anything is drawn or served."""
    from harness.reports.review.server import reviewer_name  # noqa: PLC0415 - lazy: keeps --help from importing the review code
    from harness.run.checks import port  # noqa: PLC0415 - lazy: keeps --help from importing the engine

    try:
        port(args.port)
        args.reviewer = reviewer_name(args.reviewer)
    except ValueError as e:
        raise BadInput(str(e) if str(e).startswith("--port") else f"--reviewer {e}") from None
    if args.export and os.path.isdir(args.export):
        raise BadInput(f"--export {args.export}: is a folder; give the path of the case file to write")


def _run(store, args) -> int:
    """The command on an open labels file."""
    if args.next is not None:
        return _next(store, args)
    guidelines = _read_guidelines(args.guidelines) if getattr(args, "guidelines", None) else None
    if not store.has_sample():
        _draw(store, args)
    if guidelines is not None:
        store.set_guidelines(guidelines, args.guidelines)
        print(f"review: guidelines from {args.guidelines} ({len(guidelines)} characters) kept in {args.labels}",
              flush=True)
    if getattr(args, "assign", None):
        _assign(store, args)
    if getattr(args, "adjudicator", None):
        from harness.reports.review.server import reviewer_name  # noqa: PLC0415 - lazy: keeps --help from importing the review code

        try:
            args.adjudicator = reviewer_name(args.adjudicator)   # "carol\n" is carol, as for --reviewer
        except ValueError as e:
            raise BadInput(f"--adjudicator {e}") from None
        store.add_adjudicator(args.adjudicator)
    elif args.source:
        meta = store.meta()
        print(f"review: {args.labels} already holds its sample ({meta.get('size')} answers from "
              f"{meta.get('source')} {meta.get('name')}, seed {meta.get('seed')}); SOURCE and --sample are not "
              "used again", flush=True)
    if args.kappa:
        return _kappa(store, args)
    if args.export:
        return _export(store, args)
    return _serve(store, args)


GUIDELINES_MAX = 256 * 1024
"""Bytes of a guidelines file (a page of rules, not a book)."""


def _read_guidelines(path: str) -> str:
    """The text of a --guidelines file (UTF-8); BadInput naming the file (and line) otherwise."""
    try:
        with open(path, "rb") as fh:
            raw = fh.read(GUIDELINES_MAX + 1)
    except OSError as e:
        raise BadInput(f"--guidelines {path}: cannot be read ({e.strerror or e})") from None
    if len(raw) > GUIDELINES_MAX:
        raise BadInput(f"--guidelines {path}: larger than {GUIDELINES_MAX // 1024} KiB; keep the guidelines to a few pages")
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        line = raw[:e.start].count(b"\n") + 1
        raise BadInput(f"--guidelines {path}, line {line}: not UTF-8 text ({e.reason} at byte {e.start})") from None
    if "\x00" in text:
        raise BadInput(f"--guidelines {path}, line {text[:text.index(chr(0))].count(chr(10)) + 1}: a NUL byte; "
                       "expected a Markdown or text file")
    if not text.strip():
        raise BadInput(f"--guidelines {path}: is empty")
    return text


def _assign(store, args) -> None:
    from harness.reports.review.assign import split  # noqa: PLC0415 - lazy: keeps --help from importing the review code
    from harness.reports.review.server import reviewer_name  # noqa: PLC0415 - lazy: keeps --help from importing the review code

    try:
        names = [reviewer_name(n) for n in args.assign.split(",")]
        positions = split(len(store.picks()), names, args.overlap)
    except ValueError as e:
        raise BadInput(str(e) if str(e).startswith("--") else f"--assign {e}") from None
    store.set_assignment({"reviewers": names, "overlap": args.overlap, "positions": positions})
    print("review: assigned " + ", ".join(f"{n} {len(p)}" for n, p in positions.items())
          + f" answers (the first {args.overlap} to everyone)", flush=True)


def _draw(store, args) -> None:
    from harness.reports.review import sampling, source  # noqa: PLC0415 - lazy: keeps --help from importing the review code

    if not args.source:
        raise BadInput(f"--labels {args.labels} holds no sample yet: name the run or case file to draw it from")
    try:
        src = source.load(args.source, args.out)
        picks = sampling.draw(src.order, src.disagreement, args.sample, args.seed, args.uniform_share)
    except (FileNotFoundError, ValueError) as e:
        raise BadInput(str(e)) from None
    store.write_sample(picks, src.cases, src.verdicts, {
        "source": src.kind, "name": src.name, "seed": args.seed, "size": len(picks), "population": len(src.order),
        "uniform_share": args.uniform_share, "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())})
    print(f"review: drew {len(picks)} of {len(src.order)} answers from {src.kind} {src.name} "
          f"(seed {args.seed}, uniform share {args.uniform_share}) into {args.labels}", flush=True)


def _next(store, args) -> int:
    from harness.reports.review.next_wave import draw_next  # noqa: PLC0415 - lazy: keeps --help from importing the review code

    if not store.has_sample():
        raise BadInput(f"--next adds to a sample: {args.labels} holds none yet (harness review RUN --labels "
                       f"{args.labels} --sample N draws the first)")
    if not args.source:
        raise BadInput("--next needs the run the sample was drawn from: harness review RUN --labels L --next N")
    if args.next < 1:
        raise BadInput(f"--next {args.next}: expected at least 1 answer")
    try:
        n, pair, left = draw_next(store, args.labels, args.source, args.out, args.next, args.seed, args.uniform_share)
    except (FileNotFoundError, ValueError) as e:
        raise BadInput(str(e)) from None
    lean = f"where {' and '.join(pair)} disagree" if pair else "where the metrics' scores spread (no two kappas yet)"
    print(f"review: drew {n} more of the {left} answers not yet drawn, leaning toward answers {lean}, into "
          f"{args.labels}; label them with harness review --labels {args.labels} --reviewer NAME")
    return 0


def _kappa(store, args) -> int:
    from harness.reports.review import reviewers  # noqa: PLC0415 - lazy: keeps --help from importing the review code

    picks = store.picks()
    order = [p.case_id for p in picks]
    names = [r.strip() for r in (args.reviewers or "").split(",") if r.strip()] or None
    latest = store.latest()
    unknown = [r for r in names or [] if r not in latest]
    if unknown:
        raise BadInput(f"--reviewers: no labels by {unknown[0]!r} in {args.labels}; reviewers: "
                       f"{', '.join(sorted(latest)) or '(none yet)'}")
    k = reviewers.compare(order, {c: store.case_json(c)["answer"] for c in order}, latest, names,
                          store.adjudicators())
    print(reviewers.text(k))
    return 0


def _export(store, args) -> int:
    from harness.reports.review.labelled import collect, write_cases  # noqa: PLC0415 - lazy: keeps --help from importing the review code

    names = [r.strip() for r in (args.reviewers or "").split(",") if r.strip()] or None
    try:
        lab = collect(store, names)
    except ValueError as e:
        raise BadInput(str(e)) from None
    try:
        n = write_cases(lab, args.export)
    except OSError as e:
        raise BadInput(f"--export {args.export}: cannot write the case file ({e.strerror or e})") from None
    left = ", ".join(f"{k} {w}" for w, k in lab.left_out.items()) or "none"
    print(f"review: wrote {n} labelled answers to {args.export} (left out: {left})")
    return 0


def _serve(store, args) -> int:
    from harness.reports.review.server import serve  # noqa: PLC0415 - lazy: keeps --help from importing the review code

    store.check_writable()   # a file the app cannot save to is refused now, not after the first label

    def ready(url: str) -> None:
        print(f"review: {len(store.picks())} answers, reviewer {args.reviewer}, labels {args.labels}", flush=True)
        print(f"review: open {url} (Ctrl-C stops; every label is already saved)", flush=True)

    try:
        asyncio.run(serve(store, args.reviewer, args.port, ready))
    except OSError as e:
        raise BadInput(f"--port {args.port}: cannot listen on 127.0.0.1 ({e.strerror or e})") from None
    except KeyboardInterrupt:
        pass
    return 0
