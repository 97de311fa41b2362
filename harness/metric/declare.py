"""The records a metric class declares beside its score (see :class:`harness.metric.protocol.Metric`): how the
reference judge reads each annotation label (:class:`LabelReading`), a documented change to vendor behaviour
(:class:`Shim`), how a unit verdict counts toward the score (:class:`UnitCredit`), and a ``harness run`` option
(:class:`RunOption`)."""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from harness.core.records import Case


@dataclass(frozen=True)
class LabelReading:
    """How the reference judge reads each annotation label for one metric (a row of the label table).

    >>> r = LabelReading({"supported": "yes", "inference": "yes", "not_found": "borderline",
    ...                   "contradicted": "no"}, "DeepEval verdict")
    >>> r["not_found"], r.meaning
    ('borderline', 'DeepEval verdict')
    """

    answers: dict
    """annotation label (supported | inference | not_found | contradicted) -> what the judge answers."""
    meaning: str
    """What that answer is, in the vendor's terms (shown on the card)."""

    def __getitem__(self, label: str):
        return self.answers[label]

    def claims_read_as(self, case: Case, answer) -> list:
        """The case's judged claims whose label this reading answers with ``answer`` (e.g. ``"no"``)."""
        return [c for c in case.judged_claims() if self.answers[c.label] == answer]


@dataclass(frozen=True)
class Shim:
    """A documented change to vendor behaviour, shown on the metric's card (each has a test)."""

    where: str
    """The module that applies it, relative to the repository (or package) root."""
    text: str
    """What the trap is, what changes and why it is the minimal change (one paragraph)."""


@dataclass(frozen=True)
class UnitCredit:
    """How one unit's verdict counts toward the metric's score: the metric's own scoring rule, read by
    the report's reasons (which metric counts a borderline verdict as faithful, what a graded ``2/3`` is).

    >>> UnitCredit()("supported", "yes"), UnitCredit()("ambiguous", "borderline"), UnitCredit()("excluded", "x")
    (1.0, 0.0, None)
    >>> UnitCredit(ambiguous=1.0)("ambiguous", "borderline"), UnitCredit(graded=3)("ambiguous", "2/3")
    (1.0, 0.667)
    >>> UnitCredit(raw={"abstained": 1.0})("unsupported", "abstained")
    1.0
    """

    ambiguous: float = 0.0
    """The credit of an ``ambiguous`` (borderline) unit: 1.0 where the score counts it as faithful."""
    graded: int | None = None
    """A raw verdict ``k/N`` with this N counts k/N (partial credit on a graded scale); None: no scale."""
    raw: dict = dataclasses.field(default_factory=dict)
    """Raw verdict -> credit, for verdicts the score treats by a rule of its own (checked first)."""
    raw_rule: str = ""
    """That rule in words, for a reason (e.g. "scores an abstention by whether the passages could answer")."""

    def graded_value(self, raw: str) -> float | None:
        """``k/N`` on this metric's scale as a credit, else None."""
        if self.graded is None:
            return None
        k, sep, n = str(raw).partition("/")
        if not sep or not k.strip().isdigit() or n.strip() != str(self.graded):
            return None
        return round(int(k) / self.graded, 3)

    def __call__(self, verdict: str, raw: str) -> float | None:
        """The unit's credit; None when the score does not count it (an excluded unit)."""
        if verdict == "excluded":
            return None
        if raw in self.raw:
            return self.raw[raw]
        g = self.graded_value(raw)
        if g is not None:
            return g
        if verdict == "supported":
            return 1.0
        return self.ambiguous if verdict == "ambiguous" else 0.0


@dataclass(frozen=True)
class RunOption:
    """A ``harness run`` option that a metric declares; the command line adds it from the registry, so
    the engine names no metric's options. Several metrics may declare the same option (one flag).

    >>> o = RunOption("--similarity-threshold", "threshold", float, 0.8, "a help text", label="similarity threshold")
    >>> o.dest, o.describe(0.8)
    ('similarity_threshold', 'similarity threshold: 0.80')
    """

    flag: str
    """The option, e.g. ``--similarity-threshold``."""
    arg: str
    """The keyword of the metric's constructor that receives the value."""
    type: Any = str
    """Converts the command-line text (argparse ``type``)."""
    default: Any = None
    """The value when the option is not given."""
    help: str = ""
    """The ``--help`` text."""
    metavar: str | None = None
    """The value's name in ``--help``."""
    check: Any = None
    """None, or ``f(value)`` raising ValueError with a message for a value out of range."""
    label: str = ""
    """How the run's header line names the value (default: the flag without dashes)."""
    fmt: str = "{:.2f}"
    """How the header line formats the value."""

    @property
    def dest(self) -> str:
        """The argparse destination of the flag."""
        return self.flag.lstrip("-").replace("-", "_")

    def describe(self, value) -> str:
        """``label: value`` for the run's header line."""
        return f"{self.label or self.flag.lstrip('-').replace('-', ' ')}: {self.fmt.format(value)}"
