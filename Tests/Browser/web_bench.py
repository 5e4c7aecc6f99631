#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The browser half of `jukebox-bench --only web` (Sources/JukeboxBench/WebBench.swift): headless
chromium (chromium-driver, python3-selenium) against a running `jukebox web` and player. Prints one
JSON line: the first page load with the CPU throttled 6x (DevTools Emulation.setCPUThrottlingRate,
a stand-in for a Pi Zero 2 W), the web process's memory with the page open, and the time from a
`ctl vol N` to the page showing it, measured in the page (a MutationObserver's timestamp on the
wall clock against the wall clock just before the control line was sent)."""
import argparse
import json
import statistics
import subprocess
import time

from selenium import webdriver
from selenium.webdriver.chrome.service import Service


def memory(pid):
    out = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            key, _, value = line.partition(":")
            if key in ("VmRSS", "RssAnon"):
                out[key] = int(value.split()[0])
    return out


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--url", required=True)
    p.add_argument("--jukebox", required=True)
    p.add_argument("--socket", required=True)
    p.add_argument("--pid", type=int, required=True)
    p.add_argument("--chromium", default="/usr/bin/chromium")
    p.add_argument("--driver", default="/usr/bin/chromedriver")
    p.add_argument("--n", type=int, default=20)
    a = p.parse_args()
    options = webdriver.ChromeOptions()
    options.binary_location = a.chromium
    for arg in ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
                "--disable-extensions", "--disable-background-networking", "--window-size=360,740"]:
        options.add_argument(arg)
    d = webdriver.Chrome(service=Service(a.driver), options=options)
    result = {}
    try:
        d.set_page_load_timeout(60)
        d.set_script_timeout(10)
        d.execute_cdp_cmd("Network.enable", {})
        d.execute_cdp_cmd("Network.setCacheDisabled", {"cacheDisabled": True})
        d.execute_cdp_cmd("Emulation.setCPUThrottlingRate", {"rate": 6})
        t0 = time.monotonic()
        d.get(a.url)
        # Shown: the status has arrived and been drawn (the volume's number is the player's).
        end = time.monotonic() + 30
        while d.execute_script("return document.body.dataset.online") != "yes" and time.monotonic() < end:
            time.sleep(0.01)
        shown = time.monotonic() - t0
        if d.execute_script("return document.body.dataset.online") != "yes":
            raise SystemExit("the page never showed the player's status")
        nav = d.execute_script("const n = performance.getEntriesByType('navigation')[0];"
                               "return {dcl: n.domContentLoadedEventEnd, load: n.loadEventEnd};")
        result["throttle6x_load_ms"] = round(nav["load"])
        result["throttle6x_domcontentloaded_ms"] = round(nav["dcl"])
        result["throttle6x_status_shown_ms"] = round(shown * 1000)
        d.execute_cdp_cmd("Emulation.setCPUThrottlingRate", {"rate": 1})
        time.sleep(1)
        result["page_open_kb"] = memory(a.pid)
        d.execute_script("""
            window.__shown = [];
            const out = document.getElementById('volume-value');
            new MutationObserver(() => window.__shown.push([out.textContent, performance.timeOrigin + performance.now()]))
                .observe(out, {childList: true, characterData: true, subtree: true});""")
        latencies = []
        for i in range(a.n):
            volume = 30 + (i % 2) * 10
            sent = time.time() * 1000
            subprocess.run([a.jukebox, "ctl", "--socket", a.socket, "vol", str(volume)], check=True,
                           stdout=subprocess.DEVNULL)
            end = time.monotonic() + 5
            at = None
            while at is None and time.monotonic() < end:
                for text, stamp in d.execute_script("return window.__shown"):
                    if text == str(volume) and stamp >= sent:
                        at = stamp
                time.sleep(0.005)
            if at is None:
                raise SystemExit(f"vol {volume} never showed in the page")
            latencies.append(at - sent)
            d.execute_script("window.__shown = []")
            time.sleep(0.1)
        result["ctl_to_page_ms"] = {"n": len(latencies), "median": round(statistics.median(latencies), 1),
                                    "max": round(max(latencies), 1)}
    finally:
        d.quit()
    print(json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
