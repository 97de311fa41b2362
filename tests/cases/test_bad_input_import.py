"""The importers' bad-input corpus (tests/data/bad_input/import_cases.json): every bad export exits 2 with
one line naming the file, line and field, never a traceback, and writes no case file (issue 25: the
case loader's guards against deep nesting and huge integers carried into the importers, a CSV with a
duplicate column refused, ``labels: 5`` / ``annotations: 7`` dropped with a reason)."""
import json
import os

import pytest

from tests.conftest import ROOT

HERE = os.path.join(ROOT, "tests", "data", "bad_input")
with open(os.path.join(HERE, "import_cases.json")) as _fh:
    TABLE = json.load(_fh)["cases"]


def _file(name: str, tmp_path) -> str:
    if name.startswith("@data/"):
        return os.path.join(ROOT, "tests", "data", name[len("@data/"):])
    if name == "@deep.json":
        p = tmp_path / "deep.json"
        p.write_text("[" * 100_000 + "]" * 100_000 + "\n")
        return str(p)
    if name == "@deep.jsonl":
        p = tmp_path / "deep.jsonl"
        p.write_text('{"id": ' + "[" * 100_000 + "]" * 100_000 + "}\n")
        return str(p)
    return os.path.join(HERE, "import", name)


@pytest.mark.parametrize("entry", TABLE, ids=[e["id"] for e in TABLE])
def test_bad_export_exits_2_with_one_line(entry, tmp_path, capsys):
    from harness.console import main

    files = [_file(f, tmp_path) for f in entry["files"]]
    out = tmp_path / "cases.jsonl"
    rc = main(["import", entry["format"], *files, "--out", str(out)])
    captured = capsys.readouterr()
    expected = "\n".join(line.replace("{path}", files[0]) for line in entry["stderr"]) + "\n"
    assert captured.err == expected
    assert rc == 2
    if "stdout_has" in entry:
        assert entry["stdout_has"].replace("{path}", files[0]) in captured.out
    assert not out.exists()
