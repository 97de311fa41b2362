"""The report's public entry point: a run's report as data, for notebooks and scripts.

Everything is read from the run store; nothing is scored again. Importing ``reports`` loads nothing::

    import harness, reports
    result = harness.evaluate("datasets/canonical.jsonl")
    rep = reports.load(result)                 # every section, computed once
    rep.divergences, rep.summaries, rep.costs, rep.agreement, rep.decision.needs
    reports.frames(rep, "facts")               # a section's tables as DataFrames, by caption
    reports.markdown(rep, "cascade")           # a section as Markdown
    reports.alignment(rep, "cookie-yield")     # each metric's units on the answer's claims
    reports.cost_chart(rep)                    # the cost chart as PNG bytes, as the report shows it
    reports.write(result)                      # write index.html and report.md (``harness report``)

:func:`load` returns the report model, :class:`harness.reports.model.report.Report`: ``data`` (cases, metrics, the
store's tables), ``cells`` (the score matrix), ``divergences``, ``summaries`` (means with intervals), ``costs``,
``agreement``, ``decision``, ``names`` and ``shorts`` (display names per metric), ``sections`` (the fixed
sections by key) and ``extra`` (the further sections, by :func:`section` key).
"""
from __future__ import annotations

__all__ = ["alignment", "cost_chart", "frames", "load", "markdown", "section", "write"]


def load(run, threshold: float | None = None):
    """The computed report of ``run``: an :class:`harness.EvalResult`, a run directory or a store path.
    ``threshold``: the divergence threshold (default as ``harness report``)."""
    from harness.reports.analysis.data import load_run  # noqa: PLC0415 - lazy: ``from harness import reports`` loads nothing
    from harness.reports.analysis.divergence import DEFAULT_THRESHOLD  # noqa: PLC0415 - lazy
    from harness.reports.build import compute  # noqa: PLC0415 - lazy: ``from harness import reports`` loads nothing

    path = getattr(run, "run_dir", run)
    return compute(load_run(str(path)), DEFAULT_THRESHOLD if threshold is None else threshold)


def write(run, out_dir: str | None = None):
    """Write ``run``'s HTML and Markdown report (into its run directory unless ``out_dir``); where they went
    (``html_path``, ``md_path``). (Not ``build``: that name is the module :mod:`harness.reports.build`.)"""
    from harness.reports.build import build  # noqa: PLC0415 - lazy

    return build(str(getattr(run, "run_dir", run)), out_dir)


def cost_chart(rep) -> bytes:
    """The report's cost chart (judge calls and tokens per answer, per metric) as PNG bytes, drawn from the
    model's numbers as ``harness report`` draws it (the model holds numbers, not pictures)."""
    from harness.reports.render.plots import cost_chart as draw  # noqa: PLC0415 - lazy: matplotlib

    return draw(rep.costs, rep.shorts)


def section(rep, key: str):
    """The further section ``key`` of a report (a :class:`harness.reports.model.blocks.Section`: title, paragraphs,
    tables); a KeyError names the sections the report has."""
    for b in rep.extra:
        if b.key == key:
            return b
    raise KeyError(f"no section {key!r} in this report; it has: {', '.join(b.key for b in rep.extra)}")


def frames(rep, key: str) -> dict:
    """The tables of section ``key`` as pandas DataFrames (header cells as columns), by caption (``table N``,
    counted from 1, for a table without one), in the section's order."""
    from harness.reports.model.blocks import Table  # noqa: PLC0415 - lazy

    import pandas as pd  # noqa: PLC0415 - lazy

    tables = [t for t in section(rep, key).parts if isinstance(t, Table)]
    return {t.caption or f"table {i}": pd.DataFrame(t.rows, columns=t.heads) for i, t in enumerate(tables, start=1)}


def markdown(rep, key: str) -> str:
    """Section ``key`` as the Markdown report shows it."""
    from harness.reports.render import blocks  # noqa: PLC0415 - lazy

    return "\n".join(blocks.markdown(section(rep, key)))


def alignment(rep, case_id: str):
    """One case's answer, row by row (its annotated claims, else its sentences), with each metric's units
    that land on the row (``verdict (raw verdict)``, ``[shared]`` when a unit spans several rows), one
    column per metric (short names), as the report's divergence section shows it."""
    from harness.reports.analysis.alignment import align, units_from_frame  # noqa: PLC0415 - lazy
    from harness.reports.model.sections import mark_text  # noqa: PLC0415 - lazy

    import pandas as pd  # noqa: PLC0415 - lazy

    data = rep.data
    if case_id not in data.case_ids:
        raise KeyError(f"no case {case_id!r} in run {data.run_id}; it has: {', '.join(data.case_ids)}")
    units = data.units[data.units["case_id"] == case_id]
    rows = align(data.cases.get(case_id), units_from_frame(units))
    return pd.DataFrame([{"row": r.kind, "answer text": r.text, "label": r.label or "",
                          **{rep.shorts[m]: " / ".join(mark_text(mk) for mk in r.marks.get(m, []))
                             for m in data.metrics}} for r in rows])
