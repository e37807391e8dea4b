"""The Compare page's "Also compare these APIs": each offer priced for the same turns beside the chosen API.

Known figures (the seed's coding-agent turn, 1,000,000 turns a month): GLM-5.3 at $1.40 / $0.26 / $4.40 per
million costs $9,680.00 a month at Lyceum and at Z.ai; OpenRouter's GLM-5 at $1.00 / $0.20 / $3.20 costs
2,000 x 1.00 + 18,000 x 0.20 + 500 x 3.20 = $0.00720 a turn, $7,200.00 a month, and $0.0216 without reuse.
"""

from __future__ import annotations

from .test_app import SEED_URL, _app


def test_other_apis_are_priced_side_by_side() -> None:
    at = _app(**{**SEED_URL, "asof": "2026-12-02"})
    at.multiselect(key="sl_more").set_value(["zai/glm-5.3", "openrouter/glm-5"]).run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    (table,) = [d.value for d in at.dataframe if "API" in d.value.columns]  # the side-by-side table
    rows = {str(r["API"]): r for _, r in table.iterrows()}
    assert list(rows) == ["lyceum/glm-5.3", "zai/glm-5.3", "openrouter/glm-5 (cheapest)"]
    assert [r["Per month"] for r in rows.values()] == ["$9,680.00", "$9,680.00", "$7,200.00"]
    glm5 = rows["openrouter/glm-5 (cheapest)"]
    assert glm5["Model"] == "z-ai/glm-5 (another model)"
    assert (glm5["No-reuse turn"], glm5["Reused-prefix turn"]) == ("$0.0216", "$0.00720")


def test_without_other_apis_there_is_no_side_by_side_table() -> None:
    at = _app(**SEED_URL)
    assert not at.exception
    assert not [d for d in at.dataframe if "API" in d.value.columns]
