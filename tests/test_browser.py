"""The browser tier: report.html opened in headless Chromium (Debian's `chromium`, installed by
scripts/setup_browser.sh) renders every table and figure, with no console message at all (the
page has no scripts, so any message is an error: a blocked or broken resource).
Run with `make test-browser` (`-m browser --runslow`)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from report_fixtures import audit_dir
from test_report_sections import _cobia_run, _detection_run, _fair_run

pytestmark = [pytest.mark.browser, pytest.mark.slow,
              # make test-browser sets BENEVAUDIT_REQUIRE_BROWSER: there a missing browser fails
              pytest.mark.skipif(shutil.which("chromium") is None
                                 and not os.environ.get("BENEVAUDIT_REQUIRE_BROWSER"),
                                 reason="no chromium: run scripts/setup_browser.sh (make test-browser)")]
# appended to a copy of the page: the browser itself says which images decoded
PROBE = """<script>window.addEventListener('load', () => {
  const imgs = [...document.images].map(i => i.complete && i.naturalWidth > 0);
  document.body.setAttribute('data-probe', JSON.stringify({images: imgs,
    tables: document.querySelectorAll('table').length,
    rows: [...document.querySelectorAll('table')].map(t => t.tBodies[0].rows.length)}));
});</script>"""


def chromium(page: Path, *flags: str) -> subprocess.CompletedProcess:
    return subprocess.run(["chromium", "--headless", "--no-sandbox", "--disable-gpu",
                           "--enable-logging=stderr", "--v=0", "--virtual-time-budget=5000",
                           *flags, page.resolve().as_uri()], capture_output=True, text=True,
                          timeout=120)


def probe(page: Path, tmp_path: Path) -> tuple[dict, list[str]]:
    """(what the browser rendered, console lines) for the page as it is."""
    probed = tmp_path / f"probe_{page.name}"
    probed.write_text(page.read_text().replace("</body>", PROBE + "</body>"))
    proc = chromium(probed, "--dump-dom")
    assert proc.returncode == 0, proc.stderr[-2000:]
    found = re.search(r'data-probe="([^"]*)"', proc.stdout)
    assert found, "the page never finished loading"
    console = [line for line in chromium(page, "--dump-dom").stderr.splitlines()
               if ":CONSOLE" in line]
    return json.loads(found.group(1).replace("&quot;", '"')), console


@pytest.fixture(scope="module")
def report(tmp_path_factory) -> Path:
    from benevaudit.pipelines.report_files import build_report

    root = tmp_path_factory.mktemp("browser") / "runs"
    audit_dir(root / "audit", seeds=(1, 2))
    _detection_run(root / "detect" / "0", "judge_plain", 1)
    _cobia_run(root / "cobia" / "0", "embedded")
    _fair_run(root / "fair" / "0", "embedded")
    return build_report([root], root.parent / "out", n_resamples=100).html


def test_every_table_and_figure_renders_without_console_messages(report, tmp_path):
    page = report.read_text()
    rendered, console = probe(report, tmp_path)
    assert console == []
    assert rendered["tables"] == page.count("<table") and rendered["tables"] >= 8
    assert all(n > 0 for n in rendered["rows"])
    assert len(rendered["images"]) == page.count("<img") > 20 and all(rendered["images"])
    shot = tmp_path / "report.png"
    assert chromium(report, f"--screenshot={shot}", "--window-size=1200,2000").returncode == 0
    assert shot.stat().st_size > 10_000                   # a page was drawn, not a blank


def test_the_check_catches_a_broken_figure_and_a_console_error(report, tmp_path):
    broken = tmp_path / "broken.html"
    broken.write_text(report.read_text().replace("data:image/png;base64,iVBOR",
                                                 "data:image/png;base64,XXXXX", 1)
                      .replace("</body>", "<script>console.error('x')</script></body>"))
    rendered, console = probe(broken, tmp_path)
    assert rendered["images"].count(False) == 1 and console
