"""Every catalogue a comparison reads, loaded together: price sheets, GPU specs, records, model specs.

A folder left as None is the bundled one (``calculator/data/``); a user's own folder is read the same
way, so ``--sheets DIR`` and friends replace exactly the catalogue they name.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from calculator.catalog.gpus import GpuCatalog, load_gpu_specs
from calculator.catalog.measurements import RecordCatalog, load_records
from calculator.catalog.models import ModelCatalog, load_model_specs
from calculator.catalog.prices import PriceCatalog, load_price_sheets

__all__ = ["Catalogs", "load_catalogs"]


@dataclass(frozen=True)
class Catalogs:
    prices: PriceCatalog
    gpus: GpuCatalog
    records: RecordCatalog
    models: ModelCatalog = field(default_factory=load_model_specs)


def load_catalogs(
    sheets_dir: Path | None = None,
    gpus_dir: Path | None = None,
    records_dir: Path | None = None,
    models_dir: Path | None = None,
) -> Catalogs:
    return Catalogs(
        load_price_sheets(sheets_dir), load_gpu_specs(gpus_dir), load_records(records_dir), load_model_specs(models_dir)
    )
