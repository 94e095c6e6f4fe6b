"""The board's site in a real headless Chromium (issue 38, item 5), driven through the DevTools protocol over
``--remote-debugging-pipe`` (no websocket client, no driver package): the tables render, a click on a header re-sorts
the rows, a model named ``<img src=x onerror=alert(1)>`` stays inert text, no request leaves the page, and a
screenshot is not blank. Chromium runs with ``--proxy-server=127.0.0.1:9`` too, so nothing could reach a network
even if the page asked."""

from __future__ import annotations

import base64
import io
import json
import os
import queue
import shutil
import subprocess
import threading
import time

import pytest

from hanyi.leaderboard import eee
from hanyi.leaderboard.site import write_site
from tests.leaderboard.test_site import XSS, hand_board

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="chromium not installed (CI: make system-deps)")


class Browser:
    """Headless Chromium and one page, spoken to in DevTools-protocol JSON over the pipe (fd 3 in, fd 4 out)."""

    def __init__(self, profile: str):
        to_child, self._out = os.pipe()  # we write commands, Chromium reads them on fd 3
        self._in, from_child = os.pipe()  # Chromium writes replies and events on fd 4

        def on_fds_3_and_4():
            a, b = os.dup(to_child), os.dup(from_child)
            os.dup2(a, 3)
            os.dup2(b, 4)

        flags = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--no-first-run",
                 "--disable-component-update", "--disable-sync", "--remote-debugging-pipe", f"--user-data-dir={profile}",
                 "--proxy-server=127.0.0.1:9", "--window-size=1280,900", "about:blank"]  # fmt: skip
        self.proc = subprocess.Popen(
            [CHROMIUM, *flags],
            pass_fds=(3, 4),
            preexec_fn=on_fds_3_and_4,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        os.close(to_child)
        os.close(from_child)
        self._id, self.events, self._replies = 0, [], {}
        self._queue: queue.Queue = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()
        target = self.call("Target.createTarget", url="about:blank")["targetId"]
        self.session = self.call("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
        for domain in ("Page", "Network", "Runtime", "Log"):
            self.call(f"{domain}.enable", session=True)

    def _read(self):
        buffer = b""
        while chunk := os.read(self._in, 1 << 16):
            buffer += chunk
            while b"\0" in buffer:
                message, buffer = buffer.split(b"\0", 1)
                self._queue.put(json.loads(message))

    def _pump(self, until, timeout: float = 30.0):
        deadline = time.monotonic() + timeout
        while not until():
            try:
                message = self._queue.get(timeout=max(0.01, deadline - time.monotonic()))
            except queue.Empty:
                raise TimeoutError("no answer from Chromium") from None
            if "id" in message:
                self._replies[message["id"]] = message
            else:
                self.events.append(message)

    def call(self, method: str, session: bool = False, **params):
        self._id += 1
        ident = self._id
        message = {"id": ident, "method": method, "params": params}
        if session:
            message["sessionId"] = self.session
        os.write(self._out, json.dumps(message).encode() + b"\0")
        self._pump(lambda: ident in self._replies)
        reply = self._replies.pop(ident)
        if "error" in reply:
            raise RuntimeError(f"{method}: {reply['error']}")
        return reply["result"]

    def js(self, expression: str):
        result = self.call(
            "Runtime.evaluate", session=True, expression=expression, returnByValue=True, awaitPromise=True
        )
        if "exceptionDetails" in result:
            raise RuntimeError(result["exceptionDetails"])
        return result["result"].get("value")

    def open(self, url: str):
        before = len(self.events)
        self.call("Page.navigate", session=True, url=url)
        self._pump(lambda: any(e["method"] == "Page.loadEventFired" for e in self.events[before:]))

    def click(self, selector: str):
        """A real mouse click (press and release) at the middle of the element."""
        box = self.js(f"(function(){{var r=document.querySelector({json.dumps(selector)}).getBoundingClientRect();"
                      "return [r.x + r.width / 2, r.y + r.height / 2]})()")  # fmt: skip
        for kind in ("mousePressed", "mouseReleased"):
            self.call(
                "Input.dispatchMouseEvent", session=True, type=kind, x=box[0], y=box[1], button="left", clickCount=1
            )

    def requests(self) -> list[str]:
        return [e["params"]["request"]["url"] for e in self.events if e["method"] == "Network.requestWillBeSent"]

    def dialogs(self) -> list[dict]:
        return [e["params"] for e in self.events if e["method"] == "Page.javascriptDialogOpening"]

    def close(self):
        try:
            self.call("Browser.close")
        except (RuntimeError, TimeoutError, OSError):
            pass
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        os.close(self._out)


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    b = Browser(str(tmp_path_factory.mktemp("chromium-profile")))
    yield b
    b.close()


@pytest.fixture(scope="module")
def hand_site(tmp_path_factory):
    out = tmp_path_factory.mktemp("board")
    write_site(hand_board(), str(out))
    return out


FIRST_TABLE_MODELS = (
    "Array.from(document.querySelectorAll('table')[0].tBodies[0].rows).map(r => r.cells[3].textContent)"
)


def distinct_colours(png: bytes) -> int:
    from PIL import Image

    return len(Image.open(io.BytesIO(png)).convert("RGB").getcolors(1 << 24) or ())


def test_the_tables_render_and_a_click_on_a_header_re_sorts_the_rows(browser, hand_site):
    browser.open((hand_site / "cii.html").as_uri())
    assert browser.js("document.querySelectorAll('table').length") == 2
    assert browser.js("document.querySelectorAll('table')[0].tBodies[0].rows.length") == 4
    ranked = browser.js(FIRST_TABLE_MODELS)
    assert [m.split("not comparable")[0] for m in ranked] == [XSS, "model-b", "model-c", "paper GPT-4o (paper)"]
    # the judged column (5th header): 0.7, 0.9, 0.1 and the paper row without a value (always last)
    browser.click("table th:nth-child(6)")
    assert browser.js(FIRST_TABLE_MODELS)[:3] == ["model-c", XSS, "model-b"]
    assert browser.js("document.querySelector('table th:nth-child(6)').getAttribute('aria-sort')") == "ascending"
    browser.click("table th:nth-child(6)")
    assert browser.js(FIRST_TABLE_MODELS)[:3] == ["model-b", XSS, "model-c"]
    assert browser.js(FIRST_TABLE_MODELS)[3].startswith("paper")
    browser.click("table th:nth-child(4)")  # text column
    assert browser.js(FIRST_TABLE_MODELS)[1:3] == ["model-b", "model-c"]


def test_a_model_named_as_html_stays_inert_text(browser, hand_site):
    for page in ("cii.html", "index.html", "rejected.html"):
        browser.open((hand_site / page).as_uri())
        assert browser.js("document.images.length") == 0
        assert browser.js("document.querySelectorAll('[onerror],[onclick],[onload]').length") == 0
    browser.open((hand_site / "cii.html").as_uri())
    assert XSS in browser.js("document.body.innerText")
    time.sleep(0.3)  # an onerror handler would have run by now
    browser._pump(lambda: True)
    assert browser.dialogs() == []


def test_no_request_leaves_the_page_and_the_csp_blocks_one_that_tries(browser, hand_site):
    start = len(browser.events)
    for page in ("index.html", "cii.html", "rejected.html"):
        browser.open((hand_site / page).as_uri())
    urls = [e["params"]["request"]["url"] for e in browser.events[start:] if e["method"] == "Network.requestWillBeSent"]
    assert urls and all(u.startswith(hand_site.as_uri() + "/") for u in urls), urls
    # the policy is in force from file://: a fetch and an image from the page itself are refused before any request
    verdict = browser.js(
        "new Promise(function(done){var seen=[];document.addEventListener('securitypolicyviolation',"
        "function(e){seen.push(e.violatedDirective)});var i=new Image();i.src='http://127.0.0.1:9/x.png';"
        "fetch('http://127.0.0.1:9/y').then(function(){done(['sent'].concat(seen))},"
        "function(){setTimeout(function(){done(['refused'].concat(seen))},200)})})"
    )
    assert verdict[0] == "refused" and {"img-src", "connect-src"} <= set(verdict[1:]), verdict
    # Chromium announces the image before its CSP check refuses it: each such request must fail as blocked by the CSP
    browser._pump(lambda: any(e["method"] == "Network.loadingFailed" for e in browser.events[start:]), timeout=10)
    outside = {
        e["params"]["requestId"]: e["params"]["request"]["url"]
        for e in browser.events[start:]
        if e["method"] == "Network.requestWillBeSent" and not e["params"]["request"]["url"].startswith("file:")
    }
    blocked = {
        e["params"]["requestId"]: e["params"].get("blockedReason")
        for e in browser.events[start:]
        if e["method"] == "Network.loadingFailed"
    }
    assert {blocked.get(i) for i in outside} <= {"csp"}, (outside, blocked)
    assert not [
        e
        for e in browser.events[start:]
        if e["method"] == "Network.responseReceived" and e["params"]["response"]["url"].startswith("http")
    ]


def test_a_screenshot_of_the_page_is_not_blank(browser, hand_site):
    browser.open((hand_site / "cii.html").as_uri())
    png = base64.b64decode(browser.call("Page.captureScreenshot", session=True, format="png")["data"])
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    assert distinct_colours(png) > 8  # text, table borders, header shading, interval grey; a blank page has 1
    browser.open("about:blank")
    assert distinct_colours(base64.b64decode(browser.call("Page.captureScreenshot", session=True)["data"])) == 1


def column_values(browser, table: int, column: int) -> list[float | None]:
    return browser.js(
        f"Array.from(document.querySelectorAll('table')[{table}].tBodies[0].rows).map(function(r){{"
        f"var v=parseFloat(r.cells[{column}].dataset.v);return isNaN(v)?null:v}})"
    )


@pytest.mark.slow
def test_a_board_built_by_hanyi_leaderboard_build_from_hanyi_submit_files_passes_in_chromium(
    leaderboard_submissions, browser, tmp_path
):
    """The issue's "done when": ``hanyi leaderboard build`` over ``hanyi submit`` files of replay runs on the sample
    data (three models of one protocol, one of them named as HTML, one tampered, one ``--limit`` run, one judged by
    another judge) gives a site that renders, sorts, stays inert and offline in Chromium."""
    from hanyi.cli import main
    from tests.leaderboard.conftest import HTML_MODEL

    site = tmp_path / "site"
    assert main(["leaderboard", "build", *leaderboard_submissions.values(), "--out", str(site)]) == 0
    board = json.loads((site / "leaderboard.json").read_text(encoding="utf-8"))
    cii = [s for s in board["sections"] if s["benchmark"] == "cii"]
    main_section, apart = cii[0], cii[1:]
    assert not main_section["apart"]
    ranked = [r["label"] for r in main_section["rows"] if not r["reference"]]
    assert sorted(ranked) == sorted(["alpha-vl", "beta-vl", HTML_MODEL])
    assert [[r["label"] for r in s["rows"] if not r["reference"]] for s in apart] == [["gamma-vl"]]
    assert "fake-judge-b" in " ".join(apart[0]["apart"])
    rejected = {r["path"] for r in board["rejected"]}
    assert rejected == {leaderboard_submissions["tampered"], leaderboard_submissions["limit"]}
    # each ranked row links its per-doc predictions, and has an Every Eval Ever record that the schema accepts
    rows = [r for s in cii for r in s["rows"] if not r["reference"]]
    for row in rows:
        link = row["entry"]["predictions_file"]
        assert json.loads((site / link).read_text(encoding="utf-8"))["format"] == "hanyi-submission"
    records = [json.loads(p.read_text(encoding="utf-8")) for p in sorted((site / "eee").glob("*.json"))]
    assert len(records) == len(rows) and all(eee.validate(r, eee.load_schema()) == [] for r in records)
    results = [res for r in records for res in r["evaluation_results"]]
    assert any("standard_error" in res["score_details"].get("uncertainty", {}) for res in results)
    judges = {
        j["model_info"]["id"] for res in results for j in res["metric_config"].get("llm_scoring", {}).get("judges", [])
    }
    assert judges == {"fake-judge-a", "fake-judge-b"}

    start = len(browser.events)
    browser.open((site / "cii.html").as_uri())
    assert browser.js("document.querySelectorAll('table').length") == len(cii)
    models = browser.js(FIRST_TABLE_MODELS)
    assert [m for m in models if not m.startswith("paper")] == [
        r["label"] for r in main_section["rows"] if not r["reference"]
    ]  # rank order, as ranked
    ranking = 4 + main_section["columns"].index(main_section["ranking_column"])
    browser.click(f"table th:nth-child({ranking + 1})")
    up = column_values(browser, 0, ranking)
    assert sorted(browser.js(FIRST_TABLE_MODELS)) == sorted(models)
    numbers = [v for v in up if v is not None]
    assert up == numbers + [None] * (len(up) - len(numbers)) and numbers == sorted(numbers) and len(numbers) >= 3
    browser.click(f"table th:nth-child({ranking + 1})")
    assert [v for v in column_values(browser, 0, ranking) if v is not None] == sorted(numbers, reverse=True)

    assert browser.js("document.images.length") == 0
    assert HTML_MODEL in browser.js("document.body.innerText")
    png = base64.b64decode(browser.call("Page.captureScreenshot", session=True, format="png")["data"])
    assert distinct_colours(png) > 8
    browser.open((site / "rejected.html").as_uri())
    text = browser.js("document.body.innerText")
    assert leaderboard_submissions["tampered"] in text and "claimed" in text and "re-scored" in text
    assert leaderboard_submissions["limit"] in text and "--limit 3" in text
    browser.open((site / "index.html").as_uri())
    time.sleep(0.3)
    browser._pump(lambda: True)
    assert browser.dialogs() == []
    urls = [e["params"]["request"]["url"] for e in browser.events[start:] if e["method"] == "Network.requestWillBeSent"]
    assert urls and all(u.startswith(site.as_uri() + "/") for u in urls), urls
