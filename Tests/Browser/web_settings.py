# SPDX-License-Identifier: MIT
"""The Settings page, driven from web_test.py (signed in): `run(t, d, width, height)` with `t` the
web_test module (its helpers and arguments). A setting changed on the page reaches the config
file (the rest of the file as it was) and the player (status --json's volumeMax, the volume
slider's range); a value the config refuses shows the config's words and writes nothing; signed
out the API answers 401; a volume cap added, saved, shown in the rules' state and removed again
(the config has an empty `parental` section). Screenshots and axe-core as for every page."""

import json
import urllib.error
import urllib.request


def settings_value(t, d, key):
    return t.js(d, "const e = document.querySelector(`[data-key='${arguments[0]}']`); return e ? e.value : null", key)


def set_field(t, d, key, value):
    t.js(d, "const e = document.querySelector(`[data-key='${arguments[0]}']`); e.value = arguments[1];"
         " e.dispatchEvent(new Event('input', {bubbles: true}));", key, str(value))


def run(t, d, width, height):
    # Signed out (no cookie): no settings.
    try:
        urllib.request.urlopen(t.args.url.rstrip("/") + "/api/settings", timeout=5)
        t.fail("GET /api/settings answered without a session")
    except urllib.error.HTTPError as e:
        if e.code != 401:
            t.fail(f"GET /api/settings without a session answered {e.code}, not 401")

    t.go(d, "settings")
    t.wait("the settings show", lambda: t.el(d, "settings-form").is_displayed() and settings_value(t, d, "volumeMax") not in (None, ""))
    t.check_layout(d, width)
    facts = t.txt(d, "settings-facts")
    if t.args.config not in facts:
        t.fail(f"the facts do not name the config file: {facts!r}")
    t.screenshot(d, "settings", width, height)
    with open(t.args.config, "rb") as f:
        before = f.read()
    original = int(settings_value(t, d, "volumeMax"))
    wanted = 70 if width < 1000 else 65

    # A value the config refuses: its words, and the file untouched.
    set_field(t, d, "volumeMin", wanted + 10)
    set_field(t, d, "volumeMax", wanted)
    t.el(d, "settings-save").click()
    t.wait("the config's refusal shows", lambda: "volumeMin: must be 0 to 100, with volumeMin <= volumeMax" in t.txt(d, "settings-message"))
    with open(t.args.config, "rb") as f:
        if f.read() != before:
            t.fail("a refused change was written")
    t.screenshot(d, "settings-refused", width, height)

    # A good one: in the file, in the player, in the slider.
    set_field(t, d, "volumeMin", 0)
    t.el(d, "settings-save").click()
    t.wait("the change is saved and applied", lambda: "The player applied it" in t.txt(d, "settings-message"))
    t.wait("status --json has the new limit", lambda: t.status().get("volumeMax") == wanted)
    with open(t.args.config, "rb") as f:
        after = f.read()
    if json.loads(after).get("volumeMax") != wanted:
        t.fail(f"the config file does not say volumeMax {wanted}: {after!r}")
    rest = {k: v for k, v in json.loads(after).items() if k not in ("volumeMax", "volumeMin")}
    if rest != {k: v for k, v in json.loads(before).items() if k not in ("volumeMax", "volumeMin")}:
        t.fail("the other keys of the config file changed")
    t.go(d, "now")
    t.wait("the volume slider stops at the new limit", lambda: t.el(d, "volume").get_attribute("max") == str(wanted))
    t.log(f"{width}x{height}: settings: a refused value shows the config's words, volumeMax {wanted} reaches the file, the player and the slider")

    # Back as it was, for what follows.
    t.go(d, "settings")
    # The fields of the visit before are still in the page while it loads again: wait for the load
    # to end (its message cleared), or a value set now is rendered over and the save finds nothing.
    t.wait("the settings are loaded again", lambda: t.txt(d, "settings-message") == "", timeout=15)
    t.wait("the settings show again", lambda: settings_value(t, d, "volumeMax") == str(wanted))
    set_field(t, d, "volumeMax", original)
    t.el(d, "settings-save").click()
    # The save reloads the page's fields before it says so: the rules below are set after that.
    t.wait("the change back is saved and applied", lambda: "The player applied it" in t.txt(d, "settings-message"), timeout=15)
    t.wait("the limit is back", lambda: t.status().get("volumeMax") == original, timeout=15)
    parental(t, d, width, height, original)
    system_page(t, d, width, height)


def parental(t, d, width, height, original):
    """A volume cap for the whole day added on the page: in the file, applied by the player, shown
    in the rules' state; removed again, the file's parental section is empty as before."""
    t.wait("the quiet hours and caps editors show", lambda: t.js(d, "return !!document.getElementById('set-quiet-on')"
                                                                    " && !!document.getElementById('set-caps-add')"))
    if t.js(d, "return document.getElementById('set-quiet-on').checked"):
        t.fail("quiet hours shown on though the config has none")
    t.el(d, "set-caps-add").click()
    n = t.js(d, "const r = document.querySelectorAll('#set-caps [data-cap]'); return r[r.length - 1].dataset.cap")
    cap = 80 if width < 1000 else 75
    for field, value in (("from", "00:00"), ("to", "00:00"), ("volume", str(cap))):
        t.js(d, "const e = document.getElementById(arguments[0]); e.value = arguments[1];"
             " e.dispatchEvent(new Event('input', {bubbles: true}));", f"set-cap-{n}-{field}", value)
    t.el(d, "settings-save").click()
    t.wait("the cap is saved and applied", lambda: "The player applied it" in t.txt(d, "settings-message"))
    t.wait("status --json has the cap", lambda: t.status().get("volumeMax") == min(cap, original))
    with open(t.args.config, "rb") as f:
        written = json.loads(f.read()).get("parental")
    if written != {"caps": [{"from": "00:00", "to": "00:00", "volumeMax": cap}]}:
        t.fail(f"the config's parental section is not the cap: {written!r}")
    t.wait("the rules' state shows", lambda: t.el(d, "settings-parental-box").is_displayed()
           and "Highest volume now" in t.txt(d, "settings-parental"))
    t.check_layout(d, width)
    t.screenshot(d, "settings-parental", width, height)
    # Removed: the section as it was, the player's limit back.
    t.wait("the cap shows after the reload", lambda: t.js(d, "return document.querySelectorAll('#set-caps [data-cap]').length") == 1)
    t.js(d, "document.querySelector('#set-caps [data-cap] > button').click()")
    t.el(d, "settings-save").click()
    t.wait("the limit is back without the cap", lambda: t.status().get("volumeMax") == original and "parental" not in t.status())
    with open(t.args.config, "rb") as f:
        if json.loads(f.read()).get("parental") != {"caps": []}:
            t.fail("the cap was not removed from the config")
    t.wait("the rules' state hides", lambda: not t.el(d, "settings-parental-box").is_displayed())
    t.log(f"{width}x{height}: settings: a volume cap of {cap} reaches the file and the player, shows in the rules' state, and goes again")


def system_page(t, d, width, height):
    """The System page (signed in): the player's version and its last log lines, as text."""
    t.go(d, "system")
    t.wait("the system facts show", lambda: t.el(d, "system-box").is_displayed() and "Version" in t.txt(d, "system-facts"))
    t.wait("the log lines show", lambda: t.js(d, "return document.querySelectorAll('#system-log li').length") > 0)
    t.check_layout(d, width)
    facts = t.txt(d, "system-facts")
    for words in ("Up for", "Memory", "This page reached it at"):
        if words not in facts:
            t.fail(f"the System page lacks {words!r}: {facts!r}")
    if t.js(d, "return document.querySelectorAll('#system-log *:not(li)').length") != 0:
        t.fail("a log line became markup")
    # The appliance image's setup problems (the test's problems file): listed as text, first.
    if not t.el(d, "system-setup").is_displayed():
        t.fail("the setup problems are not shown")
    problems = t.js(d, "return [...document.querySelectorAll('#system-setup-problems li')].map((li) => li.textContent)")
    if problems != ["wifi.txt: <img src=x onerror=alert(4)> \ufffd[2J", "timezone.txt: 'Mars/Base' is not a time zone"]:
        t.fail(f"the setup problems shown are {problems!r}")
    if t.js(d, "return document.querySelectorAll('#system-setup-problems *:not(li)').length") != 0:
        t.fail("a setup problem became markup")
    t.screenshot(d, "system", width, height)
    lines = t.js(d, "return document.querySelectorAll('#system-log li').length")
    t.log(f"{width}x{height}: the System page shows the box, {lines} log lines and {len(problems)} setup problems")
