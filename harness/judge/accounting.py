"""Judge accounting: what each request cost, kept apart as billed upstream, served from the cache,
and retried; and money from a price table the user supplies (no built-in prices: they age silently).

A price table maps a model id to its input and output price in money units per million tokens::

    {"gpt-4o-mini-2024-07-18": {"input": 0.15, "output": 0.60}}

read from a JSON file (``--prices FILE``) or given for the run's judge model with ``--price-in`` /
``--price-out``. An entry may also give the model's batch price (``"batch_input"``, ``"batch_output"``): a
run in batch mode (``--judge-batch``) is priced at it, else at the list price times ``--batch-price-factor``
(0.5 by default: :func:`batch_prices`). Money is computed from billed tokens only: a cache hit costs nothing again, and a
reply that carried no ``usage`` is counted as such (its tokens are unknown, never guessed).
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass, replace


def usage_of(resp) -> tuple[int, int, bool]:
    """(prompt tokens, completion tokens, usage present) from a chat.completion response; a missing
    or garbled ``usage`` gives zeros and False, never an exception.

    >>> usage_of({"usage": {"prompt_tokens": 12, "completion_tokens": 3}})
    (12, 3, True)
    >>> usage_of({"choices": []}), usage_of({"usage": {"prompt_tokens": "x"}}), usage_of(None)
    ((0, 0, False), (0, 0, False), (0, 0, False))
    """
    usage = resp.get("usage") if isinstance(resp, dict) else None
    if not isinstance(usage, dict):
        return 0, 0, False
    if "prompt_tokens" not in usage and "input_tokens" in usage:   # a Responses API ``response``
        usage = {"prompt_tokens": usage["input_tokens"], "completion_tokens": usage.get("output_tokens", 0)}
    out = []
    for key in ("prompt_tokens", "completion_tokens"):
        v = usage.get(key, 0)
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v < 0:
            return 0, 0, False
        out.append(int(v))
    return out[0], out[1], True


EMBEDDINGS_STEP = "embeddings"
"""The step of a ``/v1/embeddings`` call: not the judge's traffic (the embedded model serves it by
default, at no cost), so it counts in the totals but not in the judge's billed or cached tokens."""


def add_call(ledger, rec):
    """The ledger with one call record added (see :class:`harness.core.records.Ledger` for the fields)."""
    judge = getattr(rec, "step", "") != EMBEDDINGS_STEP
    refused = getattr(rec, "refused", False)   # a chat-only judge refusing the Responses API: not a failure
    billed = rec.ok and not rec.cached and judge
    return replace(
        ledger, calls=ledger.calls + 1, prompt_tokens=ledger.prompt_tokens + rec.prompt_tokens,
        completion_tokens=ledger.completion_tokens + rec.completion_tokens,
        billed_prompt_tokens=ledger.billed_prompt_tokens + (rec.prompt_tokens if billed else 0),
        billed_completion_tokens=ledger.billed_completion_tokens + (rec.completion_tokens if billed else 0),
        cached_prompt_tokens=ledger.cached_prompt_tokens + (rec.prompt_tokens if rec.cached and judge else 0),
        cached_completion_tokens=ledger.cached_completion_tokens + (rec.completion_tokens if rec.cached and judge else 0),
        usage_missing=ledger.usage_missing + int(billed and not rec.usage),
        format_misfits=ledger.format_misfits + int(rec.reply_fit not in (None, "fits", "not asked")),
        latency_ms=ledger.latency_ms + rec.latency_ms, judge_ms=ledger.judge_ms + getattr(rec, "judge_ms", 0.0),
        cache_hits=ledger.cache_hits + int(rec.cached),
        errors=ledger.errors + int(not rec.ok and not refused), retries=ledger.retries + max(0, rec.attempts - 1),
        last_error=rec.error if rec.error and not refused else ledger.last_error)


@dataclass(frozen=True)
class Price:
    """Money per million tokens for one model id."""

    input: float
    output: float
    batch_input: float | None = None
    """The provider's batch price for input tokens (None: the list price times the batch factor)."""
    batch_output: float | None = None

    def cost(self, prompt_tokens: int, completion_tokens: int) -> float:
        """Money for a token count.

        >>> Price(0.15, 0.60).cost(1_000_000, 500_000)
        0.45
        """
        return round((prompt_tokens * self.input + completion_tokens * self.output) / 1_000_000, 12)


class PriceError(ValueError):
    """A price table that cannot be read; the message names the file and the entry."""


def load_prices(path: str) -> dict[str, Price]:
    """Read a JSON price table ``{model: {"input": x, "output": y}}`` (money per million tokens)."""
    try:
        with open(path, encoding="utf-8") as fh:
            data = json.load(fh)
    except OSError as e:
        raise PriceError(f"{path}: cannot read the price table ({e.strerror})") from None
    except ValueError as e:
        raise PriceError(f"{path}: not JSON ({e})") from None
    return parse_prices(data, path)


def parse_prices(data, where: str = "prices") -> dict[str, Price]:
    """Validate a price table.

    >>> parse_prices({"m": {"input": 1, "output": 2}})
    {'m': Price(input=1.0, output=2.0, batch_input=None, batch_output=None)}
    >>> parse_prices({"m": {"input": 1, "output": 2, "batch_input": 0.5, "batch_output": 1}})["m"].batch_output
    1.0
    >>> try:
    ...     parse_prices({"m": {"input": -1, "output": 2}})
    ... except PriceError as e:
    ...     print(e)
    prices: model 'm': input must be a number >= 0 (money per million tokens)
    """
    if not isinstance(data, dict) or not data:
        raise PriceError(f"{where}: expected an object {{model id: {{\"input\": x, \"output\": y}}}}")
    out = {}
    for model, entry in data.items():
        if not isinstance(entry, dict) or set(entry) - set(PRICE_KEYS) or not {"input", "output"} <= set(entry):
            raise PriceError(f"{where}: model {model!r}: expected the keys input and output "
                             "(and optionally batch_input and batch_output)")
        if ("batch_input" in entry) != ("batch_output" in entry):
            raise PriceError(f"{where}: model {model!r}: batch_input and batch_output go together")
        vals = []
        for key in PRICE_KEYS:
            if key not in entry:
                continue
            v = entry[key]
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v < 0:
                raise PriceError(f"{where}: model {model!r}: {key} must be a number >= 0 (money per million tokens)")
            vals.append(float(v))
        out[str(model)] = Price(*vals)
    return out


PRICE_KEYS = ("input", "output", "batch_input", "batch_output")
"""The keys of a price table's entry (the batch prices optional)."""


def price_entry(p: Price) -> dict:
    """A price as the price table writes it.

    >>> price_entry(Price(1.0, 2.0)), price_entry(Price(1.0, 2.0, 0.4, 0.8))
    ({'input': 1.0, 'output': 2.0}, {'input': 1.0, 'output': 2.0, 'batch_input': 0.4, 'batch_output': 0.8})
    """
    out = {"input": p.input, "output": p.output}
    if p.batch_input is not None:
        out.update(batch_input=p.batch_input, batch_output=p.batch_output)
    return out


DEFAULT_BATCH_FACTOR = 0.5
"""The batch price as a share of the list price when the table gives none (OpenAI's and Anthropic's batch
APIs cost half; ``--batch-price-factor``)."""


def batch_prices(table: dict | None, factor: float = DEFAULT_BATCH_FACTOR) -> dict | None:
    """A run spec's price table (``{"source", "models"}``) at the batch price: each model's ``batch_input`` /
    ``batch_output`` where the table gives them, else its list price times ``factor``. The list prices are
    kept (``list_models``); the money figures read ``models``.

    >>> t = batch_prices({"source": "p.json", "models": {"a": {"input": 1.0, "output": 2.0},
    ...                   "b": {"input": 1.0, "output": 2.0, "batch_input": 0.3, "batch_output": 0.6}}})
    >>> t["models"], t["source"]
    ({'a': {'input': 0.5, 'output': 1.0}, 'b': {'input': 0.3, 'output': 0.6}}, 'p.json, at the batch price (0.5 x list where the table gives none)')
    """
    if not table or not table.get("models"):
        return table
    models = {}
    for m, p in parse_prices(table["models"], table.get("source") or "prices").items():
        models[m] = ({"input": p.batch_input, "output": p.batch_output} if p.batch_input is not None
                     else {"input": round(p.input * factor, 12), "output": round(p.output * factor, 12)})
    return {"source": f"{table.get('source')}, at the batch price ({factor:g} x list where the table gives none)",
            "models": models, "list_models": table["models"]}


def add_price_options(parser) -> None:
    """``--prices FILE`` and ``--price-in`` / ``--price-out`` on a command's parser."""
    g = parser.add_argument_group("money (no built-in prices: give your own)")
    g.add_argument("--prices", metavar="FILE",
                   help='JSON price table {"model id": {"input": X, "output": Y}}, money per million tokens')
    g.add_argument("--price-in", type=float, metavar="X", help="input price per million tokens for the judge model")
    g.add_argument("--price-out", type=float, metavar="Y", help="output price per million tokens for the judge model")


def prices_from_args(args, model: str | None) -> dict | None:
    """The price table the options give, as stored in a run spec (``{"source", "models"}``), or None.

    ``--price-in``/``--price-out`` price ``model`` (the run's judge) and win over the file's entry for it.
    Raises :class:`PriceError` with a one-line message on a bad file or option.
    """
    path, pin, pout = getattr(args, "prices", None), getattr(args, "price_in", None), getattr(args, "price_out", None)
    if path is None and pin is None and pout is None:
        return None
    if (pin is None) != (pout is None):
        raise PriceError("--price-in and --price-out go together (input and output price per million tokens)")
    models = {m: price_entry(p) for m, p in load_prices(path).items()} if path else {}
    source = path or "--price-in/--price-out"
    if pin is not None:
        if not model:
            raise PriceError("--price-in/--price-out price the run's judge model; this run has none")
        parse_prices({model: {"input": pin, "output": pout}}, "--price-in/--price-out")
        models[model] = {"input": pin, "output": pout}
        source = f"{path} + --price-in/--price-out" if path else source
    return {"source": source, "models": models}


def traffic_summary(rows, price: Price | None) -> str:
    """One line for the terminal: billed tokens, cache, retries, usage-less replies and money.

    ``rows``: (billed prompt, billed completion, cached tokens, cache hits, retries, usage missing).

    >>> traffic_summary((900, 100, 0, 0, 2, 0), Price(1.0, 2.0))
    'tokens billed: 1,000 (900 prompt, 100 completion) · from the cache: 0 tokens, 0 calls · retried attempts: 2 · money: 0.0011'
    """
    bp, bc, cached, hits, retries, missing = (int(v or 0) for v in rows)
    parts = [f"tokens billed: {bp + bc:,} ({bp:,} prompt, {bc:,} completion)",
             f"from the cache: {cached:,} tokens, {hits:,} calls", f"retried attempts: {retries:,}"]
    if missing:
        parts.append(f"{missing:,} live repl{'y' if missing == 1 else 'ies'} without usage (tokens unknown)")
    if price is not None:
        parts.append(f"money: {price.cost(bp, bc):.4g}")
    return " \u00b7 ".join(parts)
