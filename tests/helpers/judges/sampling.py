"""The realistic test judge's seeded sampling mode: the same request asked again may get another verdict,
as from a real model sampling at temperature > 0 (or a server whose temperature-0 decoding is not
deterministic), so judge stability across repeats (``harness run --repeats K``) can be tested offline.

The n-th time the judge sees one request (the same messages), each verdict-like value of its answer
(a 0/1 NLI verdict, a yes/no/borderline verdict, a 0-2 rating, a 0-3 or 0/1 score) changes with
probability ``rate``, drawn from a generator seeded by (seed, request, n): a rerun in the same order
gives the same sequence. ``mode="temperature"`` varies only requests that ask for sampling (temperature
missing or above 0); ``mode="always"`` varies every request (a flag: a non-deterministic server).
"""
from __future__ import annotations

import random
import threading
from dataclasses import dataclass, field, replace

WORDS = (("yes", "no", "borderline"), ("supported", "not_found", "contradicted"))
BINARY_STEPS = ("trulens.abstention", "trulens.answerability")


@dataclass
class Sampling:
    """Seeded variation between repeats of one request."""

    rate: float = 0.15
    """Chance that one verdict-like value changes on a repeat."""
    seed: int = 0
    mode: str = "always"
    """``always`` | ``temperature`` (only requests with temperature missing or above 0)."""
    _seen: dict = field(default_factory=dict, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def applies(self, body: dict) -> bool:
        """Does this request get sampled?

        >>> Sampling(mode="temperature").applies({"temperature": 0}), Sampling().applies({"temperature": 0})
        (False, True)
        """
        if self.mode == "always":
            return True
        t = body.get("temperature")
        return t is None or float(t) > 0

    def draw(self, digest: str) -> random.Random:
        """The generator of this request's next occurrence."""
        with self._lock:
            n = self._seen.get(digest, 0)
            self._seen[digest] = n + 1
        return random.Random(f"{self.seed}:{digest}:{n}")

    def vary(self, answer, digest: str, body: dict):
        """The answer, each verdict-like value perhaps changed (an ``Answer`` of :mod:`tests.helpers.judges.steps`)."""
        if answer is None or not self.applies(body):
            return answer
        rng = self.draw(digest)
        if answer.kind == "score":
            return replace(answer, value=self._score(answer.value, rng, 1 if answer.step in BINARY_STEPS else 3))
        if answer.kind == "json" and isinstance(answer.value, dict):
            return replace(answer, value=self._walk(answer.value, rng))
        return answer

    def _score(self, v, rng: random.Random, top: int):
        if not isinstance(v, int) or rng.random() >= self.rate:
            return v
        return 1 - v if top == 1 else max(0, min(top, v + rng.choice((-1, 1))))

    def _walk(self, v, rng: random.Random):
        if isinstance(v, list):
            return [self._walk(x, rng) for x in v]
        if not isinstance(v, dict):
            return v
        out = {}
        for k, x in v.items():
            if k == "verdict" and isinstance(x, int) and rng.random() < self.rate:
                x = 1 - x
            elif k == "verdict" and isinstance(x, str):
                words = next((w for w in WORDS if x in w), None)
                if words and rng.random() < self.rate:
                    x = rng.choice([w for w in words if w != x])
            elif k == "rating" and isinstance(x, int):
                x = self._score(x, rng, 2)
            elif k == "score" and isinstance(x, int):
                x = self._score(x, rng, 3)
            else:
                x = self._walk(x, rng)
            out[k] = x
        return out
