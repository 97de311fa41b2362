"""Importers: other tools' dataset exports turned into harness case files.

One module per format, each with ``FORMAT`` (its name on the command line), ``DESCRIPTION`` and
``to_case(row, position) -> dict`` (one case object of the case format, or
:class:`harness.cases.importers.rows.RowProblem` naming the field). ``harness import FORMAT FILE --out
CASES`` reads FILE (JSONL, a JSON list, or CSV: see :mod:`harness.cases.importers.rows`), converts every
row, checks each result with the case loader's own validation and writes CASES only when every row
is good; otherwise it reports each problem as ``FILE line N, field F: ...`` and writes nothing.

Human-labelled corpora (``ragtruth``, ``faithbench``: modules with ``import_files(paths)``, see
:mod:`harness.cases.importers.labelled`) keep or drop each row with a reason and carry RAGTruth-style span
labels, so the reference judge can answer them and ``harness agree`` can compare.

Imported Ragas and DeepEval cases carry no annotation: the reference judge cannot answer them (a run refuses them
before any cell runs), so they are scored with a real judge (``--judge-url``).
"""
from __future__ import annotations

import importlib
import json
import os

from harness.cases.importers.rows import RowProblem, read_rows
from harness.cases.load import CaseFileError, _case, _Problem

FORMATS: dict[str, str] = {
    "ragas": "harness.cases.importers.ragas",
    "deepeval": "harness.cases.importers.deepeval",
    "ragtruth": "harness.cases.importers.ragtruth",
    "faithbench": "harness.cases.importers.faithbench",
    "otel": "harness.cases.importers.otel",
}
"""Format name -> module (imported only when that format is used)."""


def module(fmt: str):
    """The importer module of ``fmt`` (ValueError naming the known formats otherwise)."""
    if fmt not in FORMATS:
        raise ValueError(f"unknown import format {fmt!r}; known: {', '.join(sorted(FORMATS))}")
    return importlib.import_module(FORMATS[fmt])


def convert(fmt: str, path: str) -> list[dict]:
    """Every row of ``path`` as a validated case object (``CaseFileError`` listing every problem)."""

    mod = module(fmt)
    problems: list[tuple[int | None, str, str]] = []
    out: list[dict] = []
    seen: dict[str, int] = {}
    for position, (line, row) in enumerate(read_rows(path), start=1):
        try:
            obj = mod.to_case(row, position)
            case = _case(obj, f"{path}:{line}")
        except (RowProblem, _Problem) as p:
            problems.append((line, p.fld, p.msg))
            continue
        if case.id in seen:
            problems.append((line, "id", f"duplicate id {case.id!r} (first on line {seen[case.id]})"))
            continue
        seen[case.id] = line
        out.append(obj)
    if not problems and not out:
        problems.append((None, "", "no rows to import"))
    if problems:
        raise CaseFileError(path, problems)
    return out


def write(cases: list[dict], out: str) -> None:
    """Write case objects as JSONL (through a temporary file, so a failure leaves no half file)."""

    tmp = f"{out}.tmp-{os.getpid()}"
    with open(tmp, "w", encoding="utf-8") as fh:
        for obj in cases:
            fh.write(json.dumps(obj, ensure_ascii=False) + "\n")
    os.replace(tmp, out)
