# SPDX-License-Identifier: MIT
"""The Podcasts page (#/podcasts, docs/WEB.md) in the browser, called by web_test.py with its module
as `h`. The player has one podcast, "Web Show", whose feed (served by the test's RadioServer) is
titled `Show <img src=x onerror=alert(3)>` and lists "Episode One" and "Episode Two" (order
oldest). Signed out (`signed_out`): the page lists the feed and says to sign in, and Play leads to
the sign-in page without playing. Signed in (`run`): the feed shows its name, the feed's own title
as text (no element made of it), its counts and the episode that plays next; Play sends
`podcast Web Show` and the player plays "Episode One" (read back from /api/status). The queue is
put back as it was for the checks that follow."""
import json

TITLE = "Show <img src=x onerror=alert(3)>"


def listed(h, d):
    """The rows of the list as [name, title, counts, next] texts ("" for a part not there)."""
    return h.js(d, """return [...document.querySelectorAll('#podcasts li')].map(li => ['.podcast-name', '.podcast-title',
        '.podcast-counts', '.podcast-next'].map(c => (li.querySelector(c) || {textContent: ''}).textContent))""")


def wait_listed(h, d):
    # The player fetches the feed at start: it may not have come yet when the page first asks, so
    # the page is opened again until it lists the episode that plays next.
    def fetched():
        rows = listed(h, d)
        if rows and rows[0][3].startswith("Next: "):
            return True
        h.go(d, "now")
        h.go(d, "podcasts")
        return False
    h.go(d, "podcasts")
    h.wait("the podcast's feed is fetched and listed", fetched, timeout=60, step=0.5, seen=lambda: listed(h, d))


def signed_out(h, d, width, height):
    wait_listed(h, d)
    h.wait("the page says to sign in", lambda: h.el(d, "podcasts-signin").is_displayed())
    before = h.status().get("path")
    h.click(d, "#podcasts .podcast-play", 0)
    h.wait("Play without a session leads to sign in", lambda: h.el(d, "page-signin").is_displayed())
    if h.status().get("path") != before:
        h.fail("Play without a session changed what plays")
    h.log(f"{width}x{height}: signed out, the Podcasts page lists the feed, says to sign in, and Play leads there")


def run(h, d, width, height):
    wait_listed(h, d)
    if h.el(d, "podcasts-signin").is_displayed():
        h.fail("signed in, the Podcasts page still says to sign in")
    rows = listed(h, d)
    if len(rows) != 1:
        h.fail(f"the page lists {len(rows)} podcasts, not 1: {rows!r}")
    name, title, counts, next_up = rows[0]
    if name != "Web Show" or title != TITLE:
        h.fail(f"the podcast shows as {name!r} titled {title!r}")
    if h.js(d, "return document.querySelectorAll('#podcasts img').length") != 0:
        h.fail("the feed's title was made markup")
    if not counts.startswith("2 episodes") or next_up != "Next: Episode One":
        h.fail(f"the counts {counts!r} and next {next_up!r}")
    h.check_layout(d, width)
    h.screenshot(d, "podcasts", width, height)
    before = h.get("/api/queue")["entries"]
    h.click(d, "#podcasts .podcast-play", 0)
    h.wait("Play reached the player: Episode One plays",
           lambda: h.status().get("title") == "Episode One" and h.status().get("phase") == "playing"
           and h.status().get("count") == 2, timeout=30, seen=lambda: json.dumps(h.status()))
    h.wait("the page says so", lambda: h.txt(d, "podcasts-message") == "Playing Web Show.")
    h.no_alert(d)
    h.log(f"{width}x{height}: the Podcasts page lists the feed with its title as text, and Play plays its next episode")
    # The queue as it was, for what follows.
    h.ctl("clear")
    for e in before:
        h.ctl("add", e["path"])
    h.post("/api/control", {"line": "play 1"})
    h.wait("the queue is back", lambda: h.status()["count"] == len(before) and h.status()["index"] == 1)
