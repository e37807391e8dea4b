"""Baseline Streamlit page: the framework's floor for `benchmarks/app_speed.py`.

Copied from `../shared/reference/baseline_page.py` (the page issue 12 names as the baseline; only this
docstring's first paragraph is new), so a benchmark run on a clean clone has it.

Two number inputs, two sliders, three metrics, one Altair line chart of 600 points and a 20-row table.
Measure a page of the app against this one in the same run (median rerun after one input change, and
time to the first metric in headless Chromium including server start) and report the ratio.
"""

import altair as alt
import numpy as np
import pandas as pd
import streamlit as st

st.set_page_config(layout="wide")
a = st.number_input("input tokens", value=20000, key="a")
b = st.slider("prefix share", 0.0, 1.0, 0.9, key="b")
c = st.slider("hit rate", 0.0, 1.0, 1.0, key="c")
o = st.number_input("output tokens", value=500, key="o")
cols = st.columns(3)
for i, col in enumerate(cols):
    col.metric(f"option {i}", f"${(a * (1 - b * c) * 1.4 + a * b * c * 0.26 + o * 4.4) / 1e6 * (i + 1):.5f}")
v = np.linspace(1, 1e7, 200)
df = pd.DataFrame(
    {
        "volume": np.tile(v, 3),
        "cost": np.concatenate([v * 0.01, v * 0.008 + 5000, np.ceil(v / 3e6) * 2000]),
        "option": np.repeat(["serverless", "dedicated", "self"], 200),
    }
)
st.altair_chart(alt.Chart(df).mark_line().encode(x="volume", y="cost", color="option"), width="stretch")
st.dataframe(df.head(20))
