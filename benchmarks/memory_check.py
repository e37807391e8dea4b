"""Print each engine log's reported KV cache against ``fit``'s, with the error.

Run with ``.venv/bin/python benchmarks/memory_check.py``. The logs and their sources are in
``tests/fixtures/engine_logs/`` (see ``tests/fixtures/README.md``); ``tests/test_engine_logs.py`` holds
the bound (5%; 1 GiB per GPU when the log's KV budget is under 10 GiB). Each row says whether the
engine overheads in ``calculator.capacity.memory.ENGINES`` were fitted on that log (``fit``) or not
(``hold-out``); the last lines give the median and worst error of each group, and over every bounded log
how many are within 5% (the target: at least 10, among them a mixture of experts and a vision model).
"""

from __future__ import annotations

import statistics
from pathlib import Path

from calculator.capacity.engine_logs import LogCheck, check_log, read_log
from calculator.catalog.gpus import load_gpu_specs
from calculator.catalog.models import load_model_specs

FIXTURES = Path(__file__).resolve().parent.parent / "tests" / "fixtures"


def main() -> None:
    models, gpus = load_model_specs(), load_gpu_specs()
    errors: dict[str, list[float]] = {}
    bounded: list[LogCheck] = []
    header = (
        f"{'log':46} {'engine':9} {'role':8} {'tokens':>10} {'computed':>10} {'KV GiB':>7} {'computed':>8} {'error':>7}"
        "  bound (5%; 1 GiB under 10 GiB)"
    )
    print(header)
    print("-" * len(header))
    for path in sorted((FIXTURES / "engine_logs").glob("*.log")):
        check = check_log(read_log(path), models, gpus, FIXTURES)
        c = check.case
        tokens = f"{c.reported_tokens:>10,}" if c.reported_tokens is not None else f"{'':>10}"
        reported_kv = f"{c.reported_kv_gib:>7.2f}" if c.reported_kv_gib is not None else f"{'':>7}"
        if c.header.get("bound") == "excluded":
            verdict = "excluded from the bound (see its note)"
        elif c.small_budget and check.gib_error is not None:
            verdict = f"{check.gib_error:+.2f} GiB " + ("ok" if check.within_bound else "MISS")
        else:
            verdict = ("ok" if check.within_bound else "MISS") + (" (in KV GiB)" if c.compares_memory else "")
        print(
            f"{c.name:46} {c.header['engine']:9} {c.role:8} {tokens} {check.computed_tokens:>10,} "
            f"{reported_kv} {check.computed_kv_gib:>8.2f} {check.error:>+7.1%}  {verdict}"
        )
        if c.header.get("bound") != "excluded":
            bounded.append(check)
            if not c.small_budget:
                errors.setdefault(c.role, []).append(abs(check.error))
    for role, values in sorted(errors.items()):
        print(f"{role}: {len(values)} logs, median |error| {statistics.median(values):.1%}, worst {max(values):.1%}")
    every = [abs(c.error) for c in bounded]
    within = sum(e <= 0.05 for e in every)
    print(
        f"all bounded logs: {within} of {len(every)} within 5%, median |error| {statistics.median(every):.1%}, "
        f"worst {max(every):.1%} (excluded logs, with their notes, left out)"
    )


if __name__ == "__main__":
    main()
