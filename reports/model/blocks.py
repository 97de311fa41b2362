"""The report's one section type: a :class:`Section` is plain data (a title and parts in order: paragraphs,
tables, bullet lists, note lines, plots, groups of divergent cases), built once by the report model and laid out
by both the HTML and the Markdown report from the same object, so the two cannot say different things."""
from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Table:
    """A table: header cells and rows of plain-text cells."""

    heads: list[str]
    rows: list[list[str]]
    caption: str | None = None


@dataclass
class Plot:
    """A plot a renderer draws from a finished model (:mod:`harness.reports.render.svgplot`)."""

    kind: str
    """Which drawing: ``frontier``."""
    model: object
    alt: str
    file: str
    """The file name the Markdown report links (written beside it)."""


@dataclass(frozen=True)
class Note:
    """One line under a section's table: about one metric."""

    short: str
    """The metric's short name (shown bold)."""
    text: str
    """What the line says."""
    ids: tuple[str, ...] = ()
    """The cases it is about (shown after the text)."""


@dataclass
class Notes:
    """Note lines under a section's table, with their heading."""

    title: str
    lines: list[Note] = field(default_factory=list)


@dataclass
class Section:
    """One report section."""

    key: str
    """Anchor id."""
    title: str
    parts: list = field(default_factory=list)
    """In order: ``str`` (a paragraph), :class:`Table`, ``list[str]`` (a bullet list), :class:`Notes`,
    :class:`Plot`, or a group of divergent cases (:class:`harness.reports.model.divergence_view.GroupView`)."""

    def part(self, kind: type):
        """The first part of type ``kind``, or None.

        >>> Section("k", "T", ["intro", Table(["x"], [])]).part(Table).heads
        ['x']
        """
        return next((p for p in self.parts if isinstance(p, kind)), None)
