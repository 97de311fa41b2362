"""The facts a run records about each of its metrics, so that a report of the run reads them from the run store,
not from the adapters installed when the report is built.

A metric's class holds its rules (:mod:`harness.metric.protocol`); the run copies the ones a report reads into one
:class:`MetricFacts` per selected metric, and the run store keeps them (table ``metric_facts``,
:mod:`harness.store.runstore`). A report of that run then follows the metric as it was when the run scored it,
whatever the adapter says today.
"""
from __future__ import annotations

import dataclasses
import importlib
from dataclasses import dataclass

from harness.metric.protocol import UnitCredit


@dataclass(frozen=True)
class MetricFacts:
    """Everything a report reads about one metric of a run.

    The attribute names are the metric class's (:class:`harness.metric.protocol.Metric`), so a reader that takes a
    class (e.g. :func:`harness.run.cascade_file.decisions`) takes these facts too.

    >>> f = MetricFacts("opik.hallucination", higher_is_better=False)
    >>> f.scale, MetricFacts("azure.groundedness", score_range=(1.0, 5.0)).scale
    ((0.0, 1.0, False), (1.0, 5.0, True))
    >>> MetricFacts.from_json(f.to_json()) == f
    True
    """

    name: str
    """Registered name, e.g. ``ragas.faithfulness``."""
    version: str = "?"
    """The adapter's version that scored the run's cells."""
    vendor: str = ""
    """``inhouse`` | ``ragas`` | ``deepeval`` | ..."""
    display_name: str = ""
    """Human name (default: the name)."""
    short_name: str = ""
    """Short column name (default: the name)."""
    order: int | None = None
    """Display order, ascending (ties by name); None: not known (such metrics follow the others, by name)."""
    unit: str = "?"
    """What one unit of judgement is: claim | statement | sentence | answer."""
    higher_is_better: bool = True
    """Direction of the score."""
    score_range: tuple[float, float] = (0.0, 1.0)
    """The range of a score (inclusive)."""
    unit_credit: UnitCredit = UnitCredit()
    """How a unit verdict counts toward the score (the report's reasons read it)."""
    uses_judge: bool = True
    """Does an LLM judge decide (False: the reasons never say "judged")."""
    in_divergence: bool = True
    """Does the metric count toward a case's divergence spread (False: a stand-in such as the similarity baseline)."""
    vendor_package: str | None = None
    """The distribution whose version the card names (None: this repository's own code)."""
    vendor_packages: tuple[str, ...] = ()
    """Distributions whose versions decide what the metric computes."""
    report_sections: str | None = None
    """The metric's own report-section handler as ``module:attribute.path`` (None: it adds no section)."""

    def __post_init__(self):
        object.__setattr__(self, "display_name", self.display_name or self.name)
        object.__setattr__(self, "short_name", self.short_name or self.name)
        object.__setattr__(self, "score_range", tuple(float(x) for x in self.score_range))
        object.__setattr__(self, "vendor_packages", tuple(self.vendor_packages))

    @property
    def scale(self) -> tuple[float, float, bool]:
        """(bottom, top, higher_is_better); a range that is not one (top <= bottom) reads as 0 to 1."""
        lo, hi = self.score_range
        return (lo, hi, self.higher_is_better) if hi > lo else (0.0, 1.0, self.higher_is_better)

    @property
    def sort_key(self) -> tuple:
        """Display order: known order first (then name), metrics of no known order after, by name."""
        return (0, self.order, self.name) if self.order is not None else (1, 0, self.name)

    @classmethod
    def of(cls, metric: type) -> "MetricFacts":
        """The facts of an adapter class (checked: :func:`harness.metric.protocol.check`), as a run records them."""
        handler = None
        if getattr(metric, "report_sections", None) is not None:
            handler = f"{metric.__module__}:{metric.__qualname__}.report_sections"
        return cls(metric.name, str(metric.version), metric.vendor, metric.display_name, metric.short_name,
                   int(metric.order), metric.unit, bool(metric.higher_is_better), tuple(metric.score_range),
                   metric.unit_credit or UnitCredit(), bool(metric.uses_judge),
                   bool(getattr(metric, "in_divergence", True)), metric.vendor_package,
                   tuple(metric.vendor_packages or ()), handler)

    def sections(self, data) -> list:
        """The metric's own report sections of a run (``data``: a loaded run), by its recorded handler; none when
        that handler is not installed here (a report of an old run must not need the adapter).

        >>> MetricFacts("x", report_sections="no_such_module_xyz:C.report_sections").sections(None)
        []
        """
        if self.report_sections is None:
            return []
        module, _, path = self.report_sections.partition(":")
        try:
            fn = importlib.import_module(module)
            for part in path.split("."):
                fn = getattr(fn, part)
        except (ImportError, AttributeError):
            return []
        return fn(data)

    def to_json(self) -> dict:
        """A JSON object of the facts (the unit credit as an object of its own)."""
        out = dataclasses.asdict(self)
        out["score_range"] = list(self.score_range)
        out["vendor_packages"] = list(self.vendor_packages)
        return out

    @classmethod
    def from_json(cls, obj: dict) -> "MetricFacts":
        """The facts from :meth:`to_json`'s object (fields it lacks take their defaults)."""
        known = {f.name for f in dataclasses.fields(cls)}
        kw = {k: v for k, v in obj.items() if k in known}
        if isinstance(kw.get("unit_credit"), dict):
            kw["unit_credit"] = UnitCredit(**kw["unit_credit"])
        for k in ("score_range", "vendor_packages"):
            if k in kw:
                kw[k] = tuple(kw[k])
        return cls(**kw)
