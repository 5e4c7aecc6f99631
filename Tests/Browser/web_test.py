#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The web page in a real browser (Debian's chromium through chromium-driver, python3-selenium).

Driven by WebBrowserTests (Tests/JukeboxEndToEndTests), which starts the player, `jukebox web` and
chromedriver (all dying with the test process) and passes their addresses. Checks each page at
360x740 and 1280x800: controls reach the player (read back from /api/status), a change made with
`ctl` shows within 500 ms, the queue's jump/move/remove, an XSS file name shown as text, setting the
PIN and signing in, and the page reconnecting by itself when the player restarts. Saves a screenshot
of each page at each size. Prints one line per check; exits 1 at the first failure.
"""
import argparse, json, os, shutil, signal, subprocess, sys, tempfile, time, urllib.error, urllib.parse, urllib.request

from selenium import webdriver
import web_upload
from selenium.common.exceptions import NoAlertPresentException, StaleElementReferenceException
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import Select

SIZES = [(360, 740), (1280, 800)]
XSS = "<img src=x onerror=alert(1)>"
PIN = "2468"
# What an injected script may take (execute_async_script): a wait for the page.
SCRIPT_SECONDS = 5

args = None
figures = {}


def log(*words):
    print(*words, flush=True)


def fail(message):
    log("FAIL:", message)
    raise SystemExit(1)


def wait(what, predicate, timeout=5.0, step=0.02, seen=None):
    """Polls `predicate` (a browser or an HTTP read) until true; fails after `timeout` seconds,
    saying what `seen()` returns then (when given)."""
    end = time.monotonic() + timeout
    last = None
    while time.monotonic() < end:
        try:
            last = predicate()
            if last:
                return last
        except Exception as e:  # the page changing under a read: try again
            last = e
        time.sleep(step)
    fail(f"{what} (after {timeout} s; last: {last!r}" + (f"; seen: {seen()!r})" if seen else ")"))


def get(path):
    with urllib.request.urlopen(args.url.rstrip("/") + path, timeout=5) as r:
        return json.loads(r.read())


def status():
    return get("/api/status")


def post(path, body):
    request = urllib.request.Request(args.url.rstrip("/") + path, data=json.dumps(body).encode(),
                                     headers={"Content-Type": "application/json"}, method="POST")
    with urllib.request.urlopen(request, timeout=5) as r:
        return json.loads(r.read())


def ctl(*words):
    r = subprocess.run([args.jukebox, "ctl", "--socket", args.socket, *words], capture_output=True, text=True, timeout=10)
    if r.returncode != 0:
        fail(f"ctl {' '.join(words)}: {r.stdout}{r.stderr}")
    return r.stdout


def browser(width, height):
    options = webdriver.ChromeOptions()
    options.binary_location = args.chromium
    for a in ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
              "--disable-extensions", "--disable-background-networking", "--disable-sync", "--hide-scrollbars",
              "--force-color-profile=srgb", "--force-device-scale-factor=1", f"--window-size={width},{height}"]:
        options.add_argument(a)
    options.set_capability("goog:loggingPrefs", {"browser": "SEVERE"})
    driver = webdriver.Remote(command_executor=args.driver, options=options)
    # Headless chromium keeps a window at least 500 px wide: the viewport is set through the
    # DevTools protocol instead (chromedriver's endpoint for it, which Remote does not name).
    driver.command_executor._commands["executeCdpCommand"] = ("POST", "/session/$sessionId/goog/cdp/execute")
    driver.execute("executeCdpCommand", {"cmd": "Emulation.setDeviceMetricsOverride", "params": {
        "width": width, "height": height, "deviceScaleFactor": 1, "mobile": width < 600}})
    driver.set_page_load_timeout(15)
    driver.set_script_timeout(SCRIPT_SECONDS)
    return driver


def el(d, id_):
    return d.find_element(By.ID, id_)


def txt(d, id_):
    return el(d, id_).text


def js(d, script, *a):
    return d.execute_script(script, *a)


def no_alert(d):
    try:
        a = d.switch_to.alert
        fail(f"an alert opened: {a.text!r}")
    except NoAlertPresentException:
        pass


def screenshot(d, page, width, height):
    js(d, "window.scrollTo(0, 0)")
    name = f"{page}-{width}x{height}.png"
    path = os.path.join(args.screens, name)
    d.save_screenshot(path)
    if width == 360 and args.docs:
        try:
            shutil.copyfile(path, os.path.join(args.docs, f"web-{page}.png"))
        except OSError as e:  # a read-only checkout: the screenshots stay under .build
            log("not copied to the docs:", e)
    log("screenshot", path)
    accessibility(d, page, width, height)


def accessibility(d, page, width, height):
    """axe-core (--axe: the axe.min.js board/setup.sh fetches) on the page as it shows: fails on any
    serious or critical violation, printing each with the elements it names. Called for every page
    and state the test screenshots, at both sizes."""
    if not args.axe:
        return
    with open(args.axe, encoding="utf-8") as f:
        source = f.read()
    # Injected by the driver (not a <script> element, which the page's CSP would refuse).
    d.execute_script(source + "\n;window.__axe = axe;")
    # axe's run is work in the browser, not a wait on the product: the SCRIPT_SECONDS every other script
    # gets (a wait for the page) is too short for it on a loaded machine (a CI run at load 11
    # timed out on the parental settings). 60 s bounds it; its time is in the figures.
    d.set_script_timeout(60)
    t0 = time.monotonic()
    result = d.execute_async_script(
        "const done = arguments[arguments.length - 1];"
        "window.__axe.run(document, {resultTypes: ['violations']})"
        ".then(r => done({violations: r.violations.map(v => ({id: v.id, impact: v.impact, help: v.help,"
        " nodes: v.nodes.map(n => n.target.join(' ') + ': ' + n.failureSummary)}))}))"
        ".catch(e => done({error: String(e)}));")
    d.set_script_timeout(SCRIPT_SECONDS)
    figures.setdefault("axe-seconds", []).append(round(time.monotonic() - t0, 2))
    if "error" in result:
        fail(f"axe-core failed on {page} at {width}x{height}: {result['error']}")
    bad = [v for v in result["violations"] if v["impact"] in ("serious", "critical")]
    for v in result["violations"]:
        log(f"axe {page} {width}x{height}: {v['impact']} {v['id']}: {v['help']}")
        for n in v["nodes"][:5]:
            log("    ", " ".join(n.split()))
    if bad:
        fail(f"axe-core: {len(bad)} serious or critical violation(s) on {page} at {width}x{height}")
    figures.setdefault("axe", []).append(f"{page}-{width}: {len(result['violations'])} minor")


def click(d, css, index=0):
    """Clicks the index-th element matching css, found again if a re-render replaced it."""
    for _ in range(20):
        try:
            d.find_elements(By.CSS_SELECTOR, css)[index].click()
            return
        except StaleElementReferenceException:
            time.sleep(0.05)
    fail(f"{css}[{index}] kept being replaced")


def go(d, page):
    d.execute_script("location.hash = arguments[0]", "#/" + page)
    wait(f"page {page} shown", lambda: el(d, "page-" + page).is_displayed())


def check_layout(d, width):
    inner = js(d, "return window.innerWidth")
    if inner != width:
        fail(f"the viewport is {inner} px wide, not {width}")
    overflow = js(d, "return document.documentElement.scrollWidth - window.innerWidth")
    if overflow > 0:
        fail(f"the page scrolls sideways by {overflow} px at {width} px")


def now_playing(d, width, height):
    go(d, "now")
    wait("the page shows the player online", lambda: js(d, "return document.body.dataset.online") == "yes")
    wait("the title shows", lambda: txt(d, "title") not in ("", "Nothing playing"))
    check_layout(d, width)
    for id_ in ["prev", "toggle", "stop", "next", "volume", "shuffle", "repeat", "position"]:
        if not el(d, id_).is_displayed():
            fail(f"#{id_} is not visible at {width}x{height}")
    # The buttons reach the player.
    wait("playing before the buttons", lambda: status()["phase"] == "playing")
    el(d, "toggle").click()
    wait("toggle paused the player", lambda: status()["phase"] == "paused")
    wait("the page shows Play", lambda: el(d, "toggle").get_attribute("aria-label") == "Play")
    el(d, "toggle").click()
    wait("toggle played again", lambda: status()["phase"] == "playing")
    before = status()["index"]
    el(d, "next").click()
    wait("next moved on", lambda: status()["index"] == before % status()["count"] + 1)
    el(d, "prev").click()
    wait("prev went back", lambda: status()["index"] == before)
    el(d, "shuffle").click()
    wait("shuffle on", lambda: status()["shuffle"] is True)
    # The button says what the next click does from the state the page shows: as a person would,
    # the test waits for the page to show shuffle on before clicking it off.
    wait("the page shows shuffle on", lambda: el(d, "shuffle").get_attribute("aria-pressed") == "true")
    el(d, "shuffle").click()
    wait("shuffle off", lambda: status()["shuffle"] is False)
    # The keyboard: Tab reaches the play/pause button, its focus ring shows, Space presses it.
    js(d, "document.activeElement.blur(); window.scrollTo(0, 0)")
    body = d.find_element(By.TAG_NAME, "body")
    body.send_keys(Keys.TAB)
    for _ in range(20):
        if d.switch_to.active_element.get_attribute("id") == "toggle":
            break
        d.switch_to.active_element.send_keys(Keys.TAB)
    else:
        fail("Tab never reached the play/pause button")
    # At least 2 px (WCAG 2.2's focus appearance), not the browser's thin default.
    ring = js(d, "const s = getComputedStyle(document.activeElement); return [s.outlineStyle, parseFloat(s.outlineWidth)]")
    if ring[0] == "none" or ring[1] < 2:
        fail(f"the focused button shows no focus ring of 2 px or more ({ring})")
    d.switch_to.active_element.send_keys(Keys.SPACE)
    wait("Space on play/pause paused the player", lambda: status()["phase"] == "paused")
    d.switch_to.active_element.send_keys(Keys.SPACE)
    wait("Space on play/pause played again", lambda: status()["phase"] == "playing")
    # The volume slider (arrow keys) and the repeat menu.
    volume = status()["volume"]
    el(d, "volume").send_keys(Keys.ARROW_LEFT if volume > 0 else Keys.ARROW_RIGHT)
    wait("the volume slider reached the player", lambda: status()["volume"] == (volume - 1 if volume > 0 else 1))
    Select(el(d, "repeat")).select_by_value("all")
    wait("repeat all reached the player", lambda: status()["repeat"] == "all")
    Select(el(d, "repeat")).select_by_value("off")
    wait("repeat off reached the player", lambda: status()["repeat"] == "off")
    log(f"{width}x{height}: play/pause/next/prev/shuffle/volume/repeat reach the player, by mouse and by keyboard")
    # A change made elsewhere shows within 500 ms (the page's own clock; no poll of ours in between).
    for volume in (37, 64):
        ctl("vol", str(volume))
        start = time.monotonic()
        wait(f"ctl vol {volume} shows", lambda: txt(d, "volume-value") == str(volume), timeout=0.5, step=0.005)
        ms = (time.monotonic() - start) * 1000
        figures.setdefault("ctl-to-page ms", []).append(round(ms))
    ctl("pause")
    start = time.monotonic()
    wait("ctl pause shows", lambda: el(d, "toggle").get_attribute("aria-label") == "Play", timeout=0.5, step=0.005)
    figures["ctl-to-page ms"].append(round((time.monotonic() - start) * 1000))
    ctl("play")
    wait("ctl play shows", lambda: el(d, "toggle").get_attribute("aria-label") == "Pause", timeout=0.5, step=0.005)
    log(f"{width}x{height}: ctl changes show in the page in {figures['ctl-to-page ms'][-3:]} ms")
    # The player's message (here an interruption's, with markup in its reason) shows, as text.
    ctl("interrupt", "begin", "doorbell", "<b>ring</b>")
    wait("the interruption's message shows", lambda: txt(d, "message") == "interrupted: doorbell <b>ring</b>", timeout=0.5, step=0.005)
    if js(d, "return document.getElementById('message').children.length") != 0:
        fail("the message made an element")
    ctl("interrupt", "end")
    wait("the message goes with the interruption", lambda: txt(d, "message") == "" and status()["phase"] == "playing")
    log(f"{width}x{height}: the player's message shows as text")
    # The same picture every run (so docs/images changes only when the page does): paused at 0:30.
    post("/api/control", {"line": "seek 0:30"})
    ctl("pause")
    wait("paused at 0:30", lambda: txt(d, "elapsed") == "0:30" and el(d, "toggle").get_attribute("aria-label") == "Play")
    screenshot(d, "now", width, height)
    # The seek bar (arrow key: one second on) reaches the player.
    el(d, "position").send_keys(Keys.ARROW_RIGHT)
    wait("the seek bar reached the player", lambda: 30.9 <= status()["position"] <= 31.5)
    ctl("play")
    wait("playing after the picture", lambda: status()["phase"] == "playing")


def queue_entries(d):
    return js(d, "return [...document.querySelectorAll('#queue li')].map(li => li.querySelector('.entry span').textContent)")


def queue_page(d, width, height):
    go(d, "queue")
    count = status()["count"]
    wait("the queue lists every entry", lambda: len(queue_entries(d)) == count)
    check_layout(d, width)
    # Jump to the third entry.
    target = get("/api/queue")["entries"][2]
    click(d, "#queue li .entry", 2)
    wait("jump played entry 3", lambda: status()["index"] == 3 and status()["path"] == target["path"])
    wait("the page marks entry 3 current",
         lambda: js(d, "return document.querySelector('#queue li[aria-current=true]')?.dataset.position") == "3")
    # Move the first entry down.
    first = get("/api/queue")["entries"][0]["path"]
    click(d, "#queue li [data-role=down]", 0)
    wait("move down reached the player", lambda: get("/api/queue")["entries"][1]["path"] == first)
    # Remove the last entry.
    last = get("/api/queue")["entries"][-1]["path"]
    click(d, "#queue li [data-role=remove]", -1)
    wait("remove reached the player", lambda: status()["count"] == count - 1)
    if any(e["path"] == last for e in get("/api/queue")["entries"]):
        fail("the removed entry is still queued")
    wait("the page lists the rest", lambda: len(queue_entries(d)) == count - 1)
    # The XSS name is text.
    names = queue_entries(d)
    if not any(XSS in n for n in names):
        fail(f"the XSS entry is not shown as text: {names}")
    if js(d, "return document.querySelectorAll('#queue img, #main img:not(.cover-image)').length") != 0:
        fail("an img element was made from a name")
    no_alert(d)
    log(f"{width}x{height}: queue jump/move/remove reach the player; the XSS name shows as text")
    screenshot(d, "queue", width, height)
    # Put it back as it was for the next size: the removed file at the end, the first first.
    ctl("add", last)
    post("/api/control", {"line": "move 2 1"})


def xss_playing(d, width, height):
    position = next(e["position"] for e in get("/api/queue")["entries"] if XSS in e["path"])
    post("/api/control", {"line": f"play {position}"})
    go(d, "now")
    wait("the XSS title shows as text", lambda: XSS in txt(d, "title"))
    if js(d, "return document.querySelectorAll('img:not(.cover-image)').length") != 0:
        fail("an img element was made from the title")
    no_alert(d)
    log(f"{width}x{height}: the XSS title shows as text")


def stream(d, width, height):
    """A radio station: the station as the artist, what is on air as the title, no seek bar."""
    ctl("add", args.stream)
    position = status()["count"]
    post("/api/control", {"line": f"play {position}"})
    go(d, "now")
    wait("the station shows", lambda: txt(d, "artist") == "Test FM" and txt(d, "title").startswith("Song "), timeout=10)
    if not el(d, "position").get_attribute("disabled") or txt(d, "duration") != "live":
        fail(f"a live stream shows a seek bar ({txt(d, 'duration')!r})")
    screenshot(d, "radio", width, height)
    post("/api/control", {"line": f"delete {position}"})
    post("/api/control", {"line": "play 1"})
    wait("back to the first track", lambda: status()["index"] == 1 and not status()["stream"])
    log(f"{width}x{height}: a stream shows its station and what is on air, live, without a seek bar")


def sign_in(d, width, height):
    go(d, "signin")
    check_layout(d, width)
    session = get("/api/session")
    if not session["pinSet"]:
        # The page cannot set the first PIN (its first visitor would own the box): it says how
        # to set it on the box, the server refuses it, and `jukebox web-pin` sets it.
        wait("the page says to set the PIN on the box", lambda: el(d, "setpin-form").is_displayed()
             and "jukebox web-pin" in txt(d, "setpin-form"))
        check_layout(d, width)
        screenshot(d, "setpin", width, height)
        try:
            post("/api/pin", {"pin": PIN})
            fail("the page's POST /api/pin set the first PIN")
        except urllib.error.HTTPError as e:
            if e.code != 403:
                fail(f"POST /api/pin answered {e.code}, not 403")
        r = subprocess.run([args.jukebox, "web-pin", "--state", os.path.dirname(args.config)], input=PIN + "\n",
                           capture_output=True, text=True, timeout=20)
        if r.returncode != 0:
            fail(f"jukebox web-pin: {r.stderr}")
        go(d, "now")
        go(d, "signin")
    wait("the sign-in form shows", lambda: el(d, "login-form").is_displayed())
    el(d, "pin").send_keys("0000")
    el(d, "login").click()
    wait("a wrong PIN is refused", lambda: "wrong" in txt(d, "signin-message").lower())
    if el(d, "signed-in").is_displayed():
        fail("a wrong PIN signed in")
    screenshot(d, "signin", width, height)
    el(d, "pin").clear()
    el(d, "pin").send_keys(PIN)
    el(d, "login").click()
    wait("the PIN signs in", lambda: el(d, "signed-in").is_displayed())
    log(f"{width}x{height}: PIN set, a wrong one refused, the right one signs in")


def library_page(d, width, height):
    """Browse into a folder of the music folder and play it (signed in), checked through /api/status."""
    go(d, "library")
    wait("the music folder lists its folders",
         lambda: js(d, "return [...document.querySelectorAll('#library a.folder')].map(a => a.textContent)") == ["Album/"])
    check_layout(d, width)
    before = get("/api/queue")["entries"]
    # Into the folder with the keyboard: focus its link, Enter.
    js(d, "document.querySelector('#library a.folder').focus()")
    d.switch_to.active_element.send_keys("\n")
    wait("the folder lists its files", lambda: js(d, "return [...document.querySelectorAll('#library .entry > span:first-child')].map(s => s.textContent)") == ["Library 1", "Library 2"])
    crumbs = js(d, "return [...document.querySelectorAll('#crumbs a')].map(a => a.textContent)")
    if crumbs != ["Music", "Album"]:
        fail(f"the breadcrumbs are {crumbs}")
    check_layout(d, width)
    screenshot(d, "library", width, height)
    el(d, "lib-play").click()
    wait("Play folder reached the player",
         lambda: status()["count"] == 2 and "/library/Album/" in (status().get("path") or "") and status()["phase"] == "playing")
    # Up again through the breadcrumbs.
    click(d, "#crumbs a", 0)
    wait("the breadcrumb leads back up", lambda: js(d, "return document.querySelectorAll('#library a.folder').length") == 1)
    log(f"{width}x{height}: the library browses into a folder, its breadcrumbs lead back, Play folder plays it")
    # The queue as it was, for what follows.
    ctl("clear")
    for e in before:
        ctl("add", e["path"])
    post("/api/control", {"line": "play 1"})
    wait("the queue is back", lambda: status()["count"] == len(before) and status()["index"] == 1)


def library_signed_out(d, width):
    """Play folder without a session leads to the sign-in page (the server's 401)."""
    go(d, "library")
    wait("the music folder lists its folders", lambda: js(d, "return document.querySelectorAll('#library a.folder').length") == 1)
    click(d, "#library a.folder", 0)
    wait("the folder opens", lambda: el(d, "folder-actions").is_displayed())
    el(d, "lib-add").click()
    wait("Add without a session leads to sign in", lambda: el(d, "page-signin").is_displayed())


def restart(d, width, height):
    """The player goes away and comes back while the page is open: the page reconnects by itself."""
    go(d, "now")
    os.kill(args.pid, signal.SIGTERM)
    wait("the page shows reconnecting", lambda: el(d, "offline").is_displayed(), timeout=10)
    screenshot(d, "offline", width, height)
    player = subprocess.Popen(["/usr/bin/setpriv", "--pdeathsig", "KILL", "--", args.jukebox, "run", "--config", args.config],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    start = time.monotonic()
    wait("the page reconnects by itself", lambda: not el(d, "offline").is_displayed()
         and js(d, "return document.body.dataset.online") == "yes", timeout=20)
    wait("the page shows the restarted player's track", lambda: txt(d, "title") not in ("", "Nothing playing"), timeout=10)
    figures["reconnect s"] = round(time.monotonic() - start, 2)
    log(f"{width}x{height}: the page reconnected {figures['reconnect s']} s after the player was started again")
    return player


def main():
    global args
    p = argparse.ArgumentParser()
    p.add_argument("--url", required=True)
    p.add_argument("--driver", required=True)
    p.add_argument("--chromium", required=True)
    p.add_argument("--jukebox", required=True)
    p.add_argument("--socket", required=True)
    p.add_argument("--config", required=True)
    p.add_argument("--pid", type=int, required=True)
    p.add_argument("--stream", required=True)
    p.add_argument("--screens", required=True)
    p.add_argument("--docs", default="")
    p.add_argument("--battery-pipe", required=True, help="the player's JUKEBOX_TEST_BATTERY_PIPE")
    p.add_argument("--bluetooth-pipe", required=True, help="the player's JUKEBOX_TEST_BLUETOOTH_PIPE")
    p.add_argument("--bluetooth-args", required=True, help="where the stand-in bluetoothctl notes its calls")
    p.add_argument("--axe", default="", help="axe.min.js (axe-core): check every page for accessibility")
    args = p.parse_args()
    os.makedirs(args.screens, exist_ok=True)
    if args.docs:
        try:
            os.makedirs(args.docs, exist_ok=True)
        except OSError as e:
            log("no docs folder:", e)
    player = None
    try:
        for i, (width, height) in enumerate(SIZES):
            d = browser(width, height)
            try:
                d.get(args.url)
                now_playing(d, width, height)
                queue_page(d, width, height)
                __import__("web_paging").run(sys.modules[__name__], d, width, height)
                xss_playing(d, width, height)
                stream(d, width, height)
                library_signed_out(d, width)
                __import__("web_podcasts").signed_out(sys.modules[__name__], d, width, height)
                sign_in(d, width, height)
                library_page(d, width, height)
                __import__("web_library").run(sys.modules[__name__], d, width, height)
                web_upload.upload_page(sys.modules[__name__], d, width, height, send=i == len(SIZES) - 1)
                __import__("web_cards").run(sys.modules[__name__], d, width, height)
                __import__("web_settings").run(sys.modules[__name__], d, width, height)
                __import__("web_bluetooth").run(sys.modules[__name__], d, width, height)
                __import__("web_sleep").run(sys.modules[__name__], d, width, height)
                __import__("web_speed").run(sys.modules[__name__], d, width, height)
                __import__("web_podcasts").run(sys.modules[__name__], d, width, height)
                if i == len(SIZES) - 1:
                    # Last: the reading stays on the player until its restart (no battery in the pictures).
                    __import__("web_battery").run(sys.modules[__name__], d, width, height, args.battery_pipe)
                    player = restart(d, width, height)
                no_alert(d)
                errors = [e for e in d.get_log("browser") if e.get("level") == "SEVERE"] if hasattr(d, "get_log") else []
                for e in errors:
                    log("console:", e.get("message"))
                    if "Content Security Policy" in (e.get("message") or ""):
                        fail("the page broke its Content-Security-Policy")
            finally:
                d.quit()
        log("figures:", json.dumps(figures))
        log("PASS")
    finally:
        if player:
            player.terminate()
            player.wait(5)


if __name__ == "__main__":
    main()
