"""Cases without annotations: plain-string contexts, `harness import ragas|deepeval`, and the
reference judge refusing unannotated cases before any cell runs."""
import csv
import json
import os

from harness.cases.load import CaseFileError, load_cases, parse_case
from harness.console import main

import pytest

RAGAS_ROWS = [
    {"user_input": "How hot should the oven be?", "retrieved_contexts": ["Heat the oven to 350 F.", "Cool on a rack."],
     "response": "Bake at 350 F.", "reference": "350 F", "reference_contexts": None},
    {"user_input": "How long?", "retrieved_contexts": ["Bake for 8 to 10 minutes."], "response": "About 9 minutes."},
]
DEEPEVAL_ROWS = [
    {"input": "How hot should the oven be?", "actual_output": "Bake at 350 F.", "expected_output": "350 F",
     "retrieval_context": ["Heat the oven to 350 F.", "deepeval_source=recipe.txt,deepeval_context=Cool on a rack."],
     "context": None, "name": "oven"},
    {"input": "How long?", "actual_output": "About 9 minutes.", "retrieval_context": ["Bake for 8 to 10 minutes."]},
]


def _write(path, rows, kind, list_cell):
    if kind == "jsonl":
        path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    elif kind == "json":
        path.write_text(json.dumps(rows, indent=2))
    else:
        keys = list(dict.fromkeys(k for r in rows for k in r))
        with open(path, "w", newline="") as fh:
            w = csv.DictWriter(fh, fieldnames=keys)
            w.writeheader()
            for r in rows:
                w.writerow({k: list_cell(v) if isinstance(v, list) else ("" if v is None else v)
                            for k, v in r.items()})


@pytest.mark.parametrize("kind", ["jsonl", "json", "csv"])
@pytest.mark.parametrize("fmt,rows,list_cell", [
    ("ragas", RAGAS_ROWS, str),                      # Ragas to_csv writes a list as its Python repr
    ("deepeval", DEEPEVAL_ROWS, "|".join),           # DeepEval save_as joins list cells with "|"
])
def test_import_reads_each_format_and_the_cases_load(fmt, rows, list_cell, kind, tmp_path, capsys):
    src, out = tmp_path / f"export.{kind}", tmp_path / "cases.jsonl"
    _write(src, rows, kind, list_cell)
    assert main(["import", fmt, str(src), "--out", str(out)]) == 0
    assert "2 case(s)" in capsys.readouterr().out
    cases = load_cases(str(out)).cases
    assert [c.annotation for c in cases] == [None, None]
    first = cases[0]
    assert first.question == "How hot should the oven be?" and first.answer == "Bake at 350 F."
    assert [(c.id, c.text) for c in first.contexts] == [("1", "Heat the oven to 350 F."), ("2", "Cool on a rack.")]
    assert first.reference_answer == "350 F" and cases[1].reference_answer is None
    assert cases[1].id == "case-2"
    assert first.id == ("oven" if fmt == "deepeval" else "case-1")


@pytest.mark.parametrize("fmt,kind,content,expected", [
    ("ragas", "jsonl", '{"user_input": "q", "retrieved_contexts": ["c"], "response": "a"}\n'
                       '{"user_input": "q", "retrieved_contexts": ["c"], "response": 5}\n',
     "line 2, field response: expected a string, got int"),
    ("ragas", "jsonl", '{"user_input": "q", "response": "a"}\n', "line 1, field retrieved_contexts: missing"),
    ("ragas", "jsonl", '{"user_input": [{"content": "hi"}], "retrieved_contexts": [], "response": "a"}\n',
     "line 1, field user_input: a multi-turn sample"),
    ("ragas", "jsonl", '{"user_input": "q", "retrieved_contexts": ["c", 3], "response": "a"}\n',
     "line 1, field retrieved_contexts[1]: expected a string, got int"),
    ("ragas", "jsonl", '{"user_input": "q", "retrieved_contexts": ["c"], "response": "a"}\n{nope\n',
     "line 2: not valid JSON"),
    ("deepeval", "json", '[\n  {"input": "q", "actual_output": "a", "retrieval_context": ["c"]},\n'
                         '  {"input": "q", "retrieval_context": ["c"]}\n]',
     "line 3, field actual_output: missing"),
    ("deepeval", "csv", 'input,actual_output,retrieval_context\nq,a,c\n"multi\nline q",a\n',
     "line 3: 2 columns, the header has 3"),
    ("deepeval", "jsonl", '{"input": "q", "actual_output": "a", "retrieval_context": ["c"], "name": "x"}\n'
                          '{"input": "q", "actual_output": "a", "retrieval_context": ["c"], "name": "x"}\n',
     "line 2, field id: duplicate id 'x' (first on line 1)"),
])
def test_import_errors_name_file_line_field_and_write_nothing(fmt, kind, content, expected, tmp_path, capsys):
    src, out = tmp_path / f"export.{kind}", tmp_path / "cases.jsonl"
    src.write_text(content)
    assert main(["import", fmt, str(src), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert f"{src} {expected}" in err and "Traceback" not in err
    assert not out.exists()


def test_import_unknown_format_and_missing_file_exit_2(tmp_path, capsys):
    with pytest.raises(SystemExit) as e:
        main(["import", "nosuch", "x.jsonl", "--out", str(tmp_path / "o.jsonl")])
    assert e.value.code == 2
    assert main(["import", "ragas", str(tmp_path / "none.jsonl"), "--out", str(tmp_path / "o.jsonl")]) == 2
    assert "none.jsonl: no such file" in capsys.readouterr().err


def test_plain_string_contexts_get_ids_in_order_and_annotation_is_optional():
    case = parse_case({"id": "c", "question": "q", "contexts": ["first", {"id": "x", "text": "second"}, "third"],
                       "answer": "a"})
    assert [(c.id, c.text) for c in case.contexts] == [("1", "first"), ("x", "second"), ("3", "third")]
    assert case.annotation is None and not case.annotated


def test_a_bad_plain_context_still_names_its_field(tmp_path):
    p = tmp_path / "c.jsonl"
    p.write_text(json.dumps({"id": "c", "question": "q", "contexts": ["ok", 7], "answer": "a"}) + "\n")
    with pytest.raises(CaseFileError, match=r"line 1, field contexts\[1\]: expected an object \{id, text\} or a string"):
        load_cases(str(p))


def test_reference_judge_refuses_unannotated_cases_before_any_cell(tmp_path, capsys):
    cases = tmp_path / "cases.jsonl"
    rows = [{"id": "bare-1", "question": "q", "contexts": ["c"], "answer": "a"},
            {"id": "bare-2", "question": "q", "contexts": ["c"], "answer": "a"}]
    cases.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "out"
    assert main(["run", "--cases", str(cases), "--out", str(out), "--metrics", "inhouse.span", "--no-progress"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "bare-1, bare-2" in err[0] and "--judge-url" in err[0]
    assert not os.path.exists(out)


def test_runner_refuses_too_when_called_directly(tmp_path):
    from harness.cases.load import CaseSet
    from harness.run.runner import RunOptions, run

    case = parse_case({"id": "bare", "question": "q", "contexts": ["c"], "answer": "a"})
    with pytest.raises(ValueError, match=r"\(bare\): pass --judge-url"):
        run(RunOptions(cases=CaseSet("x", (case,), "0"), metrics=["inhouse.span"], out_dir=str(tmp_path / "o"),
                       progress=False))
    assert not (tmp_path / "o").exists()
