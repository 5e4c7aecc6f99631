# SPDX-License-Identifier: MIT
"""The Cards and Bookmarks pages in the browser, called by web_test.py (signed in) at each size as
`web_cards.run(web_test_module, driver, width, height)`.

The player runs with the simulated card reader (JUKEBOX_TEST_CARD_PIPE: each line written to the
FIFO `reader` beside the config is a card read) and `rfid.sameCardDelay` 0. Checks: "Assign to the
next card" says "swipe a card now", the swipe maps the card and plays nothing, the page names the
card (through the event stream), the next swipe plays the folder (read back from /api/status);
a value with markup shows as text; a card changed and one deleted from the page leaves the map; the wait
cancelled; a bookmark shown and reset. Screenshots and axe-core as for the other pages.
"""
import json, os, time

from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select


def run(w, d, width, height):
    folder = os.path.dirname(w.args.config)
    reader = os.path.join(folder, "reader")
    card = f"CA{width}"

    def swipe(id_):
        with open(reader, "w") as f:
            f.write(id_ + "\n")

    def cards_json():
        return json.loads(w.ctl("cards", "--json"))

    def listed():
        return w.js(d, "return [...document.querySelectorAll('#cards .card-id')].map(e => e.textContent)")

    before = w.get("/api/queue")["entries"]
    playing = w.status()["path"]

    # ---- assign through the page, then swipe
    w.go(d, "cards")
    w.wait("the card settings show", lambda: w.txt(d, "cards-second") == "toggle" and w.txt(d, "cards-remove") == "none")
    w.wait("the folders to choose from", lambda: len(Select(w.el(d, "card-folder")).options) > 0)
    w.check_layout(d, width)
    options = Select(w.el(d, "card-folder")).options
    target = next((o.get_attribute("value") for o in options if o.get_attribute("value").endswith("/library/Album")), None)
    if not target:
        w.fail(f"no library folder to choose: {[o.get_attribute('value') for o in options]}")
    Select(w.el(d, "card-folder")).select_by_value(target)
    w.el(d, "card-assign").click()
    w.wait("the page says swipe a card now", lambda: w.txt(d, "card-wait-text").startswith("Swipe a card now"))
    if (w.status().get("cardAssign") or {}).get("stage") != "waiting":
        w.fail(f"the player is not waiting for a card: {w.status().get('cardAssign')}")
    w.screenshot(d, "cards-swipe", width, height)
    start = time.monotonic()
    swipe(card.lower())
    w.wait("the page names the card swiped", lambda: w.txt(d, "card-wait-text") == f"Card {card} now plays {target}")
    w.figures[f"card assigned on the page {width} ms"] = round((time.monotonic() - start) * 1000)
    if w.status()["path"] != playing:
        w.fail("the swipe that was assigned played something")
    w.wait("the list shows the card", lambda: card in listed())
    if not any(c["id"] == card and c.get("paths") == [target] for c in cards_json()["cards"]):
        w.fail(f"the map has no {card}: {cards_json()}")
    # The next swipe plays it.
    swipe(card)
    w.wait("the card plays its folder", lambda: (w.status()["path"] or "").startswith(target + "/"), timeout=10)
    w.log(f"{width}x{height}: a card assigned through the page ({w.figures[f'card assigned on the page {width} ms']} ms to show), then played")

    # ---- a value with markup is text
    w.ctl("card", "assign", "5A", "/music/" + w.XSS)
    w.go(d, "now")
    w.go(d, "cards")
    w.wait("the card with markup shows as text", lambda: any(w.XSS in t for t in w.js(d, "return [...document.querySelectorAll('#cards .sub')].map(e => e.textContent)")))
    if w.js(d, "return document.querySelectorAll('#cards img').length") != 0:
        w.fail("markup in a card's value made an element")
    w.no_alert(d)
    w.screenshot(d, "cards", width, height)

    # ---- delete from the page
    w.js(d, "document.querySelector('#cards button[aria-label=\"Delete card 5A\"]').click()")
    w.wait("the page drops the deleted card", lambda: "5A" not in listed())
    if any(c["id"] == "5A" for c in cards_json()["cards"]):
        w.fail("the deleted card is still on the map")

    # ---- cancel a wait
    w.js(d, "document.querySelector('input[name=card-kind][value=command]').click()")
    Select(w.el(d, "card-command")).select_by_value("toggle")
    w.el(d, "card-assign").click()
    w.wait("waiting again", lambda: w.el(d, "card-wait-cancel").is_displayed())
    w.el(d, "card-wait-cancel").click()
    w.wait("the wait is cancelled", lambda: not w.el(d, "card-wait").is_displayed() and w.status().get("cardAssign") is None)
    w.log(f"{width}x{height}: markup in a card's value is text, a card deleted, a wait cancelled")

    # ---- bookmarks: the card's folder, paused, has one; reset it from the page. From its first
    # track (300 s): at 1280 px an upload earlier left the folder's bookmark on a short track, and
    # the swipe resumed there; on a busy machine the folder then played to its end (no bookmark
    # left) before this step came.
    w.post("/api/control", {"line": "play 1"})
    w.wait("the card's folder plays from its first track",
           lambda: (s := w.status())["phase"] == "playing" and s["index"] == 1 and (s["path"] or "").startswith(target + "/"))
    w.post("/api/control", {"line": "pause"})
    w.go(d, "bookmarks")
    shown = lambda: w.js(d, "return [...document.querySelectorAll('#bookmarks .bookmark-folder')].map(e => e.textContent)")
    w.wait("the bookmark shows", lambda: shown() == [target],
           seen=lambda: f"page {shown()}, player {w.ctl('bookmarks', '--json').strip()}, status {w.status()}")
    w.check_layout(d, width)
    w.screenshot(d, "bookmarks", width, height)
    w.js(d, "document.querySelector('#bookmarks button').click()")
    w.wait("the bookmark is reset", lambda: w.el(d, "bookmarks-empty").is_displayed() and w.txt(d, "bookmarks-message") == "1 bookmark reset")
    if json.loads(w.ctl("bookmarks", "--json"))["bookmarks"]:
        w.fail("the player still has the bookmark")
    w.log(f"{width}x{height}: a bookmark shown and reset")

    # ---- change (reassign) a card from the list
    w.go(d, "cards")
    w.wait("the list shows the card", lambda: card in listed())
    w.js(d, "document.querySelector(`#cards button[aria-label=\"Change card ${arguments[0]}\"]`).click()", card)
    w.wait("the form names the card", lambda: w.txt(d, "card-assign") == f"Assign to card {card}")
    w.js(d, "document.querySelector('input[name=card-kind][value=command]').click()")
    Select(w.el(d, "card-command")).select_by_value("next")
    w.el(d, "card-assign").click()
    w.wait("the card now runs next", lambda: any(c["id"] == card and c.get("command") == "next" for c in cards_json()["cards"]))
    w.wait("the page lists it", lambda: w.txt(d, "cards-message") == f"card {card} is next" and w.txt(d, "card-assign") == "Assign to the next card")
    w.log(f"{width}x{height}: a card changed from the list")

    # ---- the card off the map and the queue as it was, for what follows
    w.ctl("card", "delete", card)
    w.ctl("clear")
    for e in before:
        w.ctl("add", e["path"])
    w.post("/api/control", {"line": "play 1"})
    w.wait("the queue is back", lambda: w.status()["count"] == len(before) and w.status()["index"] == 1)
