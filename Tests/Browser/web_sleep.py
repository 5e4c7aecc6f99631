# SPDX-License-Identifier: MIT
"""The sleep timer on the Now playing page (docs/USING.md, "Sleep timer") in the real browser, called
from web_test.py with its module as `h`, signed in (setting the timer needs a session): the select
reaches the player as one control line, the time left shows, a timer set elsewhere shows in the
select, and `off` clears both."""
from selenium.webdriver.support.ui import Select


def run(h, d, width, height):
    h.go(d, "now")
    h.wait("the sleep select shows", lambda: h.el(d, "sleep").is_displayed())
    h.check_layout(d, width)
    Select(h.el(d, "sleep")).select_by_value("30")
    h.wait("sleep 30 reached the player", lambda: (h.status().get("sleep") or {}).get("minutes") == 30)
    h.wait("the time left shows", lambda: h.txt(d, "sleep-left") in ("30 min left", "29 min left"))
    # As for repeat, the select follows the player while it does not have the focus: a timer set
    # elsewhere while it has it shows in the text at once, in the select once it loses the focus
    # (no other status need follow).
    h.ctl("sleep", "track")
    # The track's time left, or "until the end of the track" when the player cannot say.
    h.wait("a timer set elsewhere shows in the text",
           lambda: h.txt(d, "sleep-left") not in ("30 min left", "29 min left", ""), seen=lambda: h.txt(d, "sleep-left"))
    if Select(h.el(d, "sleep")).first_selected_option.get_attribute("value") != "30":
        h.fail("a status changed the sleep select under the user's hand")
    h.js(d, "document.activeElement.blur()")
    h.wait("a timer set elsewhere shows in the select",
           lambda: Select(h.el(d, "sleep")).first_selected_option.get_attribute("value") == "track")
    Select(h.el(d, "sleep")).select_by_value("off")
    h.wait("sleep off reached the player", lambda: h.status().get("sleep") is None)
    h.wait("no time left shows", lambda: h.txt(d, "sleep-left") == "")
    h.log(f"{width}x{height}: the sleep select sets and clears the timer, and shows one set elsewhere")
