# SPDX-License-Identifier: MIT
"""The playback speed on the Now playing page (docs/USING.md, "Playback speed") in the real browser,
called from web_test.py with its module as `h`, signed in (a speed needs a session): the select
reaches the player as one control line (`speed 1.5`) and the status says the new speed, a speed set
elsewhere shows in the select, and "as the folder" goes back to 1."""
from selenium.webdriver.support.ui import Select


def run(h, d, width, height):
    h.go(d, "now")
    h.wait("the speed select shows", lambda: h.el(d, "speed").is_displayed())
    h.check_layout(d, width)
    before = h.status().get("phase")
    h.ctl("play")
    h.wait("a track plays", lambda: h.status().get("phase") == "playing" and h.status().get("speed") == 1)
    Select(h.el(d, "speed")).select_by_value("1.5")
    h.wait("speed 1.5 reached the player", lambda: h.status().get("speed") == 1.5)
    h.wait("the player's status line names it", lambda: "speed 1.5" in h.ctl("status"))
    # As for sleep, the select follows the player while it does not have the focus.
    h.js(d, "document.activeElement.blur()")
    h.ctl("speed", "0.75")
    h.wait("a speed set elsewhere shows in the select",
           lambda: Select(h.el(d, "speed")).first_selected_option.get_attribute("value") == "0.75")
    Select(h.el(d, "speed")).select_by_value("default")
    h.wait("speed default reached the player", lambda: h.status().get("speed") == 1)
    h.js(d, "document.activeElement.blur()")
    h.wait("the select shows 1 again", lambda: Select(h.el(d, "speed")).first_selected_option.get_attribute("value") == "1")
    # Left as found: the next size's first checks expect the player as it was.
    if before == "stopped":
        h.ctl("stop")
    elif before == "paused":
        h.ctl("pause")
    h.log(f"{width}x{height}: the speed select sets the speed, shows one set elsewhere and goes back to the folder's")
