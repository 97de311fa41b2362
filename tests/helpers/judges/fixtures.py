"""Pytest fixtures for the realistic judge: import them into a test module
(``from tests.helpers.judges.fixtures import realistic_judge``)."""
from __future__ import annotations

import pytest

from tests.helpers.judges.realistic import serve


@pytest.fixture(scope="module")
def realistic_judge():
    """A realistic judge served on 127.0.0.1 for the module (``.url``, ``.stats()``, ``.reset()``)."""
    with serve() as judge:
        yield judge
