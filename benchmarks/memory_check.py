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
    header = f"{'log':48} {'engine':7} {'role':9} {'reported':>10} {'computed':>10} {'error':>7}"
    print(header)
    print("-" * len(header))
    for path in sorted((FIXTURES / "engine_logs").glob("*.log")):
        check = check_log(read_log(path), models, gpus, FIXTURES)
        c = check.case
        print(
            f"{c.name:48} {c.header['engine']:7} {c.role:9} {c.reported_tokens:>10,} "
            f"{check.computed_tokens:>10,} {check.error:>+7.1%}"
        )


if __name__ == "__main__":
    main()
