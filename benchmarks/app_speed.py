"""How fast the app answers, beside a baseline Streamlit page measured in the same run (issue 12, part 1).

Run with ``make bench-app`` (``--only rerun|browser|cli`` for one table, ``--page plan`` for one page).
It prints three tables, each line with its wall and CPU time, its ratio, the target and PASS or MISS:

1. Rerun after one input change, server side (Streamlit's AppTest): every page is opened, one typical
   input is set to seven different values in turn, and ``at.run()`` is timed; each page's runs alternate
   with the same for ``benchmarks/baseline_page.py`` (two number inputs, two sliders, three metrics, one
   chart, a table), and the medians are compared. Targets: Compare at most 3x the baseline, every other
   page at most 5x. AppTest would compile a page's source again on every run; a server compiles it once,
   so the pages here share one compiled-script cache, as a server's sessions do.
2. First cost on screen in headless Chromium: from starting ``streamlit run`` to the first metric value
   shown, for the app (Compare) and for the baseline page, alternated; target at most 1.3x. Printed as
   a ratio of wall time and of the CPU time the server spent until the metric showed.
   Skipped, with a line saying why, where ``/usr/bin/chromium`` or the ``playwright`` package is missing.
3. The command line: ``python -m calculator turn`` (the seed's turn) and ``compare --preset coding-agent``
   against the time Python takes to import pydantic, PyYAML and numpy; target at most 2x.

The verdicts are on CPU time, which other work on a shared machine disturbs far less than wall time (on
an idle machine the two agree). A benchmark, not a test: a slow or busy machine
reports MISS rather than failing a build.
"""

from __future__ import annotations

import argparse
import compileall
import contextlib
import os
import resource
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from unittest import mock

ROOT = Path(__file__).resolve().parent.parent
APP = ROOT / "app.py"
BASELINE = ROOT / "benchmarks" / "baseline_page.py"
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
FIRST_METRIC = '[data-testid="stMetricValue"]'
COMPARE_TARGET = 3.0
PAGE_TARGET = 5.0
FIRST_METRIC_TARGET = 1.3
CLI_TARGET = 2.0
SEED_TURN = [
    "turn",
    "--provider",
    "lyceum",
    "--model",
    "GLM-5.3",
    "--input-tokens",
    "20000",
    "--prefix-share",
    "0.9",
    "--output-tokens",
    "500",
]


@dataclass(frozen=True)
class Change:
    """One typical input of a page and the values it is set to, one per timed rerun."""

    label: str
    page: str | None  # app_pages/<page>.py; None: the baseline page
    key: str
    values: Sequence[float] = ()  # a number input's values; empty: a select box's options in turn
    target: float = PAGE_TARGET


CHANGES = [
    Change(
        "compare: input tokens",
        "compare",
        "in",
        [21_000, 22_000, 23_000, 24_000, 25_000, 26_000, 27_000],
        COMPARE_TARGET,
    ),
    Change("compare: serverless offer", "compare", "sl", target=COMPARE_TARGET),
    Change("cache_ttl: median gap", "cache_ttl", "t_med", [1.0, 2.0, 4.0, 5.0, 6.0, 8.0, 10.0]),
    Change("price_sheets: offer", "price_sheets", "ps_offer"),
    Change("capacity: context", "capacity", "c_ctx", [4096, 8192, 12288, 16384, 24576, 32768, 40960]),
    Change(
        "measurements: TTFT target", "measurements", "m_ttft", [500.0, 750.0, 1500.0, 2000.0, 2500.0, 3000.0, 4000.0]
    ),
    Change(
        "prefix_analysis: cache size",
        "prefix_analysis",
        "p_cap",
        [200_000, 400_000, 600_000, 800_000, 1_200_000, 1_600_000, 2_000_000],
    ),
    Change("plan: growth", "plan", "pl_g", [0.0, 2.0, 4.0, 6.0, 8.0, 10.0, 12.0]),
    Change("deploy: TTFT target", "deploy", "d_ttft", [500.0, 1000.0, 1500.0, 2000.0, 2500.0, 3000.0, 4000.0]),
    Change("replay: requests", "replay", "r_n", [8, 16, 24, 40, 48, 56, 64]),
]
BASELINE_CHANGE = Change(
    "baseline page: input tokens", None, "a", [21_000, 22_000, 23_000, 24_000, 25_000, 26_000, 27_000]
)
RUNS = len(BASELINE_CHANGE.values)


@dataclass
class Timing:
    """Seconds of each run: wall clock and CPU (empty where CPU time cannot be had)."""

    wall: list[float]
    cpu: list[float]


def verdict(ratio: float, target: float) -> str:
    return "PASS" if ratio <= target else "MISS"


def row(label: str, t: Timing, ratio: float | None = None, target: float | None = None, note: str = "") -> str:
    """One line: median wall and CPU milliseconds, and the ratio to the floor against its target."""
    cpu = f"{statistics.median(t.cpu) * 1000:9.1f} ms" if t.cpu else f"{'-':>9}   "
    figures = f"  {label:<42} {statistics.median(t.wall) * 1000:9.1f} ms {cpu}"
    if ratio is None or target is None:
        return f"{figures}  {note}"
    return f"{figures}  {ratio:6.2f}x  (target <= {target:g}x)  {verdict(ratio, target)}{note}"


# --- 1. reruns in AppTest ----------------------------------------------------------------------------


@contextlib.contextmanager
def compiled_once() -> Iterator[None]:
    """Every AppTest run shares one compiled-script cache, as every session of a server does."""
    from streamlit.runtime.scriptrunner.script_cache import ScriptCache
    from streamlit.testing.v1 import app_test, local_script_runner

    shared = ScriptCache()
    with (
        mock.patch.object(app_test, "ScriptCache", lambda: shared),
        mock.patch.object(local_script_runner, "ScriptCache", lambda: shared),
    ):
        yield


def opened(change: Change) -> Any:
    """An AppTest of the change's page, run once."""
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(BASELINE if change.page is None else APP), default_timeout=120)
    at.run()
    if change.page is not None and change.page != "compare":
        at.switch_page(f"app_pages/{change.page}.py").run()
    if at.exception:
        raise RuntimeError(at.exception[0].message)
    return at


def rerun(at: Any, change: Change, i: int, timing: Timing) -> None:
    """Set the change's input to its i-th value and time the rerun; raises if the page fails."""
    if change.values:
        typed = [w for w in at.text_input if w.key == change.key]  # volumes and token counts are typed as text
        if typed:
            typed[0].input(str(change.values[i]))
        else:
            at.number_input(key=change.key).set_value(change.values[i])
    else:
        box = at.selectbox(key=change.key)
        choices = [j for j in range(len(box.options)) if j != box.index]
        box.select_index(choices[(i * 5) % len(choices)])
    wall, cpu = time.perf_counter(), time.process_time()
    at.run()
    timing.cpu.append(time.process_time() - cpu)
    timing.wall.append(time.perf_counter() - wall)
    if at.exception:
        raise RuntimeError(at.exception[0].message)


def rerun_section(pages: list[str] | None = None) -> None:
    print(f"Rerun after one input change (server side, AppTest; median of {RUNS} values; the ratio is of CPU time)")
    print(f"  {'':<42} {'wall':>9}    {'CPU':>9}")
    base_all = Timing([], [])
    lines = []
    with compiled_once():
        for change in CHANGES:
            if pages and change.page not in pages:
                continue
            base, page = Timing([], []), Timing([], [])
            try:
                base_at, page_at = opened(BASELINE_CHANGE), opened(change)
                for i in range(RUNS):
                    rerun(base_at, BASELINE_CHANGE, i, base)
                    rerun(page_at, change, i, page)
            except Exception as exc:  # a broken page is reported, the others still measured
                lines.append(f"  {change.label:<42} ERROR: {type(exc).__name__}: {exc}")
                continue
            base_all.wall += base.wall
            base_all.cpu += base.cpu
            ratio = statistics.median(page.cpu) / statistics.median(base.cpu)
            lines.append(row(change.label, page, ratio, change.target))
    print(row(BASELINE_CHANGE.label, base_all, note="(the floor)"))
    print("\n".join(lines))


# --- 2. first metric in headless Chromium -------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def wait_healthy(port: int, proc: subprocess.Popen[bytes], deadline: float) -> None:
    while time.perf_counter() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"streamlit exited with code {proc.returncode}")
        with (
            contextlib.suppress(OSError),
            urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=1) as r,
        ):
            if r.read() == b"ok":
                return
        time.sleep(0.05)
    raise RuntimeError("the server did not answer within the time allowed")


def server_cpu(pid: int) -> float | None:
    """User plus system CPU seconds of a process so far (Linux /proc), None elsewhere."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def first_metric_time(browser: Any, script: Path, port: int, timing: Timing) -> None:
    """Seconds from starting ``streamlit run`` to the first metric value on screen, and the CPU seconds the
    server spent until then (where the system says)."""
    command = [
        sys.executable,
        "-m",
        "streamlit",
        "run",
        str(script),
        "--server.port",
        str(port),
        "--server.headless",
        "true",
        "--server.fileWatcherType",
        "none",
        "--browser.gatherUsageStats",
        "false",
    ]
    with tempfile.TemporaryFile() as log:
        start = time.perf_counter()
        proc = subprocess.Popen(command, cwd=ROOT, stdout=log, stderr=log)
        try:
            wait_healthy(port, proc, start + 120)
            page = browser.new_page(viewport={"width": 1440, "height": 1000})
            try:
                page.goto(f"http://127.0.0.1:{port}/")
                page.wait_for_selector(FIRST_METRIC, state="visible", timeout=120_000)
                timing.wall.append(time.perf_counter() - start)
                cpu = server_cpu(proc.pid)
                if cpu is not None:
                    timing.cpu.append(cpu)
            finally:
                page.close()
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def browser_section(runs: int, app_port: int, baseline_port: int) -> None:
    print("First metric on screen (headless Chromium, from starting the server; median of", runs, "runs)")
    if not CHROMIUM.exists():
        print(f"  skipped: {CHROMIUM} is missing (apt-get install chromium)")
        return
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        print("  skipped: the playwright package is missing (pip install playwright)")
        return
    app, base = Timing([], []), Timing([], [])
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            for _ in range(runs):  # alternated, so a busy moment hits both alike
                first_metric_time(browser, BASELINE, baseline_port or free_port(), base)
                first_metric_time(browser, APP, app_port or free_port(), app)
        finally:
            browser.close()
    wall_ratio = statistics.median(app.wall) / statistics.median(base.wall)
    print(f"  {'':<42} {'wall':>9}    {'CPU':>9}   (CPU: the server's, until the metric shows)")
    print(row("baseline page", base, note="(the floor)"))
    if app.cpu and base.cpu:
        cpu_ratio = statistics.median(app.cpu) / statistics.median(base.cpu)
        print(row("app (Compare), server CPU", app, cpu_ratio, FIRST_METRIC_TARGET))
        print(row("app (Compare), wall", app, wall_ratio, FIRST_METRIC_TARGET, "  (a busy machine stretches this)"))
    else:
        print(row("app (Compare)", app, wall_ratio, FIRST_METRIC_TARGET))


# --- 3. the command line ------------------------------------------------------------------------------


def command_times(argv: list[str], runs: int, env: dict[str, str] | None = None) -> Timing:
    """Wall and CPU seconds (the child's user plus system time) of each run of a command."""
    timing = Timing([], [])
    for _ in range(runs):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        done = subprocess.run(argv, cwd=ROOT, capture_output=True, check=False, env=env)
        timing.wall.append(time.perf_counter() - start)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        timing.cpu.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
        if done.returncode != 0:
            raise RuntimeError(f"{' '.join(argv[1:])} exited {done.returncode}: {done.stderr.decode()[-300:]}")
    return timing


def cli_section(runs: int) -> None:
    print(f"Command line (median of {runs} runs; the ratio is of CPU time)")
    print(f"  {'':<42} {'wall':>9}    {'CPU':>9}")
    py = sys.executable
    floor = command_times([py, "-c", "import pydantic, yaml, numpy"], runs)
    print(row("python -c 'import pydantic, yaml, numpy'", floor, note="(the floor)"))
    # The command line runs numpy's BLAS on one thread (calculator/cli/__init__.py), which saves the CPU a
    # thread per core spins at import; the same floor with one thread shows what is left that is our own.
    single = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}
    like = command_times([py, "-c", "import pydantic, yaml, numpy"], runs, single)
    print(row("  the same, BLAS on one thread", like, note="(like for like: the ratio in brackets below)"))
    commands: list[tuple[str, list[str]]] = [
        ("turn (the seed's turn)", SEED_TURN),
        ("compare --preset coding-agent", ["compare", "--preset", "coding-agent"]),
    ]
    for label, args in commands:
        try:
            timing = command_times([py, "-m", "calculator", *args], runs)
        except RuntimeError as exc:
            print(f"  {label:<42} ERROR: {exc}")
            continue
        same = statistics.median(timing.cpu) / statistics.median(like.cpu)
        print(
            row(
                label,
                timing,
                statistics.median(timing.cpu) / statistics.median(floor.cpu),
                CLI_TARGET,
                f" ({same:.2f}x)",
            )
        )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--browser-runs", type=int, default=3, help="server starts per page (default 3)")
    parser.add_argument("--app-port", type=int, default=0, help="port for the app's server (default: a free one)")
    parser.add_argument("--baseline-port", type=int, default=0, help="port for the baseline's (default: free)")
    parser.add_argument("--only", choices=["rerun", "browser", "cli"], help="run one section")
    parser.add_argument("--page", action="append", help="rerun section: only this page (repeatable)")
    args = parser.parse_args(argv)
    os.chdir(ROOT)  # AppTest, streamlit run and the command line read .streamlit/ and the data from here
    # An installed package has its bytecode; a checkout run with PYTHONDONTWRITEBYTECODE (set on some
    # machines) would compile the calculator's modules on every start, which no user pays.
    compileall.compile_dir(str(ROOT / "calculator"), quiet=1)
    compileall.compile_dir(str(ROOT / "app_pages"), quiet=1)
    print("Bytecode of calculator/ and app_pages/ compiled first, as an installed package has it.\n")
    sections: dict[str, Callable[[], None]] = {
        "rerun": lambda: rerun_section(args.page),
        "browser": lambda: browser_section(args.browser_runs, args.app_port, args.baseline_port),
        "cli": lambda: cli_section(5),
    }
    for name, section in sections.items():
        if args.only in (None, name):
            section()
            print()


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    main()
