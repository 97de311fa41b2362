"""``harness check --junit`` with hostile case ids and paths (issue 25, probe 5 and the JUnit part of
probe 7): a case id holding a control character gave invalid XML and its ANSI escape reached the
terminal; ``--junit`` naming a directory gave a traceback."""
import dataclasses
import xml.etree.ElementTree as ET

from harness.cases.load import CaseSet
from harness.judge.faults import FaultInjector, FaultSpec
from harness.run.runner import RunOptions, run

import pytest

HOSTILE = "bad\x01id\x1b[31mRED"


@pytest.fixture
def errored_run(tmp_path, canonical):
    case = dataclasses.replace(canonical.cases[0], id=HOSTILE)
    cases = CaseSet(canonical.path, (case,), canonical.sha256)
    run(RunOptions(cases=cases, metrics=["inhouse.span"], out_dir=str(tmp_path), run_id="c", progress=False,
                   workers=1, retry_attempts=1, upstream_wrapper=FaultInjector(FaultSpec.parse("500=1"))))
    return tmp_path


def test_junit_is_valid_xml_and_the_terminal_gets_no_escape(errored_run, capsys):
    from harness.console import main

    path = errored_run / "junit.xml"
    rc = main(["check", "c", "--out", str(errored_run), "--max-errors", "0", "--junit", str(path)])
    out = capsys.readouterr().out
    assert rc == 1
    root = ET.parse(path).getroot()                       # well-formed XML 1.0
    failure = root.find("./testsuite/testcase/failure")
    assert "bad\\x01id\\x1b[31mRED/inhouse.span" in failure.get("message")
    assert "\x1b" not in out and "\x01" not in out
    assert "bad\\x01id\\x1b[31mRED/inhouse.span" in out


def test_a_run_table_shows_a_hostile_id_escaped(errored_run, capsys):
    from harness.console import main

    rc = main(["check", "c", "--out", str(errored_run), "--max-errors", "1"])
    out = capsys.readouterr().out
    assert rc == 0 and "\x1b" not in out and "PASS" in out


def test_junit_pointing_at_a_directory_is_one_line_exit_2(errored_run, capsys):
    from harness.console import main

    target = errored_run / "a-dir"
    target.mkdir()
    rc = main(["check", "c", "--out", str(errored_run), "--max-errors", "0", "--junit", str(target)])
    err = capsys.readouterr().err
    assert rc == 2
    assert err == f"harness: --junit {target}: is a directory; give the path of the XML file to write\n"
