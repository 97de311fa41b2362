"""The bad-input corpus (tests/data/bad_input/): every bad case file or option exits 2 with its exact message
and creates no run directory; a valid file runs (exit 0); a run whose judge calls all fail exits 1."""
import json
import os
import subprocess
import sys

import pytest

from tests.conftest import ROOT

HERE = os.path.join(ROOT, "tests", "data", "bad_input")
with open(os.path.join(HERE, "cases.json")) as _fh:
    TABLE = json.load(_fh)["cases"]


def _path(entry, tmp_path) -> str:
    name = entry["cases"]
    if name == "@answer-5mb":   # generated, not committed
        good = json.loads(open(os.path.join(HERE, "valid.jsonl")).read())
        good["answer"] = "x" * 5_000_000
        p = tmp_path / "answer_5mb.jsonl"
        p.write_text(json.dumps(good) + "\n")
        return str(p)
    return os.path.normpath(os.path.join(HERE, name))


def _args(entry, path: str) -> list[str]:
    """The entry's extra CLI arguments, '{path}' being the case file's path."""
    return [a.replace("{path}", path) for a in entry.get("args", [])]


def _expected(entry, path: str) -> str:
    from harness.metric import registry

    known = ", ".join(registry.names())
    return "\n".join(line.replace("{path}", path).replace("{known}", known) for line in entry["stderr"]) + "\n"


@pytest.mark.parametrize("entry", TABLE, ids=[e["id"] for e in TABLE])
def test_bad_input_exits_2_with_the_exact_message(entry, tmp_path, capsys):
    from harness.console import main

    path = _path(entry, tmp_path)
    out = tmp_path / "out"
    rc = main(["run", "--cases", path, "--out", str(out), "--no-progress", *_args(entry, path)])
    captured = capsys.readouterr()
    assert captured.err == _expected(entry, path)
    assert rc == 2
    assert not out.exists()                     # no run directory, no store, no cache
    if not entry.get("args") and not entry.get("file_is_valid"):   # `harness validate` reports the same problems
        assert main(["validate", path]) == 2
        assert capsys.readouterr().err == _expected(entry, path)


SUBPROCESS_IDS = ("not-utf8", "path-is-a-directory", "unknown-metric", "deeply-nested-json", "lone-surrogate",
                  "run-id-climbs-out", "int-of-5000-digits")


@pytest.mark.parametrize("entry", [e for e in TABLE if e["id"] in SUBPROCESS_IDS], ids=lambda e: e["id"])
def test_bad_input_through_the_real_entry_point(entry, tmp_path):
    path = _path(entry, tmp_path)
    out = tmp_path / "out"
    p = subprocess.run([sys.executable, "-m", "harness", "run", "--cases", path, "--out", str(out), "--no-progress",
                        *_args(entry, path)], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert (p.returncode, p.stderr, p.stdout) == (2, _expected(entry, path), "")
    assert not out.exists()


ACCEPTED = {"utf8_bom.jsonl"}
"""Files that look odd but are valid: a UTF-8 byte-order mark (as some editors write) is not content."""


def test_every_corpus_file_is_in_the_table():
    used = {e["cases"] for e in TABLE} | ACCEPTED
    files = {f for f in os.listdir(HERE) if f.endswith(".jsonl")}
    assert files <= used, files - used


def test_the_valid_base_file_runs_and_exits_0(tmp_path, capsys):
    """Each bad file is this valid case with one defect: the control."""
    from harness.console import main

    rc = main(["run", "--cases", os.path.join(HERE, "valid.jsonl"), "--metrics", "inhouse.span",
               "--out", str(tmp_path), "--run-id", "ok", "--no-progress"])
    assert rc == 0, capsys.readouterr()
    assert "inhouse.span  scored 1, unscored 0" in capsys.readouterr().out


def test_a_utf8_bom_is_accepted():
    from harness.cases.load import load_cases

    path = os.path.join(HERE, "utf8_bom.jsonl")
    assert open(path, "rb").read(3) == b"\xef\xbb\xbf"
    cases = load_cases(path)
    assert [c.id for c in cases] == [c.id for c in load_cases(os.path.join(HERE, "valid.jsonl"))]


def test_an_unreadable_case_file(tmp_path, capsys, monkeypatch):
    """A PermissionError reading the file is one line, not a traceback (root reads any file, so the
    open is made to fail the way it does for a normal user)."""
    import harness.cases.load as cases_mod
    from harness.console import main

    path = tmp_path / "locked.jsonl"
    path.write_text(open(os.path.join(HERE, "valid.jsonl")).read())
    path.chmod(0)
    if os.geteuid() == 0:
        def deny(p, *a, **k):
            raise PermissionError(13, "Permission denied", p)
        monkeypatch.setattr(cases_mod, "open", deny, raising=False)
    rc = main(["run", "--cases", str(path), "--out", str(tmp_path / "out"), "--no-progress"])
    assert (rc, capsys.readouterr().err) == (2, f"harness: invalid case file:\n{path}: cannot be read: Permission denied\n")
    assert not (tmp_path / "out").exists()


@pytest.mark.skipif(not os.path.isdir("/proc"), reason="needs /proc, a directory no user can write")
def test_out_in_a_directory_that_cannot_be_written(tmp_path, capsys):
    from harness.console import main

    rc = main(["run", "--cases", os.path.join(HERE, "valid.jsonl"), "--out", "/proc/harness-out", "--no-progress"])
    err = capsys.readouterr().err
    assert rc == 2 and err.startswith("harness: --out /proc/harness-out: cannot write there (in /proc): ")
    assert err.count("\n") == 1


@pytest.mark.parametrize("port, message", [(70000, "--port must be between 0 and 65535, got 70000"),
                                           (-1, "--port must be between 0 and 65535, got -1"),
                                           (None, "judge serve: port {port} on 127.0.0.1 is already in use")])
def test_judge_serve_on_a_bad_or_busy_port(port, message):
    import socket

    busy = socket.socket()
    busy.bind(("127.0.0.1", 0))
    busy.listen()
    try:
        port = port or busy.getsockname()[1]
        p = subprocess.run([sys.executable, "-m", "harness", "judge", "serve", "--port", str(port),
                            "--cases", os.path.join(HERE, "valid.jsonl")],
                           cwd=ROOT, capture_output=True, text=True, timeout=120)
    finally:
        busy.close()
    assert p.returncode == 2 and p.stdout == "" and p.stderr.count("\n") == 1, p.stderr
    assert p.stderr.startswith("harness: " + message.format(port=port))


def test_the_run_api_refuses_a_run_id_that_is_not_a_name(canonical, tmp_path):
    from harness.run.runner import RunOptions, run

    for bad in ("../escape", str(tmp_path / "abs"), "..", "x" * 101):
        with pytest.raises(ValueError, match="--run-id"):
            run(RunOptions(cases=canonical, metrics=["inhouse.span"], out_dir=str(tmp_path / "out"), run_id=bad,
                           progress=False))
    assert not (tmp_path / "out").exists() and not (tmp_path / "escape").exists()
