"""``harness run --estimate``: the expected judge calls, tokens, money and time of a run, printed before
any judge call (:mod:`harness.run.estimate` computes them)."""
from __future__ import annotations

from dataclasses import replace

from harness.core.errors import BadInput
from harness.judge.accounting import parse_prices
from harness.metric import registry


def add_options(r) -> None:
    """The estimate's options on ``harness run``."""
    g = r.add_argument_group("estimate (print what the run would cost, then stop; nothing is sent to the judge)")
    g.add_argument("--estimate", action="store_true",
                   help="render each metric's prompts on a sample of the cases against the offline reference "
                        "judge and print the expected calls, tokens and money per metric, and the time")
    g.add_argument("--estimate-cases", type=int, metavar="N",
                   help="estimate for N answers (default: the cases given), e.g. 10000")
    g.add_argument("--estimate-latency", type=float, default=1.0, metavar="S",
                   help="seconds per judge call for the time estimate (default 1)")
    g.add_argument("--estimate-sample", type=int, default=30, metavar="N",
                   help="cases whose prompts are rendered (default 30, spread over the file)")


def show(opts, args, prices) -> int:
    """Print the estimate of ``opts`` (a ``RunOptions``); 0."""
    from harness.run.estimate import estimate, lines  # noqa: PLC0415 - lazy: keeps --help from importing the engine

    if args.estimate_cases is not None and args.estimate_cases < 1:
        raise BadInput("--estimate-cases must be at least 1")
    if args.estimate_sample < 1:
        raise BadInput("--estimate-sample must be at least 1")
    if args.estimate_latency < 0:
        raise BadInput("--estimate-latency must be 0 or more")
    est = estimate(opts, sample=args.estimate_sample)
    if args.estimate_cases is not None:
        est = replace(est, cases=args.estimate_cases)
    price = None
    if prices and prices.get("models"):
        price = parse_prices(prices["models"]).get(opts.judge.model)
    shorts = {m: registry.get(m).short_name for m in opts.metrics}
    print("\n".join(lines(est, shorts, price, opts.concurrency, args.estimate_latency)))
    return 0
