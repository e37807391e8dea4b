"""One session scenario across the app's pages: Plan, Capacity, Measurements and the Compare page follow it;
its name, description and evidence reach the link, the YAML file and the PDF; hostile links are refused
with a sentence naming the parameter."""

from __future__ import annotations

import base64
import datetime as dt
import io
import json
import random
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, BinaryIO, ClassVar, TextIO

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from streamlit.runtime.media_file_manager import MediaFileManager
from streamlit.testing.v1 import AppTest, app_test

from app_pages import _link, _state
from calculator.catalog.measurements import ThroughputRecord
from calculator.catalog.prices import GpuVmOffer
from calculator.planning.hybrid import hybrid_plan
from calculator.planning.load_profile import preset_profile, profile_from_traffic
from calculator.present import capacity_charts as cc
from calculator.present import plan_charts as pc
from calculator.present.money import format_money
from calculator.pricing.cheapest import with_cheapest_offers
from calculator.pricing.compare import Catalogs, compare
from calculator.scenario.evidence import Evidence, PrefixEvidence
from calculator.scenario.model import Scenario, list_presets, load_preset, load_scenario_text, with_evidence_records

from .apptest import APP, metrics, table_with, text_of
from .clock import TODAY
from .named import named_params
from .pdf_cells import record_pdf

ONLINE = Path(__file__).resolve().parent / "fixtures" / "bench" / "sglang" / "h200_llama_3_3_70b_online_output.jsonl"
SETUP = {"m_gpu": "h200-sxm", "m_n": "4", "m_prec": "bf16", "m_model": "llama-3.3-70b"}


def _app(**params: str) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=90)
    for key, value in params.items():
        at.query_params[key] = value
    return at.run()


def _on_compare(scenario: Scenario) -> Scenario:
    """A preset as the Compare page prices it: dated today when it names no price date."""
    return scenario.model_copy(update={"as_of": scenario.as_of or TODAY})


def _owned_caption(at: AppTest) -> str:
    return next(c.value for c in at.caption if c.value.startswith("GPU options sized from"))


# --- Plan follows the Compare page -----------------------------------------------------------------------


def test_plan_plans_the_scenario_compare_shows(catalogs: Catalogs) -> None:
    at = _app()
    at.selectbox(key="preset").set_value("rag-chatbot").run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    at.switch_page("app_pages/plan.py").run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    scenario = _on_compare(load_preset("rag-chatbot"))
    result = hybrid_plan(scenario, catalogs, profile_from_traffic(scenario.traffic))
    single = pc.cheapest_single(result.pure)
    assert single is not None
    shown = metrics(at)
    assert shown["Cheapest single option"] == format_money(single[1].monthly, scenario.currency)
    assert shown["Hybrid per month"] == format_money(result.best.monthly, scenario.currency)
    assert shown["Peak-to-average"] == f"{profile_from_traffic(scenario.traffic).peak_to_average:.2f}"
    assert f"**{scenario.name}** (the Compare page's scenario)" in text_of(at.caption)
    # the coding-agent preset plans differently: the page did not fall back to it
    other = hybrid_plan(_on_compare(load_preset("coding-agent")), catalogs, profile_from_traffic(scenario.traffic))
    assert format_money(other.best.monthly, "USD") != shown["Hybrid per month"]


def test_a_profile_kept_on_plan_is_the_scenarios_in_its_file_and_its_link(catalogs: Catalogs) -> None:
    at = _app(preset="multi-turn-chat")
    at.switch_page("app_pages/plan.py").run()
    at.selectbox(key="pl_prof").set_value("business hours").run()
    at.number_input(key="pl_burst").set_value(1.5).run()
    before = metrics(at)
    at.button(key="pl_keep").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert at.selectbox(key="pl_prof").value == "the scenario's load profile"
    assert metrics(at) == before  # the same plan, now from the scenario's own profile
    kept = at.session_state[_state.EVIDENCE].load_profile
    assert kept == preset_profile("business_hours").with_burst(1.5)
    scenario = _on_compare(load_preset("multi-turn-chat"))
    expected = hybrid_plan(scenario, catalogs, kept)
    assert before["Hybrid per month"] == format_money(expected.best.monthly, scenario.currency)
    assert before["Peak-to-average"] == f"{kept.peak_to_average:.2f}"

    # the Plan page's link reopens the same plan in a new session
    again = _app(sc=at.query_params["sc"])
    again.switch_page("app_pages/plan.py").run()
    assert not again.exception and not again.error, [e.value for e in again.error]
    assert again.selectbox(key="pl_prof").value == "the scenario's load profile"
    assert metrics(again) == before

    # the Compare page's file and assumptions carry it
    at.switch_page("app_pages/compare.py").run()
    rows = {str(r["Assumption"]): r for _, r in table_with(at, "Assumption").iterrows()}
    assert rows["Load profile"]["Value"].startswith(f"{kept.name}: peak-to-average {kept.peak_to_average:.2f}")
    assert "ev" in at.query_params


# --- records from the Measurements page size the Compare page ---------------------------------------------


def _imported() -> list[ThroughputRecord]:
    """The sglang fixture as the Measurements page imports it, with the parameter counts of its model's spec."""
    from calculator.pricing.compare import load_catalogs

    cat = load_catalogs()
    outcome = cc.import_uploads(
        [(ONLINE.name, ONLINE.read_bytes())], model="llama-3.3-70b", gpu="h200-sxm", gpu_count=4, precision="bf16"
    )
    spec = cat.models.get("llama-3.3-70b")
    return [
        r.model_copy(update={"params_total_b": spec.params_total_b, "params_active_b": spec.params_active_b})
        for r in outcome.records
    ]


def test_records_added_on_measurements_size_compares_gpu_options(catalogs: Catalogs) -> None:
    at = _app(**SETUP)
    at.switch_page("app_pages/measurements.py").run()
    at.file_uploader(key="m_files").set_value((ONLINE.name, ONLINE.read_bytes(), "application/jsonl")).run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    # The ShareGPT run's busier level (the file's last row): that run kept up at both its rates (3.95 of 4,
    # 7.64 of 8 req/s), so its busiest level is its capacity, at least. (The random run's busiest level, rate 16,
    # would size from that run's saturation point, rate 8: the bundled record's figures, not a moved answer.)
    chosen = _imported()[6].id
    at.selectbox(key="m_size").set_value(chosen).run()
    at.button(key="m_add").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert f"sized from `{chosen}`" in text_of(at.success)
    assert "sc" in at.query_params  # the scenario's records are listed here: the link carries them

    at.switch_page("app_pages/compare.py").run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    caption = _owned_caption(at)
    assert f"your measurement record (kept in the scenario) `{chosen}`" in caption
    assert f"Source: {ONLINE.name}" in caption
    expected = compare(
        with_evidence_records(_on_compare(load_preset("coding-agent")), tuple(_imported()), chosen), catalogs
    )
    hosted = expected.option("self_hosted")
    assert hosted is not None
    shown = {k.removesuffix(" (cheapest)"): v for k, v in metrics(at).items()}
    assert shown["Self-hosted GPUs"] == format_money(hosted.monthly, "USD")
    bundled = compare(_on_compare(load_preset("coding-agent")), catalogs).option("self_hosted")
    # the record moved the answer: a replica's capacity (the preset alone runs GLM-5 by estimate, record: auto)
    assert bundled is not None and bundled.capacity is not None and hosted.capacity is not None
    assert hosted.capacity.record_id == chosen and bundled.capacity.requests_per_s != hosted.capacity.requests_per_s

    # the Compare page's link (inputs plus the packed evidence) reproduces it in a new session
    again = _app(**{k: at.query_params[k] for k in at.query_params})
    assert not again.exception and not again.error, [e.value for e in again.error]
    assert metrics(again) == metrics(at)
    assert _owned_caption(again) == caption


# --- name and description --------------------------------------------------------------------------------


class _Keeping(MediaFileManager):
    """Keeps what the page offers for download (AppTest's media store ends with each run)."""

    files: ClassVar[dict[str, Any]] = {}

    def add(
        self,
        path_or_data: bytes | str,
        mimetype: str,
        coordinates: str,
        file_name: str | None = None,
        is_for_static_download: bool = False,
    ) -> str:
        _Keeping.files[file_name or coordinates] = path_or_data
        return super().add(path_or_data, mimetype, coordinates, file_name, is_for_static_download)

    def add_deferred(
        self,
        data_callable: Callable[[], bytes | str | BinaryIO | TextIO | io.RawIOBase],
        mimetype: str | None,
        coordinates: str,
        file_name: str | None = None,
        *,
        element_id: str = "",
    ) -> str:
        _Keeping.files[file_name or coordinates] = data_callable
        return super().add_deferred(data_callable, mimetype, coordinates, file_name, element_id=element_id)


@pytest.fixture
def downloads(monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, Any]]:
    _Keeping.files = {}
    monkeypatch.setattr(app_test, "MediaFileManager", _Keeping)
    yield _Keeping.files


def _saved(downloads: dict[str, Any], name: str) -> bytes:
    """A download's bytes: the page writes the scenario file when it is asked for, as a browser's click does."""
    data = downloads[name]
    data = data() if callable(data) else data
    return data.encode() if isinstance(data, str) else bytes(data)


def _pdf_text(make: Any, monkeypatch: pytest.MonkeyPatch) -> str:
    cells = record_pdf(monkeypatch, charts=False)
    assert make().startswith(b"%PDF")
    return cells.text


def test_a_renamed_scenario_heads_the_page_and_is_in_the_link_the_yaml_and_the_pdf(
    downloads: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    name, about = "Acme Corp support bot", "Priced live with Acme's platform team: 40 agents, EU only."
    at = _app(preset="coding-agent")
    at.text_input(key="name").set_value(name).run()
    at.text_area(key="desc").set_value(about).run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert at.title[0].value == name
    assert about in text_of(at.markdown)

    saved_text = _saved(downloads, "acme-corp-support-bot.yaml").decode()  # the file is named after the scenario
    saved = load_scenario_text(saved_text)
    assert saved.name == name and saved.description == about
    assert f"name: {name}" in saved_text
    text = _pdf_text(downloads["acme-corp-support-bot.pdf"], monkeypatch)
    assert f"LLM inference cost: {name}" in text and about in text

    # the link: the browser writes the two bound inputs into it as it does every other input
    again = _app(**{k: at.query_params[k] for k in at.query_params}, name=name, desc=about)
    assert again.title[0].value == name and about in text_of(again.markdown)

    # a file opened on the Compare page brings its own name back
    reopened = _app(preset="rag-chatbot")
    reopened.file_uploader(key="upload").set_value(
        ("acme.yaml", _saved(downloads, "acme-corp-support-bot.yaml"), "text/yaml")
    )
    reopened.run()
    assert not reopened.exception and not reopened.error, [e.value for e in reopened.error]
    assert reopened.title[0].value == name and reopened.text_input(key="name").value == name


ISSUE_25_LINK = {  # every input changed from the coding-agent preset but its name (issue 25)
    "sl": "deepinfra/deepseek-v3.2",
    "per": "day",
    "vol": "50000",
    "in": "3000",
    "out": "400",
    "pfx": "0.5",
    "hit": "0.8",
    "ded": "together/h200-141gb",
    "vm": "hyperstack/h200-sxm-8x",
    "hrs": "24",
    "users": "0",
    "cur": "EUR",
}


def test_a_changed_preset_is_named_as_started_from_it_on_the_page_the_yaml_and_the_pdf(
    downloads: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    at = _app(**ISSUE_25_LINK)
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert at.title[0].value == "Started from Coding agent (the seed's turn)"
    words = text_of(at.markdown)
    assert "200 developers" not in words and "GLM-5.3 ..." not in words
    assert "input tokens a turn 3,000 (was 20,000)" in words and "serverless API deepinfra" in words
    saved = load_scenario_text(_saved(downloads, "started-from-coding-agent-the-seeds-turn.yaml").decode())
    assert saved.name == "Started from Coding agent (the seed's turn)"
    assert saved.description is not None and "200 developers" not in saved.description
    assert "coding-agent.yaml" not in downloads and "coding-agent-the-seeds-turn.yaml" not in downloads
    text = _pdf_text(downloads["started-from-coding-agent-the-seeds-turn.pdf"], monkeypatch)
    assert "LLM inference cost: Started from Coding agent (the seed's turn)" in text
    assert "200 developers" not in text and "prefix share 0.5 (was 0.9)" in text

    # a name of the user's own stands
    at.text_input(key="name").set_value("Acme on DeepSeek").run()
    assert at.title[0].value == "Acme on DeepSeek" and "acme-on-deepseek.yaml" in downloads


def test_an_unchanged_preset_keeps_its_name_and_description(downloads: dict[str, Any]) -> None:
    at = _app(preset="coding-agent", cur="EUR")  # the currency shown is not a change of the scenario
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert at.title[0].value == "Coding agent (the seed's turn)" and "200 developers" in text_of(at.markdown)
    assert "coding-agent-the-seeds-turn.yaml" in downloads


def test_own_figures_travel_in_the_yaml_as_a_record_and_come_back_as_the_inputs(downloads: dict[str, Any]) -> None:
    at = _app(preset="coding-agent", own="true", own_rps="0.5", own_gpus="2")
    assert not at.exception and not at.error, [e.value for e in at.error]
    saved_bytes = _saved(downloads, "started-from-coding-agent-the-seeds-turn.yaml")  # own figures: a change
    saved = load_scenario_text(saved_bytes.decode())
    assert [r.id for r in saved.evidence.records] == [_state.OWN_RECORD]
    assert saved.evidence.records[0].requests_per_s == 0.5
    reopened = _app(preset="coding-agent")
    reopened.file_uploader(key="upload").set_value(("own.yaml", saved_bytes, "text/yaml"))
    reopened.run()
    assert not reopened.exception and not reopened.error, [e.value for e in reopened.error]
    assert reopened.toggle(key="own").value is True
    assert reopened.number_input(key="own_rps").value == 0.5 and reopened.number_input(key="own_gpus").value == 2
    assert metrics(reopened) == metrics(at)


# --- Capacity follows the Compare page ---------------------------------------------------------------------


def test_capacity_defaults_follow_the_compare_scenario_unless_changed(catalogs: Catalogs) -> None:
    at = _app(preset="coding-agent")
    at.switch_page("app_pages/capacity.py").run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    scenario = load_preset("coding-agent")
    # 'cheapest' runs GLM-5.3's nearest spec, GLM-5, on the configuration the deployment search ranks first
    picked = with_cheapest_offers(scenario, catalogs)[0].gpu_vm
    assert picked is not None and picked.estimate is not None
    _, offer = catalogs.prices.offer(picked.provider, picked.offer, "gpu_vm")
    assert isinstance(offer, GpuVmOffer)
    assert at.selectbox(key="c_model").value == picked.estimate.model == "glm-5"
    assert at.selectbox(key="c_gpu").value == offer.gpu
    assert at.number_input(key="c_n").value == picked.estimate.gpus_per_replica
    context = scenario.workload.input_tokens + scenario.workload.output_tokens
    assert at.text_input(key="c_ctx").value == str(context)

    # an estimate on the Compare page moves the model and GPU count; a context changed here stays
    at.text_input(key="c_ctx").input("4096").run()
    at.switch_page("app_pages/compare.py").run()
    at.toggle(key="est").set_value(True).run()
    at.selectbox(key="e_model").set_value("qwen3-32b" if "qwen3-32b" in catalogs.models.ids else "llama-3.1-8b").run()
    at.number_input(key="e_gpus").set_value(2).run()
    chosen = at.selectbox(key="e_model").value
    at.switch_page("app_pages/capacity.py").run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert at.selectbox(key="c_model").value == chosen
    assert at.number_input(key="c_n").value == 2
    assert at.text_input(key="c_ctx").value == "4096"
    assert "Defaults from the Compare page's scenario" in text_of(at.caption)

    # a link that names a model keeps it
    linked = _app(c_model="llama-3.1-8b" if "llama-3.1-8b" in catalogs.models.ids else catalogs.models.ids[-1])
    expected = linked.query_params["c_model"]
    linked.switch_page("app_pages/capacity.py").run()
    assert linked.selectbox(key="c_model").value == expected


# --- the link: packed evidence in, hostile values refused ----------------------------------------------------


def _pack(data: bytes) -> str:
    return base64.urlsafe_b64encode(zlib.compress(data, 9)).decode().rstrip("=")


PREFIX = PrefixEvidence(
    source="chats.jsonl",
    requests=1200,
    prefix_share="0.82",
    hit_rate="0.7",
    token_hit_share="0.574",
    mean_input_tokens=14_000,
    mean_output_tokens=420,
    analysed_on=dt.date(2026, 10, 30),
)


def test_evidence_round_trips_through_the_link() -> None:
    evidence = Evidence(prefix=PREFIX, load_profile=preset_profile("consumer_evenings").with_burst(1.3))
    assert _link.decode(_link.encode(evidence), Evidence, "ev", "your evidence") == evidence
    scenario = with_evidence_records(load_preset("coding-agent"), tuple(_imported()), _imported()[2].id)
    assert _link.decode(_link.encode(scenario), Scenario, "sc", "the scenario") == scenario


@pytest.mark.parametrize(
    ("raw", "says"),
    [
        ("not base64!", "letters, digits, - and _ only"),
        (_pack(b"{")[:-3], "not a value this app wrote"),
        (
            _pack(b'{"prefix": {"source": "x", "requests": -1, "prefix_share": 2}}'),
            "Prefix requests",
        ),  # the field in words
        (_pack(b'{"records": 3}'), "Records"),
        (_pack(b'{"load_profile": {"name": "x", "weights": [1e999]}}'), "out of range"),
        (_pack(b"[" * 5000 + b"]" * 5000), "nested deeper"),
        (_pack(b" " * (_link.MAX_BYTES + 10)), f"more than {_link.MAX_BYTES:,} bytes"),
        ("A" * (_link.MAX_CHARS + 1), f"at most {_link.MAX_CHARS:,}"),
        (_pack(b'{"x": ' + b"9" * 5000 + b"}"), "not a value this app wrote"),
    ],
)
def test_a_hostile_evidence_value_is_one_sentence_naming_the_parameter(raw: str, says: str) -> None:
    with pytest.raises(_link.LinkError) as exc:
        _link.decode(raw, Evidence, "ev", "your evidence")
    assert str(exc.value).startswith("URL parameter `ev` (your evidence): ")
    assert says in str(exc.value)
    assert "\n" not in str(exc.value)


_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.text(max_size=12), inner, max_size=5),
    max_leaves=40,
)
_evidence_like = st.fixed_dictionaries(
    {},
    optional={
        "records": st.lists(st.dictionaries(st.sampled_from(["id", "engine", "input_tokens", "gpu"]), _json)),
        "prefix": st.dictionaries(st.sampled_from(["source", "requests", "prefix_share", "hit_rate"]), _json),
        "load_profile": st.dictionaries(st.sampled_from(["name", "weights", "burst", "days_per_week"]), _json),
    },
)


def _decoded_or_refused(raw: str, kind: type[Evidence] | type[Scenario], param: str) -> None:
    try:
        value = _link.decode(raw, kind, param, _state.LINK_LABELS[param])
    except _link.LinkError as exc:
        assert str(exc).startswith(f"URL parameter `{param}` ({_state.LINK_LABELS[param]}): ")
    else:
        assert isinstance(value, kind)


@settings(max_examples=150, deadline=None)
@given(raw=st.text(max_size=300))
def test_any_text_as_the_evidence_parameter_is_decoded_or_refused_quickly(raw: str) -> None:
    _decoded_or_refused(raw, Evidence, "ev")


@settings(max_examples=150, deadline=None)
@given(data=st.one_of(st.binary(max_size=400), _json.map(lambda v: json.dumps(v).encode())))
def test_any_packed_bytes_as_the_scenario_parameter_are_decoded_or_refused_quickly(data: bytes) -> None:
    _decoded_or_refused(_pack(data), Scenario, "sc")


@settings(max_examples=150, deadline=None)
@given(value=_evidence_like)
def test_evidence_shaped_json_is_decoded_or_refused_quickly(value: dict[str, Any]) -> None:
    _decoded_or_refused(_pack(json.dumps(value).encode()), Evidence, "ev")


def test_hostile_links_on_each_page_are_named_and_the_page_still_answers() -> None:
    bad_ev = _pack(b'{"prefix": {"source": "x", "requests": "many"}}')
    at = _app(preset="coding-agent", ev=bad_ev)
    assert not at.exception
    assert "URL parameter `ev` (your evidence)" in text_of(at.error) and "Prefix requests" in text_of(at.error)
    assert metrics(at)  # the page answers with the session's scenario
    assert "ev" not in at.query_params  # the link now says what the page shows

    for page in ("plan", "capacity", "measurements", "prefix_analysis"):
        one = AppTest.from_file(APP, default_timeout=120)
        one.query_params["sc"] = "%%%"
        one.run()
        one.switch_page(f"app_pages/{page}.py").run()
        assert not one.exception, page
    unknown = {**load_preset("coding-agent").model_dump(), "gpu_vm": {"provider": "nowhere", "offer": "none"}}
    elsewhere = _app(sc=_link.encode(Scenario.model_validate(unknown)))
    assert not elsewhere.exception
    assert "URL parameter `sc` (the scenario): gpu_vm: 'nowhere/none' is not in the price sheets" in text_of(
        elsewhere.error
    )


def test_a_name_or_description_too_long_for_the_scenario_is_named() -> None:
    at = _app(name="x" * (_state.NAME_MAX + 1), desc="y" * (_state.DESC_MAX + 1))
    assert not at.exception
    errors = text_of(at.error)
    assert f"URL parameter `name` (Scenario name): {_state.NAME_MAX + 1:,} characters; at most" in errors
    assert f"URL parameter `desc` (Description): {_state.DESC_MAX + 1:,} characters; at most" in errors
    assert at.title[0].value == "x" * _state.NAME_MAX  # the page answers with what the scenario holds


def test_evidence_too_large_for_a_link_is_said_and_left_out() -> None:
    rng = random.Random(7)  # measured multipliers: numbers that do not pack small
    big = Evidence(
        load_profile=preset_profile("flat").model_copy(
            update={"within_hour": tuple(1 + rng.random() for _ in range(20_000))}
        )
    )
    assert not _link.fits(_link.encode(big))
    ss: dict[str, Any] = {}
    params: dict[str, str] = {"ev": "stale"}
    said = _state.write_link(ss, params, "ev", big)
    assert said is not None and "too large for a link" in said and "scenario file" in said
    assert "ev" not in params


@pytest.mark.parametrize("preset", list_presets())
def test_every_preset_survives_adoption_from_a_link(preset: str, catalogs: Catalogs) -> None:
    """A scenario a link carries becomes the session's exactly (the inputs, name, description, evidence)."""
    presets = {name: load_preset(name) for name in list_presets()}
    scenario = with_evidence_records(_on_compare(presets[preset]), tuple(_imported()[:2]), None)
    ss: dict[str, Any] = {}
    assert _state.read_links(ss, {"sc": _link.encode(scenario)}, catalogs, presets, TODAY) == []
    adopted, _ = _state.current_compare_scenario(ss, catalogs, presets, TODAY)
    assert adopted == _state.serverless_model_name(catalogs, scenario)
    # the same link again changes nothing (the session's own link is not re-read)
    ss["in"] = 123
    _state.read_links(ss, {"sc": _link.encode(scenario)}, catalogs, presets, TODAY)
    assert ss["in"] == 123


def test_the_sizing_caption_names_the_records_source_without_its_benchmark_wording() -> None:
    """The bundled SGLang record's note speaks benchmark (``random_input_len``, ``total_input_tokens``):
    the caption under the costs links its source; the note is in the assumptions table. (The multi-turn
    chat preset names that record as its substitute for a closed API model; coding-agent runs GLM-5 now.)"""
    at = _app(**named_params("multi-turn-chat"))
    assert not at.exception and not at.error, [e.value for e in at.error]
    caption = _owned_caption(at)
    assert "https://github.com/" in caption and "assumptions below" in caption
    assert "random_input_len" not in caption and "total_input_tokens" not in caption
    table = table_with(at, "Assumption")
    notes = " ".join(str(v) for v in table["Value"])
    assert "random_input_len" in notes  # nothing lost: the table keeps how the figures were read


def test_the_coding_agent_runs_glm5_for_glm53_sized_from_a_published_glm5_run() -> None:
    at = _app(**named_params("coding-agent"))  # its 8x B200 node named: the published GLM-5 run is of it
    assert not at.exception and not at.error, [e.value for e in at.error]
    caption = _owned_caption(at)
    assert "vllm-glm-5-fp8-8xb200-c128" in caption and "GLM-5.3 by its nearest spec" in caption
    assert "a lower bound" in caption  # its only load level: at least that much
    warned = " ".join(w.value for w in at.warning)
    assert "No model spec for GLM-5.3" in warned and "different models" not in warned
    table = table_with(at, "Assumption")
    assert "GLM-5 (glm-5), the serverless model GLM-5.3 by its nearest spec" in " ".join(str(v) for v in table["Value"])


def test_glm53_on_8x_h100_keeps_both_gpu_options_at_16_gpus_a_replica() -> None:
    # the issue's case: both GPU options on H100 were left out. GLM-5 at FP8 (744 GB) needs 16 H100s a
    # replica: 80 GiB x 0.9 - 2 GB = 75.3 GB per GPU holds 744 / 16 = 46.5 GB of weights, not 744 / 8 = 93
    at = _app(preset="coding-agent", vm="lambda/h100-sxm-8x", ded="fireworks/on-demand-h100-80gb")
    assert not at.exception and not at.error, [e.value for e in at.error]
    warned = " ".join(w.value for w in at.warning)
    assert "left out" not in warned and "No model spec for GLM-5.3" in warned
    assert "16 GPU(s) of h100-sxm" in _owned_caption(at)
    shown = {k.removesuffix(" (cheapest)") for k in metrics(at)}
    assert {"Dedicated endpoint", "Self-hosted GPUs"} <= shown


def test_a_closed_api_models_substitute_is_shown_as_the_users_choice() -> None:
    at = _app(preset="multi-turn-chat")
    assert not at.exception and not at.error, [e.value for e in at.error]
    warned = " ".join(w.value for w in at.warning)
    assert "claude-haiku-4-5 is a closed model" in warned and "your choice of substitute" in warned


def test_a_closed_models_substitute_is_chosen_on_the_page_and_travels_in_the_link() -> None:
    # multi-turn chat's API model is Claude Haiku (closed); with the record left to auto the page's own
    # "GPU options' model" chooses what the GPU options run, and the answer calls it the user's choice
    at = _app(preset="multi-turn-chat", rec="auto")
    assert not at.exception and not at.error, [e.value for e in at.error]
    at.selectbox(key="h_model").set_value("qwen3-235b-a22b").run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert "GPU options' model: qwen3-235b-a22b" in text_of(at.caption)
    warned = " ".join(w.value for w in at.warning)
    assert "qwen3-235b-a22b (your choice of substitute)" in warned
    assert "runs **qwen3-235b-a22b**" in text_of(at.caption)  # the GPU options' captions name it too
    # AppTest leaves a select's bound value out of its query parameters (a browser writes it), so it is added
    link = {**{k: str(v) for k, v in at.query_params.items()}, "h_model": "qwen3-235b-a22b"}
    again = _app(**link)
    assert again.selectbox(key="h_model").value == "qwen3-235b-a22b"
    assert metrics(again) == metrics(at)
