"""Print the roofline estimate against each published measurement, with the error.

Run with ``.venv/bin/python benchmarks/roofline_check.py``. The cases and their sources are in
``calculator/data/roofline_cases.yaml``; ``tests/test_capacity.py`` holds the tolerance we claim and
``tests/test_roofline.py`` that this script runs. The efficiencies are the one default
:class:`RooflineAssumptions`, the same ones sizing splits measured records with.
"""

from __future__ import annotations

import statistics

from calculator.capacity.calibration import check_cases
from calculator.capacity.roofline import DEFAULT_ASSUMPTIONS
from calculator.catalog.gpus import load_gpu_specs
from calculator.catalog.models import load_model_specs


def main() -> None:
    results = check_cases(load_model_specs(), load_gpu_specs(), DEFAULT_ASSUMPTIONS)
    print("assumptions: " + "; ".join(DEFAULT_ASSUMPTIONS.notes()) + "\n")
    header = (
        f"{'case':36} {'kind':16} {'batch':>6} {'bound':8} {'measured':>10} {'estimate':>10} {'error':>7}"
        f" {'ceiling':>10}"
    )
    print(header)
    print("-" * len(header))
    for r in results:
        c = r.case
        print(
            f"{c.id:36} {c.kind:16} {r.batch:6d} {r.bound:8} {c.measured:10.1f} {r.estimate:10.1f} {r.error:+7.0%}"
            f" {r.ceiling:10.1f}{'' if r.plausible else '  <- measured beats the 100% ceiling'}"
        )
    kept = [r for r in results if r.plausible]
    errors = [abs(r.error) for r in kept]
    print(
        f"\n{len(kept)} of {len(results)} cases consistent with their stated conditions: "
        f"median |error| {statistics.median(errors):.0%}, worst {max(errors):.0%}"
    )
    for r in results:
        if not r.plausible:
            print(
                f"  set aside: {r.case.id}: measured {r.case.measured:g} > ceiling {r.ceiling:.0f} (conditions wrong?)"
            )


if __name__ == "__main__":
    main()
