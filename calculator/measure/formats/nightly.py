"""vLLM's nightly benchmark summary: rows with the columns renamed for its markdown tables."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from calculator.measure.formats.reading import Doc, Fields, Run, engine_from_backend, first_given, parse_rate

_NIGHTLY_RATE = re.compile(r"qps_([0-9]+(?:\.[0-9]+)?|inf)\b", re.IGNORECASE)


_NIGHTLY_LATENCY = {
    "ttft": ("Mean TTFT (ms)", "Median TTFT (ms)", "P99 TTFT (ms)"),
    "itl": ("Mean ITL (ms)", "Median ITL (ms)", "P99 ITL (ms)"),
}


def nightly_kind(row: Mapping[str, Any]) -> str:
    """'serving', or the offline test a row holds ('latency', 'throughput'): those have no serving shape."""
    name = str(row.get("Test name") or "")
    if "Tput (req/s)" not in row or name.startswith("latency"):
        return "latency"
    if name.startswith("throughput") or not any(k in row for k in _NIGHTLY_LATENCY["ttft"]):
        return "throughput"
    return "serving"


def read_nightly(doc: Doc, index: int, run: Run) -> Fields:
    row: dict[str, Any] = doc.data
    f = Fields(index=index, line=doc.line)
    done = first_given(run.num(row, "Successful req."), run.num(row, "# of req."))
    rps = run.num(row, "Tput (req/s)")
    out_tput = run.num(row, "Output Tput (tok/s)")
    total_tput = first_given(run.num(row, "Total Token Tput (tok/s)"), run.num(row, "Total Tput (tok/s)"))
    total_in, total_out = run.num(row, "Total input tokens"), run.num(row, "Total output tokens")
    if rps is None or rps <= 0:
        run.problem("Tput (req/s)", "missing or not positive: no request throughput to read")
    else:
        f.requests_per_s = rps
    if done and total_in is not None:
        f.input_tokens = total_in / done
    elif rps and total_tput is not None and out_tput is not None:
        f.input_tokens = (total_tput - out_tput) / rps
        f.notes.append("input_tokens = (total - output token throughput) / request throughput")
    elif rps:
        run.problem(
            None,
            "no mean input length: needs 'Total input tokens' and 'Successful req.' "
            "(or 'Total Tput (tok/s)' and 'Output Tput (tok/s)')",
        )
    if done and total_out is not None:
        f.output_tokens = total_out / done
    elif rps and out_tput is not None:
        f.output_tokens = out_tput / rps
        f.notes.append("output_tokens = output token throughput / request throughput")
    elif rps:
        run.problem(
            None, "no mean output length: needs 'Total output tokens' and 'Successful req.' (or 'Output Tput (tok/s)')"
        )
    f.output_tokens_per_s, f.total_tokens_per_s, f.completed = out_tput, total_tput, done
    for metric, (mean, median, p99) in _NIGHTLY_LATENCY.items():
        values = {"mean": run.num(row, mean), "p50": run.num(row, median), "p99": run.num(row, p99)}
        setattr(f, metric, values)
    name = row.get("Test name")
    if isinstance(name, str):
        f.notes.append(f"test {name}")
        rate = _NIGHTLY_RATE.search(name)
        if rate:
            parse_rate(rate.group(1), run, f)
    f.engine = engine_from_backend(row.get("Engine"), f.notes) if row.get("Engine") else None
    if row.get("GPU"):
        f.notes.append(f"GPU column {row['GPU']!r} (not used as the record's GPU; say which GPU ran it)")
    return f
