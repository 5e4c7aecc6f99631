# SPDX-License-Identifier: MIT
"""The queue's pages in the browser, called by web_test.py at each size as
`web_paging.run(web_test_module, driver, width, height)`.

A folder of 300 files with long names (hard links to one tiny WAV, made once beside the config) is
added with `ctl`: the queue is then longer than one reply of the player (`queue --json [FROM]` is
paged), so its page shows the first entries and "More"; pressing "More" until it goes shows every
entry, in order. The queue is put back as it was afterwards.
"""
import os, struct

COUNT = 300


def make_folder(folder):
    if os.path.isdir(folder):
        return
    os.makedirs(folder)
    one = folder + "-one.wav"
    frames = 800  # 0.1 s of 8 kHz mono silence
    data = b"\0\0" * frames
    with open(one, "wb") as f:
        f.write(b"RIFF" + struct.pack("<I", 36 + len(data)) + b"WAVEfmt " + struct.pack("<IHHIIHH", 16, 1, 1, 8000, 16000, 2, 16)
                + b"data" + struct.pack("<I", len(data)) + data)
    long = "a long file name so that the queue takes more than one reply " * 3
    for i in range(1, COUNT + 1):
        os.link(one, os.path.join(folder, f"{i:03d} {long}.wav"))


def run(w, d, width, height):
    folder = os.path.join(os.path.dirname(w.args.config), "paging")
    make_folder(folder)
    before = w.get("/api/queue")
    if before.get("next"):
        w.fail("the queue is already longer than a page")
    index = w.status()["index"]
    w.ctl("add", folder)
    total = len(before["entries"]) + COUNT
    w.wait("the folder is queued", lambda: w.status()["count"] == total, timeout=10)

    w.go(d, "queue")
    w.wait("the first page shows, with More",
           lambda: w.el(d, "queue-more").is_displayed() and 0 < len(w.queue_entries(d)) < total)
    pages = 1
    while w.el(d, "queue-more").is_displayed():
        shown = len(w.queue_entries(d))
        w.click(d, "#queue-more")
        w.wait("More shows the next page", lambda: len(w.queue_entries(d)) > shown)
        pages += 1
        if pages > 20:
            w.fail("More never ends")
    names = w.queue_entries(d)
    if len(names) != total or [n.split(".", 1)[0] for n in names] != [str(i) for i in range(1, total + 1)]:
        w.fail(f"after More the queue shows {len(names)} entries of {total}, or out of order")
    w.log(f"{width}x{height}: a queue of {total} entries comes in {pages} pages; More shows each in turn")

    # The queue as it was.
    w.ctl("clear")
    for e in before["entries"]:
        w.ctl("add", e["path"])
    w.post("/api/control", {"line": f"play {index or 1}"})
    w.wait("the queue is back", lambda: w.status()["count"] == len(before["entries"]) and w.status()["index"] == (index or 1))
    w.wait("the page lists the queue again", lambda: len(w.queue_entries(d)) == len(before["entries"]))
