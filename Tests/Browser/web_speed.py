# SPDX-License-Identifier: MIT
"""The playback speed on the Now playing page (docs/USING.md, "Playback speed") in the real browser,
called from web_test.py with its module as `h`, signed in (a speed needs a session): the select
reaches the player as one control line (`speed 1.5`) and the status says the new speed, a speed set
elsewhere shows in the select, and "as the folder" goes back to 1. On the Settings page, a speed for
the playing track's folder is added (the config file gets `speeds`, the player applies it to the
track in place: the status says 1.25) and removed again (back to 1, the key gone from the file)."""
import json
import os
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
    # The page has the status saying 1 while the select has the focus (a volume change after it
    # shows: events come in order), so the select still shows "default"; when it loses the focus
    # it shows 1, with no other status to come.
    volume = h.status()["volume"]
    other = volume - 1 if volume > 0 else 1
    h.ctl("vol", str(other))
    h.wait("a status after speed 1 reached the page", lambda: h.txt(d, "volume-value") == str(other))
    if Select(h.el(d, "speed")).first_selected_option.get_attribute("value") != "default":
        h.fail("a status changed the speed select under the user's hand")
    h.js(d, "document.activeElement.blur()")
    h.wait("the select shows 1 again", lambda: Select(h.el(d, "speed")).first_selected_option.get_attribute("value") == "1")
    h.ctl("vol", str(volume))
    # Left as found: the next size's first checks expect the player as it was.
    if before == "stopped":
        h.ctl("stop")
    elif before == "paused":
        h.ctl("pause")
    h.log(f"{width}x{height}: the speed select sets the speed, shows one set elsewhere and goes back to the folder's")
    folder_speeds(h, d, width, height)


def folder_speeds(h, d, width, height):
    folder = os.path.dirname(h.status()["path"])
    h.go(d, "settings")
    # Rows added while the page still loads would be rendered over: wait for the load to end.
    h.wait("the settings are loaded", lambda: h.txt(d, "settings-message") == "", timeout=15)
    h.wait("the folder speeds show", lambda: h.el(d, "set-speeds-add").is_displayed())
    h.el(d, "set-speeds-add").click()
    row = h.js(d, "const r = [...document.querySelectorAll('[data-speed]')]; return r[r.length - 1].dataset.speed")
    h.el(d, f"set-speed-{row}-folder").send_keys(folder)
    Select(h.el(d, f"set-speed-{row}-speed")).select_by_value("1.25")
    h.check_layout(d, width)
    h.screenshot(d, "settings-speeds", width, height)
    h.el(d, "settings-save").click()
    h.wait("the change is saved and applied", lambda: "The player applied it" in h.txt(d, "settings-message"))
    with open(h.args.config) as f:
        if json.load(f).get("speeds") != {folder: 1.25}:
            h.fail("the config file lacks the folder's speed")
    h.wait("the player plays the folder at 1.25", lambda: h.status().get("speed") == 1.25)
    # Removed again: the key leaves the file, the track is at 1.
    h.wait("the saved row shows", lambda: h.js(d, "return document.querySelectorAll('[data-speed]').length") == 1)
    h.js(d, "document.querySelector('[data-speed] button').click()")
    h.el(d, "settings-save").click()
    h.wait("the removal is saved", lambda: h.status().get("speed") == 1)
    with open(h.args.config) as f:
        if "speeds" in json.load(f):
            h.fail("the removed speeds stayed in the config file")
    h.log(f"{width}x{height}: a folder's speed added on the Settings page plays the track at 1.25, removed at 1")
