"""Tables, charts and page logic for the Capacity and Measurements pages. No streamlit import here.

Capacity (one model on one GPU type):

    memory_frame / memory_chart      one GPU's memory: weights, KV cache for the sequences, free, reserve
    decode_frame / decode_chart      roofline decode tokens/s per user and in total against the batch size
    estimate_vs_measured             bundled records beside the roofline estimate at their own concurrency,
                                     and each converted to the page's context (the sizing's split)
    calibration_frame                the roofline held against published measurements

Measurements (uploaded benchmark result files):

    import_uploads                   files in, records out, or every problem as ``file:line: ...``
    records_frame                    the records, each complete or saying what it is missing
    comparable_groups                records that can share a chart, and why the others are left out
    run_chart_frame                  one group's points against concurrency or request rate
    throughput_chart / ttft_chart    output tokens/s and TTFT at a percentile, a line per engine
    busiest_by_engine                per engine, the busiest level that meets a latency target

``check_params`` validates values read from the URL before any widget uses them.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

import altair as alt
import pandas as pd

from calculator.capacity.calibration import Case, CaseResult, estimate_case
from calculator.capacity.memory import FitResult
from calculator.capacity.roofline import RooflineAssumptions, decode
from calculator.capacity.saturation import served_output_tokens_per_s
from calculator.capacity.sizing import best_under_target, record_prefix_share, replica_capacity
from calculator.catalog.datafile import DataFileError
from calculator.catalog.gpus import GpuCatalog, GpuSpec
from calculator.catalog.measurements import ThroughputRecord, comparable
from calculator.catalog.models import ModelCatalog, ModelSpec
from calculator.catalog.textfile import UPLOAD_MAX_CHARS, unpacked_bytes
from calculator.errors import InputError
from calculator.measure.importers import import_file
from calculator.scenario.inputs import LatencyTarget

__all__ = [
    "MEMORY_PARTS",
    "ChartGroup",
    "FileFacts",
    "ImportOutcome",
    "ImportedFile",
    "busiest_by_engine",
    "calibration_frame",
    "comparable_groups",
    "converted_to_context",
    "decode_chart",
    "decode_frame",
    "estimate_vs_measured",
    "import_uploads",
    "memory_chart",
    "memory_frame",
    "output_tokens_per_s",
    "records_frame",
    "run_chart_frame",
    "throughput_chart",
    "ttft_chart",
    "ttft_percentile",
    "upload_key",
]

WIDTH = 560
HEIGHT = 300
MEMORY_PARTS = {
    "Weights": "#1f6feb",
    "KV cache": "#1a7f37",
    "Free (KV budget left)": "#aceebb",
    "KV for one sequence (missing)": "#cf222e",
    "Reserve": "#bf8700",
    "Held back": "#d0d7de",
}
"""The parts of the memory bar, in stacking order, with their colours."""


# --- Capacity: memory --------------------------------------------------------------------------------


def memory_frame(f: FitResult) -> pd.DataFrame:
    """One GPU's memory in GB, part by part, summing to the GPU's memory when the model fits.

    When it does not fit, the KV cache of a single sequence is stacked on the weights and the
    reserve, so the bar passes the GPU's memory by exactly the shortfall.
    """
    # what the engine is not given: the share it leaves, and what CUDA never reports as free
    visible = f.visible_memory_per_gpu_gb or f.memory_per_gpu_gb
    held = f.memory_per_gpu_gb - visible * f.utilisation
    rows: list[tuple[str, float, str]] = [
        ("Weights", f.weights_per_gpu_gb, f"{f.precision.upper()} weights, split over {f.gpus} GPU(s)")
    ]
    if f.fits:
        used = f.max_sequences * f.kv_per_sequence_per_gpu_gb
        rows.append(("KV cache", used, f"{f.max_sequences:,} sequences of {f.context:,} tokens"))
        rows.append(("Free (KV budget left)", max(f.kv_budget_per_gpu_gb - used, 0.0), "less than one more sequence"))
    else:
        rows.append(
            ("KV for one sequence (missing)", f.kv_per_sequence_per_gpu_gb, f"one sequence of {f.context:,} tokens")
        )
    rows.append(("Reserve", f.reserve_gb, f"{f.engine} overhead: activations, CUDA context, buffers (calibrated)"))
    rows.append(("Held back", held, f"{1 - f.utilisation:.0%} of memory not given to the engine"))
    df = pd.DataFrame(rows, columns=["part", "gb", "what"])
    df["order"] = [list(MEMORY_PARTS).index(p) for p in df["part"]]
    df["bar"] = f"each of {f.gpus} GPU(s)" if f.gpus > 1 else "the GPU"
    return df


def memory_chart(f: FitResult, gpu_label: str) -> alt.LayerChart:
    """A horizontal stacked bar of :func:`memory_frame` with the GPU's memory marked."""
    df = memory_frame(f)
    shown = [p for p in MEMORY_PARTS if p in set(df["part"])]
    bars = (
        alt.Chart(df)
        .mark_bar(size=40)
        .encode(
            x=alt.X("sum(gb):Q", title="GB per GPU", stack="zero"),
            y=alt.Y("bar:N", title=None),
            color=alt.Color(
                "part:N",
                title=None,
                scale=alt.Scale(domain=shown, range=[MEMORY_PARTS[p] for p in shown]),
                legend=alt.Legend(orient="bottom", columns=len(shown), labelLimit=300),
            ),
            order=alt.Order("order:Q"),
            tooltip=[
                alt.Tooltip("part:N", title="Part"),
                alt.Tooltip("gb:Q", title="GB", format=",.2f"),
                alt.Tooltip("what:N", title="What"),
            ],
        )
    )
    marks = pd.DataFrame({"gb": [f.memory_per_gpu_gb], "label": [f"{f.memory_per_gpu_gb:g} GB"]})
    rule = alt.Chart(marks).mark_rule(color="#24292f", strokeWidth=2).encode(x=alt.X("gb:Q"))
    text = (
        alt.Chart(marks)
        .mark_text(align="right", dx=-4, dy=-26, color="#24292f")
        .encode(x=alt.X("gb:Q"), text=alt.Text("label:N"))
    )
    title = f"Memory per GPU: {f.model} {f.precision.upper()} on {f.gpus}x {gpu_label}, {f.context:,} tokens"
    return cast(alt.LayerChart, alt.layer(bars, rule, text, title=title, width=WIDTH, height=230))


# --- Capacity: roofline decode -----------------------------------------------------------------------


def _batches(max_sequences: int) -> list[int]:
    top = max(8, max_sequences)
    out, b = [], 1
    while b < top and b <= 4096:
        out.append(b)
        b *= 2
    out.append(min(b, 4096))
    if 0 < max_sequences <= 4096:
        out.append(max_sequences)
    return sorted(set(out))


def decode_frame(
    model: ModelSpec,
    gpu: GpuSpec,
    precision: str,
    context: int,
    gpus: int,
    kv_dtype: str,
    max_sequences: int,
    assumptions: RooflineAssumptions | None = None,
) -> pd.DataFrame:
    """Roofline decode speed at batch sizes 1, 2, 4 ... past the KV cache's limit, every sequence at ``context``."""
    rows = []
    for batch in _batches(max_sequences):
        point = decode(model, gpu, precision, batch, context, gpus, kv_dtype, assumptions)
        rows.append(
            {
                "batch": batch,
                "per_user": point.tokens_per_s_per_user,
                "total": point.tokens_per_s_total,
                "step_ms": point.step_ms,
                "bound": point.bound,
                "in_cache": "fits in the KV cache" if batch <= max_sequences else "beyond the KV cache",
            }
        )
    return pd.DataFrame(rows)


DECODE_METRICS = {"per_user": "Tokens/s per user", "total": "Tokens/s, all sequences"}
IN_CACHE = ["fits in the KV cache", "beyond the KV cache"]


def decode_chart(df: pd.DataFrame, metric: str, max_sequences: int) -> alt.LayerChart:
    """One roofline metric against the batch size; batches the KV cache cannot hold are drawn dashed."""
    title = f"{DECODE_METRICS[metric]} (roofline estimate)"
    lines = df.copy()
    inside = df[df["in_cache"] == IN_CACHE[0]]
    if not inside.empty and (df["in_cache"] == IN_CACHE[1]).any():  # join the dashed part to the solid one
        lines = pd.concat([lines, inside.tail(1).assign(in_cache=IN_CACHE[1])], ignore_index=True)
    x = alt.X(
        "batch:Q",
        title="Sequences decoded together (batch)",
        scale=alt.Scale(type="log", base=2),
        axis=alt.Axis(values=[int(b) for b in df["batch"]], format="d"),
    )
    y = alt.Y(f"{metric}:Q", title=DECODE_METRICS[metric])
    line = (
        alt.Chart(lines)
        .mark_line(color="#1f6feb")
        .encode(
            x=x,
            y=y,
            strokeDash=alt.StrokeDash(
                "in_cache:N",
                title=None,
                scale=alt.Scale(domain=IN_CACHE, range=[[1, 0], [5, 4]]),
                legend=alt.Legend(orient="bottom"),
            ),
        )
    )
    points = (
        alt.Chart(df)
        .mark_point(filled=True, color="#1f6feb")
        .encode(
            x=x,
            y=y,
            tooltip=[
                alt.Tooltip("batch:Q", title="Batch"),
                alt.Tooltip(f"{metric}:Q", title=DECODE_METRICS[metric], format=",.1f"),
                alt.Tooltip("step_ms:Q", title="Step (ms)", format=",.2f"),
                alt.Tooltip("bound:N", title="Bound by"),
                alt.Tooltip("in_cache:N", title="KV cache"),
            ],
        )
    )
    layers: list[Any] = [line, points]
    if max_sequences >= 1:
        mark = pd.DataFrame({"batch": [max_sequences], "label": [f"KV cache full: {max_sequences:,}"]})
        layers.append(alt.Chart(mark).mark_rule(color="#6e7781", strokeDash=[2, 2]).encode(x=alt.X("batch:Q")))
        layers.append(
            alt.Chart(mark)
            .mark_text(align="right", dx=-4, baseline="top", y=4, color="#57606a")
            .encode(x=alt.X("batch:Q"), text=alt.Text("label:N"))
        )
    return cast(alt.LayerChart, alt.layer(*layers, title=title, width=WIDTH, height=HEIGHT))


# --- Capacity: estimate beside measurement -----------------------------------------------------------


def output_tokens_per_s(r: ThroughputRecord) -> float:
    """Output tokens/s of the replica: as measured, else requests/s x mean output length."""
    return served_output_tokens_per_s(r)


def _per_user_measured(r: ThroughputRecord) -> float | None:
    itl = r.itl_ms.mean or r.itl_ms.p50
    return 1000 / itl if itl else None


CONVERTED = "Measured, converted to {context:,} tokens (req/s)"


def converted_to_context(
    r: ThroughputRecord, model: ModelSpec, gpu: GpuSpec, context: int, assumptions: RooflineAssumptions | None
) -> float | None:
    """A record's requests/s for its own output length with the prompt filling the rest of ``context``,
    converted as sizing converts it (the same assumptions); None when the output alone fills the context.
    An :class:`InputError` when the record's setup cannot hold a sequence that long."""
    if context <= r.output_tokens:
        return None
    prompt = context - r.output_tokens
    capacity = replica_capacity(
        r, gpu, prompt, record_prefix_share(r), 1.0, r.output_tokens, assumptions=assumptions, model=model
    )
    return capacity.requests_per_s


NOT_MEASURED = "no latency measured"
"""A per-user cell of a record without an inter-token latency (nothing to compare the estimate with)."""


def estimate_vs_measured(
    records: Sequence[ThroughputRecord],
    model_id: str,
    gpu_id: str,
    models: ModelCatalog,
    gpus: GpuCatalog,
    assumptions: RooflineAssumptions | None = None,
    context: int | None = None,
) -> tuple[pd.DataFrame, list[str]]:
    """Records of this model on this GPU type beside the roofline estimate of each one's own setup
    (precision, GPU count, lengths) at its concurrency; and why a matching record was skipped.

    With ``context``, each record is also converted to that many tokens per sequence the way sizing
    converts it, with the same assumptions, so changing an efficiency moves the estimate and the
    conversion together.
    """
    rows: list[dict[str, Any]] = []
    skipped: list[str] = []
    for r in records:
        found = models.find(r.model) if r.model else None
        if found is None or found.id != model_id or r.gpu != gpu_id:
            continue
        if r.missing:
            skipped.append(f"{r.id}: does not state {', '.join(r.missing)}")
            continue
        in_flight = r.in_flight
        if in_flight is None:
            skipped.append(f"{r.id}: states neither a concurrency nor a latency to infer one from")
            continue
        assert r.precision is not None and r.gpu_count is not None
        common = {
            "model": model_id,
            "gpu": gpu_id,
            "gpus": r.gpu_count,
            "precision": r.precision,
            "engine": r.engine,
            "input_tokens": r.input_tokens,
            "output_tokens": r.output_tokens,
            "concurrency": in_flight,
            "source": r.source,
        }
        try:
            total: CaseResult = estimate_case(
                Case(id=r.id, kind="throughput", measured=output_tokens_per_s(r), **common), models, gpus, assumptions
            )
            per_user_measured = _per_user_measured(r)
            per_user = (
                estimate_case(
                    Case(id=r.id, kind="decode_per_user", measured=per_user_measured, **common),
                    models,
                    gpus,
                    assumptions,
                )
                if per_user_measured
                else None
            )
        except InputError as exc:
            skipped.append(f"{r.id}: {exc.message}")
            continue
        row: dict[str, Any] = {}
        if context is not None:
            try:
                converted = converted_to_context(r, found, gpus.get(gpu_id), context, assumptions)
            except InputError as exc:
                converted = None
                skipped.append(f"{r.id}: not converted to {context:,} tokens: {exc.message}")
            row = {
                "Measured req/s": round(r.requests_per_s, 3),
                # text, as the per-user cells: a record that cannot be converted says so (why: below the table)
                CONVERTED.format(context=context): f"{converted:.3f}" if converted is not None else "not converted",
            }
        rows.append(
            {
                "Record": r.id,
                "Engine": f"{r.engine} {r.engine_version or ''}".strip(),
                "Setup": f"{r.precision.upper()} on {r.gpu_count}x {r.gpu}",
                "Shape (in / out)": f"{r.input_tokens:,.0f} / {r.output_tokens:,.0f}",
                "In flight": round(in_flight, 1),
                "Measured output tok/s": round(output_tokens_per_s(r)),
                "Estimate output tok/s": round(total.estimate),
                "Estimate vs measured": f"{total.error:+.0%}",
                "Estimate batch": total.batch,
                "Plausible": "yes" if total.plausible else "no: beats the ceiling",
                # text cells: a record without latencies says so, never an empty None
                "Measured tok/s per user": f"{per_user_measured:.1f}" if per_user_measured else NOT_MEASURED,
                "Estimate tok/s per user": f"{per_user.estimate:.1f}" if per_user else NOT_MEASURED,
                **row,
            }
        )
    return pd.DataFrame(rows), skipped


def calibration_frame(results: Sequence[CaseResult]) -> pd.DataFrame:
    """The roofline check: each published case, its estimate, the error and the physical ceiling."""
    rows = []
    for res in results:
        c = res.case
        rows.append(
            {
                "Case": c.id,
                "Setup": f"{c.model} {c.precision.upper()} on {c.gpus}x {c.gpu}",
                "Engine": c.engine,
                "Measured": "tokens/s per user" if c.kind == "decode_per_user" else "output tokens/s",
                "Concurrency": c.concurrency,
                "Published": c.measured,
                "Estimate": round(res.estimate, 1),
                "Error": f"{res.error:+.0%}",
                "Ceiling (100% efficiency)": round(res.ceiling, 1),
                "Plausible": "yes" if res.plausible else "no: beats the ceiling",
            }
        )
    return pd.DataFrame(rows)


# --- Measurements: uploads ---------------------------------------------------------------------------

USER_FIELDS = {
    "measurement.gpu": "GPU",
    "measurement.gpu_count": "GPU count",
    "measurement.prefix_share": "Prefix share",
    "measurement.precision": "Precision",
    "measurement.model": "Model",
}
MISSING_NAMES = {
    "model": "model",
    "precision": "precision",
    "gpu": "GPU",
    "gpu_count": "GPU count",
    "latency": "latency (figures the importer could not read)",
}
NOT_STATED = "not stated"
"""A record's condition its file does not state, in a table cell (never an empty None)."""
NOT_SET = "not set"
"""A load setting the run did not use: a fixed-concurrency run has no request rate, and the other way round."""


@dataclass(frozen=True)
class FileFacts:
    """What the user says about the setup one result file measured (None: not said for this file)."""

    model: str | None = None
    gpu: str | None = None
    gpu_count: int | None = None
    precision: str | None = None
    prefix_share: float | None = None
    """Share of the input the file's prompts repeat, where the file does not say (asked file by file: runs
    of different traffic differ in it)."""

    def over(self, default: FileFacts) -> FileFacts:
        """These facts, each one not said taken from ``default`` (what was said for every file)."""
        return FileFacts(
            model=self.model or default.model,
            gpu=self.gpu or default.gpu,
            gpu_count=self.gpu_count or default.gpu_count,
            precision=self.precision or default.precision,
            prefix_share=self.prefix_share if self.prefix_share is not None else default.prefix_share,
        )


def upload_key(data: bytes) -> str:
    """A file's identity by content: the same file uploaded twice (under any name) has one key."""
    return hashlib.sha256(data).hexdigest()[:16]


@dataclass
class ImportedFile:
    name: str
    key: str
    records: list[ThroughputRecord]


@dataclass
class ImportOutcome:
    records: list[ThroughputRecord] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    """Every problem, one ``file:line: what is wrong`` per line; a broken file adds no records."""
    files: list[ImportedFile] = field(default_factory=list)
    """Each distinct file read, in upload order, with its records."""
    duplicates: list[tuple[str, str]] = field(default_factory=list)
    """(name, name of the first upload with the same content) for every file uploaded again: read once."""


def import_uploads(
    files: Sequence[tuple[str, bytes]],
    *,
    model: str | None = None,
    gpu: str | None = None,
    gpu_count: int | None = None,
    precision: str | None = None,
    per_file: Mapping[str, FileFacts] | None = None,
) -> ImportOutcome:
    """Uploaded result files (name, content) into records, with what the user said about the setup.

    ``model`` .. ``precision`` hold for every file; ``per_file`` (by :func:`upload_key`) says them for one
    file and wins over those. A file uploaded twice, under any name, is read once.
    """
    out = ImportOutcome()
    default = FileFacts(model=model, gpu=gpu, gpu_count=gpu_count, precision=precision)
    seen: dict[str, str] = {}
    for name, data in files:
        key = upload_key(data)
        if key in seen:
            out.duplicates.append((name, seen[key]))
            continue
        seen[key] = name
        try:
            text = unpacked_bytes(data, name, UPLOAD_MAX_CHARS).decode("utf-8")  # .gz and .zst as on the command line
        except UnicodeDecodeError:
            out.problems.append(f"{name}: not a UTF-8 text file")
            continue
        except DataFileError as exc:
            out.problems.extend(exc.lines)
            continue
        facts = (per_file or {}).get(key, FileFacts()).over(default)
        try:
            records = import_file(
                name,
                text=text,
                name=name,
                model=facts.model,
                gpu=facts.gpu,
                gpu_count=facts.gpu_count,
                precision=facts.precision,
                prefix_share=facts.prefix_share,
            )
        except DataFileError as exc:
            out.problems.extend(exc.lines)
        except InputError as exc:
            out.problems.append(f"{name}: {USER_FIELDS.get(exc.field, exc.field)}: {exc.message}")
        else:
            out.records.extend(records)
            out.files.append(ImportedFile(name, key, records))
    return out


def _missing(r: ThroughputRecord) -> str:
    return ", ".join(MISSING_NAMES[m] for m in r.missing)


def records_frame(records: Sequence[ThroughputRecord]) -> pd.DataFrame:
    """One row per record: its conditions, results, and ``complete`` or what it is missing."""
    rows = []
    for r in records:
        rows.append(
            {
                "Record": r.id,
                "Status": "complete" if r.complete else f"missing: {_missing(r)}",
                "Engine": f"{r.engine} {r.engine_version or ''}".strip(),
                "Model": r.model or NOT_STATED,
                "GPU": r.gpu or NOT_STATED,
                "GPUs": NOT_STATED if r.gpu_count is None else f"{r.gpu_count:,}",
                "Precision": r.precision.upper() if r.precision else NOT_STATED,
                "In / out tokens": f"{r.input_tokens:,.0f} / {r.output_tokens:,.0f}",
                "Prefix share": r.prefix_share_text,
                "Concurrency": NOT_SET if r.concurrency is None else f"{r.concurrency:,}",
                "Request rate": NOT_SET if r.request_rate is None else f"{r.request_rate:g}",
                "Requests/s": round(r.requests_per_s, 3),
                "Output tok/s": round(output_tokens_per_s(r), 1),
                "TTFT held": ", ".join(r.ttft_ms.available) or "none",
                "File's figures": "; ".join(r.mismatches) if r.mismatches else "agree",
                "Warnings": "; ".join(r.warnings) if r.warnings else "none",
                "Published by": r.publisher or "you",
                "Source": r.source.note or r.source.label,
            }
        )
    return pd.DataFrame(rows)


# --- Measurements: comparable groups and their charts ------------------------------------------------


@dataclass
class ChartGroup:
    records: list[ThroughputRecord]
    left_out: list[tuple[str, list[str]]]
    """(record id, reasons) for every record not in this group's chart."""

    @property
    def label(self) -> str:
        a = self.records[0]
        engines = sorted({r.engine for r in self.records})
        return (
            f"{a.model} {(a.precision or '?').upper()} on {a.gpu_count}x {a.gpu}, "
            f"~{a.input_tokens:,.0f} in / {a.output_tokens:,.0f} out, prefix {a.prefix_share_text} "
            f"({len(self.records)} runs: {', '.join(engines)})"
        )


def comparable_groups(records: Sequence[ThroughputRecord]) -> list[ChartGroup]:
    """Split records into groups :func:`~calculator.catalog.measurements.comparable` allows in one chart.

    Each record joins the first group whose first record it is comparable with; an incomplete record
    joins none. Every group lists the records left out of it, with the reasons.
    """
    groups: list[list[ThroughputRecord]] = []
    for r in records:
        if not r.complete:
            continue
        for g in groups:
            if comparable(g[0], r)[0]:
                g.append(r)
                break
        else:
            groups.append([r])
    out = []
    for g in sorted(groups, key=len, reverse=True):
        members = {id(r) for r in g}
        left: list[tuple[str, list[str]]] = []
        for r in records:
            if id(r) in members:
                continue
            if not r.complete:
                left.append((r.id, [f"does not state {_missing(r)}"]))
            else:
                left.append((r.id, comparable(g[0], r)[1]))
        out.append(ChartGroup(records=g, left_out=left))
    return out


AXES = {"concurrency": "Concurrency (requests in flight)", "request_rate": "Request rate (requests/s offered)"}
TTFT_PREFERENCE = ("p95", "p99", "p90", "p50", "mean")


def ttft_percentile(records: Sequence[ThroughputRecord]) -> str | None:
    """p95 when every record holds it, else the percentile the most records hold (higher ones first)."""
    counts = {p: sum(1 for r in records if r.ttft_ms.at(p) is not None) for p in TTFT_PREFERENCE}
    best = max(TTFT_PREFERENCE, key=lambda p: (counts[p], -TTFT_PREFERENCE.index(p)))
    return best if counts[best] else None


def run_chart_frame(
    records: Sequence[ThroughputRecord], percentile: str | None
) -> tuple[pd.DataFrame, str, list[tuple[str, str]]]:
    """Points for a group's charts against concurrency or request rate (whichever more records state),
    and (record id, reason) for runs that cannot be placed."""
    axis = max(AXES, key=lambda a: sum(1 for r in records if getattr(r, a) is not None))
    rows, left = [], []
    for r in records:
        x = getattr(r, axis)
        if x is None:
            why = "an infinite or unstated request rate" if axis == "request_rate" else "no fixed concurrency"
            left.append((r.id, f"has {why}; the chart's axis is {AXES[axis].lower()}"))
            continue
        ttft = r.ttft_ms.at(percentile) if percentile else None
        rows.append(
            {
                "record": r.id,
                "engine": f"{r.engine} {r.engine_version or ''}".strip(),
                "x": x,
                "output_tps": output_tokens_per_s(r),
                "requests_per_s": r.requests_per_s,
                "ttft_ms": ttft,
            }
        )
    columns = ["record", "engine", "x", "output_tps", "requests_per_s", "ttft_ms"]
    return pd.DataFrame(rows, columns=columns), AXES[axis], left


def _engine_lines(df: pd.DataFrame, y: str, y_title: str, x_title: str, title: str) -> alt.Chart:
    chart: alt.Chart = (
        alt.Chart(df, title=title)
        .mark_line(point=True)
        .encode(
            x=alt.X("x:Q", title=x_title),
            y=alt.Y(f"{y}:Q", title=y_title),
            color=alt.Color("engine:N", title="Engine", legend=alt.Legend(orient="bottom", labelLimit=480)),
            tooltip=[
                alt.Tooltip("record:N", title="Run"),
                alt.Tooltip("engine:N", title="Engine"),
                alt.Tooltip("x:Q", title=x_title, format=",.2f"),
                alt.Tooltip(f"{y}:Q", title=y_title, format=",.1f"),
            ],
        )
        .properties(width=WIDTH, height=HEIGHT)
    )
    return chart


def throughput_chart(df: pd.DataFrame, x_title: str) -> alt.Chart:
    return _engine_lines(df, "output_tps", "Output tokens/s", x_title, "Output throughput per engine")


def ttft_chart(df: pd.DataFrame, x_title: str, percentile: str) -> alt.Chart:
    shown = df.dropna(subset=["ttft_ms"])
    return _engine_lines(shown, "ttft_ms", f"TTFT {percentile} (ms)", x_title, f"Time to first token, {percentile}")


def busiest_by_engine(
    records: Sequence[ThroughputRecord], target: LatencyTarget
) -> list[tuple[str, ThroughputRecord | None, list[str]]]:
    """Per engine (and version), the busiest load level meeting the target, and each level's verdict."""
    by_engine: dict[str, list[ThroughputRecord]] = {}
    for r in records:
        by_engine.setdefault(f"{r.engine} {r.engine_version or ''}".strip(), []).append(r)
    return [(engine, *best_under_target(rs, target)) for engine, rs in by_engine.items()]
