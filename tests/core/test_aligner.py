"""The answer aligner (harness/core/aligner.py): each step, the score it keeps, and where it is applied."""
from harness.core.aligner import Location, locate, place_units
from harness.core.records import Annotation, Case, CellResult, Claim, Context, UnitVerdict

import pytest

ANSWER = ("Bake the cookies at 350 F for 8 to 10 minutes. Let them cool on a wire rack. "
          "The Aurora X2 came out in May 2024. Its list price is 149 dollars.")


@pytest.mark.parametrize("unit,found,method", [
    ("Let them cool on a wire rack.", "Let them cool on a wire rack.", "exact"),
    ("let them cool, on a wire-rack", "Let them cool on a wire rack", "normalised"),
    ("The cookies are baked for 8 to 10 minutes.", "8 to 10 minutes", "fuzzy"),
    ("The Aurora X2's list price is 149 dollars.", "list price is 149 dollars", "fuzzy"),   # not the sentence before
    ("Cookies should cool on a wire rack", "cool on a wire rack", "fuzzy"),
    ("Bake teh cookies at 350 F", "Bake the cookies at 350 F", "fuzzy"),                      # a typo
    ("Shipping is free.", None, "not_located"),
    ("", None, "not_located"),
], ids=["exact", "normalised", "paraphrase-split", "paraphrase-no-crossing", "reordered", "typo", "absent", "empty"])
def test_locate_steps(unit, found, method):
    loc = locate(unit, ANSWER)
    assert loc.method == method
    assert (ANSWER[loc.span[0]:loc.span[1]] if loc.span else None) == found
    assert (loc.score == 1.0) if method in ("exact", "normalised") else 0.0 <= loc.score <= 1.0


def test_place_units_sets_span_and_location_on_every_unit():
    claims = (Claim("The cookies bake at 350 F.", (0, 25), "supported"),)
    case = Case("c", "q", (Context("1", "x"),), ANSWER, Annotation(claims, True, False))
    units = (UnitVerdict(0, "The cookies bake at 350 F.", "supported", "1", "statement"),      # annotated text
             UnitVerdict(1, "Let them cool on a wire rack.", "supported", "3/3", "sentence", span=(47, 76)),
             UnitVerdict(2, "The moon is cheese.", "unsupported", "0", "statement", span=(0, 5)),  # a wrong span
             UnitVerdict(3, ANSWER, "ambiguous", "1", "judge", span=(0, len(ANSWER))))
    got = place_units(case, CellResult.scored(0.5, units))
    assert [u.detail["location"]["method"] for u in got.units] == ["claim", "exact", "not_located", "exact"]
    assert [u.span for u in got.units] == [(0, 25), (47, 76), None, (0, len(ANSWER))]
    assert got.score == 0.5 and got.status == "scored"


def test_location_detail_rounds_the_score():
    assert Location(None, "not_located", 0.123456).detail() == {"method": "not_located", "score": 0.123}


def test_trulens_filter_echo_without_its_stop_is_the_same_sentence():
    from harness.adapters.trulens.units import sentence_units

    case = Case("c", "q", (Context("1", "Bake at 350 F."),), "Bake at 350 F. Great question!", None)
    entry = {"criteria": "Bake at 350 F", "supporting_evidence": "Criteria: x\nSupporting Evidence: Bake at 350 F.",
             "score": 1.0}
    units = sentence_units(case, ["Bake at 350 F.", "Great question!"], ["Bake at 350 F"], [entry])
    assert [(u.text, u.raw_verdict) for u in units] == [("Bake at 350 F.", "3/3"), ("Great question!", "trivial")]
