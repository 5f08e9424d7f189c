"""The JSON document's numbers: every one a JSON number or null."""

from __future__ import annotations

import json
import math

from ranktop.tui.core.document import finite


def test_a_float_json_has_no_number_for_is_null_at_any_depth():
    found = finite({"impact": math.inf, "rows": [(1.5, -math.inf), {"ratio": math.nan}],
                    "rank": 3, "said": "inf"})
    assert found == {"impact": None, "rows": [[1.5, None], {"ratio": None}], "rank": 3,
                     "said": "inf"}
    json.dumps(found, allow_nan=False)
