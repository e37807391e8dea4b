"""Print each engine log's reported KV cache against ``fit``'s, with the error.

Run with ``.venv/bin/python benchmarks/memory_check.py``. The logs and their sources are in
``tests/fixtures/engine_logs/`` (see ``tests/fixtures/README.md``); ``tests/test_engine_logs.py`` holds
the 5% bound. Each row says whether the engine overheads in ``calculator.capacity.memory.ENGINES`` were
fitted on that log (``fit``) or not (``hold-out``).
"""

from __future__ import annotations

from pathlib import Path

from calculator.capacity.engine_logs import check_log, read_log
from calculator.catalog.gpus import load_gpu_specs
from calculator.catalog.models import load_model_specs

FIXTURES = Path(__file__).resolve().parent.parent / "tests" / "fixtures"


def main() -> None:
    models, gpus = load_model_specs(), load_gpu_specs()
    header = (
        f"{'log':46} {'engine':6} {'role':8} {'tokens':>10} {'computed':>10} {'KV GiB':>7} {'computed':>8} {'error':>7}"
    )
    print(header)
    print("-" * len(header))
    for path in sorted((FIXTURES / "engine_logs").glob("*.log")):
        check = check_log(read_log(path), models, gpus, FIXTURES)
        c = check.case
        reported_kv = f"{c.reported_kv_gib:>7.2f}" if c.reported_kv_gib is not None else f"{'':>7}"
        print(
            f"{c.name:46} {c.header['engine']:6} {c.role:8} {c.reported_tokens:>10,} {check.computed_tokens:>10,} "
            f"{reported_kv} {check.computed_kv_gib:>8.2f} {check.error:>+7.1%}"
            + ("  (KV GiB)" if c.compares_memory else "")
        )


if __name__ == "__main__":
    main()
