"""DeepEval's allowed differences in the strict stock-parity test (``tests/vendors/test_stock_parity.py``; each is
checked to match only what its name says by ``tests/vendors/test_parity_rules.py``)."""
from __future__ import annotations

from tests.helpers.judges.realistic import SERVER_MODES
from tests.helpers.parity import USAGE_TWIN, Allowed, only_the_answer_empty

RULES = (
    Allowed("empty answer (DeepEval)", ("deepeval.faithfulness", "deepeval.faithfulness_penalized"), SERVER_MODES,
            "deepeval.errors.MissingTestCaseParamsError", "vendor_nan",
            "DeepEval raises on an empty actual_output before any judge call; the harness keeps that as unscored "
            "by the vendor (card: degenerate inputs)", harness_flag="empty_answer_rejected",
            when=only_the_answer_empty, stock_says="actual_output"),
    Allowed("reply without usage (DeepEval)", ("deepeval.faithfulness", "deepeval.faithfulness_penalized"),
            SERVER_MODES, "AttributeError", None,
            "the judge's reply carried no usage: stock DeepEval's OpenAIModel raises reading "
            "completion.usage.prompt_tokens; the harness's usage shim lets the cell score what stock scores "
            "when the same replies carry usage (card: shims)", stock_says="prompt_tokens",
            same_as_mode=USAGE_TWIN),
)
