"""A :class:`~harness.cases.load.CaseSet` from whatever a caller holds: a case file, a CaseSet, a list of dicts or a
DataFrame, in the harness's field names or Ragas' or DeepEval's (``harness.evaluate`` and the pytest helper
take the same)."""
from __future__ import annotations

import hashlib
import json
import os

from harness.cases.columns import dialect, rows_of, to_case_object
from harness.cases.defaults import resolve_cases
from harness.cases.importers.rows import RowProblem
from harness.cases.load import CaseSet, case_digest, load_cases, parse_case


def case_set(cases):
    """A :class:`harness.cases.load.CaseSet` from a path, a CaseSet, a list of dicts or a DataFrame."""
    if isinstance(cases, CaseSet):
        return cases
    if isinstance(cases, (str, os.PathLike)):
        return load_cases(resolve_cases(os.fspath(cases)))
    rows = rows_of(cases)
    if not rows:
        raise ValueError("no cases given")
    names = dialect(rows[0].keys())
    objs, parsed, seen = [], [], set()
    for i, row in enumerate(rows, start=1):
        try:
            obj = to_case_object(row, i, names)
        except RowProblem as p:
            raise ValueError(f"case {i}, field {p.fld}: {p.msg}") from None
        parsed.append(parse_case(obj, f"case {i} ({obj['id']})"))
        if obj["id"] in seen:
            raise ValueError(f"case {i}, field id: duplicate id {obj['id']!r}")
        seen.add(obj["id"])
        objs.append(obj)
    digest = hashlib.sha256("\n".join(json.dumps(o, sort_keys=True, ensure_ascii=False, default=str)
                                      for o in objs).encode()).hexdigest()
    return CaseSet(f"<{type(cases).__name__} of {len(objs)} {names} rows>", tuple(parsed), digest)



def one_case_sets(cases) -> list[CaseSet]:
    """Each case of ``cases`` as a set of its own (one pytest item per case), named by the case's id."""
    whole = case_set(cases)
    return [CaseSet(f"{whole.path}#{c.id}", (c,), case_digest(c)) for c in whole]
