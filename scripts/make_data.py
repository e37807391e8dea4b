"""Write the derived data files the package reads at run time: ``make data``.

Today one file: ``calculator/data/error_bands.json``, every estimator's error on the published cases it was not
fitted to (:mod:`calculator.capacity.residuals`). Run it after changing the cases, the model or GPU catalogues or
the estimators' code; the test suite fails while the stored digest is stale. Several minutes on two cores.
"""

from __future__ import annotations

import time

from calculator.capacity.error_bands import BANDS_PATH, ErrorBands
from calculator.capacity.residuals import write_error_bands


def main() -> None:
    started = time.perf_counter()
    band = write_error_bands()
    bands = ErrorBands(file=band)
    counts = {e: len(bands.residuals(e)) for e in ("roofline", "profiled")}
    print(f"wrote {BANDS_PATH} in {time.perf_counter() - started:.0f} s: {counts}")
    for verdict in bands.verdicts().values():
        print(f"  {verdict.family:32} {verdict.estimator:9} {verdict.reason}")


if __name__ == "__main__":
    main()
