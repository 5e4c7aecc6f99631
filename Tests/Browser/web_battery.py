# SPDX-License-Identifier: MIT
"""The battery in the page's header (docs/BOX.md, "Battery") in the real browser, called from
web_test.py with its module as `h` and the simulated battery's FIFO (JUKEBOX_TEST_BATTERY_PIPE: each
line a reading): nothing shows before a reading; a reading shows within the page's live update."""


def run(h, d, width, height, pipe):
    h.go(d, "now")
    if h.el(d, "battery").is_displayed():
        h.fail("a battery shows before any reading")
    with open(pipe, "w") as f:
        f.write("54.4 charging\n")
    h.wait("the reading shows", lambda: h.txt(d, "battery") == "Battery 54 %, charging")
    with open(pipe, "w") as f:
        f.write("low\n")
    h.wait("a low pin shows", lambda: h.txt(d, "battery") == "Battery low")
    h.check_layout(d, width)
    h.log(f"{width}x{height}: the battery shows in the header from the player's readings")
