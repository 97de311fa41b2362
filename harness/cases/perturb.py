"""Rule-based perturbations of annotated cases (``harness perturb``), with the annotation moved to match.

Each variant is a case of its own (id ``<case>~<kind>``) tagged ``perturbed``, ``perturb:<kind>``,
``perturb-of:<case>`` and ``perturb-expect:<effect>``, so a run over the file scores originals and
variants side by side and :mod:`harness.reports.analysis.robustness` pairs them. Expected effects:

- ``same``: a meaning-preserving edit; no verdict should move;
- ``ungrounded``: one supported claim is made unsupported (its label changes as the rule says); a metric
  should score the variant lower than the original;
- ``citation``: a citation marker now points at a passage that does not state the claim; the claim's
  content is still supported, so only a metric that checks citations should notice.

The kinds (see ``docs/robustness.md`` for each rule and its limits):

======================  ==========  ===========================================================
kind                    effect      rule
======================  ==========  ===========================================================
``order``               same        passages in another order (ids kept)
``split``               same        one passage cut in two at a sentence boundary no evidence crosses
``merge``               same        two neighbouring passages joined (the second is never cited)
``bullets``             same        the answer's sentences as a bulleted list
``casing``              same        the answer in lower case
``punctuation``         same        commas before a space and the answer's final stop dropped
``whitespace``          same        doubled spaces between sentences, a leading space, a trailing newline
``cite-add``            same        a correct ``[id]`` marker at the end of each sentence whose claims are
                                    all supported by one passage
``cite-remove``         same        every ``[id]`` marker removed
``number``              ungrounded  a number the claim shares with its evidence changed: contradicted
``negation``            ungrounded  "not" after the claim's auxiliary verb: contradicted
``entity``              ungrounded  a name the claim shares with its evidence swapped for another name
                                    from the passages: not_found
``cite-move``           citation    a claim's marker moved to a passage that holds none of its evidence
======================  ==========  ===========================================================

No model is involved: every choice is a rule, and where a rule offers several candidates a
``random.Random`` seeded by (seed, case id, kind) picks one, so a file is reproducible.
"""
from __future__ import annotations

import random
import re
from dataclasses import replace

from harness.cases.edits import Edited, edit_answer, edit_context, map_evidence, relabel
from harness.core.records import Case, Context, Evidence
from harness.core.spans import sentence_spans

PRESERVING = ("order", "split", "merge", "bullets", "casing", "punctuation", "whitespace", "cite-add", "cite-remove")
CHANGING = ("number", "negation", "entity", "cite-move")
KINDS = PRESERVING + CHANGING
EXPECT = {**{k: "same" for k in PRESERVING}, "number": "ungrounded", "negation": "ungrounded",
          "entity": "ungrounded", "cite-move": "citation"}
"""kind -> expected effect."""
TAG = "perturbed"

_MARKER = re.compile(r"\s?\[([^\[\]\s]{1,16})\]")
_NUMBER = re.compile(r"(?<![\w.,])\d+(?:[.,]\d+)?(?![\w])")
_AUX = re.compile(r"\b(has to|have to|is|are|was|were|can|could|will|would|should|must|may|does|do|did|has|have|had)\b",
                  re.I)
_NAME = re.compile(r"\b[A-Z][\w'-]*[A-Za-z0-9](?:\s+[A-Z][\w'-]*[A-Za-z0-9])*\b")
_NOT_NAMES = frozenset(
    "january february march april may june july august september october november december monday tuesday "
    "wednesday thursday friday saturday sunday i you he she it we they the a an this that these those our your "
    "their his her its there here if when each all".split())


def tags_of(case: Case) -> dict[str, str]:
    """The perturbation tags of a variant as ``{"kind", "of", "expect"}`` (empty for an original).

    >>> from harness.core.records import Case
    >>> tags_of(Case("a~order", "q", (), "", None, tags=("x", "perturbed", "perturb:order", "perturb-of:a",
    ...                                                   "perturb-expect:same")))
    {'kind': 'order', 'of': 'a', 'expect': 'same'}
    """
    out = {}
    for t in case.tags:
        for key, prefix in (("kind", "perturb:"), ("of", "perturb-of:"), ("expect", "perturb-expect:")):
            if t.startswith(prefix):
                out[key] = t[len(prefix):]
    return out


def perturb(case: Case, kinds=KINDS, seed: int = 0) -> list[Case]:
    """The variants of one annotated case, one per kind that applies to it, in ``kinds`` order."""
    if case.annotation is None or TAG in case.tags:
        return []
    out = []
    for kind in kinds:
        rng = random.Random(f"{seed}:{case.id}:{kind}")
        v = RULES[kind](case, rng)
        if v is not None and v != case:
            tags = tuple(t for t in case.tags) + (TAG, f"perturb:{kind}", f"perturb-of:{case.id}",
                                                  f"perturb-expect:{EXPECT[kind]}")
            out.append(replace(v, id=f"{case.id}~{kind}", tags=tags, source=""))
    return out


# --- meaning-preserving -----------------------------------------------------------------------------

def _order(case, rng):
    if len(case.contexts) < 2:
        return None
    idx = list(range(len(case.contexts)))
    rng.shuffle(idx)
    if idx == sorted(idx):
        idx.reverse()
    return replace(case, contexts=tuple(case.contexts[i] for i in idx))


def _cited(case: Case, cid: str) -> bool:
    return f"[{cid}]" in case.answer or any(c.cited_context_id == cid for c in case.annotation.claims)


def _new_id(case: Case, base: str) -> str:
    ids = {c.id for c in case.contexts}
    if all(i.isdigit() for i in ids):
        return str(max(int(i) for i in ids) + 1)
    n = 2
    while f"{base}-{n}" in ids:
        n += 1
    return f"{base}-{n}"


def _evidence(case: Case):
    return [(c, ev) for c in case.annotation.claims for ev in c.evidence]


def _split(case, rng):
    options = []
    for ctx in case.contexts:
        sents = sentence_spans(ctx.text)
        for a, b in zip(sents, sents[1:]):
            cut = b[0]
            crossing = any(ev.context_id == ctx.id and ev.start < cut and ev.end > a[1] for _, ev in _evidence(case))
            cited_after = any(ev.context_id == ctx.id and ev.start >= cut and c.cited_context_id == ctx.id
                              for c, ev in _evidence(case))
            if not crossing and not cited_after:
                options.append((ctx, a[1], cut))
    if not options:
        return None
    ctx, end, cut = rng.choice(options)
    new = _new_id(case, ctx.id)
    ctxs = []
    for c in case.contexts:
        ctxs += [Context(c.id, ctx.text[:end]), Context(new, ctx.text[cut:])] if c.id == ctx.id else [c]

    def move(ev):
        if ev.context_id != ctx.id:
            return ev
        return Evidence(new, ev.start - cut, ev.end - cut) if ev.start >= cut else ev
    return replace(case, contexts=tuple(ctxs), annotation=map_evidence(case.annotation, move))


def _merge(case, rng):
    pairs = [(a, b) for a, b in zip(case.contexts, case.contexts[1:]) if not _cited(case, b.id)]
    if not pairs:
        return None
    a, b = rng.choice(pairs)
    joined, shift = a.text + "\n\n" + b.text, len(a.text) + 2
    ctxs = tuple(Context(a.id, joined) if c.id == a.id else c for c in case.contexts if c.id != b.id)

    def move(ev):
        return Evidence(a.id, ev.start + shift, ev.end + shift) if ev.context_id == b.id else ev
    return replace(case, contexts=ctxs, annotation=map_evidence(case.annotation, move))


def _gaps(text: str):
    sents = sentence_spans(text)
    return sents, [(x[1], y[0]) for x, y in zip(sents, sents[1:])]


def _bullets(case, rng):
    sents, gaps = _gaps(case.answer)
    if len(sents) < 2:
        return None
    return edit_answer(case, [(sents[0][0], sents[0][0], "- ")] + [(s, e, "\n- ") for s, e in gaps])


def _casing(case, rng):
    edits = [(i, i + 1, ch.lower()) for i, ch in enumerate(case.answer) if ch.lower() != ch]
    return edit_answer(case, edits) if edits else None


def _punctuation(case, rng):
    edits = [(m.start(), m.start() + 1, "") for m in re.finditer(r",(?=\s)", case.answer)]
    end = len(case.answer.rstrip())
    if end and case.answer[end - 1] in ".!":
        edits.append((end - 1, end, ""))
    return edit_answer(case, edits) if edits else None


def _whitespace(case, rng):
    if not case.answer.strip():
        return None
    _, gaps = _gaps(case.answer)
    return edit_answer(case, [(0, 0, " ")] + [(s, e, "  ") for s, e in gaps] + [(len(case.answer),) * 2 + ("\n",)])


def _cite_add(case, rng):
    if _MARKER.search(case.answer):
        return None
    claims = list(case.annotation.claims)
    edits, cited = [], {}
    for s, e in sentence_spans(case.answer):
        inside = [i for i, c in enumerate(claims) if s <= c.answer_span[0] and c.answer_span[1] <= e]
        ids = {ev.context_id for i in inside for ev in claims[i].evidence}
        if inside and len(ids) == 1 and all(claims[i].label == "supported" for i in inside):
            cid = ids.pop()
            at = e - 1 if case.answer[e - 1] in ".!?" else e
            edits.append((at, at, f" [{cid}]"))
            cited.update({i: cid for i in inside})
    if not edits:
        return None
    claims = [replace(c, cited_context_id=cited.get(i, c.cited_context_id)) for i, c in enumerate(claims)]
    return edit_answer(case, edits, claims)


def _cite_remove(case, rng):
    edits = [(m.start(), m.end(), "") for m in _MARKER.finditer(case.answer)]
    if not edits:
        return None
    return edit_answer(case, edits, [replace(c, cited_context_id=None) for c in case.annotation.claims])


# --- meaning-changing ----------------------------------------------------------------------------

def _candidates(case, pattern, shared: bool):
    """(claim index, match) for matches of ``pattern`` inside a supported claim's span that no other claim's
    span covers (and, with ``shared``, whose text also occurs in the claim's evidence)."""
    claims, out = case.annotation.claims, []
    for i, c in enumerate(claims):
        if c.label != "supported":
            continue
        s, e = c.answer_span
        ev_text = " ".join(case.evidence_text(ev) for ev in c.evidence)
        for m in pattern.finditer(case.answer, s, e):
            if m.end() > e:
                continue
            others = any(j != i and o.answer_span[0] < m.end() and m.start() < o.answer_span[1]
                         for j, o in enumerate(claims))
            if not others and (not shared or m.group(0) in ev_text):
                out.append((i, m))
    return out


def _changed(case, i, edit, label, evidence=None, old="", new=""):
    claims = list(case.annotation.claims)
    c = claims[i]
    text = c.text.replace(old, new, 1) if old and old in c.text else None
    claims[i] = relabel(c, label, evidence, text)
    return edit_answer(case, [edit], claims)


def _number(case, rng):
    cands = _candidates(case, _NUMBER, shared=True)
    if not cands:
        return None
    i, m = rng.choice(cands)
    old = m.group(0)
    whole = old.replace(",", "").split(".")[0]
    n = int(whole)
    new = str(n + rng.choice([1, 2, 3, 5, 10]))
    return _changed(case, i, (m.start(), m.end(), new), "contradicted", None, old, new)


def _negation(case, rng):
    cands = _candidates(case, _AUX, shared=False)
    if not cands:
        return None
    i, m = rng.choice(cands)
    word = m.group(0)
    low = word.lower()
    after = re.match(r"\s+(\w+)", case.answer[m.end():])
    main_verb = low in ("has", "have", "had") and not (after and re.fullmatch(r"been|\w+(?:ed|en)", after.group(1)))
    if low in ("has to", "have to") or main_verb:   # "has to" and a main-verb "have": do-support
        neg = {"has": "does not have", "have": "do not have", "had": "did not have"}[low.split()[0]]
        neg += " to" if low.endswith(" to") else ""
        neg = neg[0].upper() + neg[1:] if word[0].isupper() else neg
    else:
        neg = f"{word} not"
    return _changed(case, i, (m.start(), m.end(), neg), "contradicted", None, word, neg)


def _names(text: str) -> list[tuple[int, int, str]]:
    """Capitalised names in ``text`` that do not open a sentence (months, weekdays and pronouns aside)."""
    opens = {s for s, _ in sentence_spans(text)}
    out = []
    for m in _NAME.finditer(text):
        words = m.group(0).split()
        if m.start() in opens or all(w.lower() in _NOT_NAMES for w in words) or len(m.group(0)) < 3:
            continue
        out.append((m.start(), m.end(), m.group(0)))
    return out


NOUN_CAPS = 0.2
"""Above this share of capitalised words inside sentences the passages capitalise nouns (German): no entity swap."""


def _entity(case, rng):
    text = " ".join(c.text for c in case.contexts)
    inner = [w for s, e in sentence_spans(text) for w in text[s:e].split()[1:] if w[:1].isalpha()]
    if not inner or sum(w[0].isupper() for w in inner) / len(inner) > NOUN_CAPS:
        return None
    pool = sorted({n for ctx in case.contexts for _, _, n in _names(ctx.text)})
    cands = []
    for i, c in enumerate(case.annotation.claims):
        if c.label != "supported":
            continue
        ev_text = " ".join(case.evidence_text(ev) for ev in c.evidence)
        for s, e, name in _names(case.answer):
            covered = [j for j, o in enumerate(case.annotation.claims) if o.answer_span[0] < e and s < o.answer_span[1]]
            if c.answer_span[0] <= s and e <= c.answer_span[1] and covered == [i] and name in ev_text:
                others = [p for p in pool if p != name and p not in case.answer and name not in p and p not in name]
                cands += [(i, s, e, name, p) for p in others]
    if not cands:
        return None
    i, s, e, name, new = rng.choice(cands)
    return _changed(case, i, (s, e, new), "not_found", (), name, new)


def _cite_move(case, rng):
    if len(case.contexts) < 2:
        return None
    cands = []
    for i, c in enumerate(case.annotation.claims):
        if c.cited_context_id is None:
            continue
        m = next((m for m in _MARKER.finditer(case.answer, c.answer_span[1]) if m.group(1) == c.cited_context_id), None)
        if m is None:
            continue
        held = {ev.context_id for ev in c.evidence}
        cands += [(i, m, ctx.id) for ctx in case.contexts if ctx.id not in held and ctx.id != c.cited_context_id]
    if not cands:
        return None
    i, m, new = rng.choice(cands)
    claims = list(case.annotation.claims)
    sent = next((s, e) for s, e in sentence_spans(case.answer) if s <= m.start() < e)
    # every claim this marker cites (those of its sentence citing the same passage) now cites the new one
    claims = [replace(c, cited_context_id=new) if c.cited_context_id == claims[i].cited_context_id
              and sent[0] <= c.answer_span[0] < sent[1] else c for c in claims]
    at = m.start(1)
    return edit_answer(case, [(at, at + len(m.group(1)), new)], claims)


RULES = {"order": _order, "split": _split, "merge": _merge, "bullets": _bullets, "casing": _casing,
         "punctuation": _punctuation, "whitespace": _whitespace, "cite-add": _cite_add, "cite-remove": _cite_remove,
         "number": _number, "negation": _negation, "entity": _entity, "cite-move": _cite_move}

__all__ = ["CHANGING", "EXPECT", "Edited", "KINDS", "PRESERVING", "TAG", "edit_context", "perturb", "tags_of"]
