"""Print the roofline estimate against each published measurement: in-sample (fit) and hold-out separately.

Run with ``.venv/bin/python benchmarks/roofline_check.py [--refit]``. The cases, their sources and their
split are in ``calculator/data/roofline_cases.yaml``. The efficiencies are the one default
:class:`RooflineAssumptions` (fitted to the ``fit`` cases); ``--refit`` fits them again (about 80 s) and says
whether the defaults still agree. The hold-out summary is the accuracy the estimate claims
(``calculator.capacity.calibration.estimate_error``, the band compare shows in money).
"""

from __future__ import annotations

import sys

from calculator.capacity.calibration import CaseResult, Split, check_cases, fit_assumptions, summarise
from calculator.capacity.roofline import DEFAULT_ASSUMPTIONS
from calculator.catalog.gpus import load_gpu_specs
from calculator.catalog.models import load_model_specs

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
    for r in results:
        if not r.plausible:
            print(
                f"  set aside: {r.case.id}: measured {r.case.measured:g} > ceiling {r.ceiling:.0f} (conditions wrong?)"
            )
    if "--refit" in argv:
        fitted = fit_assumptions(models, gpus)
        same = fitted == DEFAULT_ASSUMPTIONS.efficiencies_only()
        print(f"\nrefit on the fit split: {fitted!r}\ndefaults {'agree' if same else 'DIFFER: update roofline.py'}")


if __name__ == "__main__":
    main()
