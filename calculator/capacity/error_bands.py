"""How far off each estimator is on published measurements it never saw, by family, read from a file built once.

An estimate of a setup nobody measured is only as good as its estimator is on setups somebody did measure. For
each estimator this module keeps the signed error on every published case (``calculator/data/roofline_cases.yaml``)
it was not fitted to:

- ``roofline``: leave one source out (:func:`calculator.capacity.calibration.loso_residuals`): each publisher's
  cases estimated by efficiencies fitted on every other publisher's;
- ``profiled``: AIConfigurator's tables (:mod:`calculator.capacity.profiled`) on every case they cover; nothing is
  fitted to the cases, so every point is held out.

From these residuals come the error band of an estimate (the 10th to 90th percentile of its family's signed
errors) and the choice ``auto`` makes: the profiled estimator answers a family (dense or mixture-of-experts x GPU
architecture x engine) only where it beats the roofline on the same held-out points.

The residuals take minutes to compute (one fit per source, the profiled tables per GPU and engine), so ``make
data`` writes them to ``calculator/data/error_bands.json`` with a digest of everything they depend on (the cases,
the model and GPU catalogues, the estimators' code, the profiled package's version); the test suite checks that
the digest is current, and the package only reads the file.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Sequence
from functools import cache
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict

from calculator.capacity.calibration import (
    CASES_PATH,
    Architecture,
    EstimateError,
    Estimator,
    FamilyError,
    Residual,
    family_error,
    gpu_architecture,
)
from calculator.catalog.datafile import DATA_DIR
from calculator.errors import InputError

__all__ = [
    "BANDS_PATH",
    "MIN_BAND_POINTS",
    "MIN_VERDICT_POINTS",
    "ErrorBands",
    "Family",
    "Verdict",
    "inputs_digest",
    "load_error_bands",
]

BANDS_PATH = DATA_DIR / "error_bands.json"

MIN_BAND_POINTS = 10
"""Fewest residuals a family needs for its own band; a smaller family takes the next coarser one's (engine
dropped, then the GPU architecture, then dense or mixture-of-experts): ten points put the 10th and 90th
percentiles on real cases, not on one outlier."""

MIN_VERDICT_POINTS = 5
"""Fewest points both estimators answered before the profiled estimator may be preferred for a family: with
fewer, one case decides."""

_CAPACITY = Path(__file__).resolve().parent
_DEPENDS_ON: tuple[Path, ...] = (
    CASES_PATH,
    DATA_DIR / "models",
    DATA_DIR / "gpu_specs",
    *(_CAPACITY / f"{name}.py" for name in ("calibration", "memo", "memory", "profiled", "residuals", "roofline")),
    _CAPACITY.parent / "catalog" / "models.py",
    _CAPACITY.parent / "catalog" / "gpus.py",
)
"""What the residuals are computed from (the modules ``residuals`` imports, with the catalogues they read): a
change to any of these makes the stored file stale."""


class Family(BaseModel):
    """Which family an estimate belongs to: the labels its error is reported by."""

    model_config = ConfigDict(frozen=True)

    moe: bool
    architecture: Architecture
    engine: str
    """The engine family (``vllm``, ``sglang``, ``tensorrt-llm``) or ``other``."""

    @property
    def levels(self) -> tuple[str, ...]:
        """The family's names from the finest to the coarsest: ``moe/hopper/vllm``, ``moe/hopper``, ``moe``,
        ``all``."""
        kind = "moe" if self.moe else "dense"
        return (f"{kind}/{self.architecture}/{self.engine}", f"{kind}/{self.architecture}", kind, "all")

    @staticmethod
    def of(moe: bool, gpu_id: str, engine: str | None) -> Family:
        from calculator.capacity.calibration import engine_family

        return Family(moe=moe, architecture=gpu_architecture(gpu_id), engine=engine_family(engine or "") or "other")


def _level(r: Residual, depth: int) -> str:
    return Family(moe=r.moe, architecture=r.architecture, engine=r.engine).levels[depth]


class Verdict(BaseModel):
    """Which estimator answers a family under ``auto``, and the figures that decided it."""

    model_config = ConfigDict(frozen=True)

    family: str
    estimator: Estimator
    points: int
    """Cases both estimators answered in this family."""
    profiled_median_abs: float | None
    roofline_median_abs: float | None
    reason: str


class BandFile(BaseModel):
    """The file ``make data`` writes."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    schema_version: Literal[1]
    inputs_digest: str
    roofline_fit_set: str
    profiled_version: str | None
    """The ``aiconfigurator-core`` release the profiled residuals came from; None when it was not installed."""
    residuals: tuple[Residual, ...]


class ErrorBands(BaseModel):
    """The stored residuals of every estimator, and the bands and choices they give."""

    model_config = ConfigDict(frozen=True)

    file: BandFile

    def residuals(self, estimator: Estimator) -> tuple[Residual, ...]:
        return tuple(r for r in self.file.residuals if r.estimator == estimator)

    def family_errors(self, estimator: Estimator, depth: int) -> dict[str, FamilyError]:
        """The errors of one estimator by family at ``depth`` (0: kind/architecture/engine ... 3: all)."""
        groups: dict[str, list[Residual]] = {}
        for r in self.residuals(estimator):
            groups.setdefault(_level(r, depth), []).append(r)
        return {k: family_error(v) for k, v in sorted(groups.items())}

    def band(self, estimator: Estimator, family: Family) -> EstimateError:
        """The error band the estimator's residuals put on an estimate of ``family``: the finest level of the
        family with at least :data:`MIN_BAND_POINTS` residuals, named in the provenance."""
        mine = self.residuals(estimator)
        if not mine:
            raise InputError(
                "estimator", f"no published-measurement residuals are stored for the {estimator} estimator"
            )
        for depth, name in enumerate(family.levels):
            group = [r for r in mine if _level(r, depth) == name]
            if len(group) >= MIN_BAND_POINTS or name == "all":
                return _band(estimator, name, group, self.file)
        raise AssertionError("unreachable: the 'all' level takes every residual")

    def verdicts(self) -> dict[str, Verdict]:
        """Per finest family with residuals of both estimators: which one ``auto`` uses there."""
        profiled = {r.case_id: r for r in self.residuals("profiled")}
        pairs: dict[str, list[tuple[Residual, Residual]]] = {}
        for r in self.residuals("roofline"):
            if r.case_id in profiled:
                pairs.setdefault(_level(r, 0), []).append((r, profiled[r.case_id]))
        found: dict[str, Verdict] = {}
        for name, both in sorted(pairs.items()):
            roof_e = family_error([a for a, _ in both])
            prof_e = family_error([b for _, b in both])
            roof, prof = roof_e.median_abs, prof_e.median_abs
            if len(both) < MIN_VERDICT_POINTS:
                estimator: Estimator = "roofline"
                reason = f"{len(both)} published points both estimators answered, fewer than {MIN_VERDICT_POINTS}"
            else:
                # a lower median bought with a longer tail is no win: a bill is sized on the bad cases too
                wins = prof < roof and prof_e.p90_abs <= roof_e.p90_abs
                estimator = "profiled" if wins else "roofline"
                reason = (
                    f"|error| on {len(both)} published points neither was fitted to: profiled median {prof:.0%}, "
                    f"p90 {prof_e.p90_abs:.0%}; roofline (leave one source out) median {roof:.0%}, p90 "
                    f"{roof_e.p90_abs:.0%}"
                )
            found[name] = Verdict(
                family=name, estimator=estimator, points=len(both), profiled_median_abs=prof,
                roofline_median_abs=roof, reason=reason,
            )  # fmt: skip
        return found

    def auto_residuals(self) -> tuple[Residual, ...]:
        """Each case's residual from the estimator ``auto`` picks for its family: the error the default answers
        carry on published points (the verdicts are read on these same points, so this flatters ``auto`` a little
        where a family's two estimators are close)."""
        verdicts = self.verdicts()
        profiled = {r.case_id: r for r in self.residuals("profiled")}
        chosen = []
        for r in self.residuals("roofline"):
            verdict = verdicts.get(_level(r, 0))
            use_profiled = verdict is not None and verdict.estimator == "profiled" and r.case_id in profiled
            chosen.append(profiled[r.case_id] if use_profiled else r)
        return tuple(chosen)

    def choose(self, family: Family) -> Verdict:
        """The estimator ``auto`` uses for ``family``: the profiled one only where it won on held-out points, lower
        median and no longer tail (90th percentile of |error|)."""
        name = family.levels[0]
        verdict = self.verdicts().get(name)
        if verdict is None:
            return Verdict(
                family=name, estimator="roofline", points=0, profiled_median_abs=None, roofline_median_abs=None,
                reason="no published point of this family was estimated by both estimators",
            )  # fmt: skip
        return verdict


def _band(estimator: Estimator, name: str, group: Sequence[Residual], file: BandFile) -> EstimateError:
    e = family_error(group)
    how = (
        "leave one source out, each predicted by a fit on the others"
        if estimator == "roofline"
        else f"AIConfigurator {file.profiled_version or ''} tables, fitted to none".replace("  ", " ")
    )
    return EstimateError.of_family(
        e,
        sum(r.moe for r in group),
        (
            f"{estimator} on {e.points} published measurements of {name} setups from {e.sources} sources ({how}): "
            f"median |error| {e.median_abs:.0%}, p90 {e.p90_abs:.0%}, worst {e.worst_abs:.0%}; band = 10th-90th "
            f"percentile ({CASES_PATH.name})"
        ),
    )


def _files(paths: Iterable[Path]) -> list[Path]:
    found: list[Path] = []
    for p in paths:
        if p.is_dir():
            found.extend(sorted(q for q in p.rglob("*") if q.is_file() and "__pycache__" not in q.parts))
        elif p.is_file():
            found.append(p)
    return found


def inputs_digest(profiled_version: str | None) -> str:
    """A digest of everything the residuals depend on: change any of it and ``make data`` must run again."""
    h = hashlib.sha256()
    root = DATA_DIR.parent
    for p in _files(_DEPENDS_ON):
        if p.suffix not in {".py", ".yaml", ".yml", ".json"}:
            continue
        h.update(str(p.relative_to(root)).encode())
        h.update(b"\0")
        h.update(p.read_bytes())
        h.update(b"\0")
    h.update(f"aiconfigurator-core {profiled_version}".encode())
    return h.hexdigest()


@cache
def load_error_bands(path: Path | None = None) -> ErrorBands:
    """The stored residuals (``make data`` writes them); a missing or broken file is a named error."""
    where = path or BANDS_PATH
    try:
        raw = json.loads(where.read_text(encoding="utf-8"))
        return ErrorBands(file=BandFile.model_validate(raw))
    except (OSError, ValueError) as exc:
        raise InputError("error_bands", f"{where.name} cannot be read ({exc}); run `make data` to write it") from None
