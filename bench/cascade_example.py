#!/usr/bin/env python3
"""The worked example of docs/cascade.md: calibrate a three-stage cascade on a labelled RAGTruth-format
import, then score new data with it, under the reference judge and the realistic test judge.

The data: QA rows in RAGTruth's format (``response.jsonl`` + ``source_info.jsonl``), every text written
here from templates (no corpus row is copied): a question, two passages, an answer of two sentences, each
answer faithful (some in other words than the passage's), or with a changed figure (RAGTruth's "Evident
Conflict" span), an added unsupported sentence ("Evident Baseless Info"), or an unstated sentence made of the
passage's own words ("Subtle Baseless Info"), so the checks are not all equally sure, nor all right.
They go through ``harness import ragtruth`` like any RAGTruth file; one seed makes the labelled set, another
the "new data".

Run from the repository root (about 10 minutes on 2 busy cores)::

    HARNESS_WORKERS=1 .venv/bin/python bench/cascade_example.py [--n 240] [--out /tmp/cascade-example]
"""
from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys

STAGES = "baseline.similarity,nli.minicheck,inhouse.span"
THINGS = [("the gym", "opens", "am"), ("the library", "closes", "pm"), ("the museum", "opens", "am"),
          ("the pool", "closes", "pm"), ("the clinic", "opens", "am"), ("the market", "closes", "pm"),
          ("the bakery", "opens", "am"), ("the office", "closes", "pm")]
EXTRA = ["Parking is free for members.", "Dogs are welcome on the terrace.", "The cafe serves vegan meals.",
         "Guided tours run every hour.", "Lockers cost two dollars.", "Children under five enter free."]
FEES = ["a day pass costs {n} dollars", "membership costs {n} dollars a month", "a guest pays {n} dollars"]


def row(i: int, rng: random.Random) -> tuple[dict, dict]:
    place, verb, half = rng.choice(THINGS)
    hour, fee = rng.randint(5, 11), rng.choice([5, 8, 12, 15, 20, 25])
    fee_text = rng.choice(FEES).format(n=fee)
    p1 = f"On weekdays {place} {verb} at {hour} {half}."
    p2 = f"At {place}, {fee_text}."
    kind = rng.choices(["faithful", "conflict", "baseless", "subtle", "loose"], [0.4, 0.2, 0.15, 0.15, 0.1])[0]
    para = rng.random() < 0.4
    shown_hour = hour if kind != "conflict" else hour + rng.choice([1, 2])
    s1 = (f"{place.capitalize()} {verb} at {shown_hour} {half} on weekdays." if para
          else f"On weekdays {place} {verb} at {shown_hour} {half}.")
    if kind == "loose":   # faithful, in other words: a word-matching check doubts it
        s1 = f"From Monday to Friday the doors of {place.split()[-1]} are {'unlocked' if verb == 'opens' else 'locked'}" \
             f" by {hour} {half}."
    s2 = (rng.choice(EXTRA) if kind == "baseless" else
          f"On weekends {place} also {verb} at {hour} {half}." if kind == "subtle" else   # unstated, all words shared
          f"The price: {fee_text}." if para else f"At {place}, {fee_text}.")
    answer = f"{s1} {s2}"
    labels = []
    if kind == "conflict":
        text = f"{shown_hour} {half}"
        start = answer.index(text)
        labels.append({"start": start, "end": start + len(text), "text": text, "label_type": "Evident Conflict",
                       "meta": "written for the cascade example", "implicit_true": False, "due_to_null": False})
    elif kind in ("baseless", "subtle"):
        start = answer.index(s2)
        labels.append({"start": start, "end": start + len(s2), "text": s2,
                       "label_type": "Evident Baseless Info" if kind == "baseless" else "Subtle Baseless Info",
                       "meta": "written for the cascade example", "implicit_true": False, "due_to_null": False})
    sid = f"q{i}"
    source = {"source_id": sid, "task_type": "QA", "source": "MARCO", "prompt": "...",
              "source_info": {"question": f"when does {place} open and what does it cost",
                              "passages": f"passage 1:{p1}\n\npassage 2:{p2}\n\n"}}
    response = {"id": str(i), "source_id": sid, "model": "model-x", "temperature": 0.7, "labels": labels,
                "split": "test", "quality": "good", "response": answer}
    return source, response


def write_set(folder: str, n: int, seed: int) -> str:
    """RAGTruth-format files of ``n`` rows, imported to a case file; returns its path."""
    rng = random.Random(seed)
    os.makedirs(folder, exist_ok=True)
    rows = [row(i, rng) for i in range(1, n + 1)]
    src, resp = os.path.join(folder, "source_info.jsonl"), os.path.join(folder, "response.jsonl")
    with open(src, "w", encoding="utf-8") as fh:
        fh.writelines(json.dumps(s) + "\n" for s, _ in rows)
    with open(resp, "w", encoding="utf-8") as fh:
        fh.writelines(json.dumps(r) + "\n" for _, r in rows)
    cases = os.path.join(folder, "cases.jsonl")
    harness("import", "ragtruth", resp, src, "--out", cases)
    return cases


def harness(*args: str) -> str:
    exe = os.path.join(os.path.dirname(sys.executable), "harness")
    done = subprocess.run([exe, *args], capture_output=True, text=True)
    if done.returncode not in (0, 1):
        sys.exit(f"harness {' '.join(args)} failed ({done.returncode}): {done.stderr.strip()[-400:]}")
    return done.stdout


def judge_args(url: str | None) -> list[str]:
    return [] if url is None else ["--judge-url", url, "--judge-model", "realistic-judge", "--cache", "record"]


def example(name: str, url: str | None, labelled: str, new: str, out: str, target: str, delta: str) -> None:
    runs = os.path.join(out, "runs")
    common = ["--out", runs, "--no-progress", "--no-report", *judge_args(url)]
    harness("run", "--cases", labelled, "--metrics", STAGES, "--run-id", f"{name}-labelled", *common)
    cascade = os.path.join(out, f"{name}-cascade.json")
    print(f"## {name} judge: harness calibrate --target {target} --delta {delta} --stages {STAGES}")
    print(harness("calibrate", f"{name}-labelled", "--runs-out", runs, "--labels", labelled, "--stages", STAGES,
                  "--target", target, "--delta", delta, "--out", cascade))
    print(f"## {name} judge: harness run --cascade on new data")
    text = harness("run", "--cascade", cascade, "--cases", new, "--run-id", f"{name}-new", *common)
    print("\n".join(line for line in text.splitlines() if line.startswith(("cascade:", "  ", "judge traffic"))
                    and "scored" not in line))
    # the new data's labels, to measure the realised agreement of what the cascade decided
    sys.path.insert(0, os.getcwd())
    from harness.cases.load import load_cases
    from harness.reports.analysis.agreement import answer_truth
    from harness.store.runstore import RunStore

    truth = {c.id: answer_truth(c, "hallucinated") for c in load_cases(new)}
    store = RunStore.open(os.path.join(runs, f"{name}-new", "store.sqlite"))
    try:
        route = store.meta("cascade")["route"]
        calls = store.rows("SELECT SUM(calls), SUM(prompt_tokens + completion_tokens) FROM cells")[0]
    finally:
        store.close()
    decided = {c: r for c, r in route.items() if r["stage"] != "person"}
    agree = sum((r["verdict"] == "ungrounded") == truth[c] for c, r in decided.items())
    print(f"new data: {len(route)} answers, decided by a stage {len(decided)}, realised agreement "
          f"{agree}/{len(decided)}; judge calls {calls[0]}, tokens {calls[1]}\n")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=240, help="labelled answers (the new data has as many)")
    ap.add_argument("--out", default="/tmp/cascade-example")
    ap.add_argument("--target", default="0.9")
    ap.add_argument("--delta", default="0.1")
    ap.add_argument("--judges", default="reference,realistic")
    a = ap.parse_args(argv)
    labelled = write_set(os.path.join(a.out, "labelled"), a.n, 1)
    new = write_set(os.path.join(a.out, "new"), a.n, 2)
    for name in a.judges.split(","):
        if name == "reference":
            example(name, None, labelled, new, a.out, a.target, a.delta)
        else:
            from tests.helpers.judges.realistic import serve

            with serve(mode="chat-404") as judge:
                example(name, judge.url, labelled, new, a.out, a.target, a.delta)
    return 0


if __name__ == "__main__":
    sys.exit(main())
