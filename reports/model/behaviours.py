"""Behaviour probes for the metric cards: each a property, the canonical case that shows it, and a
rule turning that case's cell into an answer. Every behavioural statement on a card is one of these,
answered from a reference-judge run of the canonical set, never written by hand.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from harness.core import vocab

EPS = 1e-9


def _full(s: float) -> str:
    return "yes" if s >= 1 - EPS else "no"


def _penalised(s: float) -> str:
    return "yes" if s < 1 - EPS else "no"


def _credit(s: float) -> str:
    return "yes" if s >= 1 - EPS else ("partly" if s > 0.5 + EPS else "no")


def _any(s: float) -> str:
    return "yes" if s > EPS else "no"


def _between(s: float) -> str:
    return "yes" if 0.5 + EPS < s < 1 - EPS else "no"


@dataclass(frozen=True)
class Probe:
    """One property a card answers."""

    text: str
    """The property, phrased so that the answer reads after it."""
    case_id: str
    """The canonical case that shows it."""
    answer: Callable[[float], str]
    """Score -> yes | no | partly."""
    group: str = "behaviour"
    """behaviour | degenerate (shown under "Degenerate inputs")."""


PROBES: tuple[Probe, ...] = (
    Probe("passes a plausible claim that no passage states and none contradicts", "cookie-yield", _full),
    Probe("passes an answer that is true but stated nowhere in the passages", "memory-correct", _any),
    Probe("credits a claim inferred from the passages (date arithmetic) that no span states", "product-age", _credit),
    Probe("credits a unit conversion that no span states", "leave-months-paraphrase", _credit),
    Probe("lowers the score for a contradicted claim", "release-date-contradicted", _penalised),
    Probe("lowers the score for a one-number change (40 for 39 weeks)", "leave-40-weeks", _penalised),
    Probe("lowers the score for an unsupported claim softened with 'may'", "hedged-claim", _penalised),
    Probe("gives partial credit to a sentence mixing a supported and an unsupported claim", "mixed-sentence", _between),
    Probe("notices a citation marker that points at the wrong passage", "citation-misattributed", _penalised),
    Probe("supports a claim only two passages together state (multi-hop)", "multi-hop", _full),
    Probe("ignores a claim-free pleasantry ('Great question!')", "trivial-greeting", _full),
    Probe("notices an answer faithful to a stale passage", "rate-limit-stale", _penalised),
    Probe("penalises a supported but off-topic claim", "off-topic-true", _penalised),
    Probe("scores a German answer with a supported, a contradicted and an unstated claim below 1", "non-english",
          _penalised),
    Probe("scores an empty answer", "empty-answer", lambda s: "yes", "degenerate"),
    Probe("scores as grounded an abstention although the passages hold the answer", "abstain-answerable", _full,
          "degenerate"),
    Probe("scores as grounded a correct refusal (the passages cannot answer)", "abstain-unanswerable", _full,
          "degenerate"),
)
"""The probes, in card order."""

def no_score(status: str) -> str:
    """How a probe reads a cell without a score: its status's label in the vocabulary.

    >>> no_score("vendor_nan"), no_score("not_applicable")
    ('unscored by the vendor', 'not applicable')
    """
    return vocab.status(status).label


@dataclass(frozen=True)
class Answer:
    """A probe answered for one metric."""

    probe: Probe
    answer: str
    """yes | no | partly | :func:`no_score` of the cell's status."""
    value: str
    """The cell as the matrix shows it, e.g. ``1.00``, ``1.00*``, ``NaN``."""
    reason: str | None = None
    """The cell's reason when it has no score."""
    flags: tuple[str, ...] = ()


def answer(probe: Probe, cell) -> Answer:
    """Answer one probe from one matrix cell.

    >>> from reports.model.matrix import Cell
    >>> answer(PROBES[0], Cell("scored", 1.0)).answer, answer(PROBES[0], Cell("scored", 0.75)).answer
    ('yes', 'no')
    >>> answer(PROBES[0], Cell("vendor_nan", None, reason="r")).answer
    'unscored by the vendor'
    """
    if cell is None or cell.status != "scored":
        status = cell.status if cell is not None else "missing"
        return Answer(probe, no_score(status), cell.label if cell else "-", cell.reason if cell else None)
    return Answer(probe, probe.answer(cell.score), cell.label, None, tuple(cell.flags))


def answers(cells: dict, metric: str, case_ids) -> list[Answer]:
    """Every probe whose case is in the run, answered for ``metric``."""
    ids = set(case_ids)
    return [answer(p, cells.get((p.case_id, metric))) for p in PROBES if p.case_id in ids]
