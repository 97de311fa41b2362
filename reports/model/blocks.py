"""A report section as plain data (title, paragraphs, tables, bullet lists), rendered by both the HTML
and the Markdown report from the same object, so the two cannot say different things."""
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


@dataclass
class Block:
    """One report section."""

    key: str
    """Anchor id."""
    title: str
    parts: list = field(default_factory=list)
    """In order: ``str`` (a paragraph), :class:`Table`, or ``list[str]`` (a bullet list)."""
