# SPDX-License-Identifier: MIT
"""Covers, search and radio stations in the browser (called from web_test.py, signed in, after the
library page). `t` is web_test itself: its helpers (wait, el, js, go, click, screenshot, status,
get, post, ctl, check_layout, fail, log) and its args."""
import os, struct, zlib

XSS = "<img src=x onerror=alert(1)>"


def png(width, height, rgb):
    """A real PNG (chromium decodes it: naturalWidth > 0), made here without any library."""
    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
    rows = b"".join(b"\x00" + bytes(rgb) * width for _ in range(height))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b""))


def cover_shown(t, d, box):
    return t.js(d, "const i = document.querySelector('#' + arguments[0] + ' img');"
                   "return !!i && i.complete && i.naturalWidth > 0 && "
                   "document.getElementById(arguments[0]).classList.contains('has-image')", box)


def run(t, d, width, height):
    before = t.get("/api/queue")["entries"]
    root = t.get("/api/library")["path"]
    album = root + "/Album"
    path = os.path.join(album, "cover.png")
    if not os.path.exists(path):
        with open(path, "wb") as f:
            f.write(png(40, 40, (200, 60, 20)))

    # Covers: the folder's cover.png in the library, then on Now playing while the folder plays.
    t.js(d, "location.hash = '#/library/' + encodeURIComponent(arguments[0])", album)
    t.wait("the folder shows", lambda: t.el(d, "page-library").is_displayed() and t.el(d, "folder-actions").is_displayed())
    t.wait("the folder's cover shows", lambda: cover_shown(t, d, "library-cover"))
    t.post("/api/control", {"line": "stop"})
    t.el(d, "lib-play").click()
    t.wait("the folder plays", lambda: "/Album/" in (t.status().get("path") or "") and t.status()["phase"] == "playing")
    t.go(d, "now")
    t.wait("the cover shows on Now playing", lambda: cover_shown(t, d, "now-cover"))
    t.screenshot(d, "cover", width, height)
    t.log(f"{width}x{height}: the cover shows in the library and on Now playing (an img, naturalWidth > 0)")

    # Search: a track by its title, played from the results.
    t.go(d, "library")
    t.el(d, "search").clear()
    t.el(d, "search").send_keys("library 2\n")
    t.wait("the search finds the track", lambda: t.js(
        d, "return [...document.querySelectorAll('#search-results .entry > span:first-child')].map(s => s.textContent)") == ["Library 2"])
    if t.el(d, "library-browse").is_displayed():
        t.fail("the folder listing shows beside the search results")
    t.check_layout(d, width)
    t.screenshot(d, "search", width, height)
    t.click(d, "#search-results button[aria-label^='Play']", 0)
    t.wait("the result plays", lambda: (t.status().get("path") or "").endswith("/Album/2.flac") and t.status()["count"] == 1)
    t.el(d, "search").clear()
    t.el(d, "search").send_keys(XSS + "\n")
    t.wait("a search for markup finds nothing, shown as text", lambda: t.txt(d, "search-message") == "Nothing found.")
    t.log(f"{width}x{height}: a search finds a track by its title and plays it")

    # Radio: a station added (its name markup, shown as text), played, edited, deleted.
    t.go(d, "radio")
    for s in t.get("/api/stations")["stations"]:
        t.fail(f"a station is left from before: {s}")
    t.el(d, "station-name").send_keys(XSS)
    t.el(d, "station-url").send_keys(t.args.stream)
    t.el(d, "station-save").click()
    t.wait("the station is listed", lambda: t.js(
        d, "return [...document.querySelectorAll('#stations .entry > span:first-child')].map(s => s.textContent)") == [XSS])
    if t.js(d, "return document.querySelectorAll('#stations img').length"):
        t.fail("a station's name became markup")
    t.check_layout(d, width)
    t.screenshot(d, "stations", width, height)
    t.click(d, "#stations button[data-role='play']", 0)
    t.wait("the station plays", lambda: t.status()["stream"] and t.status().get("artist") == "Test FM", timeout=10)
    t.click(d, "#stations button[data-role='edit']", 0)
    t.wait("the form holds the station", lambda: t.el(d, "station-name").get_attribute("value") == XSS)
    t.el(d, "station-name").clear()
    t.el(d, "station-name").send_keys("Test FM")
    t.el(d, "station-save").click()
    t.wait("the station is renamed", lambda: [s["name"] for s in t.get("/api/stations")["stations"]] == ["Test FM"]
           and t.js(d, "return document.querySelector('#stations .entry > span').textContent") == "Test FM")
    t.el(d, "station-url").send_keys("file:///etc/passwd")
    t.el(d, "station-name").send_keys("Bad")
    t.el(d, "station-save").click()
    t.wait("a file URL is refused with its reason", lambda: "http://" in t.txt(d, "radio-message"))
    t.el(d, "station-url").clear()
    t.el(d, "station-name").clear()
    t.click(d, "#stations button[data-role='delete']", 0)
    t.wait("the station is deleted", lambda: t.get("/api/stations")["stations"] == [] and t.el(d, "stations-empty").is_displayed())
    t.log(f"{width}x{height}: a station added, played, edited and deleted; a file URL refused")

    # The queue as it was, for what follows, and no bookmark left by the loads above (the cards
    # test counts them; the station's is written when the queue is cleared, so reset after).
    t.ctl("clear")
    t.ctl("bookmark", "reset", "--all")
    for e in before:
        t.ctl("add", e["path"])
    t.post("/api/control", {"line": "play 1"})
    t.wait("the queue is back", lambda: t.status()["count"] == len(before) and t.status()["index"] == 1)
