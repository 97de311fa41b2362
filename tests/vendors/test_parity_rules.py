"""Each allowed difference of the strict stock-parity test matches only what its name says (issue 37 item 2): every
vendor whose folder declares rules (``kit/parity.py``) tests them beside them (``kit/test_parity.py``: a cell each
rule was written for is ``allowed``, a near miss ``DIFFERENT``); here, that every rule is tested there."""
from __future__ import annotations

import os
import re

from tests.helpers import kits
from tests.vendors.test_stock_parity import ALLOWED


def test_every_rule_is_tested_in_its_vendors_kit():
    tested = ""
    for mod in kits.parts("parity").values():
        path = os.path.join(os.path.dirname(mod.__file__), "test_parity.py")
        assert os.path.exists(path), f"{mod.__name__} declares rules but its kit has no test_parity.py"
        tested += open(path, encoding="utf-8").read()
    for rule in ALLOWED:
        if not rule.live_only:
            assert re.search(re.escape(f'"{rule.name}"'), tested), f"no kit test names the rule {rule.name!r}"
    assert {r.name for r in ALLOWED} >= {"empty answer (Ragas)", "empty answer (DeepEval)",
                                          "reply without usage (DeepEval)", "no citation markers (TruLens)",
                                          "Responses API 404 (TruLens)"}
