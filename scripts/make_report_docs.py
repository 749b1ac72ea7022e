"""Make the report pictures (docs/report-*.png, in the README and docs/how-to/reports.md) with the
project's own commands (developer tool).

Runs the example suite with a baseline and an induced regression (BM25 loses its abstracts
field; ``tests/reports/scenario.py``), then writes into ``docs/``:

* ``report-summary.md``: the Markdown summary exactly as ``--retrieval-markdown`` wrote it
  (absolute paths made relative to the repository);
* ``report-summary.png``: that Markdown rendered (markdown-it-py, CommonMark + tables) in
  headless Chromium, the first worst-moved queries section unfolded (emoji need Debian's
  ``fonts-noto-color-emoji``);
* ``report-html.png`` and ``report-html-query.png``: the HTML report in headless Chromium, at
  the top and with a regressed query's ranking diff opened.

    python scripts/make_report_docs.py          # needs the test extras, chromium, chromedriver
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.reports.scenario import build  # noqa: E402
from tests.reports.test_html_report import CHROMIUM_FLAGS  # noqa: E402

DOCS = ROOT / "docs"

GITHUB_CSS = """
body { font: 14px/1.5 -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; color: #1f2328;
       max-width: 1010px; margin: 16px auto; padding: 0 24px; }
h2 { font-size: 1.4em; border-bottom: 1px solid #d1d9e0; padding-bottom: .3em; }
h3 { font-size: 1.2em; }
table { border-collapse: collapse; display: block; overflow: auto; }
th, td { border: 1px solid #d1d9e0; padding: 5px 11px; }
tr:nth-child(2n) { background: #f6f8fa; }
code { background: #eff1f3; padding: .1em .3em; border-radius: 5px; font-size: 85%; }
pre { background: #f6f8fa; padding: 12px; overflow: auto; font-size: 12px; }
pre code { background: none; padding: 0; }
sub { color: #59636e; }
details { margin: 8px 0; } summary { cursor: pointer; font-weight: 600; }
blockquote { color: #59636e; border-left: 4px solid #d1d9e0; margin: 0; padding: 0 1em; }
"""


def _driver(profile: Path, width: int, height: int):
    from selenium import webdriver
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service

    opts = Options()
    opts.binary_location = "/usr/bin/chromium"
    for flag in CHROMIUM_FLAGS:
        opts.add_argument(flag)
    opts.add_argument(f"--window-size={width},{height}")
    opts.add_argument(f"--user-data-dir={profile}")
    return webdriver.Chrome(service=Service(executable_path="/usr/bin/chromedriver"), options=opts)


def main() -> int:
    from markdown_it import MarkdownIt
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    DOCS.mkdir(exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp) / "demo"
        runs = build(work)
        bad = runs["bad"].files
        md = bad["md"].read_text().replace(str(ROOT) + "/", "")
        (DOCS / "report-summary.md").write_text(md)
        page = (
            MarkdownIt("commonmark")
            .enable("table")
            .render(md)
            .replace("<details><summary>Worst-moved", "<details open><summary>Worst-moved", 1)
        )
        rendered = Path(tmp) / "summary.html"
        rendered.write_text(f'<!DOCTYPE html><meta charset="utf-8"><style>{GITHUB_CSS}</style>{page}')

        d = _driver(Path(tmp) / "p1", 1100, 2600)
        try:
            d.get(rendered.as_uri())
            d.save_screenshot(str(DOCS / "report-summary.png"))
        finally:
            d.quit()
        d = _driver(Path(tmp) / "p2", 1400, 1500)
        try:
            d.get(bad["html"].as_uri())
            d.save_screenshot(str(DOCS / "report-html.png"))
            box = d.find_element(By.CSS_SELECTOR, ".qbox")
            Select(box.find_element(By.CSS_SELECTOR, "select.retriever")).select_by_visible_text("bm25")
            box.find_element(By.CSS_SELECTOR, "input.dropped").click()
            row = box.find_element(By.CSS_SELECTOR, 'tr[data-qid="1024"]')
            d.execute_script("arguments[0].scrollIntoView({block: 'center'})", row)
            row.click()
            d.execute_script("document.querySelector('.qbox').scrollIntoView()")
            d.save_screenshot(str(DOCS / "report-html-query.png"))
        finally:
            d.quit()
    for p in sorted(DOCS.glob("report-*")):
        print(f"{p.relative_to(ROOT)}: {p.stat().st_size:,} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
