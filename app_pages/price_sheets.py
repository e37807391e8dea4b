"""Price sheets: browse and filter offers, a price's history as steps, two versions compared."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pandas as pd
import streamlit as st

from app_pages._chart import altair_chart
from app_pages._data import catalogs
from calculator.catalog.prices import DedicatedOffer, GpuVmOffer, ServerlessOffer
from calculator.present import charts
from calculator.present.money import format_price

KIND_LABELS = {"serverless": "Serverless (per 1M tokens)", "dedicated": "Dedicated endpoint", "gpu_vm": "GPU VM"}


def version_prices(version: object) -> dict[str, Decimal]:
    """Every price a version states, by a readable name."""
    out: dict[str, Decimal] = {}
    prices = getattr(version, "prices", None)
    if prices is not None:
        out["input"] = prices.input
        if prices.cached_input is not None:
            out["cached input"] = prices.cached_input
        for ttl, value in (prices.cache_write or {}).items():
            out[f"cache write {ttl}"] = value
        out["output"] = prices.output
        if prices.cache_storage_per_hour is not None:
            out["cache storage per hour"] = prices.cache_storage_per_hour
        for tier in getattr(version, "long_context", ()):
            out[f"input above {tier.above_tokens:,}"] = tier.input
            out[f"output above {tier.above_tokens:,}"] = tier.output
    for field in ("per_gpu_hour", "per_replica_hour"):
        value = getattr(version, field, None)
        if value is not None:
            out[field.replace("_", " ")] = value
    return out


cat = catalogs()
st.title("Price sheets")
st.caption(
    "Every offer in `price_sheets/`, with its dated price versions. The Compare page picks the version in "
    "force on its price date."
)

rows = []
for sheet, offer in cat.prices.offers():
    latest = offer.versions[-1]
    prices = version_prices(latest)
    headline = ", ".join(f"{k} {format_price(v, sheet.currency)}" for k, v in list(prices.items())[:3])
    gpus = ""
    if isinstance(offer, GpuVmOffer):
        gpus = f"{offer.gpus_per_instance}x {offer.gpu}"
    elif isinstance(offer, DedicatedOffer):
        gpus = f"{offer.gpus_per_replica}x {offer.gpu}"
    rows.append(
        {
            "key": f"{sheet.provider}/{offer.kind}/{offer.id}",
            "Provider": sheet.name,
            "Kind": KIND_LABELS[offer.kind],
            "Offer": offer.model if isinstance(offer, ServerlessOffer) else offer.id,
            "GPUs": gpus,
            "Region": offer.region or "",
            "Weights": ("open" if offer.open_weights else "closed") if isinstance(offer, ServerlessOffer) else "",
            "Latest prices": headline,
            "Currency": sheet.currency,
            "Versions": len(offer.versions),
            "Latest from": latest.effective,
        }
    )
offers = pd.DataFrame(rows)

c1, c2, c3, c4 = st.columns([2, 2, 2, 3])
kinds = c1.multiselect("Kind", list(KIND_LABELS.values()), key="ps_kind", placeholder="All kinds")
providers = c2.multiselect("Provider", sorted(offers["Provider"].unique()), key="ps_provider", placeholder="All")
region_values = sorted(r for r in offers["Region"].unique() if r)
picked_regions = c3.multiselect("Region", region_values, key="ps_region", placeholder="All regions")
search = c4.text_input("Search", key="ps_search", placeholder="model, GPU or offer id")
shown = offers
if kinds:
    shown = shown[shown["Kind"].isin(kinds)]
if providers:
    shown = shown[shown["Provider"].isin(providers)]
if picked_regions:
    shown = shown[shown["Region"].isin(picked_regions)]
if search:
    needle = search.lower()
    shown = shown[shown.apply(lambda r: needle in " ".join(map(str, r.values)).lower(), axis=1)]

st.dataframe(
    shown.drop(columns=["key"]),
    hide_index=True,
    width="stretch",
    column_config={"Latest from": st.column_config.DateColumn(format="YYYY-MM-DD")},
)
st.caption(f"{len(shown)} of {len(offers)} offers.")

if shown.empty:
    st.stop()

st.subheader("History of one offer")
labels = dict(zip(shown["key"], shown["Provider"] + " · " + shown["Offer"] + " · " + shown["Kind"], strict=True))
keys = list(labels)
multi = [k for k in keys if int(shown.loc[shown["key"] == k, "Versions"].iloc[0]) > 1]
start = "lyceum/serverless/glm-5.3" if "lyceum/serverless/glm-5.3" in keys else (multi or keys)[0]
choice = st.selectbox("Offer", keys, index=keys.index(start), format_func=lambda key: labels[key], key="ps_offer")
if choice is None:  # an index into non-empty options always selects one
    st.stop()
provider, kind, offer_id = choice.split("/", 2)
sheet, offer = cat.prices.offer(provider, offer_id, kind)

history = []
for version in offer.versions:
    source = version.source.url or version.source.document or ""
    for part, value in version_prices(version).items():
        history.append({"effective": version.effective, "part": part, "price": float(value), "source": source})
# carry each price on to today (or its last date) so the last step is drawn as a line, not a dot
last = max(dt.date.today(), offer.versions[-1].effective)
for part, value in version_prices(offer.versions[-1]).items():
    history.append({"effective": last, "part": part, "price": float(value), "source": "(still in force)"})
unit = f"{sheet.currency} per 1M tokens" if kind == "serverless" else f"{sheet.currency} per hour"
altair_chart(charts.price_history_chart(pd.DataFrame(history), unit, f"{labels[choice]} ({unit})"))

versions = [v.effective for v in offer.versions]
if len(versions) < 2:
    st.info("This offer has a single price version so far.")
    version = offer.versions[0]
    st.caption(f"Effective {version.effective}; source: {version.source.label}. {version.note or ''}")
    st.stop()

st.subheader("Two versions compared")
a_col, b_col = st.columns(2)
older = a_col.selectbox("From", versions, index=len(versions) - 2, key="ps_from")
newer = b_col.selectbox("To", versions, index=len(versions) - 1, key="ps_to")
va = next(v for v in offer.versions if v.effective == older)
vb = next(v for v in offer.versions if v.effective == newer)
pa, pb = version_prices(va), version_prices(vb)
diff = []
for part in dict.fromkeys([*pa, *pb]):
    before, after = pa.get(part), pb.get(part)
    change = ""
    if before is not None and after is not None:
        delta = after - before
        change = format_price(delta, sheet.currency, plus=True)
        if before:
            change += f" ({float(delta / before):+.1%})"
    diff.append(
        {
            "Price": part,
            str(older): format_price(before, sheet.currency) if before is not None else "-",
            str(newer): format_price(after, sheet.currency) if after is not None else "-",
            "Change": change or ("added" if before is None else "removed"),
        }
    )
st.dataframe(pd.DataFrame(diff), hide_index=True, width="stretch")
for label, version in ((str(older), va), (str(newer), vb)):
    st.caption(f"**{label}**: {version.source.label}. {version.note or ''}")
