"""The hostile-input corpus (tests/data/hostile/, issue 33): every probe of every surface (review HTTP bodies, labels
files, span exports, NLI model folders, run stores, options) ends in its one expected line, and, for the command
line, exit 2 with nothing lost. One parametrized test runs them all, in-process (the CLI's ``main``, the review
app through aiohttp's test client)."""
from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import os
import shutil
import sqlite3
import tempfile

import pytest

from tests.conftest import ROOT

HERE = os.path.join(ROOT, "tests", "data", "hostile")
SURFACES = ("review_http", "label_stores", "otel", "nli_configs", "stores", "cli")
PROBES = [(s, p) for s in SURFACES for p in json.load(open(os.path.join(HERE, f"{s}.json")))["probes"]]
DEEP = 100_000
NOBODY = 65534


def _digest(path: str) -> str:
    with open(path, "rb") as fh:
        return hashlib.sha256(fh.read()).hexdigest()


@contextlib.contextmanager
def _as_another_user():
    """Run the block as a user who does not own the files made before it (root writes any file whatever its
    mode: the effective uid drops to nobody for the block, then comes back)."""
    if os.geteuid() != 0:
        yield
        return
    os.setegid(NOBODY)
    os.seteuid(NOBODY)
    try:
        yield
    finally:
        os.seteuid(0)
        os.setegid(0)


@pytest.fixture(scope="module")
def world():
    """A folder anyone may enter (the read-only probes run as another user) with a finished run of the canonical
    cases and a labels file holding a sample of it."""
    from harness.cases.load import load_cases
    from harness.console import main

    from tests.conftest import CANONICAL
    from tests.helpers.synthetic import synthetic_run

    top = tempfile.mkdtemp(prefix="harness-hostile-")
    os.chmod(top, 0o777)
    run = os.path.join(top, "run")
    synthetic_run(run, load_cases(CANONICAL), run_id="hostile")
    labels = os.path.join(top, "labels.sqlite")
    assert main(["review", run, "--labels", labels, "--sample", "3", "--kappa"]) == 0
    yield {"top": top, "run": run, "labels": labels}
    shutil.rmtree(top, ignore_errors=True)


@pytest.fixture(autouse=True)
def never_serve(monkeypatch):
    """A probe must be refused before the review app serves (it would serve until stopped)."""
    import harness.reports.review.server as server

    async def serve(*a, **k):
        raise AssertionError("the review app started serving a hostile input")

    monkeypatch.setattr(server, "serve", serve)


def _one_line(err: str) -> None:
    assert err.count("\n") == 1 and err.endswith("\n") and "Traceback" not in err, err


# --- the one test ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("surface, probe", PROBES, ids=[f"{s}/{p['id']}" for s, p in PROBES])
def test_a_hostile_input_ends_in_its_one_line(surface, probe, world, tmp_path, capsys):
    globals()[f"_{surface}"](probe, world, tmp_path, capsys)


# --- review HTTP --------------------------------------------------------------------------------------------


def _body(probe, labels: str) -> bytes:
    gen = probe.get("body")
    if "body_hex" in probe:
        return bytes.fromhex(probe["body_hex"])
    if gen == "@nested-array":
        return b"[" * DEEP + b"]" * DEEP
    if gen == "@nested-object":
        return b'{"a":' * DEEP + b"1" + b"}" * DEEP
    if gen == "@nested-in-claims":
        return b'{"claims": ' + b"[" * DEEP + b"]" * DEEP + b', "abstention": false, "answerable": true}'
    if gen == "@long-comment":
        return json.dumps({"claims": [], "abstention": False, "answerable": True, "comment": "x" * 10001}).encode()
    if gen == "@int-5000":
        return b'{"claims": [], "abstention": false, "answerable": true, "n": ' + b"7" * 5000 + b"}"
    if gen == "@initial-state":
        from harness.reports.review import answers
        from harness.reports.review.store import LabelStore

        store = LabelStore.open_existing(labels)
        try:
            return json.dumps(answers.initial_state(store.case_json(store.picks()[0].case_id))).encode()
        finally:
            store.close()
    return gen.encode() if gen is not None else None


def _review_http(probe, world, tmp_path, capsys):
    from harness.reports.review.server import make_app
    from harness.reports.review.store import LabelStore

    from aiohttp.test_utils import TestClient, TestServer

    labels = str(tmp_path / "labels.sqlite")
    shutil.copy(world["labels"], labels)
    body = _body(probe, labels)
    store = LabelStore(labels)
    if probe.get("read_only"):   # the file as a user who may not write it sees it
        store.db.close()
        store.db = sqlite3.connect(f"file:{labels}?mode=ro", uri=True, isolation_level=None, check_same_thread=False)
    saves = store.saves()

    async def go():
        async with TestClient(TestServer(make_app(store, "reviewer"))) as client:
            resp = await client.request(probe["method"], probe["path"], params=probe.get("query"), data=body,
                                        headers={"Content-Type": "application/json"})
            return resp.status, await resp.json()

    try:
        status, reply = asyncio.run(go())
        assert status == probe["status"], reply
        if "error" in probe:
            assert reply == {"error": probe["error"].replace("{labels}", labels)}
        if "reviewer" in probe:
            assert reply["reviewer"] == probe["reviewer"]
        assert store.saves() == saves             # nothing saved, nothing lost
    finally:
        store.close()


# --- labels files -------------------------------------------------------------------------------------------


def _label_stores(probe, world, tmp_path, capsys):
    from harness.console import main

    d = tempfile.mkdtemp(prefix="probe-", dir=world["top"])
    os.chmod(d, 0o777)
    labels = os.path.join(d, "labels.sqlite")
    make = probe["make"]
    if make == "run-store":
        labels = os.path.join(world["run"], "store.sqlite")
    elif make == "text":
        with open(labels, "w") as fh:
            fh.write("not a labels file\n")
    else:
        shutil.copy(world["labels"], labels)
        if make == "truncated":
            size = os.path.getsize(labels)
            with open(labels, "r+b") as fh:
                fh.truncate(size // 2)
    before = _digest(labels)
    argv = [a.replace("{labels}", labels).replace("{run}", world["run"]) for a in probe["argv"]]
    if probe.get("same_as_writable"):
        copy = os.path.join(d, "writable.sqlite")
        shutil.copy(labels, copy)
        want_rc = main([a.replace(labels, copy) for a in argv])
        want = capsys.readouterr()
        want = (want.out.replace(copy, labels), want.err.replace(copy, labels))
    if make == "read-only":
        os.chmod(labels, 0o444)
        with _as_another_user():
            rc = main(argv)
    else:
        rc = main(argv)
    got = capsys.readouterr()
    try:
        if probe.get("same_as_writable"):
            assert (rc, got.out, got.err) == (want_rc, *want)
            assert "Traceback" not in got.err
        else:
            assert rc == 2
            _one_line(got.err)
            if "stderr" in probe:
                assert got.err == probe["stderr"].replace("{labels}", labels) + "\n"
            else:
                assert got.err.startswith(probe["stderr_prefix"].replace("{labels}", labels)), got.err
        assert _digest(labels) == before          # the file keeps its bytes (no label table in a run store)
    finally:
        os.chmod(labels, 0o644)


# --- span exports -------------------------------------------------------------------------------------------


def _otel_file(name: str, tmp_path) -> str:
    if not name.startswith("@"):
        return os.path.join(HERE, "otel", name)
    p = tmp_path / name[1:]
    if name == "@deep.json":
        p.write_text("[" * DEEP + "]" * DEEP)
    elif name == "@deep-line-2.jsonl":
        good = open(os.path.join(HERE, "otel", "otlp_jsonl_line_2_attributes_not_a_list.jsonl")).readline()
        p.write_text(good + "[" * DEEP + "]" * DEEP + "\n")
    elif name == "@mlflow-inputs-deep.json":
        span = {"span_id": "s1", "attributes": {"mlflow.spanType": json.dumps("LLM"),
                                                "mlflow.spanInputs": "[" * DEEP + "]" * DEEP}}
        p.write_text(json.dumps({"info": {}, "data": {"spans": [span]}}))
    return str(p)


def _otel(probe, world, tmp_path, capsys):
    from harness.console import main

    path = _otel_file(probe["file"], tmp_path)
    out = tmp_path / "cases.jsonl"
    rc = main(["import", "otel", path, "--out", str(out)])
    err = capsys.readouterr().err
    assert rc == 2
    assert err == probe["stderr"].replace("{path}", path) + "\n"
    assert not out.exists()


# --- NLI model folders ---------------------------------------------------------------------------------------


def _nli_configs(probe, world, tmp_path, capsys):
    from harness.console import main

    from tests.helpers.nli_fixtures import NLI_CONFIG, write_model

    d = tmp_path / "model"
    write_model(d, config=probe.get("config", NLI_CONFIG))
    if "settings" in probe:
        (d / "harness-nli.json").write_text(json.dumps(probe["settings"]))
    out = tmp_path / "out"
    rc = main(["run", "--metrics", "nli.minicheck", "--nli-model", str(d), "--out", str(out), "--no-progress"])
    err = capsys.readouterr().err
    assert rc == 2
    assert err == probe["stderr"].replace("{dir}", str(d)) + "\n"
    assert not out.exists()


# --- run stores ----------------------------------------------------------------------------------------------


def _stores(probe, world, tmp_path, capsys):
    from harness.console import main

    run = str(tmp_path / "run")
    shutil.copytree(world["run"], run)
    store = os.path.join(run, "store.sqlite")
    db = sqlite3.connect(store)
    with db:
        db.execute(probe["sql"])
    db.close()
    before = _digest(store)
    rc = main([a.replace("{run}", run) for a in probe["argv"]])
    err = capsys.readouterr().err
    assert rc == 2
    assert err == probe["stderr"].replace("{store}", store) + "\n"
    assert _digest(store) == before


# --- other options and files -----------------------------------------------------------------------------------


def _cli(probe, world, tmp_path, capsys):
    from harness.console import main

    labels = str(tmp_path / "labels.sqlite")
    shutil.copy(world["labels"], labels)
    before = _digest(labels)
    folder = tmp_path / "a-folder"
    folder.mkdir()
    file = tmp_path / "input.jsonl"
    file.write_text("".join(json.dumps(row) + "\n" for row in probe.get("file_lines", [])))
    subs = {"{labels}": labels, "{run}": world["run"], "{dir}": str(folder), "{tmp}": str(tmp_path),
            "{file}": str(file), "@data/": os.path.join(ROOT, "tests", "data") + os.sep}

    def fill(s: str) -> str:
        for k, v in subs.items():
            s = s.replace(k, v)
        return s

    rc = main([fill(a) for a in probe["argv"]])
    err = capsys.readouterr().err
    assert rc == 2
    assert err == fill(probe["stderr"]) + "\n"
    assert _digest(labels) == before
    assert os.listdir(folder) == [] and not (tmp_path / "out.jsonl").exists()


def test_every_corpus_file_is_in_a_table():
    used = {p["file"] for s, p in PROBES if s == "otel"}
    assert set(os.listdir(os.path.join(HERE, "otel"))) <= used
