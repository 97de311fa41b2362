"""The allowed differences of the strict stock-parity test: the record of one (:class:`Allowed`) and the
collection of every vendor's (``RULES`` in ``kit/parity.py`` of its folder, found through the metrics' entry
points: :mod:`tests.helpers.kits`). ``tests/vendors/test_stock_parity.py`` compares by them; ``tests/vendors/test_parity_rules.py``
checks that each matches only what its name says."""
from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass

from harness.cases.load import load_cases

from tests.helpers import kits


@dataclass(frozen=True)
class Allowed:
    """One documented difference: where it may occur, exactly what each side shows, and why."""

    name: str
    metrics: tuple[str, ...]
    modes: tuple[str, ...]
    stock_raises: str | None
    """The exact exception type the stock call raises (module-qualified unless builtin); None: it scores;
    :data:`ANY`: either."""
    harness_status: str | None
    """The status the harness records for the cell (None: as judged in ``same_as_mode``)."""
    why: str
    harness_flag: str | None = None
    """A flag the harness cell must carry."""
    same_as_mode: str | None = None
    """The harness's score must equal what stock scores in this mode (a fallback stock takes there)."""
    live_only: bool = False
    """A difference only the live comparison against a real model shows (tests/vendors/test_live_judge.py); the
    strict test here never makes it."""
    when: Callable | None = None
    """What the rule's name says of the case (``case -> bool``): a case it does not hold for is not this
    difference, whatever the two sides show."""
    stock_says: str | None = None
    """Text the stock exception's message must contain (the vendor saying why it raised)."""


def only_the_answer_empty(case) -> bool:
    """The answer is empty and nothing else is: an empty question or passage list is another input."""
    return case.answer == "" and bool(case.question) and bool(case.context_texts) and all(case.context_texts)


ANY = "*"
"""``stock_raises`` of a rule that holds whatever stock did (scored or raised): the harness never asked."""
USAGE_TWIN = "+usage"
"""Suffix of a stock run against the mode's judge with ``usage`` in every reply (the replies are otherwise
the same: the judge draws usage apart from content), for the cases where stock raised on a reply without
usage: what stock scores when the reply carries it."""


def rules() -> tuple:
    """Every vendor's ``RULES``, in the order of the vendors' folders; two rules of one name are an error."""
    out = tuple(r for mod in kits.parts("parity").values() for r in mod.RULES)
    names = [r.name for r in out]
    if len(set(names)) != len(names):
        raise ValueError(f"parity rules named twice: {sorted({n for n in names if names.count(n) > 1})}")
    return out


MODE = "openai"
"""The server mode the rule tests of the vendors' kits (``kit/test_parity.py``) judge in by default."""


@functools.cache
def parity_cases() -> dict:
    """Three canonical cases the rule tests start from: ``empty`` (the empty answer), ``plain`` (an answer with no
    [N] markers) and ``marked`` (one with markers)."""
    from tests.conftest import CANONICAL  # noqa: PLC0415 - lazy: the kits' doctest collection stays light

    full = load_cases(CANONICAL)
    return {"empty": full.by_id("empty-answer"), "plain": full.by_id("cookie-yield"),
            "marked": full.by_id("citation-misattributed")}


def verdict(metric, case, stock_cell, cell, mode=MODE, extra=None):
    """(verdict, rule name) of :func:`tests.vendors.test_stock_parity.compare` for one made-up pair of outcomes."""
    from tests.vendors.test_stock_parity import compare  # noqa: PLC0415 - lazy: that module collects these rules

    stock = {mode: {metric: {case.id: stock_cell}}, **(extra or {})}
    return compare(mode, metric, case, stock, cell)[5:]
