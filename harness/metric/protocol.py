"""The plug-in contract: one metric = one class behind the :class:`Metric` Protocol, found by entry point.

A metric is one folder (a package of its own, or ``adapters/<vendor>/`` here):

- ``<module>.py``: the class (everything the project needs to know about the metric is data on the class), decorated
  with :func:`register`; its ``score(case, endpoint)`` sends every judge call through the
  :class:`harness.metric.endpoint.Endpoint` it gets and returns a :class:`harness.core.records.CellResult`;
- ``judge.py``: the reference judge's handler the class names (a function of a
  :class:`harness.metric.judge_request.JudgeRequest` returning the reply text);
- ``golden/<name>.csv`` and ``card_text/<name>.md`` next to the module;
- ``switches.py`` (optional): ``SWITCHES``, the vendor's environment switches (telemetry off), forced before any
  vendor import (:mod:`harness.metric.vendor_env`);
- ``kit/`` (test code, not shipped): the test suite's realistic-judge handler, stock-usage script, parity rules and
  offline tests (``tests/helpers/kits.py``);
- one line in the ``groundedness_harness.metrics`` entry-point group of its distribution.

Adapter modules must not import vendor packages at module level (``tests/cli/test_registry_cli.py`` checks it): vendor
code is imported inside ``score`` (or ``prepare``), so that listing metrics, ``--help`` and the reference judge stay
fast. The optional attributes' records are in :mod:`harness.metric.declare`.
"""
from __future__ import annotations

from typing import Any, ClassVar, Protocol, runtime_checkable

from harness.core.errors import UnrecognisedRequest  # noqa: F401 - re-exported: part of the plug-in contract
from harness.core.records import LABELS, Case, CellResult  # noqa: F401 - LABELS re-exported
from harness.metric.declare import LabelReading, RunOption, Shim, UnitCredit
from harness.metric.endpoint import Endpoint


@runtime_checkable
class Metric(Protocol):
    """What every adapter class provides. Everything but ``score`` is data that the rest of the
    project (tables, cards, tests, the reference judge) reads from the registry; a run records what its
    report reads (:class:`harness.metric.facts.MetricFacts`), and the report reads that."""

    name: ClassVar[str]
    """Registered name in the vendor's namespace, e.g. ``ragas.faithfulness`` (= the entry-point name)."""
    version: ClassVar[str]
    """The adapter's version; bump it when what the metric computes or how the reference judge
    reads a label changes (finished cells of an older version are recomputed on resume)."""
    display_name: ClassVar[str]
    """Human name for reports."""
    short_name: ClassVar[str]
    """At most ~14 characters, for the terminal table."""
    order: ClassVar[int]
    """Display order in tables and reports, ascending (ties by name)."""
    higher_is_better: ClassVar[bool]
    """Direction of the score."""
    score_range: ClassVar[tuple[float, float]]
    """The range of a score (inclusive)."""
    vendor: ClassVar[str]
    """``inhouse`` | ``ragas`` | ``deepeval`` | ``trulens`` | ..."""
    vendor_package: ClassVar[str | None]
    """The distribution whose version the card names (None: this repository's own code)."""
    unit: ClassVar[str]
    """What one unit of judgement is: claim | statement | sentence | answer."""
    definition: ClassVar[str]
    """One paragraph: what the score means, in the vendor's definition."""
    card_notes: ClassVar[str]
    """Notes the card quotes under "Adapter Notes" (Markdown; may be empty)."""
    shims: ClassVar[tuple[Shim, ...]]
    """Every documented change to vendor behaviour (empty: the vendor code runs unpatched)."""
    label_reading: ClassVar[LabelReading | None]
    """How the reference judge reads each annotation label for this metric (None: no claim label)."""
    flags: ClassVar[tuple]
    """The :class:`harness.core.vocab.Flag` s this metric may raise beyond the shared ones (may be empty)."""
    extra: ClassVar[str | None]
    """The package's optional extra that installs this metric's vendor (None: nothing to install)."""
    installs_alone: ClassVar[str | None]
    """None, or how to get the metric when its extra cannot be installed beside the others (an environment
    of its own): where its vendor is missing the registry lists it apart (:func:`harness.metric.registry.apart`)
    with this text, and naming it says so; where it is installed it is a metric like any other."""
    requires: ClassVar[tuple[str, ...]]
    """Modules that must be importable for the metric to run (checked without importing them)."""
    run_options: ClassVar[tuple[RunOption, ...]]
    """The ``harness run`` options the metric takes (each passed to its constructor; empty: none)."""
    unit_credit: ClassVar[UnitCredit]
    """How a unit verdict counts toward the score (default: supported 1, anything else 0)."""
    uses_judge: ClassVar[bool]
    """Does an LLM judge decide (False: e.g. an embedding similarity; reasons then never say "judged")."""
    vendor_packages: ClassVar[tuple[str, ...]]
    """Distributions whose versions decide what the metric computes: they go into the run spec and so
    into the cell cache's key (an upgrade recomputes the cells). Default: ``(vendor_package,)``."""
    report_sections: ClassVar[Any]
    """None, or ``f(data) -> list[Section]``: the metric's own sections of a run's report (a staticmethod
    taking :class:`harness.reports.analysis.data.RunData`, returning :class:`harness.reports.model.blocks.Section` s)."""
    card_sections: ClassVar[Any]
    """None, or ``f(data, card) -> list[str]``: Markdown lines the metric adds to the card of metric
    ``card`` (its own, or one it builds on), from the canonical reference run. They are finished Markdown:
    the card model (:mod:`harness.reports.model.card`) carries them as prose and the card layout prints them
    as they are."""
    judge: ClassVar[str]
    """The reference-judge handler, ``"module:function"`` taking a :class:`harness.metric.judge_request.JudgeRequest` and
    returning the reply text; imported only when the reference judge answers this metric."""

    async def score(self, case: Case, endpoint: Endpoint) -> CellResult:
        """Score one case with the vendor's own code, all judge calls through ``endpoint``.

        A class may also define ``prepare()`` (a classmethod): the runner calls it once per process
        before the first cell, to import the vendor stack; and then ``import_cpu_s`` (a float), the CPU seconds
        that import adds to an interpreter that has the harness and the cheaper vendor stacks imported: the
        workers' forkserver imports the cheapest first and forks an early worker with them
        (:mod:`harness.run.stages`); a vendor without it is imported last.
        """
        ...


REQUIRED = ("name", "version", "display_name", "short_name", "order", "higher_is_better", "vendor", "unit",
            "definition", "judge")
DEFAULTS = {"score_range": (0.0, 1.0), "vendor_package": None, "card_notes": "", "shims": (),
            "label_reading": None, "flags": (), "extra": None, "installs_alone": None, "requires": (),
            "run_options": (), "unit_credit": UnitCredit(), "uses_judge": True, "vendor_packages": None,
            "report_sections": None, "card_sections": None}
"""Protocol attributes a class may leave out, with the value it then has."""


def check(cls: type) -> type:
    """Validate an adapter class against the Protocol and fill the optional attributes' defaults."""
    for attr in REQUIRED:
        if not hasattr(cls, attr):
            raise TypeError(f"adapter {cls.__module__}.{cls.__qualname__} lacks class attribute {attr!r}")
    if not callable(getattr(cls, "score", None)):
        raise TypeError(f"adapter {cls.__module__}.{cls.__qualname__} lacks method 'score'")
    if ":" not in cls.judge:
        raise TypeError(f"adapter {cls.__qualname__}: judge must be 'module:function', got {cls.judge!r}")
    for attr, default in DEFAULTS.items():
        if not hasattr(cls, attr):
            setattr(cls, attr, default)
    if cls.vendor_packages is None:
        cls.vendor_packages = (cls.vendor_package,) if cls.vendor_package else ()
    return cls


def register(cls: type) -> type:
    """Class decorator: check an adapter class against the Protocol. Discovery itself is by entry
    point (``groundedness_harness.metrics``, see :mod:`harness.metric.registry`)."""
    return check(cls)
