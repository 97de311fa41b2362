"""Ragas's allowed differences in the strict stock-parity test (``tests/vendors/test_stock_parity.py``; each is
checked to match only what its name says by ``tests/vendors/test_parity_rules.py``)."""
from __future__ import annotations

from tests.helpers.judges.realistic import SERVER_MODES
from tests.helpers.parity import Allowed, only_the_answer_empty

RULES = (
    Allowed("empty answer (Ragas)", ("ragas.faithfulness", "ragas.response_groundedness"), SERVER_MODES,
            "ValueError", "vendor_nan",
            "Ragas raises on an empty response before any judge call; the harness keeps that as unscored by the "
            "vendor (card: degenerate inputs)", harness_flag="vendor_raised_on_empty_input",
            when=only_the_answer_empty, stock_says="response is missing"),
)
