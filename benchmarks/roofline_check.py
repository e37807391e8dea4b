"""Print the roofline estimate against each published measurement: in-sample (fit) and hold-out separately.

Run with ``.venv/bin/python benchmarks/roofline_check.py [--refit] [--per-engine] [--loso] [--stored]``. The cases,
their sources and their split are in ``calculator/data/roofline_cases.yaml``. The efficiencies are the one default
:class:`RooflineAssumptions` (fitted to the ``fit`` cases); ``--refit`` fits them again (a few seconds) and says
whether the defaults still agree. ``--per-engine`` runs the engine-as-input experiment: per engine
family (vLLM, SGLang, TensorRT-LLM) factors fitted on that family's ``fit`` cases only, in two forms (one speed
factor; every efficiency refitted), and prints the hold-out error before and after, overall and per family.
The hold-out summary is the accuracy the estimate claims
(``calculator.capacity.calibration.estimate_error``, the band compare shows in money). ``--loso`` prints the
leave-one-source-out error (one to two minutes; ``--plausible`` fits each fold over the bounded candidate grid
``calibration.PLAUSIBLE_GRID`` instead): every source (a publisher, ``calibration.source_of``) predicted
by efficiencies fitted on all the other sources' cases, both splits, by estimator, dense/MoE, GPU
architecture, run kind, engine family and source, beside the issue's targets (median <= 12%, p90 <= 30%,
worst <= 60% on >= 150 points, >= 60 MoE). ``--stored`` prints the residuals ``make data`` stored for both
estimators and for ``auto`` (the estimator each family's answers come from), without refitting.
"""

from __future__ import annotations

import statistics
import sys
import time
from collections.abc import Mapping

from calculator.capacity.calibration import (
    ENGINE_FAMILIES,
    FIT_GRID,
    MIN_ENGINE_FIT_CASES,
    MIN_ENGINE_FIT_SOURCES,
    PLAUSIBLE_GRID,
    CaseResult,
    EngineFamily,
    ErrorSummary,
    Split,
    check_cases,
    engine_family,
    fit_assumptions,
    fit_engine_assumptions,
    loso_residuals,
    same_inputs,
    summarise,
)
from calculator.capacity.roofline import DEFAULT_ASSUMPTIONS, RooflineAssumptions
from calculator.catalog.gpus import GpuCatalog, load_gpu_specs
from calculator.catalog.models import ModelCatalog, load_model_specs

HEADER = (
    f"{'case':44} {'kind':16} {'batch':>6} {'bound':8} {'measured':>10} {'estimate':>10} {'error':>7} {'ceiling':>10}"
)


def _table(title: str, results: list[CaseResult]) -> None:
    print(f"\n{title}\n{HEADER}\n{'-' * len(HEADER)}")
    for r in results:
        c = r.case
        print(
            f"{c.id:44} {c.kind:16} {r.batch:6d} {r.bound:8} {c.measured:10.1f} {r.estimate:10.1f} {r.error:+7.0%}"
            f" {r.ceiling:10.1f}{'' if r.plausible else '  <- measured beats the 100% ceiling'}"
        )


def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    models, gpus = load_model_specs(), load_gpu_specs()
    results = check_cases(models, gpus, DEFAULT_ASSUMPTIONS)
    print("assumptions: " + "; ".join(DEFAULT_ASSUMPTIONS.notes()))
    splits: tuple[tuple[Split, str, str], ...] = (
        ("fit", "IN-SAMPLE (fit)", "in-sample"),
        ("holdout", "HOLD-OUT (never seen by the fit)", "hold-out"),
    )
    for split, title, _ in splits:
        _table(title, [r for r in results if r.case.split == split])
    print()
    for split, _, name in splits:
        s = summarise(results, split)
        print(
            f"{name}: {s.points} points ({s.moe_points} mixture-of-experts), {s.set_aside} set aside: "
            f"median |error| {s.median_abs:.0%}, worst {s.worst_abs:.0%}, 10th-90th percentile "
            f"{s.low:+.0%} to {s.high:+.0%}"
        )
    holdout = summarise(results, "holdout")
    met = holdout.median_abs <= 0.10 and holdout.worst_abs <= 0.25 and holdout.points >= 40 and holdout.moe_points >= 10
    print(f"target (hold-out median <= 10%, worst <= 25%, >= 40 points, >= 10 MoE): {'met' if met else 'NOT met'}")
    # What no estimate from these inputs can remove: the same setup measured apart on one page.
    spread = same_inputs(results, "holdout")
    if spread:
        print(
            "hold-out cases with the same inputs measured apart (the least worst |error| any one estimate has on them):"
        )
        for g in spread:
            print(f"  {g.lowest:8.1f} .. {g.highest:8.1f}  {g.least_worst_error:4.0%}  {', '.join(g.ids)}")
    for r in results:
        if not r.plausible:
            print(
                f"  set aside: {r.case.id}: measured {r.case.measured:g} > ceiling {r.ceiling:.0f} (conditions wrong?)"
            )
    if "--refit" in argv:
        fitted = fit_assumptions(models, gpus)
        same = fitted == DEFAULT_ASSUMPTIONS.efficiencies_only()
        print(f"\nrefit on the fit split: {fitted!r}\ndefaults {'agree' if same else 'DIFFER: update roofline.py'}")
    if "--per-engine" in argv:
        per_engine(models, gpus)
    if "--loso" in argv:
        loso(models, gpus, PLAUSIBLE_GRID if "--plausible" in argv else FIT_GRID)
    if "--stored" in argv:
        stored()


def stored() -> None:
    """The residuals ``make data`` stored, by estimator (``auto``: each case from the estimator ``auto`` picks for
    its family), dense / MoE and the finest family, beside the targets: what every estimate's band is read from."""
    from calculator.capacity.calibration import Residual, family_error
    from calculator.capacity.error_bands import load_error_bands

    bands = load_error_bands()
    print(f"\nSTORED RESIDUALS (calculator/data/error_bands.json; roofline: {bands.file.roofline_fit_set})")
    print(
        f"  {'estimator / family':44} {'points':>6} {'sources':>7} {'median':>7} {'p90':>6} {'worst':>7} {'signed':>7}"
    )
    sets: dict[str, tuple[Residual, ...]] = {
        "roofline": bands.residuals("roofline"),
        "profiled": bands.residuals("profiled"),
        "auto": bands.auto_residuals(),
    }
    for name, rs in sets.items():
        groups: dict[str, list[Residual]] = {"all": list(rs)}
        for r in rs:
            groups.setdefault("moe" if r.moe else "dense", []).append(r)
        for family, group in groups.items():
            e = family_error(group)
            print(
                f"  {name + ' / ' + family:44} {e.points:6d} {e.sources:7d} {e.median_abs:7.0%} {e.p90_abs:6.0%}"
                f" {e.worst_abs:7.0%} {e.median:+7.0%}"
            )
    print("\nauto's choice per family")
    for v in bands.verdicts().values():
        print(f"  {v.family:34} {v.estimator:9} {v.reason}")
    every = family_error(list(sets["auto"]))
    print(
        f"\nauto, leave one source out: median {every.median_abs:.0%}, p90 {every.p90_abs:.0%}, worst "
        f"{every.worst_abs:.0%} on {every.points} points; target median <= 12%, p90 <= 30%, worst <= 60%"
    )


LOSO_TARGET = {"median": 0.12, "p90": 0.30, "worst": 0.60, "points": 150, "moe": 60}


def loso(models: ModelCatalog, gpus: GpuCatalog, grid: Mapping[str, tuple[float, ...]]) -> None:
    """The leave-one-source-out error, by every family label, each fold fitted over ``grid``."""
    started = time.perf_counter()
    result = loso_residuals(models, gpus, grid=grid)
    seconds = time.perf_counter() - started
    name = "PLAUSIBLE_GRID" if grid is PLAUSIBLE_GRID else "FIT_GRID"
    print(f"\nLEAVE ONE SOURCE OUT ({seconds:.0f} s, over {name}): {result.fit_set}")
    if result.set_aside:
        print(f"  set aside (measured beats the 100% ceiling): {', '.join(result.set_aside)}")
    head = f"  {'family':44} {'points':>6} {'sources':>7} {'median':>7} {'p90':>6} {'worst':>7} {'signed':>7}"
    for label, families in result.summary().items():
        print(f"\nby {label}\n{head}")
        for name, e in families.items():
            print(
                f"  {name:44} {e.points:6d} {e.sources:7d} {e.median_abs:7.0%} {e.p90_abs:6.0%} {e.worst_abs:7.0%}"
                f" {e.median:+7.0%}"
            )
    every = result.by("all")["all"]
    moe = result.by("moe").get("moe")
    met = (
        every.median_abs <= LOSO_TARGET["median"]
        and every.p90_abs <= LOSO_TARGET["p90"]
        and every.worst_abs <= LOSO_TARGET["worst"]
        and every.points >= LOSO_TARGET["points"]
        and moe is not None
        and moe.points >= LOSO_TARGET["moe"]
    )
    print(
        f"\nleave-one-source-out: {every.points} points ({moe.points if moe else 0} mixture-of-experts) from "
        f"{every.sources} sources: median |error| {every.median_abs:.0%}, p90 {every.p90_abs:.0%}, worst "
        f"{every.worst_abs:.0%}"
    )
    print(
        "target (median <= 12%, p90 <= 30%, worst <= 60%, >= 150 points, >= 60 MoE): " + ("met" if met else "NOT met")
    )
    for source, a in result.folds.items():
        changed = {k: v for k, v in a.model_dump().items() if v != getattr(DEFAULT_ASSUMPTIONS, k)}
        print(f"  fold without {source}: {changed or 'the shipped defaults'}")


def _row(label: str, s: ErrorSummary) -> str:
    if not s.points:
        return f"  {label:34} {'-':>6}"
    return f"  {label:34} {s.points:6d} {s.median_abs:8.0%} {s.worst_abs:7.0%} {s.low:+8.0%} {s.high:+8.0%}"


def per_engine(models: ModelCatalog, gpus: GpuCatalog) -> None:
    """The engine-as-input experiment: per-family factors fitted on the fit split, judged on the hold-out."""
    shared = DEFAULT_ASSUMPTIONS.efficiencies_only()
    variants: dict[str, Mapping[EngineFamily, RooflineAssumptions]] = {
        "before: shared efficiencies": {},
        "after: one speed factor per family": fit_engine_assumptions(models, gpus, shared, "speed"),
        "after: all efficiencies per family": fit_engine_assumptions(models, gpus, shared, "all"),
    }
    print(
        f"\nPER-ENGINE EXPERIMENT (factors fitted on each family's fit cases only; a family with fewer than "
        f"{MIN_ENGINE_FIT_CASES} plausible fit cases or {MIN_ENGINE_FIT_SOURCES} source documents keeps the "
        f"shared efficiencies)"
    )
    for name, fitted in variants.items():
        for family in ENGINE_FAMILIES:
            if family in fitted:
                a = fitted[family]
                changed = {k: v for k, v in a.model_dump().items() if v != getattr(shared, k)}
                print(f"  {name}: {family}: {changed or 'no change from shared'}")
            elif name != "before: shared efficiencies":
                print(f"  {name}: {family}: too few fit cases, keeps the shared efficiencies")
    head = f"  {'':34} {'points':>6} {'median':>8} {'worst':>7} {'p10':>8} {'p90':>8}"
    for name, fitted in variants.items():
        results = check_cases(models, gpus, shared, per_engine=fitted)
        if not fitted:
            by_document(results)
        print(f"\n{name}\n{head}")
        for split in ("fit", "holdout"):
            split_results = [r for r in results if r.case.split == split]
            print(_row(f"{split}: all", summarise(split_results, split)))
            for family in ENGINE_FAMILIES:
                mine = [r for r in split_results if engine_family(r.case.engine) == family]
                print(_row(f"{split}: {family}", summarise(mine, split)))


def _document(url: str) -> str:
    """A short name for a source document: its host, the path's first part (a GitHub owner) and its last two."""
    host, _, path = url.removeprefix("https://").partition("/")
    parts = [p for p in path.split("/") if p]
    return "/".join([host.removeprefix("www."), *parts[:1], "..", *parts[-2:]] if len(parts) > 3 else [host, *parts])


def by_document(results: list[CaseResult]) -> None:
    """Hold-out signed errors by engine family and source document: whether the error follows the engine
    or the setup."""
    print("\nhold-out signed error by engine family and source document (shared efficiencies)")
    print(f"  {'family':13} {'document':64} {'points':>6} {'median':>7} {'min':>7} {'max':>7}")
    groups: dict[tuple[str, str], list[float]] = {}
    for r in results:
        if r.case.split == "holdout" and r.plausible:
            key = (engine_family(r.case.engine) or "other", _document(r.case.source.url or "no url"))
            groups.setdefault(key, []).append(r.error)
    for (family, doc), errors in sorted(groups.items()):
        mid = statistics.median(errors)
        print(f"  {family:13} {doc:64} {len(errors):6d} {mid:+7.0%} {min(errors):+7.0%} {max(errors):+7.0%}")


if __name__ == "__main__":
    main()
