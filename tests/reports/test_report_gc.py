"""The report build pauses Python's cycle collector while it runs (harness.reports.build._no_cycle_collection): the
collector must be back as the caller had it afterwards, with nothing left frozen, and a build must give the
same files whichever way the caller had it."""
from __future__ import annotations

import gc
import os

from harness.reports.build import build

from tests.helpers.synthetic import scaled_run


def _files(d: str) -> dict[str, bytes]:
    return {n: open(os.path.join(d, n), "rb").read() for n in sorted(os.listdir(d))}


def test_build_restores_the_cycle_collector(tmp_path):
    run_dir = os.path.dirname(scaled_run(str(tmp_path / "run"), 40, run_id="gc-run"))   # the store's directory
    assert gc.isenabled()
    build(run_dir, str(tmp_path / "on"))
    assert gc.isenabled() and gc.get_freeze_count() == 0

    gc.disable()
    try:
        build(run_dir, str(tmp_path / "off"))
        assert not gc.isenabled()   # the caller's choice stands
    finally:
        gc.enable()
    assert _files(str(tmp_path / "on")) == _files(str(tmp_path / "off"))


def test_build_restores_the_collector_when_it_fails(tmp_path):
    try:
        build(str(tmp_path / "no-such-run"), str(tmp_path / "out"))
    except FileNotFoundError:
        pass
    assert gc.isenabled() and gc.get_freeze_count() == 0
