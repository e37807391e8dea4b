"""Print the profiled estimator (AIConfigurator's tables) against the roofline on every published case it covers.

Run with ``.venv/bin/python benchmarks/profiled_check.py [--cases] [--engine-chunk]`` (needs the optional extra
``profiled``; about a minute, most of it the package loading its tables once per GPU and engine). Each mixed step
prefills one prompt, AIConfigurator's own default; ``--engine-chunk`` prefills the engine's default chunk instead
(8,192 tokens on an H100, H200 or B200), the sensitivity of the answer to that one scheduling choice.

Both estimators see the same points, the same batch (the concurrency capped by what our memory fit holds, as the
roofline's check uses) and the same burst model for the ShareGPT runs (``calibration.burst_seconds``); nothing is
fitted on the profiled estimator, so every point is held out for it. The roofline's efficiencies were fitted on
the ``fit`` split, so only the ``holdout`` rows compare the two on sources neither has seen: the per-family
verdict is read there. Cases whose measurement beats the roofline's 100% ceiling are set aside, as
``roofline_check`` does.

Also prints what one estimate costs: importing the package (in a fresh interpreter), the first estimate on a GPU
and engine (loading its tables), a warm estimate, beside the roofline's estimate of the same case in this run.
"""

from __future__ import annotations

import resource
import statistics
import subprocess
import sys
import time
from collections import defaultdict
from collections.abc import Callable, Sequence

from pydantic import BaseModel, ConfigDict

from calculator.capacity.calibration import Case, CaseResult, check_cases, engine_family, estimate_case, load_cases
from calculator.capacity.profiled import (
    NotCovered,
    available,
    backend_for,
    profiled_estimate,
    system_for,
)
from calculator.capacity.residuals import profiled_case
from calculator.catalog.gpus import GpuCatalog, load_gpu_specs
from calculator.catalog.models import ModelCatalog, load_model_specs

MIN_VERDICT_POINTS = 3
"""Fewest held-out points a family needs before either estimator is said to beat the other on it."""


class Pair(BaseModel):
    """One case estimated both ways."""

    model_config = ConfigDict(frozen=True)

    roofline: CaseResult
    profiled: float
    engine_version: str

    @property
    def case(self) -> Case:
        return self.roofline.case

    @property
    def profiled_error(self) -> float:
        return self.profiled / self.case.measured - 1


def gpu_family(gpu: str) -> str:
    for prefix, family in (("h1", "hopper"), ("h2", "hopper"), ("gh", "hopper"), ("b", "blackwell")):
        if gpu.startswith(prefix):
            return family
    if gpu.startswith("a1"):
        return "ampere"
    if gpu.startswith("mi"):
        return "amd-cdna3"
    return "ada" if gpu.startswith("l") else "other"


def _stats(errors: Sequence[float]) -> str:
    magnitudes = sorted(abs(e) for e in errors)
    p90 = statistics.quantiles(magnitudes, n=10, method="inclusive")[-1] if len(magnitudes) > 1 else magnitudes[0]
    return f"{statistics.median(magnitudes):6.0%} {p90:6.0%} {max(magnitudes):6.0%}"


def table(title: str, pairs: Sequence[Pair], key: Callable[[Pair], str]) -> dict[str, tuple[int, float, float]]:
    """Per group: points, median |error| profiled and roofline side by side, p90 and worst."""
    groups: dict[str, list[Pair]] = defaultdict(list)
    for pair in pairs:
        groups[key(pair)].append(pair)
    print(f"\n{title}")
    print(f"  {'family':40} {'points':>6}   {'profiled: median p90 worst':>26}   {'roofline: median p90 worst':>26}")
    medians: dict[str, tuple[int, float, float]] = {}
    for name, mine in sorted(groups.items()):
        prof = [p.profiled_error for p in mine]
        roof = [p.roofline.error for p in mine]
        print(f"  {name:40} {len(mine):6d}   {'':5}{_stats(prof)}   {'':5}{_stats(roof)}")
        medians[name] = (len(mine), statistics.median(abs(e) for e in prof), statistics.median(abs(e) for e in roof))
    return medians


def _family(pair: Pair, models: ModelCatalog) -> str:
    case = pair.case
    kind = "moe" if models.get(case.model).is_moe else "dense"
    return f"{kind} / {gpu_family(case.gpu)} / {engine_family(case.engine) or 'other'}"


def costs(case: Case, models: ModelCatalog, gpus: GpuCatalog) -> None:
    """What one estimate costs, beside the roofline's estimate of the same case in this run (the floor)."""
    probe = (
        "import time; t = time.perf_counter(); "
        "import aiconfigurator_core.sdk.models, aiconfigurator_core.sdk.perf_database, "
        "aiconfigurator_core.sdk.backends.factory; print(time.perf_counter() - t)"
    )
    imported = float(subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout)
    app_probe = (
        "import time; t = time.perf_counter(); import calculator.capacity.profiled; print(time.perf_counter() - t)"
    )
    ours = float(subprocess.run([sys.executable, "-c", app_probe], capture_output=True, text=True, check=True).stdout)
    start = time.perf_counter()
    for _ in range(20):
        estimate_case(case, models, gpus)
    roofline = (time.perf_counter() - start) / 20
    model, gpu = models.get(case.model), gpus.get(case.gpu)
    args = (model, gpu, case.gpus, case.precision, case.kv_dtype, case.engine, case.attention, 1)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    start = time.perf_counter()
    profiled_estimate(*args, case.input_tokens, case.output_tokens, 64)
    cold = time.perf_counter() - start
    grown = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024 - before
    start = time.perf_counter()
    for batch in range(65, 85):
        profiled_estimate(*args, case.input_tokens, case.output_tokens, batch)
    warm = (time.perf_counter() - start) / 20
    print(f"\ncost of one estimate ({case.id}):")
    print(f"  importing aiconfigurator_core (fresh interpreter)     {imported:8.2f} s")
    print(f"  importing calculator.capacity.profiled (no package)   {ours:8.2f} s  (the package is imported on use)")
    print(f"  first profiled estimate on {case.gpu}/{engine_family(case.engine)} in this run  {cold:8.2f} s  (tables)")
    print(f"  peak memory grown by that first estimate              {grown:8.0f} MiB")
    print(f"  warm profiled estimate, a new batch                   {warm * 1000:8.1f} ms")
    print(f"  roofline estimate of the same case (floor)            {roofline * 1000:8.1f} ms")


def main(argv: list[str] | None = None) -> None:
    args = sys.argv[1:] if argv is None else argv
    if not available():
        print("aiconfigurator-core is not installed: pip install 'inference-cost-calculator[profiled]'")
        return
    models, gpus = load_model_specs(), load_gpu_specs()
    results = check_cases(models, gpus, cases=load_cases())
    # first, while nothing of the package is loaded: the cold cost is what a user's first estimate pays
    probe = next((r.case for r in results if isinstance(covered(r.case, models, gpus), bool)), None)
    if probe is not None:
        costs(probe, models, gpus)
    started = time.perf_counter()
    pairs: list[Pair] = []
    skipped: dict[str, list[str]] = defaultdict(list)
    set_aside = 0
    for result in results:
        if not result.plausible:
            set_aside += 1
            continue
        answer = profiled_case(result.case, result.batch, models, gpus, "--engine-chunk" in args)
        if isinstance(answer, NotCovered):
            skipped[answer.reason].append(result.case.id)
            continue
        pairs.append(Pair(roofline=result, profiled=answer[0], engine_version=answer[1]))
    elapsed = time.perf_counter() - started
    print(
        f"{len(pairs)} of {len(results)} published cases covered by the profiled estimator ({set_aside} set aside: "
        f"measured above the roofline's 100% ceiling); {elapsed:.0f} s"
    )
    print("\nnot covered:")
    for reason, ids in sorted(skipped.items(), key=lambda kv: -len(kv[1])):
        print(f"  {len(ids):3d}  {reason}")
    if not pairs:
        return
    if "--cases" in args:
        print(f"\n  {'case':48} {'split':8} {'engine (profiled)':24} {'measured':>9} {'profiled':>9} {'roofline':>9}")
        for p in pairs:
            c = p.case
            print(
                f"  {c.id:48} {c.split:8} {p.engine_version:24} {c.measured:9.1f} {p.profiled:9.1f} "
                f"{p.roofline.estimate:9.1f}  ({p.profiled_error:+.0%} / {p.roofline.error:+.0%})"
            )
    table("all covered points, by split (roofline in-sample on 'fit')", pairs, lambda p: p.case.split)
    held = [p for p in pairs if p.case.split == "holdout"]
    medians = table("held-out points only (neither estimator saw them), by family", held, lambda p: _family(p, models))
    table("held-out points only, dense / MoE", held, lambda p: "moe" if p.roofline.moe else "dense")
    table("held-out points only, by source document", held, lambda p: _document(p.case.source.url or "no url"))
    table("every covered point (roofline in-sample on 'fit')", pairs, lambda p: "all")
    families = table("all covered points, by family (again, for the verdict)", pairs, lambda p: _family(p, models))
    print(
        f"\nverdict per family: held-out median |error| where the family has at least {MIN_VERDICT_POINTS} held-out "
        "points; else the profiled estimator wins only if it beats the roofline even on the points the roofline was "
        "fitted on (a comparison that favours the roofline)"
    )
    for name in sorted(families):
        points, prof, roof = medians.get(name, (0, 0.0, 0.0))
        if points >= MIN_VERDICT_POINTS:
            winner = "profiled" if prof < roof else "roofline"
            print(f"  {name:40} {winner:9} held out: profiled {prof:4.0%} vs roofline {roof:4.0%} on {points}")
            continue
        every, prof, roof = families[name]
        if every >= MIN_VERDICT_POINTS and prof < roof:
            print(
                f"  {name:40} {'profiled':9} in-sample: profiled {prof:4.0%} vs fitted roofline {roof:4.0%} on {every}"
            )
        else:
            print(f"  {name:40} {'roofline':9} too few held-out points ({points}); in-sample {prof:.0%} vs {roof:.0%}")


def _document(url: str) -> str:
    """A source URL shortened to the document a point came from: its site or repository and last two path parts."""
    parts = [p for p in url.split("/") if p]
    site = "/".join(parts[2:4]) if len(parts) > 3 and parts[1] == "github.com" else parts[1] if len(parts) > 1 else url
    return f"{site} .../{'/'.join(parts[-2:])}"[:40]


def covered(case: Case, models: ModelCatalog, gpus: GpuCatalog) -> bool | NotCovered:
    """Whether the case's GPU and engine are profiled, without loading any table (for the cost probe)."""
    found = system_for(gpus.get(case.gpu))
    if isinstance(found, NotCovered):
        return found
    engine = backend_for(case.engine)
    return engine if isinstance(engine, NotCovered) else not models.get(case.model).is_moe


if __name__ == "__main__":
    main()
