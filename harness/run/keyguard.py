"""A judge key that is also case text (issue 33.3): said up front, and removed only from the judge's text.

Any judge key is removed from everything the harness writes or prints (:mod:`harness.core.redact`),
whatever its shape: a lower-case passphrase or a plain word too. But a key that occurs in the run's cases
(a local server's ``unused``) cannot be removed from every text without changing the cases. So before a
run with a keyed judge starts, :func:`confine_key` names the case text to the scrubber
(:func:`harness.core.redact.guard`) and, when the key occurs there, says so on stderr (never showing the
key) and marks the judge config ``key_confined``: every process of the run (workers too) then removes the
key only where it could have come from the judge (its replies, errors and headers), and the cases are
stored, shown and cached exactly as they are.
"""
from __future__ import annotations

import dataclasses
import os
import sys

from harness.core import redact

WARNING = ("harness: warning: the judge's key (${name}) occurs in the case text ({where}); it is removed from "
           "the judge's replies, errors and headers only, and the cases are kept exactly as they are. A key "
           "that is an ordinary word guards little: prefer a random one.")


def case_strings(case) -> list[str]:
    """Every string of a case record (ids, question, passages, answer, annotation)."""
    out = []

    def walk(v):
        if isinstance(v, str):
            out.append(v)
        elif isinstance(v, dict):
            for k, x in v.items():
                walk(k)
                walk(x)
        elif isinstance(v, (list, tuple)):
            for x in v:
                walk(x)

    walk(dataclasses.asdict(case))
    return out


def confine_key(judge, cases, err=None):
    """``judge`` (a :class:`harness.run.runner.JudgeConfig`), with ``key_confined`` set when its key
    occurs in ``cases``; the warning goes to ``err`` (stderr) then. Registers the case text with the
    scrubber either way, so a key registered later is judged the same."""
    texts = [(c.id, s) for c in cases for s in case_strings(c)]

    def occurs(fragment: str) -> bool:
        return any(fragment in s for _, s in texts)

    redact.guard(occurs)
    key = os.environ.get(judge.key_env or "") if judge.key_env else ""
    if not key or not redact.would_confine(key):
        return judge
    where = next((cid for cid, s in texts if key in s), None)
    shown = f"case {where}" if where is not None else "a fragment of it"
    print(WARNING.replace("${name}", f"${judge.key_env}").replace("{where}", redact.scrub(shown)),
          file=err or sys.stderr)
    return dataclasses.replace(judge, key_confined=True)
