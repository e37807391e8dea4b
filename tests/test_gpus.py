"""GPU specs: the bundled files load, hold dense (not sparse) figures, and broken files fail clearly."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from calculator.catalog.datafile import DataFileError
from calculator.catalog.gpus import (
    DEFAULT_GPU_DIR,
    PRECISIONS,
    GpuCatalog,
    GpuSpec,
    load_gpu_file,
    load_gpu_specs,
)
from calculator.catalog.prices import Source
from calculator.errors import InputError

from .clock import TODAY

# GPU ids that price sheets refer to; renaming one breaks them.
REQUIRED_IDS = {
    "h100-sxm",
    "h100-pcie",
    "h100-nvl",
    "h200-sxm",
    "h200-nvl",
    "b200",
    "a100-40gb",
    "a100-80gb-sxm",
    "a100-80gb-pcie",
    "l40s",
    "l4",
    "a10g",
    "a10",
    "mi300x",
    "gh200",
}

VALID = """\
schema_version: 1
family: {family}
gpus:
  - id: {gpu_id}
    name: Test GPU
    vendor: nvidia
    memory_gb: 80
    memory_bandwidth_tbs: 3.35
    bf16_dense_tflops: 989.5
    fp8_dense_tflops: 1979
    interconnect: NVLink 4
    form_factor: sxm
    source:
      url: https://example.com/datasheet
      read: 2026-11-29
"""


def valid_text(family: str = "testgpu", gpu_id: str = "test-gpu") -> str:
    return VALID.format(family=family, gpu_id=gpu_id)


def write(directory: Path, name: str, text: str) -> Path:
    path = directory / f"{name}.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def line_of(text: str, marker: str) -> int:
    """1-based number of the first line containing ``marker``."""
    return next(i for i, line in enumerate(text.splitlines(), start=1) if marker in line)


def load_error(directory: Path) -> str:
    with pytest.raises(DataFileError) as info:
        load_gpu_specs(directory)
    return str(info.value)


@pytest.fixture(scope="module")
def catalog() -> GpuCatalog:
    return load_gpu_specs()


def spec(**changes: object) -> GpuSpec:
    fields: dict[str, object] = {
        "id": "x",
        "name": "X",
        "vendor": "nvidia",
        "memory_gb": 80,
        "memory_bandwidth_tbs": 2.0,
        "bf16_dense_tflops": 100,
        "interconnect": "PCIe",
        "form_factor": "pcie",
        "source": Source(url="https://example.com", read=dt.date(2026, 11, 29)),
    }
    fields.update(changes)
    return GpuSpec.model_validate(fields)


# --- the bundled files ------------------------------------------------------------------------


def test_every_bundled_file_loads_and_declares_the_schema() -> None:
    paths = sorted(DEFAULT_GPU_DIR.glob("*.yaml"))
    assert paths, "no GPU spec files bundled"
    for path in paths:
        spec_file = load_gpu_file(path)
        assert spec_file.family == path.stem
        assert path.read_text(encoding="utf-8").splitlines()[0] == "# yaml-language-server: $schema=.schema.json"


def test_catalog_holds_every_gpu_the_price_sheets_name(catalog: GpuCatalog) -> None:
    assert set(catalog.ids) >= REQUIRED_IDS


def test_every_bundled_gpu_cites_a_dated_source(catalog: GpuCatalog) -> None:
    for gpu in catalog.gpus:
        assert gpu.source.url or gpu.source.document, gpu.id
        assert gpu.source.read <= TODAY, gpu.id


def test_h100_sxm_stores_dense_not_sparse_tflops(catalog: GpuCatalog) -> None:
    h100 = catalog.get("h100-sxm")
    # Independently known: 989 TFLOP/s BF16 and 1,979 FP8 dense; the datasheet prints 1,979 / 3,958 sparse.
    assert h100.dense_tflops("bf16") == pytest.approx(989, abs=1)
    assert h100.dense_tflops("fp8") == pytest.approx(1979, abs=1)
    assert h100.memory_gb == 80
    assert h100.memory_bandwidth_tbs == pytest.approx(3.35)


def test_h200_has_141_gb_at_4_8_tbs_and_h100_compute(catalog: GpuCatalog) -> None:
    h200, h100 = catalog.get("h200-sxm"), catalog.get("h100-sxm")
    assert h200.memory_gb == 141
    assert h200.memory_bandwidth_tbs == pytest.approx(4.8)
    assert h200.bf16_dense_tflops == h100.bf16_dense_tflops
    assert h200.fp8_dense_tflops == h100.fp8_dense_tflops


@pytest.mark.parametrize(
    ("gpu_id", "bf16", "fp8"),
    [
        ("h100-pcie", 756, 1513),
        ("h100-nvl", 835, 1671),
        ("h200-nvl", 835, 1671),
        ("l40s", 362, 733),
        ("l4", 121, 242),
        ("b200", 2250, 4500),
        ("gh200", 989, 1979),
        ("mi300x", 1307, 2615),
    ],
)
def test_other_gpus_store_dense_figures(catalog: GpuCatalog, gpu_id: str, bf16: float, fp8: float) -> None:
    gpu = catalog.get(gpu_id)
    assert gpu.dense_tflops("bf16") == pytest.approx(bf16, abs=1.5)
    assert gpu.dense_tflops("fp8") == pytest.approx(fp8, abs=1.5)


def test_nvidia_fp8_is_twice_bf16_where_both_exist(catalog: GpuCatalog) -> None:
    # Dense FP8 is 2x dense BF16 on Hopper, Ada and Blackwell; a sparse figure on one side breaks this.
    for gpu in catalog.gpus:
        if gpu.vendor == "nvidia" and gpu.fp8_dense_tflops is not None:
            assert gpu.fp8_dense_tflops / gpu.bf16_dense_tflops == pytest.approx(2, rel=0.03), gpu.id


def test_only_blackwell_has_fp4(catalog: GpuCatalog) -> None:
    assert [g.id for g in catalog.gpus if g.fp4_dense_tflops is not None] == ["b200"]
    assert catalog.get("b200").dense_tflops("fp4") == pytest.approx(9000)


def test_a100_has_no_fp8_so_fp8_runs_at_bf16_rate(catalog: GpuCatalog) -> None:
    for gpu_id in ("a100-40gb", "a100-80gb-sxm", "a100-80gb-pcie", "a10", "a10g"):
        gpu = catalog.get(gpu_id)
        assert gpu.fp8_dense_tflops is None
        assert gpu.effective_precision("fp8") == "bf16"
        assert gpu.dense_tflops("fp8") == gpu.dense_tflops("bf16")
    assert catalog.get("a100-80gb-sxm").dense_tflops("fp8") == pytest.approx(312)


def test_a100_int8_uses_its_own_rate(catalog: GpuCatalog) -> None:
    a100 = catalog.get("a100-80gb-sxm")
    assert a100.effective_precision("int8") == "int8"
    assert a100.dense_tflops("int8") == pytest.approx(624)


def test_int4_weights_multiply_at_the_bf16_rate_on_every_gpu(catalog: GpuCatalog) -> None:
    """The capacity page offers int4 weights (the memory table has them); the rate table once refused the name."""
    h100 = catalog.get("h100-sxm")
    assert h100.dense_tflops("int4") == pytest.approx(989.5)  # BF16 dense (1,979 sparse / 2), not FP8
    for gpu_id in catalog.ids:
        gpu = catalog.get(gpu_id)
        assert gpu.effective_precision("int4") == "bf16"


def test_uncertain_figures_are_marked(catalog: GpuCatalog) -> None:
    a10g = catalog.get("a10g")
    assert a10g.is_uncertain("bf16_dense_tflops")
    assert a10g.notes is not None and "UNCERTAIN" in a10g.notes
    b200 = catalog.get("b200")
    assert b200.memory_gb == 180
    assert b200.is_uncertain("memory_gb")
    assert b200.notes is not None and "192" in b200.notes
    assert not catalog.get("h100-sxm").uncertain


# --- dense_tflops and lookups ---------------------------------------------------------------


def test_fp16_runs_at_bf16_rate_and_names_are_case_insensitive(catalog: GpuCatalog) -> None:
    h100 = catalog.get("h100-sxm")
    assert h100.dense_tflops("fp16") == h100.dense_tflops("bf16") == h100.dense_tflops("BFloat16")
    assert h100.dense_tflops("FP8") == h100.dense_tflops("fp8")
    assert catalog.get("b200").dense_tflops("NVFP4") == catalog.get("b200").dense_tflops("fp4")


def test_fp4_without_fp4_runs_at_fp8_then_bf16_rate(catalog: GpuCatalog) -> None:
    h100, a100 = catalog.get("h100-sxm"), catalog.get("a100-80gb-sxm")
    assert h100.effective_precision("fp4") == "fp8"
    assert h100.dense_tflops("fp4") == h100.dense_tflops("fp8")
    assert a100.effective_precision("fp4") == "bf16"
    assert a100.dense_tflops("fp4") == a100.dense_tflops("bf16")


def test_unknown_precision_is_an_input_error_naming_the_choices(catalog: GpuCatalog) -> None:
    with pytest.raises(InputError) as info:
        catalog.get("h100-sxm").dense_tflops("fp64")
    assert info.value.field == "precision"
    assert "fp64" in info.value.message and "bf16" in info.value.message


def test_unknown_gpu_is_an_input_error_listing_known_ids(catalog: GpuCatalog) -> None:
    with pytest.raises(InputError) as info:
        catalog.get("h900")
    assert info.value.field == "gpu"
    assert info.value.message.startswith("unknown GPU 'h900'; known: ")
    assert "h100-sxm" in info.value.message and "mi300x" in info.value.message


def test_lookup_ignores_case_and_spaces(catalog: GpuCatalog) -> None:
    assert catalog.get(" H100-SXM ").id == "h100-sxm"
    assert "H200-NVL" in catalog
    assert "h900" not in catalog


@given(
    bf16=st.floats(min_value=1, max_value=10_000),
    fp8_factor=st.one_of(st.none(), st.floats(min_value=1, max_value=4)),
    fp4_factor=st.one_of(st.none(), st.floats(min_value=1, max_value=4)),
)
def test_lower_precision_is_never_slower(bf16: float, fp8_factor: float | None, fp4_factor: float | None) -> None:
    fp8 = None if fp8_factor is None else bf16 * fp8_factor
    fp4 = None if fp4_factor is None else (fp8 or bf16) * fp4_factor
    gpu = spec(bf16_dense_tflops=bf16, fp8_dense_tflops=fp8, fp4_dense_tflops=fp4)
    rates = [gpu.dense_tflops(p) for p in ("bf16", "fp8", "fp4")]
    assert rates == sorted(rates)
    assert all(gpu.dense_tflops(p) > 0 for p in PRECISIONS)


# --- broken files -----------------------------------------------------------------------------


def test_missing_field_names_file_line_and_field(tmp_path: Path) -> None:
    text = valid_text().replace("    bf16_dense_tflops: 989.5\n", "")
    path = write(tmp_path, "testgpu", text)
    message = load_error(tmp_path)
    assert f"{path}:{line_of(text, '- id: test-gpu')}: gpus.0[test-gpu].bf16_dense_tflops: required field" in message


def test_unknown_field_names_file_line_and_field(tmp_path: Path) -> None:
    text = valid_text().replace("    interconnect:", "    bandwith_tbs: 3.35\n    interconnect:")
    path = write(tmp_path, "testgpu", text)
    message = load_error(tmp_path)
    assert f"{path}:{line_of(text, 'bandwith_tbs')}: gpus.0[test-gpu].bandwith_tbs: unknown field" in message


def test_negative_bandwidth_names_file_line_and_field(tmp_path: Path) -> None:
    text = valid_text().replace("memory_bandwidth_tbs: 3.35", "memory_bandwidth_tbs: -3.35")
    path = write(tmp_path, "testgpu", text)
    message = load_error(tmp_path)
    where = f"{path}:{line_of(text, 'memory_bandwidth_tbs')}: gpus.0[test-gpu].memory_bandwidth_tbs: "
    assert where + "Input should be greater than 0" in message


def test_quoted_number_is_refused(tmp_path: Path) -> None:
    text = valid_text().replace("memory_gb: 80", 'memory_gb: "80"')
    path = write(tmp_path, "testgpu", text)
    assert f"{path}:{line_of(text, 'memory_gb')}: gpus.0[test-gpu].memory_gb: " in load_error(tmp_path)


def test_fp8_below_bf16_is_refused_as_a_likely_sparse_figure(tmp_path: Path) -> None:
    text = (
        valid_text()
        .replace("bf16_dense_tflops: 989.5", "bf16_dense_tflops: 1979")
        .replace("fp8_dense_tflops: 1979", "fp8_dense_tflops: 989.5")
    )
    path = write(tmp_path, "testgpu", text)
    message = load_error(tmp_path)
    assert f"{path}:{line_of(text, 'fp8_dense_tflops')}: gpus.0[test-gpu].fp8_dense_tflops: " in message
    assert "sparse" in message


def test_unknown_form_factor_and_uncertain_field_are_refused(tmp_path: Path) -> None:
    text = valid_text().replace("form_factor: sxm", "form_factor: socket\n    uncertain: [price]")
    path = write(tmp_path, "testgpu", text)
    message = load_error(tmp_path)
    assert f"{path}:{line_of(text, 'form_factor')}: gpus.0[test-gpu].form_factor: " in message
    assert f"{path}:{line_of(text, 'uncertain')}: gpus.0[test-gpu].uncertain.0: " in message


def test_yaml_syntax_error_names_file_and_line(tmp_path: Path) -> None:
    text = valid_text().replace("    name: Test GPU", "    name: [Test GPU")
    path = write(tmp_path, "testgpu", text)
    message = load_error(tmp_path)
    assert f"{path}:" in message and "YAML syntax error" in message
    line = int(message.split(f"{path}:")[1].split(":")[0])
    assert line >= line_of(text, "name: [Test GPU")


def test_duplicate_id_across_two_files_names_both(tmp_path: Path) -> None:
    first = write(tmp_path, "alpha", valid_text(family="alpha", gpu_id="same-gpu"))
    second = write(tmp_path, "beta", valid_text(family="beta", gpu_id="same-gpu"))
    message = load_error(tmp_path)
    line = line_of(valid_text(), "- id:")
    assert f"{second}:{line}: gpus.0[same-gpu].id: duplicate GPU id 'same-gpu'" in message
    assert f"already defined in {first}:{line}" in message


def test_duplicate_id_within_one_file_is_refused(tmp_path: Path) -> None:
    text = valid_text()
    item = text[text.index("  - id:") :]
    path = write(tmp_path, "testgpu", text + item)
    message = load_error(tmp_path)
    assert f"{path}:" in message and "gpus" in message and "share the id 'test-gpu'" in message


def test_family_must_match_the_file_name(tmp_path: Path) -> None:
    text = valid_text(family="other")
    path = write(tmp_path, "testgpu", text)
    assert f"{path}:{line_of(text, 'family')}: family: 'other' must match the file name 'testgpu'" in load_error(
        tmp_path
    )


def test_every_broken_file_is_reported_at_once(tmp_path: Path) -> None:
    write(tmp_path, "good", valid_text(family="good", gpu_id="good-gpu"))
    one = write(tmp_path, "one", valid_text(family="one", gpu_id="one-gpu").replace("memory_gb: 80", "memory_gb: 0"))
    two = write(
        tmp_path, "two", valid_text(family="two", gpu_id="two-gpu").replace("schema_version: 1", "schema_version: 2")
    )
    message = load_error(tmp_path)
    assert f"{one}:" in message and "memory_gb" in message
    assert f"{two}:1: schema_version:" in message


def test_empty_directory_is_an_error(tmp_path: Path) -> None:
    assert "no GPU spec files" in load_error(tmp_path)


def test_valid_directory_loads(tmp_path: Path) -> None:
    write(tmp_path, "testgpu", valid_text())
    loaded = load_gpu_specs(tmp_path)
    assert loaded.ids == ["test-gpu"]
    assert loaded.get("test-gpu").dense_tflops("fp8") == pytest.approx(1979)


def test_source_without_url_or_document_is_refused(tmp_path: Path) -> None:
    text = valid_text().replace("      url: https://example.com/datasheet\n", "")
    path = write(tmp_path, "testgpu", text)
    message = load_error(tmp_path)
    assert f"{path}:{line_of(text, 'read:')}: gpus.0[test-gpu].source" in message
    assert "url or a document" in message
