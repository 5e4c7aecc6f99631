# SPDX-License-Identifier: MIT
"""The Settings page's Bluetooth speaker, driven from web_test.py (signed in): `run(t, d, width,
height)` with `t` the web_test module. The player runs with a `bluetooth` section, the simulated
bluez-alsa monitor (JUKEBOX_TEST_BLUETOOTH_PIPE: `--bluetooth-pipe`) and a stand-in bluetoothctl
first on its PATH that notes its calls in `--bluetooth-args` (FakeBluetoothctl.swift: `pair` says
something hostile and 2,000 letters long, `trust` fails). Checks: the speaker connecting and going
shows (connected, which output plays); a bad address typed is refused by the player's words and
runs nothing; Pair runs `bluetoothctl pair ADDRESS` and its words show as text (no element made
of the markup, no alert), cut short; Trust's failure shows; `whenGone` saved reaches the file and
an address the config refuses writes nothing. Screenshot and axe-core as for every page."""

import json
import os

PCM = "/org/bluealsa/hci0/dev_AA_BB_CC_DD_EE_FF/a2dpsrc/sink"
ADDRESS = "AA:BB:CC:DD:EE:FF"


def field(t, d, key):
    return t.js(d, "const e = document.querySelector(`[data-key='${arguments[0]}']`); return e ? e.value : null", key)


def set_field(t, d, key, value):
    t.js(d, "const e = document.querySelector(`[data-key='${arguments[0]}']`); e.value = arguments[1];"
         " e.dispatchEvent(new Event('input', {bubbles: true}));", key, str(value))


def calls(t):
    path = t.args.bluetooth_args
    if not os.path.exists(path):
        return []
    with open(path) as f:
        return f.read().splitlines()


def monitor(t, line):
    with open(t.args.bluetooth_pipe, "w") as f:
        f.write(line + "\n")


def facts(t, d):
    return t.txt(d, "bluetooth-facts").replace("\n", " ")


def run(t, d, width, height):
    t.go(d, "settings")
    t.wait("the Bluetooth section shows", lambda: t.el(d, "settings-bluetooth-box").is_displayed()
           and field(t, d, "bluetooth.speaker") == ADDRESS, timeout=10)
    with open(t.args.config, "rb") as f:
        configured = json.loads(f.read())["bluetooth"].get("whenGone", "card")
    if field(t, d, "bluetooth.whenGone") != configured:
        t.fail(f"whenGone is not the config's {configured}: {field(t, d, 'bluetooth.whenGone')!r}")

    # The speaker comes and goes: the section says so, and which output plays.
    monitor(t, "ServiceRunning org.bluealsa")
    monitor(t, "PCMAdded " + PCM)
    t.wait("the page says the speaker is connected and plays", lambda: "Connected now yes" in facts(t, d)
           and "Plays through the Bluetooth speaker" in facts(t, d), seen=lambda: facts(t, d))
    t.check_layout(d, width)
    t.screenshot(d, "settings-bluetooth", width, height)
    monitor(t, "PCMRemoved " + PCM)
    t.wait("the page says the speaker is gone", lambda: "Connected now no" in facts(t, d)
           and "Plays through the box's own sound card" in facts(t, d), seen=lambda: facts(t, d))

    # A bad address: the player's words; nothing run.
    before = calls(t)
    set_field(t, d, "bluetooth.speaker", "AA:BB:CC")
    t.el(d, "bluetooth-pair").click()
    t.wait("the bad address is refused", lambda: t.txt(d, "bluetooth-outcome").startswith("usage: bluetooth pair|trust|forget|disconnect ADDRESS"),
           seen=lambda: t.txt(d, "bluetooth-outcome"))
    if calls(t) != before:
        t.fail(f"bluetoothctl ran for a bad address: {calls(t)!r}")

    # Pair: bluetoothctl runs; its words are text, cut short.
    set_field(t, d, "bluetooth.speaker", ADDRESS.lower())
    t.el(d, "bluetooth-pair").click()
    t.wait("the pairing's outcome shows", lambda: t.txt(d, "bluetooth-outcome").startswith(
        "bluetooth pair: Pairing successful \ufffd<img src=x onerror=alert(1)>AAA"), timeout=30, seen=lambda: t.txt(d, "bluetooth-outcome")[:80])
    shown = t.txt(d, "bluetooth-outcome")
    if len(shown) > 301:
        t.fail(f"the outcome is not cut short: {len(shown)} characters")
    if t.js(d, "return document.querySelectorAll('#settings-bluetooth-box img').length") != 0:
        t.fail("the device's markup became an element")
    t.no_alert(d)
    t.check_layout(d, width)
    if calls(t)[len(before):] != ["info " + ADDRESS, "pair " + ADDRESS]:
        t.fail(f"bluetoothctl was not run as info then pair {ADDRESS}: {calls(t)!r}")
    t.el(d, "bluetooth-trust").click()
    t.wait("the trust's failure shows", lambda: t.txt(d, "bluetooth-outcome") == f"bluetooth trust failed: Device {ADDRESS} not available",
           timeout=30, seen=lambda: (t.txt(d, "bluetooth-outcome")[:80], calls(t), t.el(d, "bluetooth-trust").is_enabled()))

    # Saved: whenGone reaches the file; an address the config refuses writes nothing.
    with open(t.args.config, "rb") as f:
        original = f.read()
    set_field(t, d, "bluetooth.speaker", "11:22:33:44:55:GG")
    t.el(d, "settings-save").click()
    t.wait("the config's refusal shows", lambda: '"speaker" must be an address of six pairs of hex digits' in t.txt(d, "settings-message"),
           seen=lambda: t.txt(d, "settings-message"))
    with open(t.args.config, "rb") as f:
        if f.read() != original:
            t.fail("a refused address was written")
    set_field(t, d, "bluetooth.speaker", ADDRESS)
    wanted = "pause" if json.loads(original)["bluetooth"].get("whenGone", "card") == "card" else "card"
    t.js(d, "const e = document.querySelector(\"[data-key='bluetooth.whenGone']\"); e.value = arguments[0];"
         " e.dispatchEvent(new Event('change', {bubbles: true}));", wanted)
    t.el(d, "settings-save").click()
    t.wait("the change is saved and applied", lambda: "The player applied it" in t.txt(d, "settings-message"),
           seen=lambda: t.txt(d, "settings-message"))
    with open(t.args.config, "rb") as f:
        written = json.loads(f.read())["bluetooth"]
    if written.get("whenGone") != wanted or written.get("speaker", "").upper() != ADDRESS:
        t.fail(f"the config's bluetooth section is not what was saved: {written!r}")
    t.log(f"{width}x{height}: bluetooth: connected and gone shown, a bad address refused, pair's words as text "
          f"({len(shown)} characters), trust's failure, whenGone {wanted} saved")
