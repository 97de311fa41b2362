"""``harness run``: score every case with every metric through one judge, print the table.

Nothing heavy is imported at module level (``--help`` stays instant); the vendor stack is imported
only when a vendor metric runs. Commands that extend ``run`` (the report step, from reports/) are
attached by the composition root, ``harness_cli.py``: each has ``check(args)``, run before anything
starts, and ``after(args, outcome) -> int``, run after the store is written (non-zero: exit 1).

Exit codes: 0 done; 1 the run finished but some cells errored (or the run itself failed);
2 bad input (a case file, a metric name, an option).
"""
from __future__ import annotations

import os
import sys

from harness.cases.defaults import DEFAULT_CASES, resolve_cases
from harness.cases.load import CaseFileError, load_cases
from harness.cli.estimate import add_options as estimate_options
from harness.cli.estimate import show as show_estimate
from harness.core import redact
from harness.core.errors import BadInput
from harness.judge.accounting import (
    PriceError,
    add_price_options,
    batch_prices,
    parse_prices,
    prices_from_args,
    traffic_summary,
)
from harness.judge.budget import DEFAULT_CELL_TIMEOUT_S
from harness.judge.reference import refuse_unannotated
from harness.metric import registry

TABLE_MAX_CASES = 40
"""The terminal prints the score table in full up to this many cases; above it, a per-metric summary and
the path of the whole table (``scores.txt`` in the run folder)."""
OPENAI_URL = "https://api.openai.com/v1"
NAME = "run"


def add_parser(sub):
    """Register ``run`` on the ``harness`` subparsers; return its parser."""
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
    em = r.add_argument_group("embeddings (for the metrics that embed text; default: the embedded "
                              "all-MiniLM-L6-v2 int8 ONNX model, offline)")
    em.add_argument("--embed-url", help="OpenAI-compatible base URL serving /embeddings, e.g. http://localhost:11434/v1")
    em.add_argument("--embed-model", help="embedding model id to send with --embed-url")
    em.add_argument("--embed-key-env", metavar="NAME", help="NAME of the env var holding the embedding endpoint's key")
    add_metric_options(r)
    r.add_argument("--cache", default="auto", choices=["auto", "live", "record", "replay"],
                   help="judge cache: live (none), record (reuse + store), replay (cache only). "
                        "auto: live for the reference judge, record for a real judge")
    r.add_argument("--cache-path", help="SQLite cache file (default OUT/judge-cache.sqlite)")
    r.add_argument("--concurrency", type=int, default=8, help="cells in flight at once (default 8)")
    r.add_argument("--workers", type=int, metavar="N",
                   help="worker processes scoring cells, each importing the vendors once (default: picked for "
                        "the run: 1 when it is small (under 200 vendor cells) or has a real judge, else one more per "
                        "200 vendor cells up to the cores and the memory; 1: in this process; when unset, "
                        "$HARNESS_WORKERS if set)")
    r.add_argument("--no-pin", action="store_true",
                   help="let the OS move the worker processes between cores (default: with no more workers "
                        "than cores, each worker stays on a core of its own)")
    r.add_argument("--recompute", action="store_true",
                   help="with --cache record/replay: run every cell's vendor code, even for a cell the cell cache "
                        "holds (same case, metric version, vendor versions, judge, every answer cached)")
    r.add_argument("--repeats", type=int, default=1, metavar="K",
                   help="judge every cell K times (default 1); the report then gives each metric's score spread, "
                        "flipped decisions and failures per repeat (each vendor keeps its own sampling settings)")
    r.add_argument("--cascade", metavar="FILE",
                   help="score with a calibrated cascade (written by 'harness calibrate'): each stage's metric runs "
                        "only on the cases no earlier stage was confident on; the rest go to a person "
                        "(escalated.jsonl in the run folder); see docs/cascade.md")
    estimate_options(r)
    r.add_argument("--ray", metavar="auto|ADDRESS",
                   help="run the workers as Ray actors on an existing Ray cluster (needs the 'ray' extra)")
    r.add_argument("--out", default="reports/out", help="output directory (default reports/out)")
    r.add_argument("--run-id", help="run id; rerunning with an existing id resumes it (default: a timestamp)")
    r.add_argument("--scores-csv", metavar="PATH", help="also write case_id,metric,score,status to PATH")
    r.add_argument("--retries", type=int, default=3, help="judge retries per call after the first (default 3)")
    r.add_argument("--call-timeout", type=float, default=120.0, help="seconds per judge call attempt (default 120)")
    r.add_argument("--max-reply-mb", type=float, default=8.0, metavar="MB",
                   help="refuse a judge reply larger than MB megabytes, read no further (default 8)")
    r.add_argument("--cell-timeout", type=float, default=DEFAULT_CELL_TIMEOUT_S, metavar="S",
                   help=f"total seconds per cell, every judge call, retry and wait included (default "
                        f"{DEFAULT_CELL_TIMEOUT_S:g}): a hung judge costs a cell this long at most; a cell out of "
                        f"time is ERROR and a rerun with the same --run-id retries it")
    r.add_argument("--judge-rpm", type=float, metavar="N",
                   help="the judge's requests per minute as the provider states them: one pace for every metric, "
                        "shared by the workers, adaptive on 429 and the x-ratelimit headers (docs/pace.md)")
    r.add_argument("--judge-tpm", type=float, metavar="N",
                   help="the judge's tokens per minute as the provider states them (estimated from each prompt "
                        "and max_tokens before sending, corrected by the reply's usage; docs/pace.md)")
    r.add_argument("--judge-window", type=float, default=60.0, metavar="S",
                   help="the window the provider enforces its per-minute limits over (default 60; Azure OpenAI: 10)")
    r.add_argument("--judge-batch", action="store_true",
                   help="send every vendor's judge calls of a round through the provider's batch API (OpenAI's "
                        "files + batches), at its batch price; an interrupted batch resumes from its id (docs/batch.md)")
    r.add_argument("--judge-batch-window", type=float, default=5.0, metavar="S",
                   help="batch mode: send the open batch at the latest S seconds after its first call (default 5)")
    r.add_argument("--judge-batch-size", type=int, default=50_000, metavar="N",
                   help="batch mode: send the open batch once N calls have gathered (default 50,000)")
    r.add_argument("--judge-batch-poll", type=float, default=30.0, metavar="S",
                   help="batch mode: seconds between two polls of a batch in flight (default 30)")
    r.add_argument("--batch-price-factor", type=float, default=0.5, metavar="F",
                   help="batch mode: the batch price as a share of the list price, for models whose price table "
                        "entry gives no batch_input/batch_output (default 0.5)")
    r.add_argument("--no-progress", action="store_true", help="no progress bar or progress lines")
    r.add_argument("--faults", metavar="SPEC",
                   help="inject judge faults per attempt (testing), e.g. 500=0.05,429=0.05,timeout=0.01,"
                        "malformed=0.02,truncated=0.02,schema=0.02[,retry_after=1]; see harness/judge/faults.py")
    r.add_argument("--fault-seed", type=int, metavar="N",
                   help="seed of --faults (default 0): the same seed faults the same calls, so a run replays")
    add_price_options(r)
    return r


def run(args) -> int:
    """Dispatch ``harness run`` (Ctrl-C ends it at once with the resume message: ``harness.run.interrupt``)."""
    from harness.run.interrupt import ExitOnInterrupt  # noqa: PLC0415 - lazy: keeps --help from importing the engine

    with ExitOnInterrupt():
        return cmd_run(args)


def _load(path: str):
    try:
        return load_cases(resolve_cases(path))
    except CaseFileError as e:
        raise BadInput(f"invalid case file:\n{e}") from None


def _metrics(spec: str) -> list[str]:

    try:
        names = registry.resolve(spec)
    except registry.UnknownMetric as e:
        raise BadInput(str(e)) from None
    from harness.metric.extras import select  # noqa: PLC0415 - lazy: keeps --help from importing the engine

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
    from harness.run.runner import JudgeConfig  # noqa: PLC0415 - lazy: keeps --help from importing the engine

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
    redact.register(os.environ.get(key_env) if key_env else None)
    redact.register_url(url)
    return JudgeConfig(url=url, model=args.judge_model, key_env=key_env,
                       max_reply_bytes=int(args.max_reply_mb * 2**20))


def metric_options() -> dict[str, tuple]:
    """Every option the registered metrics declare: flag -> (the option, the metrics taking it)."""
    out: dict[str, tuple] = {}
    for name in registry.names():
        for opt in registry.get(name).run_options:
            first, names = out.get(opt.flag, (opt, ()))
            out[opt.flag] = (first, names + (name,))
    return out


def add_metric_options(parser) -> None:
    """The metrics' own options, in a group of their own (discovery imports no vendor package)."""
    options = metric_options()
    if not options:
        return
    g = parser.add_argument_group("metric options (declared by the metrics named in each help)")
    for opt, _ in options.values():
        g.add_argument(opt.flag, type=opt.type, default=opt.default, metavar=opt.metavar, help=opt.help)


def metric_args(args) -> tuple[dict[str, dict], list[str]]:
    """(metric -> constructor keywords, the header's description of each option), exit 2 for a bad value."""
    args_of: dict[str, dict] = {}
    said = []
    for opt, names in metric_options().values():
        value = getattr(args, opt.dest)
        if opt.check is not None:
            try:
                opt.check(value)
            except ValueError as e:
                raise BadInput(f"{opt.flag}: {e}") from None
        for name in names:
            args_of.setdefault(name, {})[opt.arg] = value
        if value is not None:   # an option left unset (no default) is not worth a word in the header
            said.append((names, opt.describe(value)))
    return args_of, said


def embed_config(args):
    """(``EmbedConfig``, metric args, the header's words for them) from the embeddings and metric options."""
    from harness.judge.embeddings import EmbedConfig  # noqa: PLC0415 - lazy: keeps --help from importing the engine

    args_of, said = metric_args(args)
    if args.embed_url is None:
        if args.embed_model or args.embed_key_env:
            raise BadInput("--embed-model and --embed-key-env need --embed-url")
        return EmbedConfig(), args_of, said
    if not args.embed_model:
        raise BadInput("--embed-url needs --embed-model (the embedding model id to send)")
    if args.embed_key_env and not os.environ.get(args.embed_key_env):
        raise BadInput(f"environment variable {args.embed_key_env} is not set (it should hold the embedding key)")
    return EmbedConfig(args.embed_url, args.embed_model, args.embed_key_env), args_of, said


def fault_injector(args):
    """``--faults`` / ``--fault-seed`` as an upstream wrapper (None without ``--faults``)."""
    if args.faults is None:
        if args.fault_seed is not None:
            raise BadInput("--fault-seed needs --faults")
        return None
    from harness.judge.faults import FaultInjector, FaultSpec  # noqa: PLC0415 - lazy: keeps --help from importing the engine

    try:
        spec = FaultSpec.parse(args.faults)
    except ValueError as e:
        raise BadInput(str(e)) from None
    return FaultInjector(spec, args.fault_seed or 0)


WORKERS_ENV = "HARNESS_WORKERS"
"""The ``--workers`` a command uses when the option is not given (a CI job on a shared runner sets 1; the
test suite does, so its runs share the vendor imports of the pytest process)."""


def workers(args) -> int | None:
    """``--workers``, else :data:`WORKERS_ENV`; None (neither): the runner picks the count for the run
    (``auto_workers``). With ``--ray`` the environment's value does not apply."""
    if args.workers is not None or args.ray is not None:
        return args.workers
    raw = os.environ.get(WORKERS_ENV, "").strip()
    if not raw:
        return None
    if not raw.isdigit() or int(raw) < 1:
        raise BadInput(f"{WORKERS_ENV}={raw!r}: expected a whole number of worker processes, at least 1 "
                       "(or unset it: the run picks the count)")
    return int(raw)


def cmd_run(args) -> int:
    if args.concurrency < 1:
        raise BadInput("--concurrency must be at least 1")
    if args.repeats < 1:
        raise BadInput("--repeats must be at least 1")
    if args.retries < 0:
        raise BadInput("--retries must be 0 or more")
    if args.workers is not None and args.workers < 1:
        raise BadInput("--workers must be at least 1")
    if args.ray is not None and args.workers is not None:
        raise BadInput("--ray runs one worker per CPU of the cluster: leave out --workers")
    if args.ray is not None and args.no_pin:
        raise BadInput("--no-pin is for local worker processes: Ray places its actors itself")
    for ext in getattr(args, "extensions", ()):
        ext.check(args)
    try:
        check_run_args(args)
    except ValueError as e:
        raise BadInput(str(e)) from None
    faults = fault_injector(args)
    cascade = load_cascade(args)
    cases = _load(args.cases)
    metrics = _metrics(args.metrics)
    judge = judge_config(args)
    try:
        prices = prices_from_args(args, judge.model)
    except PriceError as e:
        raise BadInput(str(e)) from None
    if judge.is_reference:
        try:
            refuse_unannotated(cases)
        except ValueError as e:
            raise BadInput(str(e)) from None
    embeddings, metric_args, said = embed_config(args)
    from harness.run.runner import RunOptions, run  # noqa: PLC0415 - lazy: keeps --help from importing the engine
    from harness.store.runstore import RunStore  # noqa: PLC0415 - lazy: keeps --help from importing the engine
    from harness.store.table import LEGEND, counts_lines, error_lines, render, write_scores_csv  # noqa: PLC0415 - lazy: keeps --help from importing the engine

    opts = RunOptions(cases=cases, metrics=metrics, judge=judge, cache_mode=args.cache,
                      cache_path=args.cache_path, concurrency=args.concurrency, out_dir=args.out,
                      run_id=args.run_id, progress=not args.no_progress, retry_attempts=args.retries + 1,
                      call_timeout_s=args.call_timeout, upstream_wrapper=faults, embeddings=embeddings,
                      metric_args={m: a for m, a in metric_args.items() if m in metrics},
                      prices=prices, cell_timeout_s=args.cell_timeout, workers=workers(args), ray=args.ray,
                      pin_workers=not args.no_pin,
                      reuse_cells=not args.recompute, repeats=args.repeats,
                      judge_rpm=args.judge_rpm, judge_tpm=args.judge_tpm, judge_window_s=args.judge_window,
                      judge_batch=batch_config(args))
    if args.estimate:   # before any judge call: what the run would cost, then stop
        if opts.judge_batch is not None and prices is not None:   # what the run would cost at the batch price
            prices = batch_prices(prices, opts.judge_batch.price_factor)
        return show_estimate(opts, args, prices)
    print(f"judge: {judge.describe()}   cases: {len(cases)}   metrics: {len(metrics)}", flush=True)
    if opts.judge_batch is not None:
        print(f"judge batch mode: every round's calls go through the judge's batch API, polled every "
              f"{opts.judge_batch.poll_s:g}s, priced at the batch price (docs/batch.md)", flush=True)
    if opts.metric_args:
        shown = "".join(f"   {words}" for names, words in said if set(names) & set(opts.metric_args))
        print(f"embeddings: {embeddings.describe()}{shown}", flush=True)
    if faults is not None:
        print(f"faults: {faults.spec.describe()} per attempt (seed {faults.seed})", flush=True)
    from harness.run.cellwork import WorkerFailed  # noqa: PLC0415 - lazy: keeps --help from importing the engine
    from harness.run.rayrun import RayUnavailable  # noqa: PLC0415 - (imports no Ray)
    from harness.store.runstore import StoreWriteError  # noqa: PLC0415 - lazy: keeps --help from importing the engine

    try:
        if cascade is None:
            outcome = run(opts)
        else:
            from harness.run.cascade import run_cascade  # noqa: PLC0415 - lazy: keeps --help from importing the engine

            outcome, routed = run_cascade(opts, cascade)
    except ValueError as e:
        raise BadInput(str(e)) from None
    except (WorkerFailed, RayUnavailable) as e:   # a dead worker, no cluster: finished cells are kept
        raise BadInput(" ".join(str(e).split())) from None
    except StoreWriteError as e:
        raise BadInput(f"{e}; finished cells are kept, rerun with the same --run-id to resume") from None
    store = RunStore.open(outcome.store_path)
    try:
        shorts = {m: registry.get(m).short_name for m in metrics}
        ids = [c.id for c in cases]
        table = render(store, metrics, ids, shorts)
        if len(ids) <= TABLE_MAX_CASES:
            print(table)
        else:   # a long table scrolls the summary away: the whole of it goes to a file
            path = os.path.join(outcome.run_dir, "scores.txt")
            with open(path, "w", encoding="utf-8") as fh:
                fh.write(table + "\n" + LEGEND + "\n")
            print(f"score table: {len(ids)} cases, shown in full up to {TABLE_MAX_CASES}; the whole table is in "
                  f"{path} (and in the report)")
            print("\n".join(mean_lines(store, metrics)))
        print(LEGEND)
        print("cells per metric:")
        print("\n".join(counts_lines(outcome.counts, metrics)))
        print("judge traffic: " + traffic_line(store, judge.model, (store.spec() or {}).get("prices") if opts.judge_batch
                                               else prices))   # batch mode: at the batch price
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
    if cascade is not None:
        from harness.run.cascade import summary_lines  # noqa: PLC0415 - lazy: keeps --help from importing the engine

        print("\n".join(summary_lines(cascade, routed)))
    report_failed = any([ext.after(args, outcome) for ext in getattr(args, "extensions", ())])
    n_err = sum(c.get("error", 0) for m, c in outcome.counts.items() if m in metrics)
    if outcome.repeat_errors:   # a repeat's error is as unfinished as the run's own: exit 1, and say so
        print(f"repeats: {outcome.repeat_errors} cell(s) of repeats 1-{args.repeats - 1} errored; rerun with "
              f"--run-id {outcome.run_id} to resume them")
    return 1 if (n_err or outcome.repeat_errors or report_failed) else 0


def load_cascade(args):
    """``--cascade FILE``, read and checked before anything runs (exit 2, one line); its stages become the
    metrics. None without ``--cascade``."""
    if not getattr(args, "cascade", None):
        return None
    if args.metrics != "all":
        raise BadInput("--cascade runs the cascade's own stages: leave out --metrics")
    if args.repeats != 1 or args.estimate:
        raise BadInput("--cascade takes neither --repeats nor --estimate")
    from harness.run.cascade_file import CascadeFileError, load  # noqa: PLC0415 - lazy: keeps --help from importing the engine

    try:
        cascade = load(args.cascade, registry.get)
    except CascadeFileError as e:
        raise BadInput(str(e)) from None
    args.metrics = ",".join(s.metric for s in cascade.stages)
    return cascade


def batch_config(args):
    """``--judge-batch`` and its options as a :class:`harness.judge.batch.BatchConfig` (None without it)."""
    if not getattr(args, "judge_batch", False):
        return None
    from harness.judge.batch import BatchConfig  # noqa: PLC0415 - lazy: keeps --help from importing the engine

    try:
        return BatchConfig(window_s=args.judge_batch_window, max_requests=args.judge_batch_size,
                           poll_s=args.judge_batch_poll, price_factor=args.batch_price_factor)
    except ValueError as e:
        raise BadInput(f"--judge-batch: {e}") from None


def traffic_line(store, model: str, prices: dict | None) -> str:
    """Billed, cached and retried judge traffic of the run, and money at the user's price."""
    row = store.rows("SELECT SUM(billed_prompt_tokens), SUM(billed_completion_tokens), "
                     "SUM(cached_prompt_tokens + cached_completion_tokens), SUM(cache_hits), SUM(retries), "
                     "SUM(usage_missing) FROM cells")[0]
    table = parse_prices(prices["models"]) if prices and prices.get("models") else {}
    return traffic_summary(row, table.get(model))


def check_run_args(args) -> None:
    """``harness run``'s options checked before anything runs or is written (ValueError: exit 2)."""
    from harness.run import checks  # noqa: PLC0415 - lazy: keeps --help from importing the engine

    checks.metrics_spec(args.metrics)
    checks.positive_seconds("--call-timeout", args.call_timeout)
    checks.positive_seconds("--cell-timeout", args.cell_timeout)
    for flag, value in (("--judge-rpm", args.judge_rpm), ("--judge-tpm", args.judge_tpm)):
        if value is not None and not 0 < value < float("inf"):
            raise ValueError(f"{flag} must be a number above 0, not {value:g}")
    checks.positive_seconds("--judge-window", args.judge_window)
    if getattr(args, "judge_batch", False) and getattr(args, "ray", None):
        raise ValueError("--judge-batch gathers the run's judge calls in one process: leave out --ray")
    checks.reply_cap_mb(args.max_reply_mb)
    checks.http_url("--judge-url", args.judge_url)
    real = args.judge_url is not None or args.judge_model is not None
    checks.run_outputs(args.out, args.run_id, args.scores_csv, args.cache_path,
                       uses_cache=args.cache in ("record", "replay") or (args.cache == "auto" and real))


def mean_lines(store, metrics: list[str]) -> list[str]:
    """Per metric: the mean, lowest and highest score over its scored cells."""
    rows = {m: (n, avg, lo, hi) for m, n, avg, lo, hi in store.rows(
        "SELECT metric, COUNT(*), AVG(score), MIN(score), MAX(score) FROM cells WHERE status = 'scored' "
        "GROUP BY metric")}
    w = max(len(m) for m in metrics)
    out = []
    for m in metrics:
        n, avg, lo, hi = rows.get(m, (0, None, None, None))
        out.append(f"  {m.ljust(w)}  " + (f"mean {avg:.3f} over {n} scored (min {lo:.2f}, max {hi:.2f})" if n
                                            else "no scored cell"))
    return out
