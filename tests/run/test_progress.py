"""Progress that tells time: off a terminal, each line has the rate, the elapsed time and the time left."""
from __future__ import annotations

import io
import re

from harness.run import progress as P


def test_log_lines_carry_rate_elapsed_and_eta(monkeypatch):
    clock = iter([100.0] + [100.0 + 0.5 * i for i in range(1, 21)])
    monkeypatch.setattr(P.time, "monotonic", lambda: next(clock))
    out = io.StringIO()
    bar = P.Progress(20, 0, stream=out)
    for i in range(20):
        bar.tick("error" if i == 3 else "scored")
    bar.close()
    lines = out.getvalue().splitlines()
    assert len(lines) == 10      # a line per tenth of the run
    assert lines[0] == "progress: 2/20 cells (10%), 0 errors, 2.0 cells/s, elapsed 0:01, left ~0:09"
    assert re.fullmatch(r"progress: 20/20 cells \(100%\), 1 errors, 2\.0 cells/s, elapsed 0:10", lines[-1])


def test_a_slow_run_logs_at_least_every_interval(monkeypatch):
    times = iter([0.0, 1.0, P.LOG_EVERY_S + 2, P.LOG_EVERY_S + 3])
    monkeypatch.setattr(P.time, "monotonic", lambda: next(times))
    out = io.StringIO()
    bar = P.Progress(1000, 0, stream=out)
    bar.tick("scored")                   # 0.1 %: not yet a tenth, not yet the interval
    bar.tick("scored")                   # the interval has passed: a line
    assert out.getvalue().count("\n") == 1 and "left ~" in out.getvalue()
    bar.tick("scored")
    assert out.getvalue().count("\n") == 1


def test_a_long_run_prints_a_summary_and_where_the_whole_table_is(tmp_path, capsys):
    import json

    from harness.cli.run import TABLE_MAX_CASES
    from harness.console import main

    from tests.conftest import CANONICAL

    base = [json.loads(x) for x in open(CANONICAL, encoding="utf-8") if x.strip()]
    rows = [{**base[i % len(base)], "id": f"c{i:03d}"} for i in range(TABLE_MAX_CASES + 1)]
    cases = tmp_path / "many.jsonl"
    cases.write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert main(["run", "--cases", str(cases), "--metrics", "inhouse.span", "--out", str(tmp_path), "--run-id", "r",
                 "--no-progress", "--no-report"]) == 0
    out = capsys.readouterr().out
    assert "c000 " not in out and f"the whole table is in {tmp_path / 'r' / 'scores.txt'}" in out
    assert "inhouse.span  mean " in out
    whole = (tmp_path / "r" / "scores.txt").read_text()
    assert all(f"c{i:03d} " in whole for i in range(TABLE_MAX_CASES + 1))
