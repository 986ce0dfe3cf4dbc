"""The report in a real headless Chromium (the OS package; playwright drives it, no browser download):
the page of a store of real kept bugs plus a real 20 s ort-cpu campaign loads without console errors,
its plots and bug table render, a bug's link scrolls to its section, and a full-page screenshot has the
page's shape (size, not blank), not particular pixels. Skipped where Chromium or playwright is absent
(README: `apt-get install chromium`, `pip install playwright`)."""
import base64
import os
import shutil
import struct
from pathlib import Path

import pytest
from report_stores import copy_bugs
from synthetic_log import long_campaign, short_campaign

from nnfuzz.cli import main

CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]
WIDTH = 1280


def _chromium() -> str:
    for name in ("chromium", "chromium-browser"):
        path = shutil.which(name)
        if path:
            return path
    pytest.skip("Chromium is not installed (Debian/Ubuntu: apt-get install chromium)")


@pytest.fixture(scope="module")
def browser():
    exe = _chromium()
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.skip("the playwright package is not installed (pip install playwright; no `playwright install`)")
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=exe, args=CHROMIUM_ARGS)
        yield b
        b.close()


def _open(browser, html: Path):
    page = browser.new_page(viewport={"width": WIDTH, "height": 900})
    problems = []
    page.on("console", lambda m: problems.append(f"console {m.type}: {m.text}") if m.type in ("error", "warning") else None)
    page.on("pageerror", lambda e: problems.append(f"page error: {e}"))
    page.on("request", lambda r: problems.append(f"request: {r.url}") if not r.url.startswith(("file:", "data:")) else None)
    page.goto(html.as_uri())
    page.wait_for_load_state("load")
    return page, problems


@pytest.mark.slow
def test_report_of_a_real_campaign_renders(browser, tmp_path, monkeypatch, capsys):
    pytest.importorskip("onnxruntime")
    monkeypatch.setenv("NNFUZZ_CACHE", str(tmp_path / "cache"))
    store = copy_bugs(tmp_path / "bugs", ["0000", "0002", "0005"])
    # a test count, not a time: a loaded machine's 20 s campaign once logged one test, too few to draw a line
    assert main(["fuzz", "backend=ort-cpu", "time=3m", "fuzz.max_tests=20", f"fuzz.out={store}", "ui=plain",
                 "fuzz.reduce=false"]) == 0
    out = tmp_path / "report.html"
    assert main(["report", str(store), "-o", str(out)]) == 0
    capsys.readouterr()
    from nnfuzz.report.store import gather

    unique = [b.id for b in gather(store, with_stats=False).unique]
    page, problems = _open(browser, out)

    plots = page.locator("svg.plot")
    assert plots.count() == 5
    for k in range(5):
        box = plots.nth(k).bounding_box()
        assert box and box["width"] > 200 and box["height"] > 100, (k, box)
    assert page.locator("#plot-verdicts polyline").count() >= 1  # the campaign's verdicts are drawn
    rows = page.locator("#bug-table tbody tr")
    assert rows.count() == len(unique) >= 3
    assert [rows.nth(k).locator("td").first.inner_text() for k in range(rows.count())] == unique
    assert page.locator("#stats-table tr").count() > 5
    ids = lambda: [rows.nth(k).locator("td").first.inner_text() for k in range(rows.count())]  # noqa: E731
    page.locator("#bug-table th").first.click()
    page.locator("#bug-table th").first.click()  # the page's script sorts: ascending, then descending
    assert ids() == unique[::-1]

    page.locator("#bug-table a[href='#bug-0002']").click()
    assert page.evaluate("location.hash") == "#bug-0002"
    top = page.evaluate("document.getElementById('bug-0002').getBoundingClientRect().top")
    assert abs(top) < 5, f"the link did not scroll to bug 0002's section (its top is at {top}px)"
    graph = page.locator("#bug-0002 svg.graph").first.bounding_box()
    assert graph and graph["width"] > 50 and graph["height"] > 30
    assert page.locator("#bug-0002 svg.graph").first.locator("g.node").count() >= 2  # an input and the Resize

    shot = page.screenshot(full_page=True)
    width, height = struct.unpack(">II", shot[16:24])  # the PNG's IHDR
    assert width == WIDTH and height > 3000, (width, height)
    ink = _ink(page, shot)
    assert 0.02 < ink["dark"] < 0.6 and ink["colors"] > 20, ink  # text and plots drawn, not blank or black
    assert problems == []
    page.close()


@pytest.mark.slow
def test_hostile_store_page_runs_no_injected_code(browser, hostile_store, tmp_path, capsys):
    out = tmp_path / "hostile.html"
    assert main(["report", str(hostile_store), "-o", str(out), "--no-stats"]) == 0
    capsys.readouterr()
    page, problems = _open(browser, out)
    assert page.evaluate("window.pwned") is None
    assert page.locator("#skipped-table").count() == 1
    assert page.locator("#skipped-table tr").count() == 1 + 7
    assert "window.pwned=1" in page.locator("#bug-0000 pre.err").inner_text()  # shown as text
    assert problems == []
    page.close()


@pytest.mark.slow
@pytest.mark.parametrize("scale", ["20s", "8h"])
def test_plots_read_at_twenty_seconds_and_at_eight_hours(browser, tmp_path, capsys, scale):
    """Every text of every plot (titles, ticks, legends) lies inside its plot and no two tick labels
    overlap, at both ends of the scale. With NNFUZZ_SHOTS_DIR set, the plots' screenshot is saved there
    (docs/report-plots-20s.png and -8h.png were made so: NNFUZZ_SHOTS_DIR=docs)."""
    store = copy_bugs(tmp_path / "s", ["0002", "0013"])   # a copy of a kept bug (known), and one made new:
    meta = store / "0001" / "meta.json"                    # kept 0013's fault on a system it was not seen on
    meta.write_text(meta.read_text().replace('"system": "openvino-cpu"', '"system": "ort-cpu"'))
    (short_campaign if scale == "20s" else long_campaign)(store, ["0000", "0001"])
    out = tmp_path / "r.html"
    assert main(["report", str(store), "-o", str(out), "--no-stats"]) == 0
    capsys.readouterr()
    page, problems = _open(browser, out)
    assert page.locator("svg.plot").count() == 5
    faults = page.evaluate("""() => {
        const out = [];
        document.querySelectorAll('svg.plot').forEach(svg => {
            const box = svg.getBoundingClientRect(), ticks = [];
            svg.querySelectorAll('text').forEach(t => {
                const b = t.getBoundingClientRect();
                if (b.left < box.left - 0.5 || b.top < box.top - 0.5 || b.right > box.right + 0.5 || b.bottom > box.bottom + 0.5)
                    out.push(`${svg.id}: "${t.textContent}" reaches outside the plot`);
                if (t.classList.contains('tick')) ticks.push([t.textContent, b]);
            });
            for (let i = 0; i < ticks.length; i++) for (let j = i + 1; j < ticks.length; j++) {
                const [ta, a] = ticks[i], [tb, b] = ticks[j];
                if (a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom)
                    out.push(`${svg.id}: ticks "${ta}" and "${tb}" overlap`);
            }
        });
        return out;
    }""")
    assert faults == []
    assert page.locator("#plot-bugs text.legend:has-text('new root causes (1)')").count() == 1
    unit = "seconds" if scale == "20s" else "hours"
    assert page.locator(f"#plot-verdicts text.label:has-text('{unit} since the start')").count() == 1
    shot = page.locator(".plots").screenshot()
    ink = _ink(page, shot)
    assert 0.02 < ink["dark"] < 0.5 and ink["colors"] > 10, ink
    if os.environ.get("NNFUZZ_SHOTS_DIR"):
        (Path(os.environ["NNFUZZ_SHOTS_DIR"]) / f"report-plots-{scale}.png").write_bytes(shot)
    assert problems == []
    page.close()


def _ink(page, png: bytes) -> dict:
    """The share of non-white pixels and the number of distinct colours of a screenshot, counted by the
    browser itself (a canvas), so the test needs no image package."""
    return page.evaluate("""async (data) => {
        const img = new Image();
        img.src = 'data:image/png;base64,' + data;
        await img.decode();
        const c = document.createElement('canvas');
        c.width = img.width; c.height = img.height;
        const g = c.getContext('2d');
        g.drawImage(img, 0, 0);
        const px = g.getImageData(0, 0, c.width, c.height).data;
        let dark = 0; const colors = new Set();
        for (let i = 0; i < px.length; i += 4 * 7) {
            if (px[i] + px[i + 1] + px[i + 2] < 700) dark++;
            colors.add((px[i] >> 3) * 1024 + (px[i + 1] >> 3) * 32 + (px[i + 2] >> 3));
        }
        return {dark: dark / (px.length / (4 * 7)), colors: colors.size};
    }""", base64.b64encode(png).decode())
