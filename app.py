"""Streamlit entry point: page setup and navigation only; the pages live in app_pages/."""

import streamlit as st

st.set_page_config(page_title="LLM inference cost calculator", page_icon=":material/calculate:", layout="wide")

# Headline figures must never be cut off ("$70,08..."): a metric's value shrinks with its box (container
# query units) instead of ending in an ellipsis, and its label wraps, from a 1024 px window up.
st.html(
    """<style>
    [data-testid="stMetric"] { container-type: inline-size; }
    [data-testid="stMetricValue"] { font-size: min(2.25rem, 12cqi); }
    .st-key-two_amounts [data-testid="stMetricValue"] { font-size: min(2.25rem, 8cqi); }
    [data-testid="stMetricLabel"] * { white-space: normal !important; text-overflow: clip !important; }
    @media (max-width: 1279px) {
        [data-testid="stMainBlockContainer"] { padding-left: 1.5rem; padding-right: 1.5rem; }
    }
    </style>"""
)

page = st.navigation(
    [
        st.Page("app_pages/compare.py", title="Compare", icon=":material/compare_arrows:", default=True),
        st.Page("app_pages/cache_ttl.py", title="Cache TTL", icon=":material/timer:"),
        st.Page("app_pages/price_sheets.py", title="Price sheets", icon=":material/sell:"),
        st.Page("app_pages/capacity.py", title="Capacity", icon=":material/memory:"),
        st.Page("app_pages/deploy.py", title="Deploy", icon=":material/rocket_launch:"),
        st.Page("app_pages/measurements.py", title="Measurements", icon=":material/speed:"),
        st.Page("app_pages/prefix_analysis.py", title="Prefix analysis", icon=":material/account_tree:"),
        st.Page("app_pages/plan.py", title="Plan", icon=":material/timeline:"),
        st.Page("app_pages/replay.py", title="Replay", icon=":material/replay:"),
    ],
    position="top",
)
page.run()
