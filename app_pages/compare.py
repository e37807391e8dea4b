"""Compare: one workload priced three ways (serverless, dedicated endpoint, self-hosted GPUs).

Every scalar input has a stable key bound to the URL, so the address bar is a shareable link.
The page only lays out inputs and answers; all numbers come from ``calculator``.
"""

from __future__ import annotations

import contextlib
import datetime as dt
from typing import Any, Literal

import streamlit as st
from pydantic import ValidationError

from app_pages import _state, _uploads, _words
from app_pages._data import catalogs, cheapest_picked, kept, presets, priced_key
from app_pages._widgets import quantity_input, url_bind
from calculator.catalog.datafile import DataFileError
from calculator.catalog.fx import CODES
from calculator.catalog.prices import ttl_minutes
from calculator.catalog.quantity import plain
from calculator.errors import InputError
from calculator.present.estimate_range import estimate_range_caption
from calculator.present.headline import headline
from calculator.present.money import format_money, format_small
from calculator.present.report import (
    answer_sentences,
    price_age_line,
    price_changes_frame,
    repricing_sentences,
    stale_price_warnings,
    summary_pdf,
)
from calculator.present.shown_currency import turn_currency
from calculator.pricing.billing import DAYS_PER_MONTH
from calculator.pricing.compare import OPTION_LABELS, Catalogs, Comparison, compare, curves
from calculator.pricing.pinning import Repricing, pin_prices, reprice
from calculator.pricing.resolve import resolve, with_own_records
from calculator.pricing.side_by_side import serverless_side_by_side
from calculator.scenario.changes import STARTED_FROM, slug
from calculator.scenario.evidence import Evidence
from calculator.scenario.inputs import AUTO_RECORD, monthly_turns
from calculator.scenario.model import CHEAPEST, Scenario, dump_scenario, load_scenario_text

SCENARIO_TYPES = ("yaml", "yml")  # what the scenario uploader takes (plain, .gz or .zst)

BIND: Literal["query-params"] = "query-params"
SEED = Scenario.model_validate(
    {
        "name": "coding-agent (seed article)",
        "description": "The seed's coding-agent turn: 20,000 input tokens, 18,000 repeated, 500 output.",
        "workload": {"input_tokens": 20000, "prefix_share": "0.9", "hit_rate": "1", "output_tokens": 500},
        "traffic": {"turns_per_month": 3_000_000, "peak_to_average": 2, "active_hours_per_day": 12},
        "serverless": {"provider": "lyceum", "model": "GLM-5.3"},
        "gpu_vm": {"provider": "runpod", "offer": "h100-sxm-secure"},
        "self_hosting": {"record": "vllm-llama-3.3-70b-fp8-1xh100-c50"},
    }
)
DATE_MIN, DATE_MAX = _state.DATE_MIN, _state.DATE_MAX
THOUSAND_TURNS = "1,000 turns: reused vs no reuse"  # the metric with both amounts: which is which, in order
TYPED = "_typed_since_link"  # set once the user changes a typed field: its value is no longer the link's
CURRENCY_SHOWN = "_currency_shown"  # the currency the page showed last: a switch converts the engineer's cost from it

cat = catalogs()
preset_map = presets() or {"seed": SEED}
preset_names = list(preset_map)
today = dt.date.today()
ss = st.session_state

# --- values read from the URL are checked before any widget uses them ------------------------------
# a link's scenario (from another page) or evidence first: its records are choices of the inputs below
url_problems = _state.read_links(ss, st.query_params, cat, preset_map, today)
url_problems += _state.adopt_old_rates(ss, st.query_params)
allowed = _state.choices(cat, preset_names, _state.session_evidence(ss, ss.get("uploaded")))
region_list = _state.regions(cat)
url = {k: st.query_params[k] for k in st.query_params if k not in ("region", _state.SC, _state.EV)}
url_problems += _state.validate_params(url, allowed, region_list)
for r in st.query_params.get_all("region"):
    url_problems += _state.validate_params({"region": r}, allowed, region_list)

default_preset = _state.default_preset(preset_map)
preset_now = _state.compare_preset(ss, preset_map, url.get("preset"))
preset_scenario = preset_map[preset_now]
base_now: Scenario = ss.get("uploaded") or preset_scenario
# an offer the sheets lack: none; the engineer's cost in the currency shown
defaults = _state.compare_defaults(cat, preset_map, preset_now, ss.get("cur") or url.get("cur"))
if "asof" not in ss and _state.link_date(url.get("asof")) is None:
    ss["asof"] = preset_scenario.as_of or today
    # the link pins the prices from the first view on: reopened later, it shows these, and what changed since
    st.query_params["asof"] = ss["asof"].isoformat()


def _apply_preset() -> None:
    chosen = preset_map.get(ss["preset"], SEED)
    ss.pop("uploaded", None)
    ss.pop("upload_error", None)
    # a preset replaces the workload and traffic; the user's own measurement records stay
    ss[_state.EVIDENCE] = _state.preset_evidence(_state.session_evidence(ss))
    _state.set_compare_state(ss, {**_state.scenario_to_state(chosen, cat), "own": False}, allowed, today)
    ss["name"], ss["desc"] = chosen.name, chosen.description or ""


def _apply_upload() -> None:
    file = _uploads.uploaded(ss, "upload", SCENARIO_TYPES)
    ss.pop("upload_error", None)
    if file is None:
        return
    try:
        scenario = load_scenario_text(_uploads.unpacked_upload(file.getvalue(), file.name).decode("utf-8"), file.name)
    except UnicodeDecodeError:
        ss["upload_error"] = [f"{file.name}: not a UTF-8 text file"]
        return
    except DataFileError as exc:
        ss["upload_error"] = exc.lines
        return
    problems = _state.adopt_scenario(ss, scenario, cat, preset_map, today)
    if problems:
        ss["upload_error"] = [f"{file.name}: {line}" for line in problems]


def _remove_records() -> None:
    _state.remove_records(ss, cat, preset_map)


def _remove_evidence(part: str) -> None:
    _state.set_evidence(ss, **{part: None})


def _on_per_change() -> None:
    """Keep the same traffic when switching between turns per month, per day and per user a day (a volume
    that cannot be read stays as typed, and the page says why)."""
    was = ss.get("_per_was", "month")
    try:
        users = int(_state.read_typed("users", ss.get("users", defaults["users"]), None))
        vol = _state.read_typed("vol", ss.get("vol", defaults["vol"]), was)
        month = _state.page_monthly_turns({"vol": vol, "per": was, "users": users})
    except InputError:
        ss["_per_was"] = ss["per"]
        return
    converted: float = month
    if ss["per"] in ("user", "day"):
        if ss["per"] == "user" and not users:  # per user needs users: keep the month, as users sending a turn each
            users = max(min(month, int(_state.NUMBERS["users"].max)), 1)
            ss["users"] = plain(users)
        exact = month / (users if ss["per"] == "user" else 1) / DAYS_PER_MONTH
        # the shortest figure that still gives the same month (250, not 249.99994520547943; 82.19 a day)
        converted = next(
            (c for c in (round(exact, places) for places in range(7)) if monthly_turns(c, ss["per"], users) == month),
            exact,
        )
    ss["vol"] = plain(min(converted, _state.volume_spec(ss["per"]).max))  # a month's limit, a day at a time
    ss["_per_was"] = ss["per"]


def _typed() -> None:
    ss[TYPED] = True


def number(key: str, default: float, container: st.delta_generator.DeltaGenerator | None = None) -> None:
    spec = _state.number_specs(ss.get("per"))[key]
    if key in _state.QUANTITIES:
        limit = _state.quantity_limit(key, ss.get("per"))
        whole = not (key == "vol" and _state.fractional_volume(ss.get("per")))
        quantity_input(
            key,
            spec.label,
            default if not whole else int(default),
            spec.help,
            limit,
            container,
            whole=whole,
            on_typed=_typed,
        )
        return
    kind = spec.kind
    value = kind(min(max(default, spec.min), spec.max))
    # a share typed out of its range (90 for 0.9) reaches the page, which names the field and what it takes and
    # shows no figure: with the browser's own bounds it only turned red while the old answer stayed on screen
    checked_here = key in _state.SHARES
    (container or st).number_input(
        spec.label,
        min_value=None if checked_here else kind(spec.min),
        max_value=None if checked_here else kind(spec.max),
        value=value,
        step=kind(spec.step),
        format=spec.fmt,
        key=key,
        bind=url_bind(key),
        help=spec.help,
    )


def select(label: str, key: str, options: list[str], default: str, help: str, describe: bool = False) -> None:
    """A searchable select bound to the URL. Options are stable ids (``provider/offer``), never display
    labels, because the URL stores what the option shows; a caption describes the chosen offer."""
    # before the select first shows, the link's value: a filter (weights, regions) that leaves it out must not
    # drop it silently, so it is listed after the filtered ones
    current = ss.get(key, st.query_params.get(key, default))
    shown = list(options)
    for extra in (default, current):
        if extra in allowed.get(key, shown) and extra not in shown:
            shown.append(extra)
    chosen = st.selectbox(label, shown, index=shown.index(default), key=key, bind=BIND, help=help)
    if describe and chosen and chosen != _state.NONE:
        st.caption(_state.offer_label(cat, chosen))


def pick(label: str, key: str, options: list[str], default: str, help: str) -> None:
    """A plain select bound to the URL; a session value the options lack falls back to the default."""
    if ss.get(key) is not None and ss[key] not in options:
        ss[key] = default if default in options else options[0]
    index = options.index(default) if default in options else 0
    st.selectbox(label, options, index=index, key=key, bind=BIND, help=help)


def offer_filter(key: str) -> list[str]:
    keep = []
    wanted_regions = set(ss.get("region") or [])
    weights = ss.get("weights", "all")
    price_date = ss.get("asof") or today
    for sheet, offer in cat.prices.offers({"sl": "serverless", "ded": "dedicated", "vm": "gpu_vm"}[key]):
        if offer.retired_on(price_date):  # listed only when a link or file chose it, with its caption's mark
            continue
        if wanted_regions and offer.region not in wanted_regions:
            continue
        open_w = getattr(offer, "open_weights", True)
        if (weights == "open" and not open_w) or (weights == "closed" and open_w):
            continue
        keep.append(_state.offer_key(sheet.provider, offer.id))
    return [_state.NONE, *([] if key == "sl" else [CHEAPEST]), *keep]


def advanced_inputs() -> None:
    """The scenario fields the sections above leave out; each shown where the chosen offers use it."""
    sl_key = ss.get("sl", defaults["sl"])
    asof = ss.get("asof") or today
    found = _state.serverless_prices(cat, sl_key, asof) if sl_key else None
    prices, batch_discount = found if found else (None, None)
    st.markdown("**Serverless cache and batch**")
    unused = []
    if prices is not None and prices.cache_write:
        number("cws", defaults["cws"])
        ttls = sorted(prices.cache_write, key=ttl_minutes)
        if len(ttls) > 1:
            shortest = ttls[0]
            pick(
                "Cache lifetime (TTL)",
                "ttl",
                [_state.SHORTEST, *ttls],
                defaults["ttl"],
                "Which cache lifetime to buy: a longer one costs more per write but survives longer gaps between "
                f"turns. 'shortest' is {shortest}. The Cache TTL page works out which is cheaper for your "
                "sessions.",
            )
    else:
        unused.append("cache write share and lifetime (no cache-write fee)")
    if batch_discount is not None:
        st.toggle(
            f"Batch requests ({float(batch_discount):.0%} off)",
            value=defaults["batch"],
            key="batch",
            bind=BIND,
            help="Price the turns as batch requests (answered within hours, not seconds) at the offer's batch "
            "discount.",
        )
    else:
        unused.append("batch (no batch discount)")
    if prices is not None and prices.cache_storage_per_hour is not None:
        number("npfx", defaults["npfx"])
        number("hold", defaults["hold"])
    else:
        unused.append("cache storage (not charged)")
    if unused and sl_key != _state.NONE:
        st.caption("Not used by this serverless offer: " + "; ".join(unused) + ".")
    st.markdown("**Scaling and model changes** (dedicated and self-hosted)")
    number("minr", defaults["minr"])
    number("start", defaults["start"])
    number("chg", defaults["chg"])
    number("build", defaults["build"])
    st.markdown("**Token counts**")
    number("tf_sl", defaults["tf_sl"])
    number("tf_gpu", defaults["tf_gpu"])
    sl_model = _state.serverless_model(cat, sl_key) if sl_key else None
    try:
        held = _state.validated(base_now, evidence=_state.session_evidence(ss, base_now))
    except ValidationError:  # the page says why below, where it prices the scenario
        held = base_now
    gpu_name = _state.gpu_model(
        with_own_records(cat, held),
        {k: ss.get(k, defaults.get(k)) for k in ("est", "e_model", "own", "rec", "h_model", "sl")},
    )
    st.caption(f"Serverless model: {sl_model or '-'} · GPU options' model: {gpu_name or 'your model'}")
    st.markdown("**Latency target** (GPU options sized from a measured record)")
    pick(
        "Percentile",
        "pct",
        list(_state.PERCENTILES),
        defaults["pct"],
        "The share of requests that must meet the target (p95: all but the slowest 5%).",
    )
    number("ttft", defaults["ttft"])
    number("tps", defaults["tps"])
    st.markdown("**Estimate instead of a measurement**")
    st.toggle(
        "Size the GPUs from a roofline estimate",
        value=defaults["est"],
        key="est",
        bind=BIND,
        help="No measurement of your model? Estimate a replica's throughput from the model's size, the GPU's "
        "memory bandwidth and FLOP/s. Labelled an estimate wherever it is used; a measurement beats it.",
    )
    if ss.get("est"):
        pick(
            "Model",
            "e_model",
            allowed["e_model"],
            defaults["e_model"],
            "A model from models/ (its layers, heads and parameters drive the estimate).",
        )
        pick(
            "Precision",
            "e_prec",
            allowed["e_prec"],
            defaults["e_prec"],
            "Weight precision; fp8 halves the memory and bandwidth of bf16.",
        )
        number("e_gpus", defaults["e_gpus"])
        number("e_batch", defaults["e_batch"])
        pick(
            "Attention layout",
            "e_attn",
            allowed["e_attn"],
            defaults["e_attn"],
            "tp: tensor parallel. dp: data-parallel attention (SGLang's --enable-dp-attention) for MLA models such "
            "as DeepSeek and GLM: each GPU keeps whole sequences, so the latent is not copied on every GPU.",
        )


def own_price_inputs() -> None:
    """Each option's own price (a negotiated rate, a contract's GPU price) or a discount off its listed price."""
    chosen = [ss.get(k, defaults[k]) for k in ("op_sl", "op_ded", "op_vm")]
    discounts = [ss.get(k, defaults[k]) for k in ("op_sd", "op_dd", "op_vd")]
    with st.expander("Your own prices", expanded=any(chosen) or any(discounts)):
        st.caption(
            "Prices you pay instead of the listed ones, in the scenario's currency: shown as yours wherever they "
            "are used (the table, the CSV, the PDF, the file), never as a price sheet's version."
        )
        st.text_input(
            "Name of your prices",
            value=defaults["op_name"],
            max_chars=_state.OWN_NAME_MAX,
            key="op_name",
            bind=BIND,
            help='What the prices are, with their date ("ACME negotiated, 2026-12"): cited with every figure.',
        )
        for toggle, label, prices, discount in (
            ("op_sl", "Serverless API: my own per-token prices", ("op_in", "op_ca", "op_out"), "op_sd"),
            ("op_ded", "Dedicated endpoint: my own GPU-hour price", ("op_dh",), "op_dd"),
            ("op_vm", "GPU virtual machine: my own GPU-hour price", ("op_vh",), "op_vd"),
        ):
            st.toggle(label, value=defaults[toggle], key=toggle, bind=BIND, help="Off: the listed price, or a "
                      "discount off it.")  # fmt: skip
            if ss.get(toggle):
                columns = st.columns(len(prices))
                for key, column in zip(prices, columns, strict=True):
                    number(key, defaults[key], column)
            else:
                number(discount, defaults[discount])


def _on_currency_change() -> None:
    old, new = ss.get(CURRENCY_SHOWN, defaults["cur"]), ss["cur"]
    values = {k: ss.get(k, defaults[k]) for k in ("engcost", *_state.FX_KEYS.values())}
    ss["engcost"] = _state.converted_engineer_cost(values, old, new)


def currency_inputs() -> None:
    """The currency every figure is shown in, and the rate it is shown at, typed as markets quote it (yen and
    rupees per dollar, dollars per euro or pound); the euro's rate stays for sheets priced in euros."""
    chosen = st.segmented_control(
        "Currency",
        list(CODES),
        default=defaults["cur"],
        required=True,
        key="cur",
        bind=BIND,
        on_change=_on_currency_change,
        help="Every figure, chart, download and the PDF is shown in this currency; price sheets in another are "
        "converted through the US dollar at the rates below.",
    )
    ss[CURRENCY_SHOWN] = chosen
    shown = [c for c in (chosen, "EUR") if c in _state.FX_KEYS]
    for code in dict.fromkeys(shown):
        key = _state.FX_KEYS[code]
        number(key, defaults[key])
        st.caption(_state.rate_caption(code, float(ss.get(key, defaults[key]))))


def evidence_inputs(evidence: Evidence) -> None:
    """What the scenario holds of the user's own evidence, each part with a button to drop it."""
    if evidence.records:
        st.markdown(f"**{len(evidence.records)} measurement record(s)** (Measurements or Replay page)")
        st.caption(", ".join(f"`{r.id}`" for r in evidence.records))
        st.button("Remove the records", key="ev_rm_rec", on_click=_remove_records, icon=":material/delete:")
    if evidence.prefix is not None:
        p = evidence.prefix
        st.markdown(f"**Prefix analysis** of {p.source}: {p.requests:,} requests")
        st.button(
            "Remove the analysis",
            key="ev_rm_pfx",
            on_click=_remove_evidence,
            args=("prefix",),
            icon=":material/delete:",
            help="The measured values stay in the inputs; only the record of where they came from goes.",
        )
    if evidence.load_profile is not None:
        lp = evidence.load_profile
        st.markdown(f"**Load profile** {lp.name}: peak-to-average {lp.peak_to_average:.2f} (Plan page)")
        st.button(
            "Remove the load profile",
            key="ev_rm_lp",
            on_click=_remove_evidence,
            args=("load_profile",),
            icon=":material/delete:",
        )


# --- inputs (sidebar) -----------------------------------------------------------------------------
with st.sidebar:
    st.selectbox(
        "Preset",
        preset_names,
        index=preset_names.index(default_preset),
        key="preset",
        on_change=_apply_preset,
        bind=BIND,
        help="A starting point close to your workload; every number below can be changed. A preset replaces the "
        "workload, traffic and offers (and a prefix analysis or load profile kept for them); your own measurement "
        "records stay.",
    )
    st.text_input(
        "Scenario name",
        value=base_now.name,
        max_chars=_state.NAME_MAX,
        key="name",
        bind=BIND,
        help="Shown as the page's heading, in the scenario file and on the PDF (a customer's name, say).",
    )
    name_box = st.container()
    st.text_area(
        "Description",
        value=base_now.description or "",
        max_chars=_state.DESC_MAX,
        height=68,
        key="desc",
        bind=BIND,
        placeholder="What this scenario is for (optional)",
        help="Shown under the heading, in the scenario file and on the PDF.",
    )
    with st.expander("What to compare", expanded=True):
        st.multiselect(
            "Regions",
            region_list,
            key="region",
            bind=BIND,
            help="Only list offers served in these regions (empty: all).",
            placeholder="All regions",
        )
        st.segmented_control(
            "Model weights",
            ["all", "open", "closed"],
            default="all",
            required=True,
            key="weights",
            bind=BIND,
            help="Open-weight models can be self-hosted; closed ones are served only by their maker.",
        )
        select(
            "Serverless API",
            "sl",
            offer_filter("sl"),
            defaults["sl"],
            "Provider and model billed per token. Type to search.",
            describe=True,
        )
        st.multiselect(
            "Also compare these APIs",
            [k for k in offer_filter("sl") if k != _state.NONE],
            key="sl_more",
            bind=BIND,
            placeholder="Other serverless offers",
            help="Each is priced for the same turns beside the API above: its month, its turns and where it "
            "crosses the GPU options. Offers of another model are marked as such.",
        )
        select(
            "Dedicated endpoint",
            "ded",
            offer_filter("ded"),
            defaults["ded"],
            "A reserved deployment billed per GPU-hour or replica-hour. Type to search.",
            describe=True,
        )
        select(
            "GPU virtual machine (self-hosted)",
            "vm",
            offer_filter("vm"),
            defaults["vm"],
            "GPUs you rent and run your own engine on. Type to search.",
            describe=True,
        )
        currency_inputs()
        st.date_input(
            "Price date (as of)",
            value=None,
            min_value=DATE_MIN,
            max_value=DATE_MAX,
            key="asof",
            bind=BIND,
            help="Each price is taken from the sheet version in force on this date (empty: today).",
        )
        picks = st.empty()
    own_price_inputs()
    with st.expander("One turn", expanded=True):
        c1, c2 = st.columns(2)
        with c1:
            number("in", defaults["in"])
            number("pfx", defaults["pfx"])
        with c2:
            number("out", defaults["out"])
            number("hit", defaults["hit"])
    with st.expander("Traffic", expanded=True):
        st.segmented_control(
            "Volume per",
            ["month", "day", "user"],
            default="month",
            required=True,
            key="per",
            bind=BIND,
            help="Enter the volume per month, per day, or per user a day (times the users below); switching "
            "converts the number (30.4 days a month).",
            on_change=_on_per_change,
        )
        ss.setdefault("_per_was", ss.get("per") or "month")
        number("vol", defaults["vol"])
        number("users", defaults["users"])
        c1, c2 = st.columns(2)
        number("hrs", defaults["hrs"], c1)
        number("p2a", defaults["p2a"], c2)
    with st.expander("Self-hosting and capacity", expanded=False):
        st.toggle(
            "Use my own throughput figures",
            value=False,
            key="own",
            bind=BIND,
            help="Your own measurement beats every published one: requests/s one replica sustained for this turn.",
        )
        if ss.get("own"):
            c1, c2 = st.columns(2)
            number("own_rps", 2.0, c1)
            number("own_gpus", 1, c2)
        else:
            select(
                "Throughput record",
                "rec",
                allowed["rec"][:-1] or allowed["rec"],
                defaults["rec"],
                "A published measurement (model, GPU, engine, shape) that sizes the replicas; `auto`: the "
                "serverless model itself (or its nearest spec), from a measurement of it if one exists, else a "
                "roofline estimate on the fewest GPUs of the offer that hold it.",
            )
            if ss.get("rec", defaults["rec"]) == AUTO_RECORD:
                pick(
                    "GPU options' model",
                    "h_model",
                    allowed["h_model"],
                    defaults["h_model"],
                    "The model the dedicated and self-hosted options run; auto: the serverless model when its "
                    "weights are open. A closed model (Claude, GPT) needs a substitute: your choice, said as such.",
                )
        c1, c2 = st.columns(2)
        number("util", defaults["util"], c1)
        number("spare", defaults["spare"], c2)
        c1, c2 = st.columns(2)
        number("eng", defaults["eng"], c1)
        number("engcost", defaults["engcost"], c2)
        st.toggle(
            "Autoscale outside active hours",
            value=defaults["auto"],
            key="auto",
            bind=BIND,
            help="Scale down outside the active hours (per-second billing makes this real) instead of always on.",
        )
    with st.expander("Advanced", expanded=False, key="adv_box"):
        advanced_inputs()
    evidence_now = _state.session_evidence(ss, base_now)
    if not evidence_now.empty:
        with st.expander("Your evidence", expanded=False):
            evidence_inputs(evidence_now)
    with st.expander("Scenario file (YAML)", expanded=False):
        _uploads.uploader(
            "Open a scenario",
            SCENARIO_TYPES,
            key="upload",
            max_upload_size=_uploads.MAX_MB,
            on_change=_apply_upload,
            help="The same file `python -m calculator compare --scenario` reads.",
        )

# --- the scenario -----------------------------------------------------------------------------------
work_cat: Catalogs
now_scenario: Scenario | None = None
problem = ""
try:  # the one rule every page that shows "the Compare page's scenario" prices it with
    now_scenario, work_cat = _state.current_compare_scenario(ss, cat, preset_map, today)
except ValidationError as exc:
    problem = "These inputs are not allowed:\n\n" + "\n".join(f"- {line}" for line in _words.invalid(exc, "scenario"))
    for share in _state.SHARES:  # typed out of its range (90 for 0.9): named with what it takes
        spec, typed = _state.NUMBERS[share], ss.get(share)
        if isinstance(typed, int | float) and not spec.min <= typed <= spec.max:
            problem = f"**{spec.label}**: {typed:g} is outside 0 to 1 (a share: 0.9 for 90%)"
except InputError as exc:
    problem = _words.say(exc)
    # a value that came with the link is named by its parameter; one the user typed since, by its field only
    linked = _state.link_quantity(exc.field, url, ss) if not ss.get(TYPED) else None
    if linked:
        problem = f"URL parameter `{linked}` ({exc.field}): {exc.message}"

st.title(now_scenario.name if now_scenario is not None else base_now.name)
if now_scenario is not None and ss.get("uploaded") is None and now_scenario.name.startswith(STARTED_FROM):
    name_box.caption("Changed from the preset: the heading says so. Type a name of your own to use it instead.")
if now_scenario is not None and now_scenario.description:
    st.markdown(now_scenario.description)
st.caption(
    "What will this workload cost? Serverless API, a dedicated endpoint and self-hosted GPUs priced for the "
    "same turns, with the reused prompt prefix beside the no-reuse turn. The address bar is a link to this "
    "exact scenario."
)
# a link's value the inputs cannot take leaves no answer standing: the inputs fell back to the preset's, so its
# figures would be shown as the link's (the price date, the regions and the texts only say so and go on)
# until the user sets that input (in a browser the address then holds the new value; the page asks its session)
held_at_block: dict[str, Any] = ss.setdefault("_blocked_link", {})
blocking = []
for key, raw in url.items():
    found = [] if key in _state.NOT_FIGURES else _state.validate_params({key: raw}, allowed, region_list)
    if found and ss.get(key) == held_at_block.setdefault(key, ss.get(key)):
        blocking += found
    elif found:  # set since: the link's value is gone from the page, and so is its message
        url_problems = [p for p in url_problems if not p.startswith(f"URL parameter `{key}`")]
for url_problem in url_problems:
    st.error(url_problem)
if blocking and now_scenario is not None:
    problem, now_scenario = "", None  # the messages above name each value
if ss.get("upload_error"):
    st.error("The uploaded scenario could not be used:\n\n" + "\n".join(f"- `{line}`" for line in ss["upload_error"]))
if now_scenario is None:
    if problem:
        st.error(problem)
    if blocking:
        st.info("Every figure depends on the inputs named above: fix them in the sidebar or the link.")
    st.stop()
scenario: Scenario = now_scenario
priced = priced_key(scenario, work_cat, today)  # what the sweeps and charts below are kept under
# the link: the inputs are in it already; the evidence travels as one packed parameter
if ss.get("uploaded") is not None:
    # A scenario file or another page's link: the link carries it whole. Not all its fields are inputs, and
    # inputs set from it when the page opens are not written to the address bar (Streamlit writes a value it
    # seeds on a widget's first run only when the user changes it), so the link would reopen the preset.
    too_large = _state.write_link(ss, st.query_params, _state.SC, _state.shareable(scenario, work_cat))
    _state.write_link(ss, st.query_params, _state.EV, None)  # the scenario carries its evidence
else:
    evidence = None if scenario.evidence.empty else scenario.evidence
    too_large = _state.write_link(ss, st.query_params, _state.EV, evidence)
    _state.write_link(ss, st.query_params, _state.SC, None)
if too_large:
    st.warning(too_large)

# 'cheapest' GPU options: the deployment search's picks (Deploy's ranking), kept for the next reruns
offer_picks: tuple[Any, ...] = ()  # calculator.pricing.cheapest.OfferPick
# a search that finds nothing leaves 'cheapest' to the resolution below, which leaves the option out and says why
with contextlib.suppress(InputError):
    scenario, offer_picks = cheapest_picked(scenario, work_cat, today, priced)
# An option that cannot be priced as set (no price version on the date, a GPU setup that cannot hold
# the model) is left out and said so, not the page.
resolved = resolve(scenario, work_cat, drop_unpriceable=True)
scenario, dropped = resolved.scenario, resolved.dropped
undated = [_words.left_out(field, exc) for field, exc in dropped]
nothing_left = not (scenario.serverless or scenario.dedicated or scenario.gpu_vm)
for message in undated:
    (st.error if nothing_left else st.warning)(message)
if nothing_left and undated:
    st.stop()

if not (scenario.serverless or scenario.dedicated or scenario.gpu_vm):
    st.info("Choose at least one option in the sidebar: a serverless API, a dedicated endpoint or a GPU machine.")
    st.stop()
try:
    result: Comparison = compare(resolved)
except InputError as exc:
    st.error(_words.say(exc))
    st.stop()

cur = scenario.currency
volume = scenario.traffic.turns_per_month
picks.caption(price_age_line(result, today))

# --- answers first: the headline a product manager reads, then the figures -----------------------------
answer = headline(result)
with st.container(border=True, key="headline"):
    st.markdown("\n\n".join(answer.sentences))
st.subheader("Monthly cost")
cols = st.columns(max(len(result.options), 1))
for col, opt in zip(cols, result.options, strict=False):
    with col:
        per_1000 = format_small(opt.cost_per_1000_turns, cur) if opt.cost_per_1000_turns is not None else "-"
        st.metric(
            OPTION_LABELS[opt.option],
            format_money(opt.monthly, cur),
            delta="cheapest" if opt.option == result.cheapest else None,
            delta_arrow="off",
            help=f"{opt.provider} {opt.offer}; price version of {opt.prices[0].effective}.",
            border=True,
        )
        extra = ""
        if opt.gpus:
            extra = f" · {opt.gpus:,} GPU(s), {opt.replicas:,} replica(s)"
            if opt.utilisation is not None:
                extra += f", {opt.utilisation:.0%} average load"
        per_user = opt.monthly_per_user(scenario.traffic.users)
        yearly = f"{format_money(opt.annual, cur)} a year" + (
            f" · {format_money(per_user, cur)} per user a month" if per_user is not None else ""
        )
        st.caption(
            f"{yearly} · {per_1000} per 1,000 turns · runs **{opt.model or 'your model'}** · {opt.provider}{extra}"
        )
# pandas and Altair (about a second to import in a fresh process) are needed from here on only: imported
# now, the first costs above are on screen before them
from app_pages import _assumptions  # noqa: E402
from app_pages._chart import kept_chart  # noqa: E402
from calculator.present import charts  # noqa: E402

if ss.get("sl_more") and result.option("serverless") is not None:
    side_rows = serverless_side_by_side(result, work_cat, [_state.split_key(k) for k in ss["sl_more"]])
    cheapest_api = min(side_rows, key=lambda r: r.cost.monthly)
    st.subheader("Serverless APIs side by side")
    api_rows = []
    for api in side_rows:
        api_turn, api_no_reuse, api_reused = api.result.turn, "-", "-"
        if api_turn is not None:
            tc, convert = turn_currency(api_turn, scenario)
            api_no_reuse = format_small(convert(api_turn.no_reuse.cost_per_turn), tc)
            api_reused = format_small(convert(api_turn.reused.cost_per_turn), tc)
        crossings = ", ".join(
            f"{OPTION_LABELS[c.b if c.a == 'serverless' else c.a]} at {c.turns_per_month:,.0f}"
            for c in api.crossings[:2]
        )
        api_rows.append(
            {
                "API": f"{api.cost.provider}/{api.cost.offer}" + (" (cheapest)" if api is cheapest_api else ""),
                "Model": (api.cost.model or "-") + ("" if api.same_model else " (another model)"),
                "Per month": format_money(api.cost.monthly, cur),
                "No-reuse turn": api_no_reuse,
                "Reused-prefix turn": api_reused,
                "Break-even with the GPU options (turns a month)": crossings or "none",
                "Price": api.cost.prices[0].source if api.cost.prices else "-",
            }
        )
    st.dataframe(api_rows, hide_index=True)


def sizing_section() -> None:
    """How the GPU options were sized, for the engineer who opens it: what 'cheapest' picked and why, the
    record or estimate behind the replicas (with its source), the estimate's range, and each option's caveats
    (a lower bound, a minimum, an estimate)."""
    owned_side = resolved.self_hosted or resolved.dedicated
    for chosen in offer_picks:  # what 'cheapest' became, and why: the same configuration Deploy ranks
        owned_label = OPTION_LABELS["dedicated" if chosen.kind == "dedicated" else "self_hosted"]
        st.caption(f"{owned_label} (cheapest): **{chosen.label}**, {chosen.reason}.")
    if owned_side is not None:
        setup = scenario.self_hosting.estimate or owned_side.setup
        auto_setup = scenario.self_hosting.estimate is None
        same = resolved.gpu_model
        # record: auto names why the GPU options run this model: the serverless one, or its nearest spec
        why = ""
        if same is not None and same.stands_for:
            why = f", the serverless model {same.stands_for}" + ("" if same.exact else " by its nearest spec")
        if setup is not None:
            st.caption(
                f"GPU options sized from a roofline estimate of {setup.model}{why} at {setup.precision.upper()} on "
                f"{setup.gpus_per_replica} GPU(s) of {owned_side.offer.gpu} per replica"
                + (" with data-parallel attention" if setup.attention == "dp" else "")
                # auto chose the layout; an estimate the user set is theirs
                + (" (it serves more here than tensor parallel)" if setup.attention == "dp" and auto_setup else "")
                + ": an estimate, not a measurement."
            )
        if result.estimate_range is not None:
            st.caption(estimate_range_caption(result.estimate_range, cur))
        else:
            rec = owned_side.record
            origin = _assumptions.record_origin(scenario, rec)
            st.caption(
                f"GPU options sized from {origin} `{rec.id}`{why}: {rec.label}. Source: {_assumptions.record_link(rec)}"
                + (f", measured {rec.measured.isoformat()}" if rec.measured else "")
                # how the figures were read from it is benchmark wording: the assumptions table below has it
                + (". How its figures were read: the assumptions below." if rec.source.note else ".")
                # which level of its run that is, and whether the replica was at its limit there or only kept up
                + (f" {owned_side.series.sentence}" if owned_side.series is not None else "")
            )
    for opt in result.options:
        for note in opt.notes:
            if "minimum" in note or "estimate" in note.lower() or "lower bound" in note:
                st.info(f"{OPTION_LABELS[opt.option]}: {note}")


def sizing_label() -> str | None:
    """The expander's label: whether the GPU options rest on a measurement or an estimate (None: no GPU option)."""
    owned_side = resolved.self_hosted or resolved.dedicated
    if owned_side is None:
        return None
    estimated = scenario.self_hosting.estimate is not None or owned_side.setup is not None
    how = "a roofline estimate, not a measurement" if estimated else "a published or your own measurement"
    return f"How the GPUs were sized: {how} (evidence and caveats)"


def show_repricing(pinned: Scenario, heading: str, quiet: bool = False) -> None:
    """What changed between the prices ``pinned`` was priced with and today's (``quiet``: nothing at all
    when nothing did). One box for a reopened scenario file and a link with a past price date."""
    try:
        repricing: Repricing | None = reprice(pinned, cat, today)
    except InputError as exc:
        repricing = None
        st.warning(f"The saved prices could not be compared with today's: {exc.message}")
    if repricing is None:
        return
    changes = price_changes_frame(repricing, pinned)
    if quiet and changes.empty:
        return
    lines = repricing_sentences(repricing, pinned)
    with st.container(border=True, key="repricing"):
        st.markdown(f"**{heading}**\n\n" + "\n".join(f"- {line}" for line in lines))
        if changes.empty:
            st.caption(f"No price it used has changed between {repricing.priced_on} and {repricing.today}.")
        else:
            st.dataframe(changes, hide_index=True, width="stretch", key="price_changes")
            st.caption(
                "Each price the estimate used that is different today, in the sheet's currency. The figures "
                "above keep their price date; set the price date to today to price everything now."
            )


uploaded: Scenario | None = ss.get("uploaded")
if uploaded is not None and uploaded.prices_used:
    show_repricing(uploaded, "This scenario file was saved with the prices it used. The file as saved:")
elif result.as_of < today:  # a link keeps its price date: its prices then, and what changed since
    show_repricing(
        pin_prices(scenario, work_cat, result),
        f"Priced as of {result.as_of.isoformat()} (the price date in the link), not today:",
        quiet=True,
    )

if result.turn is not None:
    t = result.turn
    c1, c2, c3 = st.columns(3)
    convert = charts.turn_currency(t, scenario)[1]
    no_reuse, reused = convert(t.no_reuse.cost_per_turn), convert(t.reused.cost_per_turn)
    c1.metric("No-reuse turn", format_small(no_reuse, cur), help="Nothing read from the cache.", border=True)
    c2.metric(
        "Reused-prefix turn",
        format_small(reused, cur),
        delta=f"-{float(t.saving_share):.0%} vs no reuse" if t.saving_share else None,
        delta_color="inverse",
        delta_arrow="off",
        help=f"Prefix share {float(scenario.workload.prefix_share):g} "
        f"x hit rate {float(scenario.workload.hit_rate):g}.",
        border=True,
    )
    c3.container(key="two_amounts").metric(  # two amounts in one value: app.py sets it smaller
        THOUSAND_TURNS,
        f"{format_money(reused * 1000, cur)} vs {format_money(no_reuse * 1000, cur)}",
        help="Reused prefix vs no reuse.",
        border=True,
    )

sweep_pfx = kept(
    "compare.sweep.prefix_share", priced, lambda: charts.share_sweep_frame(scenario, work_cat, "prefix_share")
)
sentences = answer_sentences(result, charts.cheapest_switch(sweep_pfx), cheapest=False)
st.markdown("\n".join(f"- {s}" for s in sentences))
for warning in result.warnings:
    st.warning(_words.warning(warning))
stale_prices = stale_price_warnings(result, today)
if stale_prices:
    st.warning("\n".join(f"- {line}" for line in stale_prices))
sizing = sizing_label()
if sizing is not None:
    with st.expander(sizing, expanded=False, key="sizing"):
        sizing_section()

# --- the why: one view at a time, and only the open one is worked out -------------------------------
VIEWS = ["Cost by volume", "Prefix share and hit rate", "GPU load", "What moves the answer"]
by_volume, by_share, gpu_load, what_moves = st.tabs(VIEWS, key="why", on_change="rerun", bind=BIND)
if by_volume.open:
    with by_volume:
        cost_by_volume = curves(result.resolution)
        left, right = st.columns(2)
        if result.turn is not None:
            turn = result.turn
            kept_chart("compare.turn_chart", priced, lambda: charts.turn_parts_chart(turn, scenario), where=left)
        kept_chart(
            "compare.volume_chart",
            priced,
            lambda: charts.volume_chart(cost_by_volume, float(volume), result, cur),
            where=right if result.turn is not None else left,
        )
if by_share.open:
    with by_share:
        picked = st.segmented_control(
            "Sweep", ["prefix share", "hit rate"], default="prefix share", required=True, key="sweep", bind=BIND
        )
        variable = "hit_rate" if picked == "hit rate" else "prefix_share"
        sweep = (
            sweep_pfx
            if variable == "prefix_share"
            else kept(
                f"compare.sweep.{variable}", priced, lambda: charts.share_sweep_frame(scenario, work_cat, variable)
            )
        )
        current = float(getattr(scenario.workload, variable))
        kept_chart(
            f"compare.sweep_chart.{variable}", priced, lambda: charts.share_sweep_chart(sweep, variable, current, cur)
        )
if gpu_load.open:
    with gpu_load:
        if all(o.option == "serverless" for o in result.options):
            st.info("GPU load applies to a dedicated endpoint or GPU machines: choose one in the sidebar.")
        else:
            util_df = kept("compare.utilisation", priced, lambda: charts.utilisation_frame(result, work_cat))
            now: dict[str, float] = {o.option: o.utilisation for o in result.options if o.utilisation is not None}
            kept_chart("compare.utilisation_chart", priced, lambda: charts.utilisation_chart(util_df, cur, now))
            st.caption("GPU hours only (no engineer, no spares); the flat line is the serverless reused-prefix turn.")
if what_moves.open:
    with what_moves:
        if result.cheapest:
            cheapest = result.cheapest
            sens, base_cost = kept(
                "compare.sensitivity", priced, lambda: charts.sensitivity_frame(scenario, work_cat, cheapest)
            )
            kept_chart(
                "compare.sensitivity_chart",
                priced,
                lambda: charts.sensitivity_chart(sens, base_cost, cur, OPTION_LABELS[cheapest]),
            )
            flips = sens[
                (sens["cheapest_low"] != OPTION_LABELS[cheapest]) | (sens["cheapest_high"] != OPTION_LABELS[cheapest])
            ]
            for _, row in flips.iterrows():
                st.caption(
                    f"{row['input']}: at {row['low_label']} the cheapest is {row['cheapest_low']}; "
                    f"at {row['high_label']} it is {row['cheapest_high']}."
                )

# --- assumptions and sharing ----------------------------------------------------------------------
st.subheader("Assumptions and price versions")
table = _assumptions.assumptions_frame(result, work_cat, resolved)
st.dataframe(table, hide_index=True, width="stretch")
d1, d2, d3 = st.columns(3)


def _csv() -> str:  # written when asked for, as the YAML and the PDF are
    return table.to_csv(index=False)


d1.download_button(
    "Assumptions (CSV)",
    data=_csv,
    file_name="assumptions.csv",
    mime="text/csv",
    on_click="ignore",
    key="dl_csv",
)


def _scenario_yaml() -> str:  # written when asked for, as the PDF is: not on every rerun
    return dump_scenario(pin_prices(_state.shareable(scenario, work_cat), work_cat, result))


d2.download_button(
    "Scenario (YAML)",
    data=_scenario_yaml,
    file_name=f"{slug(scenario.name)}.yaml",
    mime="application/x-yaml",
    on_click="ignore",
    key="dl_yaml",
    help="Saved with the price versions and monthly costs it used, so reopening it later says what changed. "
    "Reopen it here (sidebar, Scenario file) or run `python -m calculator compare --scenario FILE`.",
)


def _pdf() -> bytes:
    return summary_pdf(result, work_cat, table)


d3.download_button(
    "One-page summary (PDF)",
    data=_pdf,
    file_name=f"{slug(scenario.name)}.pdf",
    mime="application/pdf",
    on_click="ignore",
    key="dl_pdf",
)
