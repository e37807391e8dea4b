"""Compare's first costs are on screen before pandas and Altair are imported (issue 12, part 1: first cost on
screen). In a fresh server the two take about a second to import; the page imports its chart and table code
after the metrics, and what it imports before them must not pull either in. The time itself is measured by
benchmarks/app_speed.py."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "app_pages" / "compare.py"
HEAVY = ("pandas", "altair")


def _first_metric_line() -> int:
    return next(i for i, line in enumerate(PAGE.read_text().splitlines(), 1) if "st.metric(" in line)


def _imports_before_the_metrics() -> list[str]:
    """The page's module-level imports above its first metric, as source lines."""
    tree = ast.parse(PAGE.read_text())
    found: list[str] = []
    for node in tree.body:
        if node.lineno > _first_metric_line():
            break
        if isinstance(node, ast.Import | ast.ImportFrom) and getattr(node, "module", None) != "__future__":
            found.append(ast.unparse(node))
    return found


def test_the_metrics_need_neither_pandas_nor_altair() -> None:
    lines = _imports_before_the_metrics()
    assert any("report import" in line for line in lines)  # the answers in words come before the charts
    code = "\n".join(lines) + f"\nimport json, sys\nprint(json.dumps([m for m in {HEAVY!r} if m in sys.modules]))"
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.strip().splitlines()[-1]) == []


def test_the_chart_and_table_code_is_imported_after_the_metrics() -> None:
    later = {
        ast.unparse(node)
        for node in ast.parse(PAGE.read_text()).body
        if isinstance(node, ast.Import | ast.ImportFrom) and node.lineno > _first_metric_line()
    }
    assert {
        "from app_pages import _assumptions",
        "from app_pages._chart import kept_chart",
        "from calculator.present import charts",
    } <= later
