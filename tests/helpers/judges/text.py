"""Text skills of the realistic test judge: sentences, word overlap, paraphrase, quotes, tokens.

Everything is a pure function of its arguments (a ``random.Random`` is passed in where a choice is
made), so the judge is deterministic. The judge "understands" text only through word overlap: it
knows its own synonyms, a few stop words and crude stemming, and treats numbers, months and a few
quantity words (``full``, ``free``, ``all``...) as facts that must match.
"""
from __future__ import annotations

import random
import re

STOP = frozenset(
    "a an the to of and or in on at for is are was were be been being it its this that these those you "
    "your i we our they them their he she his her can could will would with by as from has have had do "
    "does did so let lets let's there here than then into over about up just also".split())
MONTHS = frozenset("january february march april may june july august september october november "
                   "december".split())
QUANTITY = frozenset("full free all every always never none no only half".split())
SYNONYMS = (("makes", "yields"), ("receive", "get"), ("request", "ask for"), ("released", "launched"),
            ("purchase", "buy"), ("item", "product"), ("entitled", "eligible"), ("closes", "shuts"),
            ("notify", "inform"), ("unused", "not used"))
"""(word in the answer, the judge's paraphrase of it)."""
_CANON = {"yields": "makes", "yield": "makes", "get": "receive", "gets": "receive", "ask": "request",
          "launched": "released", "buy": "purchase", "bought": "purchase", "product": "item",
          "eligible": "entitled", "shuts": "closes", "inform": "notify"}
"""The judge reads its own paraphrases back to the answer's words."""
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(\[])")
_WORD = re.compile(r"[a-z0-9]+(?:[.,:/][0-9]+)*%?")
_MARKER = re.compile(r"\s*\[\d+\]")
ABSTAIN = re.compile(r"\b(i don't know|i do not know|i can't tell|i cannot tell|i'm not sure|i am not sure|"
                     r"i can't answer|i cannot answer|i'm sorry|i am sorry|unable to (answer|tell))\b")
PLEASANTRY = re.compile(r"^\s*(great question|good question|thanks|thank you|hello|hi there|happy to help|"
                        r"i hope this helps|sure thing)\b", re.I)


def sentences(text: str) -> list[str]:
    """The judge's own sentence split (not Punkt: it splits after ``350 F.`` too).

    >>> sentences("Bake at 350 F. Cool it. ")
    ['Bake at 350 F.', 'Cool it.']
    """
    return [s.strip() for s in _SENTENCE.split(text.strip()) if s.strip()]


def _stem(w: str) -> str:
    w = _base(_CANON.get(w, w))
    return w[:-1] if len(w) > 3 and w.endswith("e") and not w[0].isdigit() else w


def _base(w: str) -> str:
    if w[0].isdigit() or len(w) <= 3:
        return w
    if w.endswith("ies") and len(w) > 4:
        return w[:-3] + "y"
    if w.endswith(("ches", "shes", "sses", "xes", "zes")):
        return w[:-2]
    for suffix in ("ing", "ed", "s"):
        if w.endswith(suffix) and len(w) - len(suffix) >= 3 and not w.endswith("ss"):
            return w[: -len(suffix)]
    return w


def words(text: str) -> list[str]:
    """Lower-cased word tokens (numbers keep their decimal point, percent sign).

    >>> words("Bake 8-10 min at 350 F; 90% of 1.5 kg.")
    ['bake', '8', '10', 'min', 'at', '350', 'f', '90%', 'of', '1.5', 'kg']
    """
    return _WORD.findall(text.lower().replace("\u2019", "'"))


def content(text: str) -> set[str]:
    """Stemmed content words (stop words out).

    >>> sorted(content("The recipe yields two dozen cookies."))
    ['cooky', 'dozen', 'mak', 'recip', 'two']
    """
    return {_stem(w) for w in words(text) if w not in STOP}


def facts(text: str) -> set[str]:
    """Tokens that must match exactly: numbers, months, quantity words.

    >>> sorted(facts("For the first 6 weeks you receive your full salary in May."))
    ['6', 'full', 'may']
    """
    return {w for w in words(text) if w[0].isdigit() or w in MONTHS or w in QUANTITY}


def support(statement: str, context: str) -> tuple[str, float]:
    """How the judge rates a statement against a context, by word overlap:
    ``supported`` | ``partial`` | ``contradicted`` (a number, month or quantity differs) | ``not_found``.

    >>> support("The cookies bake at 350 F.", "Heat the oven to 350 F. Bake the cookies.")[0]
    'supported'
    >>> support("The X2 came out in May 2024.", "X2. Release date: March 2024. It came out.")[0]
    'contradicted'
    >>> support("The recipe makes two dozen cookies.", "Chewy cookies. Bake them.")[0]
    'not_found'
    """
    mine = content(statement)
    if not mine or not context.strip():
        return "not_found", 0.0
    frac = len(mine & content(context)) / len(mine)
    missing = facts(statement) - facts(context)
    if missing and facts(context) and frac >= 0.5:
        return "contradicted", frac
    if frac >= 0.75 and not missing:
        return "supported", frac
    if frac >= 0.5:
        return "partial", frac
    return "not_found", frac


def is_abstention(text: str) -> bool:
    """Does the text decline to answer?

    >>> is_abstention("I'm sorry, but I don't know."), is_abstention("Bake it.")
    (True, False)
    """
    return bool(ABSTAIN.search(text.lower().replace("\u2019", "'")))


def strip_markers(text: str) -> str:
    """The text without ``[N]`` citation markers.

    >>> strip_markers("Refunds take 30 days [1].")
    'Refunds take 30 days.'
    """
    return _MARKER.sub("", text)


def _subject(first_sentence: str) -> str | None:
    head = re.match(r"((?:The |A |An )?[A-Z][\w-]*(?: [A-Z0-9][\w-]*)*)\s", first_sentence)
    return head.group(1) if head and head.group(1).lower() not in ("you", "i", "we", "it", "they") else None


def paraphrase(sentence: str, rng: random.Random, subject: str | None = None) -> list[str]:
    """The judge's own statements for one answer sentence: markers dropped, a leading pronoun
    replaced by the answer's subject, some words swapped for synonyms, a compound sentence split at
    ``", and "`` or ``"; "``, and sometimes no final stop.

    >>> paraphrase("It is old [2].", random.Random(1), "The Aurora X2")
    ['The Aurora X2 is old.']
    """
    s = strip_markers(sentence).strip()
    if subject:
        s = re.sub(r"^(It|They) ", subject + " ", s)
        s = re.sub(r"^Its ", subject + "'s ", s)
    if rng.random() < 0.5:
        for a, b in SYNONYMS:
            s, n = re.subn(rf"\b{a}\b", b, s, count=1)
            if n and rng.random() < 0.5:
                break
    parts = [s]
    if rng.random() < 0.7:
        for sep in (", and ", "; "):
            if sep in s:
                parts = [p for p in s.split(sep, 1) if p.strip()]
                break
    out = []
    for p in parts:
        p = p.strip().rstrip(".!?;,")
        if not p:
            continue
        p = p[0].upper() + p[1:]
        out.append(p if rng.random() < 0.15 else p + ".")
    return out


def statements(answer: str, rng: random.Random) -> list[str]:
    """The judge's decomposition of a whole answer (abstentions and pleasantries left out)."""
    sents = sentences(answer)
    subject = _subject(sents[0]) if sents else None
    out: list[str] = []
    for s in sents:
        if is_abstention(s) or PLEASANTRY.match(s):
            continue
        out += paraphrase(s, rng, subject)
    return out


def clauses(text: str) -> list[str]:
    """Candidate quotes in a passage: its sentences (no final stop) and their clauses.

    >>> clauses("Heat to 350 F, then bake. Cool.")
    ['Heat to 350 F, then bake', 'Heat to 350 F', 'then bake', 'Cool']
    """
    out = []
    for s in sentences(text):
        s = s.rstrip(".!?")
        out.append(s)
        parts = re.split(r", | and |; ", s)
        if len(parts) > 1:
            out += [p for p in parts if p.strip()]
    return out


def best_quote(claim: str, text: str) -> tuple[str, float]:
    """The shortest passage span that covers most of the claim's words, and its coverage."""
    mine = content(claim) or {"_"}
    best, score = "", -1.0
    for cand in clauses(text):
        got = len(mine & content(cand)) / len(mine)
        rank = got - 0.01 * len(words(cand))
        if rank > score:
            best, score = cand, rank
    return best, (len(mine & content(best)) / len(mine)) if best else 0.0


def alter_quote(quote: str, context: str, kind: str) -> str:
    """A near-verbatim copy of ``quote``: one changed comma, an added final stop, or an ellipsis.

    >>> alter_quote("Heat the oven to 350 F", "Heat the oven to 350 F and wait.", "stop")
    'Heat the oven to 350 F.'
    >>> alter_quote("Bake for 8 to 10 minutes until golden", "", "ellipsis")
    'Bake for 8 ... until golden'
    >>> alter_quote("Heat the oven to 350 F", "", "comma")
    'Heat the oven, to 350 F'
    """
    w = quote.split()
    if kind == "ellipsis" and len(w) >= 7:
        return " ".join(w[:3] + ["..."] + w[-2:])
    if kind == "stop" and not quote.endswith("."):
        at = context.find(quote)
        if at < 0 or context[at + len(quote): at + len(quote) + 1] != ".":
            return quote + "."
    if "," in quote:
        return quote.replace(",", "", 1)
    if len(w) >= 4:
        return " ".join(w[:2] + [w[2] + ","] + w[3:])
    return quote + "."


def between(text: str, start: str, end: str) -> str | None:
    """The text between the last ``start`` and the last ``end`` (None: not both there, in that order).

    >>> between("<a>\\nx\\n</a>", "<a>\\n", "\\n</a>")
    'x'
    """
    i, j = text.rfind(start), text.rfind(end)
    return text[i + len(start):j] if 0 <= i and i + len(start) <= j else None


def rated(answer: str, context: str, rng: random.Random) -> list[tuple[str, str]]:
    """(statement, support label) for each of the judge's own statements of ``answer``."""
    return [(s, support(s, context)[0]) for s in statements(answer, rng)]


def count_tokens(text: str) -> int:
    """The judge's token count: words and punctuation marks.

    >>> count_tokens("Bake at 350 F.")
    5
    """
    return len(re.findall(r"\w+|[^\w\s]", text))
