"""Vendors' log records never reach the terminal: during a run they go, scrubbed, to the run's vendor.log, and
the terminal gets one summary line per kind; the user's own logging setup is given back unchanged after."""
from __future__ import annotations

import logging
import os
import sys
import warnings

from harness.adapters.inhouse.span import InhouseSpan
from harness.console import main
from harness.core import redact
from harness.metric import registry
from harness.run.vendorlog import VendorLog, log_path, summary

from tests.conftest import CANONICAL


def test_console_handlers_lastresort_and_warnings_go_to_the_file(tmp_path, capsys):
    noisy = logging.getLogger("noisyvendor.parser")
    console = logging.StreamHandler(sys.stderr)   # as LiteLLM and Opik attach at import
    noisy.addHandler(console)
    lonely = logging.getLogger("lonelyvendor")    # no handler, propagation off: Python's last resort prints it
    lonely.propagate = False
    # what this run finds, given back on its exit: another run still going in this process (a test's run in a
    # thread) keeps its own diversion, which is not this run's to undo
    handle_before, last_resort_before = logging.Logger.handle, logging.lastResort
    alone = getattr(handle_before, "__qualname__", "") == "Logger.handle"
    try:
        with redact.isolated():
            redact.register("sk-test-vendorlog-0123456789")
            with VendorLog(log_path(str(tmp_path))) as vlog:
                try:
                    raise ValueError("bad json")
                except ValueError:
                    noisy.error("Failed to parse model output sk-test-vendorlog-0123456789", exc_info=True)
                lonely.warning("something odd")
                warnings.warn("a deprecation", DeprecationWarning, stacklevel=1)
            assert capsys.readouterr().err == ""
            text = open(log_path(str(tmp_path))).read()
            assert "Failed to parse model output" in text and "Traceback" in text and "ValueError: bad json" in text
            assert "something odd" in text and "a deprecation" in text
            assert "sk-test-vendorlog-0123456789" not in text
            assert text.count("Failed to parse model output") == 1     # diverted once, not again at the root
            lines = summary(str(tmp_path))
            assert any("1 x ERROR noisyvendor: Failed to parse model output" in line for line in lines), lines
            assert logging.Logger.handle is handle_before and logging.lastResort is last_resort_before
            assert vlog.divert not in console.filters
            if alone:
                noisy.error("after the run")                              # the user's handler is theirs again
                assert "after the run" in capsys.readouterr().err
                assert console.filters == [] and logging.lastResort is not None
    finally:
        noisy.removeHandler(console)
        lonely.propagate = True


class Noisy(InhouseSpan):
    """The in-house scorer, with a vendor's habit: a console handler attached on first use and an error with a
    traceback logged for every cell."""

    name = "toy.noisy"
    short_name = "toy.noisy"
    display_name = "Noisy toy"

    async def score(self, case, endpoint):
        log = logging.getLogger("noisyrun.vendor")
        if not log.handlers:
            log.addHandler(logging.StreamHandler(sys.stderr))
        try:
            raise KeyError("claims")
        except KeyError:
            log.error("Failed to parse model output for %s", case.id, exc_info=True)
        return await super().score(case, endpoint)


def test_a_run_keeps_vendor_logging_off_the_terminal(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(registry, "_found", {**registry.discover(), Noisy.name: Noisy})
    rc = main(["run", "--cases", CANONICAL, "--metrics", Noisy.name, "--out", str(tmp_path), "--run-id", "noisy",
               "--no-report", "--no-progress"])
    err = capsys.readouterr().err
    assert rc == 0, err
    assert "Traceback" not in err and "KeyError" not in err
    run_dir = os.path.join(str(tmp_path), "noisy")
    text = open(log_path(run_dir)).read()
    assert text.count("Failed to parse model output for") == 24 and text.count("Traceback") == 24
    lines = summary(run_dir)
    assert lines[0].startswith("vendor log: 24 x ERROR noisyrun: Failed to parse model output for"), lines
    logging.getLogger("noisyrun.vendor").handlers.clear()
