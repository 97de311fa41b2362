"""Read the rows of an export file, each with the line it starts on (for error messages).

Accepted: JSONL (one object a line), JSON (a list of objects, or an object holding one list under
``samples``, ``goldens``, ``test_cases`` or ``data``) and CSV with a header row. The kind is taken
from the extension (``.jsonl``, ``.json``, ``.csv``); any other name is read as JSONL.
"""
from __future__ import annotations

import ast
import csv
import io
import json
import os
from typing import Any

from harness.cases.load import CaseFileError

LIST_KEYS = ("samples", "goldens", "test_cases", "data")


class RowProblem(Exception):
    """A row (or the file) that cannot be imported: the field and what was expected."""

    def __init__(self, fld: str, msg: str):
        super().__init__(f"{fld}: {msg}" if fld else msg)
        self.fld, self.msg = fld, msg


def read_rows(path: str) -> list[tuple[int | None, dict]]:
    """``[(line, row), ...]``; ``CaseFileError`` (file, line, field) when the file cannot be read."""

    if not os.path.isfile(path):
        raise CaseFileError(path, [(None, "", "no such file" if not os.path.exists(path) else "not a file")])
    with open(path, "rb") as fh:
        raw = fh.read()
    if raw.startswith(b"\xef\xbb\xbf"):
        raw = raw[3:]
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        line = raw[:e.start].count(b"\n") + 1
        raise CaseFileError(path, [(line, "", f"not valid UTF-8 (byte 0x{raw[e.start]:02x})")]) from None
    ext = os.path.splitext(path)[1].lower()
    try:
        if ext == ".csv":
            return _csv(text)
        if ext == ".json":
            return _json_list(text)
        return _jsonl(text)
    except _At as p:
        raise CaseFileError(path, [(p.line, p.fld, p.msg)]) from None


class _At(Exception):
    def __init__(self, line: int | None, fld: str, msg: str):
        self.line, self.fld, self.msg = line, fld, msg


def _jsonl(text: str) -> list[tuple[int | None, dict]]:
    rows = []
    for n, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as e:
            raise _At(n, "", f"not valid JSON at column {e.colno}: {e.msg}") from None
        except (RecursionError, ValueError) as e:   # the case loader's guards (harness.cases.load)
            raise _At(n, "", unusable(e)) from None
        rows.append((n, _object(obj, n)))
    return rows


def _json_list(text: str) -> list[tuple[int | None, dict]]:
    """Objects of a JSON list, each with the line its ``{`` is on.

    >>> [ln for ln, _ in _json_list('[\\n {"a": 1},\\n {"a": 2}\\n]')]
    [2, 3]
    """
    try:
        whole = json.loads(text)
    except json.JSONDecodeError as e:
        raise _At(e.lineno, "", f"not valid JSON at column {e.colno}: {e.msg}") from None
    except (RecursionError, ValueError) as e:
        raise _At(1, "", unusable(e)) from None
    if isinstance(whole, dict):
        keys = [k for k in LIST_KEYS if isinstance(whole.get(k), list)]
        if not keys:
            raise _At(1, "", f"expected a JSON list of rows (or an object with one of {', '.join(LIST_KEYS)})")
        key, whole = keys[0], whole[keys[0]]
        at = text.find("[", text.find(f'"{key}"'))
    elif isinstance(whole, list):
        at = text.find("[")
    else:
        raise _At(1, "", "expected a JSON list of rows")
    starts = _element_lines(text, at, len(whole))
    return [(ln, _object(obj, ln)) for ln, obj in zip(starts, whole)]


def unusable(e: BaseException) -> str:
    """Why text that parses as JSON cannot be used, in the case loader's words: nested too deeply
    (a ``RecursionError``), or an integer of more than 4,300 digits (a ``ValueError``).

    >>> unusable(RecursionError("maximum recursion depth exceeded"))
    'not usable JSON: nested too deeply'
    """
    if isinstance(e, RecursionError):
        return "not usable JSON: nested too deeply"
    return f"not usable JSON: {str(e).split(';')[0]}"


def _element_lines(text: str, at: int, n: int) -> list[int | None]:
    """The line each element of the list opening at ``at`` starts on (decoded element by element)."""
    dec = json.JSONDecoder()
    out: list[int | None] = []
    i = at + 1
    while len(out) < n and 0 < i < len(text):
        while i < len(text) and text[i] in " \t\r\n,":
            i += 1
        if i >= len(text) or text[i] == "]":
            break
        out.append(text.count("\n", 0, i) + 1)
        try:
            _, i = dec.raw_decode(text, i)
        except (RecursionError, ValueError):
            break
    return out + [None] * (n - len(out))


def _object(obj: Any, line: int | None) -> dict:
    if not isinstance(obj, dict):
        raise _At(line, "", f"expected a JSON object per row, got {type(obj).__name__}")
    return obj


def _csv(text: str) -> list[tuple[int | None, dict]]:
    reader = csv.reader(io.StringIO(text, newline=""))
    try:
        header = next(reader)
    except StopIteration:
        return []
    except csv.Error as e:
        raise _At(1, "", f"not valid CSV: {e}") from None
    seen: dict[str, int] = {}
    for k, name in enumerate(header, start=1):
        if name in seen:
            raise _At(1, name, f"the header names this column twice (columns {seen[name]} and {k}); "
                               "the rows' values would be ambiguous")
        seen[name] = k
    rows, start = [], reader.line_num + 1
    try:
        for cells in reader:
            if any(c.strip() for c in cells):
                if len(cells) != len(header):
                    raise _At(start, "", f"{len(cells)} columns, the header has {len(header)}")
                rows.append((start, dict(zip(header, cells))))
            start = reader.line_num + 1
    except csv.Error as e:
        raise _At(start, "", f"not valid CSV: {e}") from None
    return rows


def text_field(row: dict, key: str, *, required: bool = True) -> str | None:
    """A string field (None when absent and not required; RowProblem otherwise)."""
    v = row.get(key)
    if v is None or (v == "" and not required):
        if required:
            raise RowProblem(key, "missing (expected a string)")
        return None
    if not isinstance(v, str):
        raise RowProblem(key, f"expected a string, got {type(v).__name__}")
    return v


def list_field(row: dict, key: str, split: str | None = None) -> list[str]:
    """A list of strings: a JSON list, or, as CSV cells hold it, a JSON or Python list literal, or
    a string split on ``split``.

    >>> list_field({"c": "['a', 'b']"}, "c"), list_field({"c": "a|b"}, "c", "|"), list_field({"c": ["x"]}, "c")
    (['a', 'b'], ['a', 'b'], ['x'])
    """
    if key not in row or row[key] is None:
        raise RowProblem(key, "missing (expected a list of passages)")
    v = row[key]
    if isinstance(v, str):
        s = v.strip()
        if s.startswith("["):
            try:
                v = json.loads(s)
            except (ValueError, RecursionError):
                try:
                    v = ast.literal_eval(s)
                except (ValueError, SyntaxError, RecursionError, MemoryError):
                    raise RowProblem(key, "looks like a list but is neither JSON nor a Python literal") from None
        elif split is not None:
            v = s.split(split) if s else []
        else:
            v = [v] if s else []
    if not isinstance(v, list):
        raise RowProblem(key, f"expected a list of strings, got {type(v).__name__}")
    for i, item in enumerate(v):
        if not isinstance(item, str):
            raise RowProblem(f"{key}[{i}]", f"expected a string, got {type(item).__name__}")
    return list(v)


def case_id(row: dict, position: int, *keys: str) -> str:
    """The row's own id under the first of ``keys`` it has, else ``case-<position>``."""
    for k in keys:
        v = row.get(k)
        if isinstance(v, (str, int)) and not isinstance(v, bool) and str(v).strip():
            return str(v).strip()
    return f"case-{position}"
