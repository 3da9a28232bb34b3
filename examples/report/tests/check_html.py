#!/usr/bin/env python3
"""examples/report/tests/check_html.py HWPROF_REPORT HWPROF_REPLAY MAKE_TRACE WORKDIR

hwprof-report --html on a report of every model (the replayer, exact
ground truth on so both phase detectors run, short phase intervals):
  - the page is self-contained: no script, no stylesheet or image
    fetched, nothing but the SVG namespace names a URL;
  - every figure draws: an <svg> with marks in it (a figure of data the
    report lacks would say so in words; this report has all of them);
  - in headless Chromium (Debian's chromium package): no console error,
    the live DOM still has every figure's marks, and the screenshot holds
    more than a blank page's.
Without chromium the browser part is skipped (exit 77) after the static
checks pass.
"""
import html.parser
import os
import re
import shutil
import subprocess
import sys

from rp_check import Checks

tool, replay, make_trace, work = sys.argv[1:5]
check = Checks(work)
p = check.path


subprocess.run([make_trace, p("t.trc"), "200000"], check=True)
subprocess.run([replay, p("t.trc"), "models=all,exact=on", "path_interval=5000",
                "json=" + p("all.json"), "report=" + p("all.txt")], check=True, capture_output=True)
r = subprocess.run([tool, "--quiet", "--html", p("page.html"), p("all.json")],
                   capture_output=True, text=True)
check(r.returncode == 0, f"--html: {r.stderr}")
page = open(p("page.html")).read()

FIGS = ("rap", "profileme", "paths", "phases", "invariance", "overhead")
MARKS = ("rect", "line", "path", "polygon", "circle")


class Figures(html.parser.HTMLParser):
    """Marks drawn inside each <figure id=...>, and every URL named."""

    def __init__(self):
        super().__init__()
        self.fig, self.marks, self.urls, self.tags = None, {}, [], set()

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self.tags.add(tag)
        if tag == "figure":
            self.fig = a.get("id")
            self.marks[self.fig] = 0
        elif tag in MARKS and self.fig:
            self.marks[self.fig] += 1
        for k, v in attrs:
            if v and re.match(r"\s*(https?:|//)", v) and not (tag == "svg" and k == "xmlns"):
                self.urls.append((tag, k, v))

    def handle_endtag(self, tag):
        if tag == "figure":
            self.fig = None


def figures_of(text, where):
    f = Figures()
    f.feed(text)
    check(not f.urls, f"{where}: no URL but the SVG namespace: {f.urls[:3]}")
    check(not ({"script", "link", "img", "iframe"} & f.tags), f"{where}: no script, link, img")
    for fig in FIGS:
        check(f.marks.get(fig, 0) > 0, f"{where}: figure {fig} draws ({f.marks.get(fig)} marks)")


figures_of(page, "page")

chromium = shutil.which("chromium") or shutil.which("chromium-browser")
if not chromium:
    check.done("; chromium not installed: browser checks skipped", skipped=True)

flags = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
         "--no-first-run", "--enable-logging=stderr", "--v=0", "--window-size=1200,3000"]


def browse(url, *extra):
    return subprocess.run([chromium, *flags, *extra, url], capture_output=True, text=True,
                          timeout=120)


r = browse("file://" + os.path.abspath(p("page.html")), "--dump-dom")
console = [l for l in r.stderr.splitlines() if "CONSOLE" in l or "Uncaught" in l]
check(r.returncode == 0, f"chromium ran: {r.stderr[-500:]}")
check(not console, f"no console message: {console[:3]}")
figures_of(r.stdout, "chromium's DOM")

with open(p("blank.html"), "w") as f:
    f.write("<!DOCTYPE html><html><body></body></html>\n")
shots = {}
for name in ("page", "blank"):
    png = p(name + ".png")
    if os.path.exists(png):
        os.remove(png)
    r = browse("file://" + os.path.abspath(p(name + ".html")), "--screenshot=" + png)
    console = [l for l in r.stderr.splitlines() if "CONSOLE" in l or "Uncaught" in l]
    check(not console, f"{name}: no console message: {console[:3]}")
    shots[name] = os.path.getsize(png) if os.path.exists(png) else 0
check(shots["page"] > 4 * max(shots["blank"], 1),
      f"the screenshot holds a drawing ({shots['page']} bytes, a blank page {shots['blank']})")

check.done()
