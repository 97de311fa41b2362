#!/usr/bin/env python3
"""Write the small RAGTruth- and FaithBench-format samples the importer tests read.

Every text is written for this project (no row of either corpus is copied); the offsets are
computed here by substring search, then one row per drop reason is broken on purpose.
Run from the repository root: ``.venv/bin/python tests/data/build_samples.py``.
"""
from __future__ import annotations

import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))

QA = [  # (source id, question, passages, answer, [(hallucinated text, label_type, implicit_true)])
    ("s1", "how long should cookies bake",
     ["Bake the cookies at 350 F for 8 to 10 minutes.", "Let them cool on a wire rack."],
     "Cookies bake for 8 to 10 minutes at 350 F. The recipe makes three dozen.",
     [("The recipe makes three dozen.", "Evident Baseless Info", False)]),
    ("s2", "when does the pool open on weekends",
     ["On Saturdays and Sundays the pool opens at 8 am.", "Lane swimming finishes at 9 pm."],
     "The pool opens at 8 am on weekends. Lane swimming ends at 9 pm.", []),
    ("s3", "how many weeks of parental leave",
     ["Employees get 39 weeks of parental leave.", "The first 6 weeks are paid at 90% of salary."],
     "You get 40 weeks of parental leave. The first 6 weeks are paid at 90%.",
     [("40 weeks", "Evident Conflict", False)]),
    ("s4", "what is the refund window",
     ["Refund requests are accepted up to 30 days after purchase."],
     "Refunds can be requested up to 30 days after purchase.", []),
    ("s5", "what is the api rate limit",
     ["Each API key may send up to 100 requests per minute."],
     "Each key may send 100 requests per minute. Higher limits cost 20 dollars a month.",
     [("Higher limits cost 20 dollars a month.", "Subtle Baseless Info", True)]),
    ("s6", "where is the support office",
     ["The support office is on the second floor of Building C."],
     "The support office is on the second floor of Building C.", []),
    ("s7", "what does the store sell on sundays",
     ["The store is closed on Sundays and public holidays."],
     "The store is open on Sundays from noon. It is closed on public holidays.",
     [("open on Sundays from noon", "Subtle Conflict", False)]),
    ("s8", "how is the refund paid",
     ["Approved refunds are paid back to the original payment method."],
     "The refund goes back to your original payment method.", []),
]


def passages(ps):
    return "".join(f"passage {i}:{p}\n\n" for i, p in enumerate(ps, start=1))


def label(answer, text, kind, implicit):
    s = answer.index(text)
    return {"start": s, "end": s + len(text), "text": text, "meta": "written for the harness tests",
            "label_type": kind, "implicit_true": implicit, "due_to_null": False}


def ragtruth():
    sources, responses = [], []
    for n, (sid, q, ps, ans, labs) in enumerate(QA, start=1):
        sources.append({"source_id": sid, "task_type": "QA", "source": "MARCO",
                        "source_info": {"question": q, "passages": passages(ps)}, "prompt": "..."})
        responses.append({"id": str(n), "source_id": sid, "model": "model-a", "temperature": 0.7,
                          "labels": [label(ans, *l) for l in labs], "split": "test" if n % 2 else "train",
                          "quality": "good", "response": ans})
    sources.append({"source_id": "sum1", "task_type": "Summary", "source": "CNN/DM",
                    "source_info": "A long article.", "prompt": "..."})
    sources.append({"source_id": "d2t1", "task_type": "Data2txt", "source": "Yelp",
                    "source_info": {"name": "A cafe"}, "prompt": "..."})
    base = dict(model="model-b", temperature=0.7, split="train", labels=[])
    responses += [
        {**base, "id": "101", "source_id": "s1", "quality": "incorrect_refusal",
         "response": "Unable to answer based on given passages."},
        {**base, "id": "102", "source_id": "s2", "quality": "truncated", "response": "The pool opens at"},
        {**base, "id": "103", "source_id": "sum1", "quality": "good", "response": "A summary."},
        {**base, "id": "104", "source_id": "d2t1", "quality": "good", "response": "An overview."},
        {**base, "id": "105", "source_id": "s3", "quality": "good", "response": "You get 40 weeks.",
         "labels": [{"start": 8, "end": 16, "text": "41 weeks", "label_type": "Evident Conflict"}]},
        {**base, "id": "106", "source_id": "s3", "quality": "good", "response": "You get 40 weeks.",
         "labels": [{"start": 8, "end": 16, "text": "40 weeks", "label_type": "Made Up"}]},
        {**base, "id": "107", "source_id": "nope", "quality": "good", "response": "Anything."},
        {**base, "id": "108", "source_id": "s4", "quality": "good", "response": "   "},
        {**base, "id": "1", "source_id": "s4", "quality": "good", "response": "A repeated id."},
    ]
    with open(os.path.join(HERE, "ragtruth_source_info.jsonl"), "w", encoding="utf-8") as fh:
        fh.writelines(json.dumps(r) + "\n" for r in sources)
    with open(os.path.join(HERE, "ragtruth_response.jsonl"), "w", encoding="utf-8") as fh:
        fh.writelines(json.dumps(r) + "\n" for r in responses)
        fh.write('{"id": "109", "source_id": "s1", "quality": "good", "response": "cut off\n')


SUMMARIES = [  # (source, summary, [(annotator, text, labels)])
    ("The council approved a new bike lane on Main Street. Work starts in May and ends in July.",
     "The council approved a bike lane on Main Street. Work starts in June.",
     [("a1", "Work starts in June.", ["Unwanted", "Unwanted.Intrinsic"]),
      ("a2", "starts in June", ["Unwanted", "Unwanted.Intrinsic"])]),
    ("The museum reopened after a two-year renovation. Entry is free on Sundays.",
     "The museum reopened after renovation. Entry is free on Sundays. It was founded in 1901.",
     [("a1", "It was founded in 1901.", ["Unwanted", "Unwanted.Extrinsic"]),
      ("a2", "It was founded in 1901.", ["Questionable"])]),
    ("The bakery sells bread and cakes. It opens at 7 am every day.",
     "The bakery, a local favourite, sells bread and cakes and opens at 7 am daily.",
     [("a1", "a local favourite", ["Benign"])]),
    ("Heavy rain is expected on Friday. The river may rise by one metre.",
     "Heavy rain is expected on Friday, and the river may rise by one metre.", []),
]


def faithbench():
    samples = []
    for n, (src, summ, anns) in enumerate(SUMMARIES, start=1):
        annotations = []
        for who, text, labels in anns:
            s = summ.index(text)
            annotations.append({"annot_id": len(annotations) + 1, "annotator_id": who, "label": labels,
                                "note": "written for the harness tests", "summary_span": text,
                                "summary_start": s, "summary_end": s + len(text)})
        samples.append({"sample_id": n, "source": src, "summary": summ, "annotations": annotations,
                        "metadata": {"summarizer": "model-a"}})
    bad = {"sample_id": 99, "source": "The library closes at 8 pm.", "summary": "The library closes at 9 pm.",
           "annotations": [{"annotator_id": "a1", "label": ["Unwanted.Intrinsic"], "summary_span": "9 pm",
                            "summary_start": 0, "summary_end": 4}]}
    empty = {"sample_id": 100, "source": "Text.", "summary": "", "annotations": []}
    with open(os.path.join(HERE, "faithbench_batch_1.json"), "w", encoding="utf-8") as fh:
        json.dump({"samples": samples + [bad, empty]}, fh, indent=1)


if __name__ == "__main__":
    ragtruth()
    faithbench()
