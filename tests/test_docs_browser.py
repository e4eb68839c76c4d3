"""The browser tier, for the documentation site: `mkdocs build --strict` of docs/ opened in
headless Chromium (Debian's `chromium`, as tests/test_browser.py drives it). The home page
renders with the theme's styles from the file system; the configuration reference lists
`probe.audio.source` with its allowed values; and search, served by a stdlib HTTP server on
127.0.0.1 (material's search index is fetched by a web worker, which a `file://` page may not
do), finds an option by its dotted name. Run with `make test-browser`."""

from __future__ import annotations

import functools
import json
import os
import re
import shutil
import subprocess
import sys
import threading
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from test_browser import chromium

ROOT = Path(__file__).resolve().parents[1]
pytestmark = [pytest.mark.browser, pytest.mark.slow,
              # make test-browser sets BENEVAUDIT_REQUIRE_BROWSER: there a missing browser fails
              pytest.mark.skipif(shutil.which("chromium") is None
                                 and not os.environ.get("BENEVAUDIT_REQUIRE_BROWSER"),
                                 reason="no chromium: run scripts/setup_browser.sh (make test-browser)")]
# appended to a copy of a page: what the browser rendered, as JSON on <body data-probe>
PROBE = """<script>window.addEventListener('load', () => {
  const header = document.querySelector('.md-header');
  const rows = [...document.querySelectorAll('.md-content table tr')]
    .map(tr => [...tr.cells].map(c => c.textContent.trim()));
  document.body.setAttribute('data-probe', JSON.stringify({
    h1: (document.querySelector('.md-content h1') || {}).textContent,
    header: header ? getComputedStyle(header).position : null,
    warning: document.querySelectorAll('.admonition.warning').length,
    nav: [...document.querySelectorAll('.md-nav__link')].map(a => a.textContent.trim()),
    rows}));
});</script>"""
# the search box typed into until results come, then reported to the server (POST /done);
# the image /hold keeps the page loading, so Chromium waits for the report
SEARCH = """<script>window.addEventListener('DOMContentLoaded', () => {
  const input = document.querySelector('input[data-md-component="search-query"]');
  let tries = 0;
  const tick = () => {
    tries += 1;
    input.value = %s;
    input.dispatchEvent(new Event('input', {bubbles: true}));
    input.dispatchEvent(new KeyboardEvent('keyup', {bubbles: true, key: 'e'}));
    const links = [...document.querySelectorAll('.md-search-result__item a')]
      .map(a => a.getAttribute('href'));
    const meta = (document.querySelector('.md-search-result__meta') || {}).textContent || '';
    if (links.length || (meta.includes('No matching') && tries > 15) || tries > 150) {
      fetch('/done', {method: 'POST', body: JSON.stringify({links, meta, tries})});
    } else setTimeout(tick, 200);
  };
  setTimeout(tick, 200);
});</script><img src="/hold" alt="">"""


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    """The site as `make docs` builds it, into a folder of the test's own."""
    pytest.importorskip("mkdocs", reason="the docs extra: make test-browser installs it")
    out = tmp_path_factory.mktemp("docs") / "site"
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir",
                           str(out)], cwd=ROOT, capture_output=True, text=True, timeout=600,
                          env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})
    assert done.returncode == 0, done.stderr[-3000:]
    return out


def rendered(page: Path) -> dict:
    probed = page.with_name(f"probe_{page.name}")
    probed.write_text(page.read_text(encoding="utf-8").replace("</body>", PROBE + "</body>"),
                      encoding="utf-8")
    proc = chromium(probed, "--dump-dom")
    assert proc.returncode == 0, proc.stderr[-2000:]
    found = re.search(r'data-probe="([^"]*)"', proc.stdout)
    assert found, "the page never finished loading"
    return json.loads(found.group(1).replace("&quot;", '"').replace("&amp;", "&"))


def test_the_home_page_renders(site) -> None:
    home = rendered(site / "index.html")
    assert home["h1"].strip().rstrip("¶") == "benevaudit"     # ¶: the heading's permalink
    assert home["header"] == "sticky"          # the theme's stylesheet applied, from disk
    assert home["warning"] >= 1                # the stand-in warning
    assert {"Getting started", "Configuration", "Departures from the papers"} <= set(home["nav"])


def test_the_configuration_reference_lists_an_option_with_its_allowed_values(site) -> None:
    page = rendered(site / "reference" / "config" / "probe.html")
    rows = [r for r in page["rows"] if r and r[0] == "probe.audio.source"]
    assert rows, "probe.audio.source is not in the probe reference"
    header = next(r for r in page["rows"] if r and r[0] == "key")
    for row in rows:
        cells = dict(zip(header, row))
        assert cells["allowed"].split(", ") == ["espeak", "tts_server", "dir"]
        assert cells["default"] == "espeak" and cells["description"]


def search(site: Path, query: str) -> dict:
    """What the site's search box lists for ``query``, the site served on 127.0.0.1."""
    page = site / "search_probe.html"
    page.write_text((site / "index.html").read_text(encoding="utf-8")
                    .replace("</body>", SEARCH % json.dumps(query) + "</body>"), encoding="utf-8")
    reported: dict = {}
    finished = threading.Event()

    class Handler(SimpleHTTPRequestHandler):
        def log_message(self, *args) -> None:     # quiet
            pass

        def do_GET(self) -> None:
            if self.path == "/hold":
                finished.wait(60)
                self.send_response(204)
                self.end_headers()
            else:
                super().do_GET()

        def do_POST(self) -> None:
            reported.update(json.loads(self.rfile.read(int(self.headers["Content-Length"]))))
            finished.set()
            self.send_response(204)
            self.end_headers()

    server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Handler, directory=str(site)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/{page.name}"
        proc = subprocess.run(["chromium", "--headless", "--no-sandbox", "--disable-gpu",
                               "--dump-dom", url], capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, proc.stderr[-2000:]
    finally:
        server.shutdown()
    assert finished.is_set(), "the search page never reported"
    return reported


def test_search_finds_an_option_by_its_name(site) -> None:
    found = search(site, "probe.audio.allow_outside")
    pages = {re.sub(r"^https?://[^/]+/", "", link).split("?")[0] for link in found["links"]}
    assert "reference/config/probe.html" in pages, found


def test_search_reports_no_match_for_a_name_that_is_nowhere(site) -> None:
    found = search(site, "probe.audio.nowhere_to_be_found")
    assert found["links"] == [] and "No matching" in found["meta"], found
