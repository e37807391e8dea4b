"""The running app in headless Chromium: a shared link reopens the same numbers.

Own fixtures (no pytest-playwright plugin): one streamlit server on a free loopback port, one
browser per module. Skipped when /usr/bin/chromium (Debian's package) is missing.
"""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = os.environ.get("CHROMIUM_PATH", "/usr/bin/chromium")
SHOTS = ROOT / "screenshots"

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(not Path(CHROMIUM).exists(), reason=f"no Chromium at {CHROMIUM}"),
]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _wait_healthy(url: str, proc: subprocess.Popen[bytes], timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"streamlit exited early with code {proc.returncode}")
        try:
            with urllib.request.urlopen(f"{url}/_stcore/health", timeout=1) as r:
                if r.read() == b"ok":
                    return
        except OSError:
            pass
        time.sleep(0.25)
    raise TimeoutError(url)


@pytest.fixture(scope="module")
def app_url() -> Iterator[str]:
    port = _free_port()
    with open(ROOT / "streamlit-e2e.log", "wb") as log:
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "streamlit",
                "run",
                "app.py",
                "--server.headless=true",
                f"--server.port={port}",
                "--server.address=127.0.0.1",
                "--browser.gatherUsageStats=false",
                "--server.fileWatcherType=none",
                "--global.developmentMode=false",
            ],
            cwd=ROOT,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        url = f"http://127.0.0.1:{port}"
        try:
            _wait_healthy(url, proc)
            yield url
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, headless=True)
        yield b
        b.close()


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    ctx = browser.new_context(viewport={"width": 1440, "height": 2200}, accept_downloads=True)
    yield ctx.new_page()
    ctx.close()


def _wait_idle(page: Any) -> None:
    from playwright.sync_api import expect

    app = page.get_by_test_id("stApp")
    expect(app).to_have_attribute("data-test-connection-state", "CONNECTED", timeout=30_000)
    expect(app).to_have_attribute("data-test-script-state", "notRunning", timeout=60_000)


def test_shared_link_reopens_the_seed_numbers(app_url: str, page: Any) -> None:
    from playwright.sync_api import expect

    page.goto(f"{app_url}/?preset=coding-agent&asof=2026-10-30&in=20000&pfx=0.9&hit=1.0&out=500")
    _wait_idle(page)
    values = page.get_by_test_id("stMetricValue")
    expect(values.filter(has_text="$0.0302")).to_have_count(1, timeout=30_000)
    expect(values.filter(has_text="$0.00968")).to_have_count(1)
    expect(page.get_by_test_id("stVegaLiteChart").first).to_be_visible(timeout=30_000)
    SHOTS.mkdir(exist_ok=True)
    page.wait_for_timeout(1500)
    page.screenshot(path=str(SHOTS / "compare.png"))
    # the link keeps the date; changing an input rewrites the URL
    expect(page).to_have_url(re.compile(r"asof=2026-10-30"))
    box = page.locator(".st-key-out input")
    box.fill("1000")
    box.press("Enter")
    _wait_idle(page)
    expect(page).to_have_url(re.compile(r"out=1000"), timeout=15_000)
    expect(values.filter(has_text="$0.0119")).to_have_count(1, timeout=15_000)  # 0.00968 + 500 x $4.40/1M
    expect(values.filter(has_text="$0.00968")).to_have_count(0)

    page.get_by_role("link", name="Price sheets").click()
    _wait_idle(page)
    expect(page.get_by_text("History of one offer")).to_be_visible(timeout=30_000)
    page.wait_for_timeout(1500)
    page.screenshot(path=str(SHOTS / "price_sheets.png"))


def test_changed_inputs_reopen_from_the_link(app_url: str, browser: Any) -> None:
    from playwright.sync_api import expect

    first = browser.new_context(viewport={"width": 1440, "height": 1800})
    page = first.new_page()
    page.goto(f"{app_url}/?asof=2026-10-30")
    _wait_idle(page)
    page.locator(".st-key-vm input").click()
    page.keyboard.type("runpod/h100-sxm-sec")
    page.keyboard.press("Enter")
    _wait_idle(page)
    page.locator(".st-key-pfx input").fill("0.5")
    page.keyboard.press("Enter")
    expect(page).to_have_url(re.compile(r"pfx=0\.5"), timeout=15_000)
    expect(page).to_have_url(re.compile(r"vm=runpod%2Fh100-sxm-secure"))
    values = page.get_by_test_id("stMetricValue")
    expect(values.filter(has_text="$0.0188")).to_have_count(1, timeout=15_000)  # 10,000 x 1.40 + 10,000 x 0.26 ...
    _wait_idle(page)
    shared, numbers = page.url, values.all_inner_texts()
    first.close()

    second = browser.new_context(viewport={"width": 1440, "height": 1800})
    other = second.new_page()
    other.goto(shared)
    _wait_idle(other)
    expect(other.get_by_test_id("stMetricValue")).to_have_text(numbers, timeout=30_000)
    assert other.get_by_test_id("stAlertContentError").count() == 0
    _wait_idle(other)
    for label, name in (
        # the prefix share and the GPU machine changed: the preset's name no longer stands, nor its file name
        ("Scenario (YAML)", "started-from-coding-agent-the-seeds-turn.yaml"),
        ("One-page summary (PDF)", "started-from-coding-agent-the-seeds-turn.pdf"),
    ):
        with other.expect_download(timeout=60_000) as download:
            other.get_by_role("button", name=label).first.click()
        assert download.value.suggested_filename == name
        path = download.value.path()
        assert path is not None and Path(path).stat().st_size > 0
        if name.endswith(".yaml"):  # a saved scenario records the prices it used
            assert "prices_used:" in Path(path).read_text(encoding="utf-8")
    second.close()


def test_cache_ttl_page_answers(app_url: str, page: Any) -> None:
    from playwright.sync_api import expect

    page.goto(f"{app_url}/cache_ttl?t_src=gap+list&t_gaps=1800%2C1800%2C1800")
    _wait_idle(page)
    expect(page.get_by_test_id("stMetricValue").first).to_have_text("1h", timeout=30_000)
    expect(page.get_by_test_id("stVegaLiteChart").first).to_be_visible(timeout=30_000)


_CUT_OFF = """() => [...document.querySelectorAll('[data-testid="stMetricValue"], [data-testid="stMetricLabel"]')]
    .flatMap(e => [e, ...e.querySelectorAll('*')])
    .filter(e => e.scrollWidth > e.clientWidth + 1 && e.clientWidth > 0)
    .map(e => e.innerText)"""


@pytest.mark.parametrize("width", [1024, 1280, 1920])
def test_no_headline_figure_is_cut_off_from_1024_to_1920_px(app_url: str, browser: Any, width: int) -> None:
    """A metric that ends in an ellipsis ("$70,08...") hides the answer; a billion turns make the longest
    monthly figures the page shows at a preset's prices."""
    from playwright.sync_api import expect

    ctx = browser.new_context(viewport={"width": width, "height": 1400})
    page = ctx.new_page()
    for path in (
        "?preset=coding-agent&asof=2026-10-30&vol=1000000000",
        "?preset=coding-agent&asof=2026-10-30&cur=INR",  # the longest symbol and amounts of the currencies
        "?preset=rag-chatbot",
        "plan",
        "capacity",
    ):
        page.goto(f"{app_url}/{path}")
        _wait_idle(page)
        expect(page.get_by_test_id("stMetricValue").first).to_be_visible(timeout=30_000)
        page.wait_for_timeout(500)  # fonts and columns settle after the first paint
        assert page.evaluate(_CUT_OFF) == [], f"{path} at {width} px"
    if width == 1024:
        page.goto(f"{app_url}/?preset=coding-agent&asof=2026-10-30&vol=1000000000")
        _wait_idle(page)
        page.screenshot(path=str(SHOTS / "compare-1024.png"))
    ctx.close()
