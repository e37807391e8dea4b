"""Price sheets: browse and filter offers, a price's history as steps, two versions compared.

The filters, the offer and the two versions are bound to the URL, so the address bar is a link to this view;
a value the link names that the sheets lack is said, never dropped silently.
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pandas as pd
import streamlit as st

from app_pages._chart import altair_chart
from app_pages._data import catalogs
from app_pages._params import check_params
from calculator.catalog.prices import (
    STALE_AFTER_DAYS,
    DedicatedOffer,
    GpuVmOffer,
    ServerlessOffer,
    is_stale,
    price_age_days,
    price_age_text,
)
from calculator.present import charts
from calculator.present.money import format_price

KIND_LABELS = {"serverless": "Serverless (per 1M tokens)", "dedicated": "Dedicated endpoint", "gpu_vm": "GPU VM"}
SEARCH_MAX = 100  # longest search text (a model, GPU or offer id is far shorter)


def link_problems(key: str, label: str, options: list[str]) -> list[str]:
    """Each value of URL parameter ``key`` (repeated for a multi-select) that ``options`` lack, named."""
    found: list[str] = []
    for raw in st.query_params.get_all(key):
        found += [p.replace(f"`{key}`", f"`{key}` ({label})") for p in check_params({key: raw}, {}, {key: options})]
    return found


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
today = dt.date.today()
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
            "Status": offer.retired.describe() if offer.retired is not None and offer.retired_on(today) else "",
            "GPUs": gpus,
            "Region": offer.region or "",
            "Weights": ("open" if offer.open_weights else "closed") if isinstance(offer, ServerlessOffer) else "",
            "Latest prices": headline,
            "Currency": sheet.currency,
            "Versions": len(offer.versions),
            "Latest from": latest.effective,
            "Read": latest.source.read,
            "Age (days)": price_age_days(latest.source.read, today),
        }
    )
offers = pd.DataFrame(rows)

kind_values = list(KIND_LABELS.values())
provider_values = sorted(offers["Provider"].unique())
region_values = sorted(r for r in offers["Region"].unique() if r)
problems = (
    link_problems("ps_kind", "Kind", kind_values)
    + link_problems("ps_provider", "Provider", provider_values)
    + link_problems("ps_region", "Region", region_values)
    + link_problems("ps_offer", "Offer", list(offers["key"]))
)
if len(st.query_params.get("ps_search") or "") > SEARCH_MAX:
    problems.append(
        f"URL parameter `ps_search` (Search): longer than {SEARCH_MAX} characters; the search uses its first "
        f"{SEARCH_MAX}"
    )
for problem in problems:
    st.error(problem)
c1, c2, c3, c4 = st.columns([2, 2, 2, 3])
kinds = c1.multiselect("Kind", kind_values, key="ps_kind", placeholder="All kinds", bind="query-params")
providers = c2.multiselect("Provider", provider_values, key="ps_provider", placeholder="All", bind="query-params")
picked_regions = c3.multiselect(
    "Region", region_values, key="ps_region", placeholder="All regions", bind="query-params"
)
search = c4.text_input(
    "Search", key="ps_search", placeholder="model, GPU or offer id", max_chars=SEARCH_MAX, bind="query-params"
)
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
    column_config={
        "Latest from": st.column_config.DateColumn(format="YYYY-MM-DD"),
        "Read": st.column_config.DateColumn(format="YYYY-MM-DD", help="When the latest price was read at its source."),
        "Age (days)": st.column_config.NumberColumn(help=f"Days since it was read; past {STALE_AFTER_DAYS}, check it."),
        "Status": st.column_config.TextColumn(help="A retired offer stays listed for its history; not priced."),
    },
)
st.caption(f"{len(shown)} of {len(offers)} offers.")

if shown.empty:
    st.stop()

st.subheader("History of one offer")
labels = dict(zip(offers["key"], offers["Provider"] + " · " + offers["Offer"] + " · " + offers["Kind"], strict=True))
keys = list(shown["key"])
multi = [k for k in keys if int(shown.loc[shown["key"] == k, "Versions"].iloc[0]) > 1]
start = "lyceum/serverless/glm-5.3" if "lyceum/serverless/glm-5.3" in keys else (multi or keys)[0]
# the link's offer is listed even when the filters hide it (a filter must not drop it silently); the options
# are the stable keys the link holds, never the labels, and a caption names the chosen one
linked = st.session_state.get("ps_offer", st.query_params.get("ps_offer"))
if linked in labels and linked not in keys:
    keys.append(linked)
choice = st.selectbox("Offer", keys, index=keys.index(start), key="ps_offer", bind="query-params")
if choice is None:  # an index into non-empty options always selects one
    st.stop()
st.caption(labels[choice])
provider, kind, offer_id = choice.split("/", 2)
sheet, offer = cat.prices.offer(provider, offer_id, kind)
newest = offer.versions[-1]
st.caption(f"Latest price (version of {newest.effective}): {price_age_text(newest.source.read, today, today)}.")
if offer.retired is not None and offer.retired_on(today):
    st.error(
        f"{labels[choice]} was {offer.retired.describe()}: listed for its history, it cannot be priced on or "
        "after that date."
    )
elif is_stale(newest.source.read, today):
    st.warning(
        f"The latest price of {labels[choice]} was {price_age_text(newest.source.read, today, today)}, more than "
        f"{STALE_AFTER_DAYS} days: check the provider's current price before relying on it."
    )

history = []
for version in offer.versions:
    source = version.source.url or version.source.document or ""
    for part, value in version_prices(version).items():
        history.append({"effective": version.effective, "part": part, "price": float(value), "source": source})
# carry each price on to today (or its last date) so the last step is drawn as a line, not a dot
ended = offer.retired.date if offer.retired is not None and offer.retired_on(today) else None
last = ended or max(today, offer.versions[-1].effective)
for part, value in version_prices(offer.versions[-1]).items():
    still = f"(retired on {ended})" if ended else "(still in force)"
    history.append({"effective": last, "part": part, "price": float(value), "source": still})
unit = f"{sheet.currency} per 1M tokens" if kind == "serverless" else f"{sheet.currency} per hour"
altair_chart(charts.price_history_chart(pd.DataFrame(history), unit, f"{labels[choice]} ({unit})"))

versions = [v.effective for v in offer.versions]
named = [str(v) for v in versions]
for problem in link_problems("ps_from", "From", named) + link_problems("ps_to", "To", named):
    st.error(problem)
if len(versions) < 2:
    st.info("This offer has a single price version so far.")
    version = offer.versions[0]
    st.caption(f"Effective {version.effective}; source: {version.source.label}. {version.note or ''}")
    st.stop()

st.subheader("Two versions compared")
a_col, b_col = st.columns(2)
older = a_col.selectbox("From", versions, index=len(versions) - 2, key="ps_from", bind="query-params")
newer = b_col.selectbox("To", versions, index=len(versions) - 1, key="ps_to", bind="query-params")
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
