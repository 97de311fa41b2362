"""The report reads a run's cells and units from the store's columns (``load_run`` keeps them): what it reads there is
what it read from the DataFrames before, and ``RunData.units``, made when first read, is the DataFrame it was."""
from __future__ import annotations

import dataclasses
import json
import os

from harness.reports.analysis import alignment, evidence, matrix
from harness.reports.analysis.data import RunData, load_run, rows
from harness.store.frames import read_table
from harness.store.runstore import RunStore

import pytest

from tests.helpers.synthetic import scaled_run


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    return os.path.dirname(scaled_run(str(tmp_path_factory.mktemp("cols") / "run"), 60, run_id="cols-run"))


def _frames(run_dir):
    store = RunStore.open(os.path.join(run_dir, RunStore.FILENAME))
    try:
        units, cells = read_table(store.db, "units"), read_table(store.db, "cells")
    finally:
        store.close()
    units["quotes"] = [json.loads(v) for v in units["quotes"]]
    cells["flags"] = [json.loads(v) for v in cells["flags"]]
    return cells, units


def _from_frames(data) -> RunData:
    """The same run read the old way: its DataFrames, no columns kept (a table set since reads as such)."""
    other = dataclasses.replace(data)
    assert "_units_columns" not in other.__dict__ and "_cells_columns" not in other.__dict__
    return other


def test_the_units_dataframe_is_made_when_first_read_and_is_the_stores_table(run_dir):
    data = load_run(run_dir)
    assert "units" not in data.__dict__   # not made by load_run
    cells, units = _frames(run_dir)
    assert data.units.equals(units) and data.cells.equals(cells)
    assert data.units is data.units   # made once


def test_cells_and_units_read_from_the_columns_are_those_of_the_dataframes(run_dir):
    data = load_run(run_dir)
    cells = matrix.build(data)
    by_case = alignment.units_by_case(data)
    located = alignment.located_units(data)
    shares = evidence.shares(data)
    assert "units" not in data.__dict__   # none of them made the DataFrame
    old = _from_frames(data)
    assert repr(matrix.build(old)) == repr(cells)
    assert alignment.units_by_case(old) == by_case
    assert alignment.located_units(old) == located
    assert evidence.shares(old) == shares
    want = {}   # the located units as the agreement filtered them from the DataFrame before
    u = old.units
    u = u[u["span_start"].notna() & ~u["kind"].isin(alignment.WHOLE)]
    for m, cid, s, e, v in zip(*[u[c].tolist() for c in ("metric", "case_id", "span_start", "span_end", "verdict")]):
        want.setdefault(m, {}).setdefault(cid, []).append((int(s), int(e), str(v)))
    assert located == want and located and shares


def test_a_cell_row_is_indexed_when_first_asked(run_dir):
    data = load_run(run_dir)
    first = rows(data.cells)[0]
    assert data.cell(first.case_id, first.metric) == first
    assert data.cell("no-such-case", first.metric) is None


def test_a_table_set_after_loading_is_the_one_read(run_dir):
    data = load_run(run_dir)
    some = data.case_ids[0]
    data.units = data.units[data.units["case_id"] == some]
    assert list(alignment.units_by_case(data)) == [some]


def test_a_run_not_read_yet_pickles(run_dir):
    import pickle

    data = load_run(run_dir)
    again = pickle.loads(pickle.dumps(data))
    assert "units" not in data.__dict__ and again.units.equals(data.units)
