"""The ``harness`` command line. Only argparse is imported at start-up: ``--help`` stays instant;
each command imports what it needs (the vendor stack only when a vendor metric runs).

Exit codes: 0 done; 1 the run finished but some cells errored (or the run itself failed);
2 bad input (a case file, a metric name, an option).
"""
from __future__ import annotations

import argparse
import os
import sys

from harness.defaults import DEFAULT_CASES

OPENAI_URL = "https://api.openai.com/v1"


class BadInput(Exception):
    """Exit code 2 with this message."""


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="harness",
        description="Run Ragas, DeepEval and TruLens groundedness metrics and an in-house span scorer "
                    "on the same annotated cases, through one judge, and show where they diverge.")
    p.add_argument("--version", action="version", version=f"%(prog)s {version()}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")

    r = sub.add_parser("run", help="score every case with every metric (default: all, reference judge)",
                       description="Score cases x metrics through one judge; resumable by --run-id.")
    r.add_argument("--cases", default=DEFAULT_CASES, help=f"JSONL case file (default {DEFAULT_CASES})")
    r.add_argument("--metrics", default="all",
                   help="comma-separated metric names or vendor prefixes (default: all registered; "
                        "see 'harness metrics')")
    j = r.add_argument_group("judge (default: the offline reference judge)")
    j.add_argument("--judge-url", help="OpenAI-compatible base URL, e.g. http://localhost:11434/v1")
    j.add_argument("--judge-model", help="model id to send; alone it means OpenAI's API (pin a dated id)")
    j.add_argument("--judge-key-env", metavar="NAME",
                   help="NAME of the env var holding the key (default OPENAI_API_KEY for OpenAI's URL, "
                        "none otherwise); the key is never written anywhere")
    j.add_argument("--judge-latency-ms", type=float, default=0.0,
                   help="reference judge only: injected latency per call (benchmarks)")
    r.add_argument("--cache", default="auto", choices=["auto", "live", "record", "replay"],
                   help="judge cache: live (none), record (reuse + store), replay (cache only). "
                        "auto: live for the reference judge, record for a real judge")
    r.add_argument("--cache-path", help="SQLite cache file (default OUT/judge-cache.sqlite)")
    r.add_argument("--concurrency", type=int, default=8, help="cells in flight at once (default 8)")
    r.add_argument("--out", default="reports/out", help="output directory (default reports/out)")
    r.add_argument("--run-id", help="run id; rerunning with an existing id resumes it (default: a timestamp)")
    r.add_argument("--scores-csv", metavar="PATH", help="also write case_id,metric,score,status to PATH")
    r.add_argument("--retries", type=int, default=3, help="judge retries per call after the first (default 3)")
    r.add_argument("--call-timeout", type=float, default=120.0, help="seconds per judge call attempt (default 120)")
    r.add_argument("--no-progress", action="store_true", help="no progress bar or progress lines")
    r.add_argument("--faults", metavar="SPEC",
                   help="inject judge faults per attempt (testing), e.g. 500=0.05,429=0.05,timeout=0.01,"
                        "malformed=0.02,truncated=0.02,schema=0.02[,retry_after=1]; see harness/faults.py")
    r.add_argument("--fault-seed", type=int, metavar="N",
                   help="seed of --faults (default 0): the same seed faults the same calls, so a run replays")
    from reports.divergence import DEFAULT_THRESHOLD

    r.add_argument("--divergence-threshold", type=float, default=DEFAULT_THRESHOLD,
                   help=f"report: smallest score spread that counts as a divergence (default {DEFAULT_THRESHOLD})")

    sub.add_parser("metrics", help="list the registered metrics")
    from reports.cli import add_parsers as add_report_parsers

    add_report_parsers(sub)
    for command in _store_commands().values():
        command.add_parser(sub)

    from harness.importers.cli import add_parser as add_import_parser

    add_import_parser(sub)

    v = sub.add_parser("validate", help="check a case file and report every problem")
    v.add_argument("cases", nargs="?", default=DEFAULT_CASES)

    jd = sub.add_parser("judge", help="the reference judge as a standalone server")
    jsub = jd.add_subparsers(dest="judge_command", metavar="SUBCOMMAND")
    s = jsub.add_parser("serve", help="serve the reference judge, OpenAI-compatible, on 127.0.0.1")
    s.add_argument("--cases", default=DEFAULT_CASES, help="the case file whose annotations it answers from")
    s.add_argument("--port", type=int, default=8765, help="port on 127.0.0.1 (0: any free port)")
    s.add_argument("--latency-ms", type=float, default=0.0, help="injected latency per call")
    return p


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 2
    try:
        if args.command == "run":
            return cmd_run(args)
        if args.command == "metrics":
            return cmd_metrics(args)
        if args.command == "validate":
            return cmd_validate(args)
        if args.command == "import":
            from harness.importers.cli import run as run_import

            return run_import(args)
        if args.command in ("report", "cards"):
            from reports.cli import run_command

            return run_command(args)
        if args.command in _store_commands():
            return _store_commands()[args.command].run(args)
        if args.command == "judge":
            if args.judge_command != "serve":
                parser.parse_args(["judge", "--help"])
            return cmd_judge_serve(args)
    except BadInput as e:
        print(f"harness: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("harness: interrupted; finished cells are kept, rerun with the same --run-id to resume",
              file=sys.stderr)
        return 1
    parser.error(f"unknown command {args.command!r}")
    return 2


def _store_commands() -> dict:
    """The subcommands that read run stores (``reports/commands``), by name."""
    from reports.commands import check, compare, export

    return {"check": check, "compare": compare, "export": export}


def version() -> str:
    """The installed package's version (the source tree's when it is not installed)."""
    from importlib import metadata

    try:
        return metadata.version("groundedness-harness")
    except metadata.PackageNotFoundError:
        from harness import __version__

        return __version__


def _load(path: str):
    from harness.cases import CaseFileError, load_cases
    from harness.defaults import resolve_cases

    try:
        return load_cases(resolve_cases(path))
    except CaseFileError as e:
        raise BadInput(f"invalid case file:\n{e}") from None


def _metrics(spec: str) -> list[str]:
    from harness import registry

    try:
        names = registry.resolve(spec)
    except registry.UnknownMetric as e:
        raise BadInput(str(e)) from None
    from harness.extras import select

    try:
        names, notes = select(spec, names)
    except ValueError as e:
        raise BadInput(str(e)) from None
    for note in notes:
        print(f"harness: {note}", file=sys.stderr)
    if not names:
        raise BadInput("no metrics selected")
    return names


def judge_config(args):
    from harness.runner import JudgeConfig

    if args.judge_url is None and args.judge_model is None:
        if args.judge_key_env:
            raise BadInput("--judge-key-env needs --judge-url or --judge-model")
        return JudgeConfig(latency_ms=args.judge_latency_ms)
    if args.judge_latency_ms:
        raise BadInput("--judge-latency-ms applies to the reference judge only")
    url = args.judge_url or OPENAI_URL
    if args.judge_model is None:
        raise BadInput("--judge-url needs --judge-model (the model id to send)")
    key_env = args.judge_key_env or ("OPENAI_API_KEY" if url == OPENAI_URL else None)
    if key_env and not os.environ.get(key_env) and getattr(args, "cache", None) != "replay":   # replay: no key
        raise BadInput(f"environment variable {key_env} is not set (it should hold the judge's key)")
    return JudgeConfig(url=url, model=args.judge_model, key_env=key_env)


def fault_injector(args):
    """``--faults`` / ``--fault-seed`` as an upstream wrapper (None without ``--faults``)."""
    if args.faults is None:
        if args.fault_seed is not None:
            raise BadInput("--fault-seed needs --faults")
        return None
    from harness.faults import FaultInjector, FaultSpec

    try:
        spec = FaultSpec.parse(args.faults)
    except ValueError as e:
        raise BadInput(str(e)) from None
    return FaultInjector(spec, args.fault_seed or 0)


def cmd_run(args) -> int:
    if args.concurrency < 1:
        raise BadInput("--concurrency must be at least 1")
    if args.retries < 0:
        raise BadInput("--retries must be 0 or more")
    from reports.cli import check_threshold

    try:
        check_threshold(args.divergence_threshold)
    except ValueError as e:
        raise BadInput(str(e)) from None
    faults = fault_injector(args)
    cases = _load(args.cases)
    metrics = _metrics(args.metrics)
    judge = judge_config(args)
    if judge.is_reference:
        from harness.reference import refuse_unannotated

        try:
            refuse_unannotated(cases)
        except ValueError as e:
            raise BadInput(str(e)) from None
    from harness import registry
    from harness.runner import RunOptions, run
    from harness.store import RunStore
    from harness.table import LEGEND, counts_lines, error_lines, render, write_scores_csv

    opts = RunOptions(cases=cases, metrics=metrics, judge=judge, cache_mode=args.cache,
                      cache_path=args.cache_path, concurrency=args.concurrency, out_dir=args.out,
                      run_id=args.run_id, progress=not args.no_progress, retry_attempts=args.retries + 1,
                      call_timeout_s=args.call_timeout, upstream_wrapper=faults)
    print(f"judge: {judge.describe()}   cases: {len(cases)}   metrics: {len(metrics)}", flush=True)
    if faults is not None:
        print(f"faults: {faults.spec.describe()} per attempt (seed {faults.seed})", flush=True)
    try:
        outcome = run(opts)
    except ValueError as e:
        raise BadInput(str(e)) from None
    store = RunStore.open(outcome.store_path)
    try:
        shorts = {m: registry.get(m).short_name for m in metrics}
        ids = [c.id for c in cases]
        print(render(store, metrics, ids, shorts))
        print(LEGEND)
        print("cells per metric:")
        print("\n".join(counts_lines(outcome.counts, metrics)))
        errs = error_lines(store)
        if errs:
            print("errors:")
            print("\n".join(errs))
        if args.scores_csv:
            write_scores_csv(store, args.scores_csv, metrics, ids)
            print(f"scores: {args.scores_csv}")
    finally:
        store.close()
    print(f"store: {outcome.store_path}")
    from reports.cli import report_after_run

    report_failed = report_after_run(outcome.run_dir, args.divergence_threshold)
    n_err = sum(c.get("error", 0) for m, c in outcome.counts.items() if m in metrics)
    return 1 if (n_err or report_failed) else 0


def cmd_metrics(args) -> int:
    from harness import registry
    from harness.extras import missing_vendor

    for name in registry.names():
        cls = registry.get(name)
        missing = missing_vendor(cls)
        state = f"  [unavailable: {missing}]" if missing else ""
        print(f"{name:36} v{cls.version:4} {cls.display_name} (unit: {cls.unit}){state}")
    return 0


def cmd_judge_serve(args) -> int:
    import errno

    from harness.gateway import serve_reference

    cases = _load(args.cases)
    try:
        serve_reference(cases.path, args.port, args.latency_ms)
    except OSError as e:
        if e.errno == errno.EADDRINUSE:
            raise BadInput(f"judge serve: port {args.port} on 127.0.0.1 is already in use; "
                           "pick another --port (0: any free port)") from None
        raise BadInput(f"judge serve: cannot listen on 127.0.0.1:{args.port}: {e.strerror or e}") from None
    return 0


def cmd_validate(args) -> int:
    cases = _load(args.cases)
    n_claims = sum(len(c.annotation.claims) for c in cases if c.annotation is not None)
    bare = sum(c.annotation is None for c in cases)
    note = f" ({bare} without annotation: a real judge is needed for those)" if bare else ""
    print(f"{args.cases}: {len(cases)} cases, {n_claims} claims, valid{note}")
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
