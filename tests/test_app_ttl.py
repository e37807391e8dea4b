"""The Cache TTL page through AppTest: the cheaper lifetime for short and long gaps, logs, bad inputs."""

from __future__ import annotations

import json

from streamlit.testing.v1 import AppTest

from .apptest import open_page

SONNET = "anthropic/claude-sonnet-4-5"


def _page(**params: str) -> AppTest:
    return open_page("cache_ttl", 120, **params)


def _metrics(at: AppTest) -> dict[str, str]:
    return {m.label: m.value for m in at.metric}


def _text(at: AppTest) -> str:
    return " ".join(m.value for m in at.markdown)


def test_thirty_minute_gaps_buy_the_one_hour_cache() -> None:
    at = _page(t_offer=SONNET, t_src="gap list", t_gaps=",".join(["1800"] * 9), t_pfx="20000", t_sess="10000")
    assert not at.error, [e.value for e in at.error]
    metrics = _metrics(at)
    assert metrics["Cheaper cache lifetime"] == "1h"
    # 20,000 tokens x (1 write x $6 + 9 reads x $0.30) per 1M = $0.174 a session, x 10,000 sessions
    assert metrics["1h cache, per month"] == "$1,740.00"
    assert metrics["5m cache, per month"] == "$7,500.00"  # every turn rewrites: 10 x $3.75 x 0.02
    assert metrics["No cache, per month"] == "$6,000.00"
    text = _text(at)
    assert "Buy the **1h** cache" in text
    assert "**0.65 times**" in text  # (6 - 3.75) / (3.75 - 0.30) reads per 1h write break even
    assert len(at.get("vega_lite_chart")) == 1


def test_two_minute_gaps_buy_the_five_minute_cache() -> None:
    at = _page(t_offer=SONNET, t_src="gap list", t_gaps=",".join(["120"] * 9))
    assert not at.error, [e.value for e in at.error]
    assert _metrics(at)["Cheaper cache lifetime"] == "5m"
    assert "Buy the **5m** cache" in _text(at)


def test_median_and_distribution() -> None:
    at = _page(t_offer=SONNET, t_med="30", t_shape="exponential")
    assert _metrics(at)["Cheaper cache lifetime"] == "1h"
    at = _page(t_offer=SONNET, t_med="0.5", t_shape="lognormal", t_sigma="0.3")
    assert _metrics(at)["Cheaper cache lifetime"] == "5m"


def test_uploaded_session_log() -> None:
    lines = []
    for session in range(20):
        for turn in range(6):
            lines.append(
                json.dumps({"session_id": f"s{session}", "timestamp": 1_700_000_000 + session * 7200 + turn * 90})
            )
    lines.append("not json")
    at = _page(t_offer=SONNET, t_src="session log")
    at.file_uploader(key="t_log").set_value(("sessions.jsonl", "\n".join(lines).encode(), "application/json")).run()
    assert not at.exception
    assert not at.error, [e.value for e in at.error]
    assert _metrics(at)["Cheaper cache lifetime"] == "5m"  # 90-second gaps
    captions = " ".join(c.value for c in at.caption)
    assert "20 sessions, 120 requests" in captions and "1 lines skipped" in captions
    assert any("sessions.jsonl:121" in w.value for w in at.warning)


def test_bad_inputs_are_named() -> None:
    at = _page(t_offer="nowhere/x", t_pfx="-5")
    errors = " ".join(e.value for e in at.error)
    assert "`t_offer`" in errors and "`t_pfx`" in errors
    at = _page(t_offer=SONNET, t_src="gap list", t_gaps="30, soon")
    assert "'soon' is not a number" in " ".join(e.value for e in at.error)
    at = _page(t_offer=SONNET, t_pfx="500")  # below Sonnet's minimum cacheable prompt
    assert "minimum cacheable" in " ".join(e.value for e in at.error)


def test_the_page_starts_from_the_compare_scenario_and_shows_its_currency() -> None:
    """The seed's 20,000-token turn with 90% repeated, shown in euros at 1.25 dollars a euro on Compare: this
    page starts from an 18,000-token prefix and shows the same sessions' costs in euros."""
    seed = {"preset": "coding-agent", "in": "20000", "pfx": "0.9", "out": "500"}
    gaps = {"t_offer": SONNET, "t_src": "gap list", "t_gaps": ",".join(["1800"] * 9), "t_sess": "10000"}
    at = open_page("compare", 120, **seed, **gaps, cur="EUR", fx="1.25")
    at.switch_page("app_pages/cache_ttl.py").run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert at.text_input(key="t_pfx").value == "18000"
    assert any("Compare page's scenario" in c.value and "18,000 tokens" in c.value for c in at.caption)
    # 18,000 tokens x (1 write x $6 + 9 reads x $0.30) per 1M = $0.1566 a session, x 10,000 = $1,566.00;
    # no cache: 10 turns x 18,000 x $3 per 1M = $0.54 a session, $5,400.00; at 1.25 dollars a euro
    metrics = _metrics(at)
    assert metrics["1h cache, per month"] == "€1,252.80"
    assert metrics["No cache, per month"] == "€4,320.00"
    specs = [json.loads(c.proto.spec) for c in at.get("vega_lite_chart")]
    assert "Cost per session (€)" in json.dumps(specs, ensure_ascii=False)  # the chart's axis too
