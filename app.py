"""Streamlit entry point: page setup and navigation only; the pages live in app_pages/."""

import streamlit as st

st.set_page_config(page_title="LLM inference cost calculator", page_icon=":material/calculate:", layout="wide")

page = st.navigation(
    [
        st.Page("app_pages/compare.py", title="Compare", icon=":material/compare_arrows:", default=True),
        st.Page("app_pages/cache_ttl.py", title="Cache TTL", icon=":material/timer:"),
        st.Page("app_pages/price_sheets.py", title="Price sheets", icon=":material/sell:"),
        st.Page("app_pages/capacity.py", title="Capacity", icon=":material/memory:"),
        st.Page("app_pages/measurements.py", title="Measurements", icon=":material/speed:"),
        st.Page("app_pages/prefix_analysis.py", title="Prefix analysis", icon=":material/account_tree:"),
        st.Page("app_pages/plan.py", title="Plan", icon=":material/timeline:"),
        st.Page("app_pages/replay.py", title="Replay", icon=":material/replay:"),
    ],
    position="top",
)
page.run()
