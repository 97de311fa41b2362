"""Load one run for reporting: the run store's tables, its spec, and the cases it scored.

Reports read the store only; they never re-score. The store keeps every case of the run (table
``cases``), so a report needs no case file. For a store written before that table existed, or with
an explicit ``cases_path``, the cases are read back from the case file, and a case is used only when
its digest matches the digest the store recorded for it: a case file edited since the run shows its
cases without text rather than with the wrong text.
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass, field, replace
from functools import partial

from harness.cases.load import CaseFileError, case_digest, load_cases, parse_case
from harness.core.records import Case
from harness.core.runspec import RunSpec
from harness.core.vocab import CELL_STATUSES
from harness.metric.facts import MetricFacts
from harness.store.frames import declared_types, frame_of, pd_read, read_table, table_columns
from harness.store.repeats import all_cells
from harness.store.runstore import RunStore

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@dataclass
class RunData:
    """Everything a report reads about one run."""

    run_dir: str
    """Directory that holds the store (the report goes here by default)."""
    spec: dict
    """The run spec (``meta/spec``)."""
    cells: object
    """DataFrame of cells; ``flags`` parsed to lists."""
    units: object
    """DataFrame of per-unit verdicts; ``quotes`` parsed to lists of dicts. :func:`load_run` builds it when it is
    first read (a report reads the units through :func:`unit_columns`, and at 100,000 cases the DataFrame of
    1.5 million units costs seconds it does not need)."""
    calls: object
    """DataFrame of judge requests."""
    metrics: list[str]
    """Metric names, in display order."""
    info: dict[str, MetricFacts]
    """What the run recorded about each metric (its rules and names; :func:`metric_facts`)."""
    case_ids: list[str]
    """Case ids, in case-file order when the file is readable."""
    cases: dict[str, Case] = field(default_factory=dict)
    """The cases whose text is known (digest matches the store)."""
    case_note: str | None = None
    """Why some or all case texts are missing, if they are."""
    repeats: object = None
    """DataFrame of every repeat's cells (column ``repeat``) when the run has ``--repeats``; else None."""

    @property
    def run_spec(self) -> RunSpec:
        """The spec as a typed record (read from ``spec`` on each call: a report may set its prices)."""
        return RunSpec.from_json(self.spec)

    @property
    def run_id(self) -> str:
        return str(self.run_spec.run_id or os.path.basename(os.path.abspath(self.run_dir)))

    @property
    def is_reference(self) -> bool:
        return self.run_spec.is_reference

    def cell(self, case_id: str, metric: str):
        """The cell row (a named tuple of the cells table's columns, as :func:`rows` gives it) or None."""
        if self._index is None:   # indexed when first asked (a report reads its cells through matrix.build)
            self._index = {(r.case_id, r.metric): r for r in rows(self.cells)}
        return self._index.get((case_id, metric))

    def __post_init__(self):
        self._index = None
        for name in LAZY:
            if isinstance(self.__dict__.get(name), Later):   # read on first use (__getattr__)
                self.__dict__.setdefault("_later", {})[name] = self.__dict__.pop(name)

    def __getattr__(self, name: str):
        later = self.__dict__.get("_later", {}).pop(name, None)
        if later is None:
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        value = later.make()
        object.__setattr__(self, name, value)
        return value

    def __setattr__(self, name: str, value) -> None:
        if name in LAZY:   # another table than the one loaded: the columns kept from the store no longer say it
            self.__dict__.pop(f"_{name}_columns", None)
            self.__dict__.get("_later", {}).pop(name, None)
        object.__setattr__(self, name, value)


LAZY = ("cells", "units")
"""The RunData fields :func:`load_run` may hand over as a :class:`Later`, and whose store columns it keeps."""


@dataclass(frozen=True)
class Later:
    """A RunData field's value, made when the field is first read."""

    make: object
    """Called with no argument: the value (a ``functools.partial`` of a module's function, so that a RunData not
    read yet still pickles)."""


def unit_columns(data) -> dict:
    """Column name -> values (a sequence, in table order) of the run's units table: the columns as the store gave
    them (NULL as None) while ``data.units`` is the table :func:`load_run` read, else those of ``data.units``
    (a table set since, or a stand-in): no DataFrame built, or taken apart again, to read the units. ``quotes``
    is the stored JSON text in the store's columns, the parsed lists in the DataFrame's."""
    kept = getattr(data, "__dict__", {}).get("_units_columns")
    if kept is not None:
        return kept
    return {c: data.units[c].tolist() for c in data.units.columns}


def cell_columns(data) -> dict | None:
    """Column name -> values of the run's cells (``case_id``, ``metric``, ``status``, ``score``, ``reason`` as the
    store gave them, NULL as None; ``flags`` parsed, the same lists as ``data.cells``) while ``data.cells`` is the
    table :func:`load_run` read; None otherwise (read ``data.cell``)."""
    return getattr(data, "__dict__", {}).get("_cells_columns")


def rows(df):
    """The rows of a DataFrame as ``itertuples(index=False)`` gives them (the same named tuples, the same
    values), read column by column: iterating a pyarrow-backed string column value by value, as ``itertuples``
    does, costs several times more than its ``tolist``.

    >>> import pandas as pd
    >>> df = pd.DataFrame({"a": ["x", None], "b": [1, 2]})
    >>> rows(df) == list(df.itertuples(index=False)), type(rows(df)[0]).__name__, rows(df)[0].a
    (True, 'Pandas', 'x')
    """
    import collections  # noqa: PLC0415

    fields = [str(c) for c in df.columns]
    tup = collections.namedtuple("Pandas", fields, rename=True)
    return list(map(tup._make, zip(*[df[c].tolist() for c in df.columns])))


def resolve_store(run: str, out: str = "reports/out") -> str:
    """The store path for RUN: a run directory, a ``store.sqlite`` path, or a run id under ``out``.

    >>> resolve_store("no-such-run-xyz", "/nonexistent")
    Traceback (most recent call last):
    ...
    FileNotFoundError: no run 'no-such-run-xyz': not a run directory, not a store file, and not a run id under /nonexistent
    """

    for cand in (run, os.path.join(out, run)):
        if os.path.isfile(cand):
            return cand
        if os.path.isfile(os.path.join(cand, RunStore.FILENAME)):
            return os.path.join(cand, RunStore.FILENAME)
    raise FileNotFoundError(f"no run {run!r}: not a run directory, not a store file, "
                            f"and not a run id under {out}")


def load_run(run: str, out: str = "reports/out", cases_path: str | None = None) -> RunData:
    """Read a run store (see :func:`resolve_store`) and the cases it scored."""

    path = resolve_store(run, out)
    store = RunStore.open(path)
    try:
        spec = store.spec()
        (_, cols), (_, ucols) = (table_columns(store.db, t) for t in ("cells", "units"))
        cells = _frame(store.db, "cells", cols)
        utypes = declared_types(store.db, "units")
        units = Later(partial(_units_frame, path, ucols, utypes)) if ucols else _quotes(pd_read(store.db, "units"))
        calls = read_table(store.db, "calls")
        recorded = store.metric_facts()
        stored = store.case_objects()
        every = all_cells(store) if _has_repeats(store) else None
    finally:
        store.close()
    _known_statuses(path, cells)
    flags = cells["flags"] = _parsed(cells["flags"])
    ids = cols["case_id"] if cols else cells["case_id"].tolist()
    metrics, info = metric_facts(spec, cols["metric"] if cols else cells["metric"], recorded)
    if stored and cases_path is None:
        cases, order, note = _stored_cases(stored, cells, cols)
    else:
        cases, order, note = _cases(spec, cells, cases_path)
    seen = list(dict.fromkeys(ids))
    seen_set, order_set = set(seen), set(order)
    case_ids = [c for c in order if c in seen_set] + [c for c in seen if c not in order_set]
    data = RunData(os.path.dirname(os.path.abspath(path)), spec, cells, units, calls, metrics, info,
                   case_ids, cases, note, every)
    if cols:   # what matrix.build reads, kept as the store gave it (the rest is in the DataFrame only)
        kept = {c: cols[c] for c in ("case_id", "metric", "status", "score", "reason")}
        data.__dict__["_cells_columns"] = {**kept, "flags": flags}
    if ucols:
        data.__dict__["_units_columns"] = ucols
    return data


def _frame(db, table: str, cols: dict):
    """The table's DataFrame as :func:`harness.store.frames.read_table` gives it, from columns read already."""
    got = frame_of(cols, declared_types(db, table)) if cols else None
    return got if got is not None else pd_read(db, table)


def _units_frame(path: str, cols: dict, types: dict):
    """The units DataFrame of the store at ``path`` (read again only where pandas must read it itself), its
    ``quotes`` parsed."""
    units = frame_of(cols, types)
    if units is None:
        store = RunStore.open(path)
        try:
            units = pd_read(store.db, "units")
        finally:
            store.close()
    return _quotes(units)


def _quotes(units):
    """``units`` with its ``quotes`` parsed (:func:`_parsed`)."""
    units["quotes"] = _parsed(units["quotes"])
    return units


def _has_repeats(store) -> bool:
    """Does the store keep repeats past the run's own cells (``--repeats``)? Asked before every repeat's cells
    are read (a run without repeats would read its cells twice)."""
    try:
        top = store.db.execute("SELECT MAX(repeat) FROM repeat_cells").fetchone()[0]
    except Exception:  # noqa: BLE001 - a store written before repeats existed has no such table
        return False
    return top is not None and int(top) > 0


def _parsed(column) -> list:
    """A JSON column (flags, quotes) as Python lists, [] where it is empty. Each distinct text is parsed once (a
    large run repeats a few texts, ``[]`` most of all), and each row gets its own copy of the list.

    >>> a = _parsed(["[]", '["x"]', None, "[]"]); a, a[0] is a[3]
    ([[], ['x'], [], []], False)
    """
    memo: dict[str, list] = {}
    out = []
    for v in (column.tolist() if hasattr(column, "tolist") else column):
        if not isinstance(v, str):
            out.append([])
            continue
        got = memo.get(v)
        if got is None:
            got = memo[v] = json.loads(v)
        out.append([] if got == [] else _copy(got))
    return out


def _copy(v):
    """A deep copy of parsed JSON (lists and dicts; strings and numbers are immutable)."""
    if isinstance(v, list):
        return [_copy(x) for x in v]
    if isinstance(v, dict):
        return {k: _copy(x) for k, x in v.items()}
    return v


def _known_statuses(path: str, cells) -> None:
    """ValueError naming the store and the first cell whose status this harness does not write (a store edited
    by hand, or by a newer version): said in one line, before any report reads the cells."""
    bad = cells[~cells["status"].isin(CELL_STATUSES)]
    if len(bad):
        row = bad.iloc[0]
        raise ValueError(f"{path}: cell {row['case_id']}/{row['metric']} has status {row['status']!r}, which this "
                         f"harness does not write (known: {', '.join(CELL_STATUSES)})")


def metric_facts(spec: dict, scored, recorded: dict[str, MetricFacts]) -> tuple[list[str], dict[str, MetricFacts]]:
    """The run's metrics (those of its spec, and ``scored``: the metric of each cell) in display order, and each
    one's facts: as the run recorded them in its store (``recorded``), else (a store written before the facts
    were recorded) from :func:`registry_facts`."""
    entries = {m["name"]: m for m in spec.get("metrics") or []}
    present = list(dict.fromkeys(list(entries) + list(dict.fromkeys(scored))))
    missing = [m for m in present if m not in recorded]
    info = {m: recorded[m] for m in present if m in recorded}
    info.update(registry_facts(missing, entries) if missing else {})
    order = sorted(present, key=lambda m: info[m].sort_key)
    return order, {m: info[m] for m in order}


def registry_facts(metrics: list[str], entries: dict[str, dict]) -> dict[str, MetricFacts]:
    """Facts of metrics a store recorded none for (written before the ``metric_facts`` table), from what its spec
    says of each (``entries``: name -> the spec's entry) and the adapters installed here: the one place a report
    reads the registry. A metric not installed here gets the spec's names and direction, the range its class
    declares where it is declared (a vendor that installs alone), and the default rules otherwise."""
    from harness.metric import registry  # noqa: PLC0415 - lazy: only a store written before the facts table needs it

    out = {}
    for m in metrics:
        e, cls, declared = entries.get(m, {}), None, None
        try:
            cls = registry.get(m)
        except Exception:  # noqa: BLE001 - a report of an old run must not need the adapter
            declared = registry.declared(m)
        if cls is not None:
            f = MetricFacts.of(cls)
        elif declared is not None:
            f = MetricFacts(m, score_range=tuple(declared.score_range),
                            higher_is_better=bool(declared.higher_is_better))
        else:   # the direction as the spec recorded it, where no class declares one
            f = MetricFacts(m, higher_is_better=bool(e.get("higher_is_better", True)))
        out[m] = replace(f, display_name=e.get("display_name", m), unit=e.get("unit", "?"),
                         vendor=e.get("vendor", m.split(".")[0]), version=str(e.get("version", "?")),
                         vendor_packages=tuple(e.get("packages", f.vendor_packages)))
    return out


def _case_file(spec: dict, cases_path: str | None) -> str | None:
    if cases_path:
        return cases_path
    p = (spec.get("cases") or {}).get("path")
    if not p:
        return None
    for cand in (p, os.path.join(REPO_ROOT, p)):
        if os.path.isfile(cand):
            return cand
    return None


def _stored_cases(stored, cells, cols: dict | None = None) -> tuple[dict[str, Case], list[str], str | None]:

    digests = dict(zip(cols["case_id"], cols["case_digest"]) if cols else
                   zip(cells["case_id"].tolist(), cells["case_digest"].tolist()))
    kept = {}
    for cid, digest, obj in stored:
        if digests.get(cid, digest) == digest:
            kept[cid] = parse_case(obj, f"run store case {cid}")
    missing = [cid for cid in digests if cid not in kept]
    note = None
    if missing:
        note = (f"{len(missing)} case(s) scored with another version of the case "
                f"({', '.join(missing[:5])}{', ...' if len(missing) > 5 else ''}): their texts are not shown")
    return kept, [cid for cid, _, _ in stored], note


def _cases(spec: dict, cells, cases_path: str | None) -> tuple[dict[str, Case], list[str], str | None]:

    path = _case_file(spec, cases_path)
    if path is None:
        return {}, [], "the case file named in the run spec is not readable: case texts are not shown"
    try:
        cs = load_cases(path)
    except CaseFileError as e:
        return {}, [], f"the case file does not load ({str(e).splitlines()[0]}): case texts are not shown"
    digests = dict(zip(cells["case_id"], cells["case_digest"]))
    kept, stale = {}, []
    for c in cs:
        if c.id not in digests:
            continue
        if case_digest(c) == digests[c.id]:
            kept[c.id] = c
        else:
            stale.append(c.id)
    missing = [cid for cid in digests if cid not in kept and cid not in stale]
    note = None
    if stale or missing:
        note = (f"{len(stale) + len(missing)} case(s) changed or missing in the case file since the run "
                f"({', '.join((stale + missing)[:5])}{', ...' if len(stale) + len(missing) > 5 else ''}): "
                "their texts are not shown")
    return kept, [c.id for c in cs], note
