# SPDX-License-Identifier: MIT
"""The Library page's upload (docs/WEB.md, "Upload") in the real browser, called from web_test.py with
its module as `h` (its helpers and arguments). Files go in through the page's file input (selenium's
send_keys on input[type=file]): a FLAC, an MP3 and a text file named .flac, into the folder on
screen; the two audio files are listed at once and one is played, the text file is refused with the
server's reason shown in its row, and nothing hidden is left in the folder."""
import os, shutil, tempfile


def rows(h, d):
    return h.js(d, "return [...document.querySelectorAll('#upload-list li')].map(li => "
                   "[li.querySelector('.upload-name').textContent, li.dataset.state || '', li.querySelector('.upload-state').textContent])")


def upload_page(h, d, width, height, send):
    """The upload box of the Album folder (signed in); with `send`, three files through it."""
    h.go(d, "library")
    h.wait("the music folder lists its folders", lambda: h.js(d, "return document.querySelectorAll('#library a.folder').length") == 1)
    h.click(d, "#library a.folder", 0)
    h.wait("the folder opens", lambda: h.el(d, "folder-actions").is_displayed())
    h.wait("the upload form shows (signed in)", lambda: h.el(d, "upload-form").is_displayed())
    if h.el(d, "upload-signin").is_displayed():
        h.fail("the sign-in note shows while signed in")
    h.check_layout(d, width)
    if not send:
        h.screenshot(d, "upload", width, height)
        return
    base = os.path.dirname(h.args.config)
    album = os.path.realpath(os.path.join(base, "library", "Album"))
    scratch = tempfile.mkdtemp(prefix="upload-", dir=base)
    flac, mp3, text = (os.path.join(scratch, n) for n in ("Uploaded song.flac", "Uploaded tone.mp3", "notes.flac"))
    shutil.copyfile(os.path.join(base, "music", "01 Track.flac"), flac)
    shutil.copyfile(os.path.join(base, "tone.mp3"), mp3)
    with open(text, "w", encoding="utf-8") as f:
        f.write("not audio, whatever its name says\n" * 200)
    # chromedriver runs on this machine: the paths go to it as they are (a Remote driver would
    # zip the files for a Selenium Grid's upload endpoint, which chromedriver does not have).
    remote, d._is_remote = d._is_remote, False
    try:
        h.el(d, "upload-files").send_keys("\n".join([flac, mp3, text]))
    finally:
        d._is_remote = remote
    h.wait("three uploads end", lambda: [r[1] for r in rows(h, d)] == ["done", "done", "refused"], timeout=30)
    refused = rows(h, d)[2]
    if refused[0] != "notes.flac" or not refused[2].startswith("not audio the player can play: "):
        h.fail(f"the refused file's row says {refused}")
    names = lambda: [f["name"] for f in h.get("/api/library?path=" + h.urllib.parse.quote(album, safe=""))["files"]]
    h.wait("the library lists the uploads", lambda: {"Uploaded song.flac", "Uploaded tone.mp3"} <= set(names()))
    h.wait("the page lists them without a reload", lambda: h.js(d, "return document.querySelectorAll('#library li').length") == 4)
    # Audio only: the library step may have put a cover.png there.
    left = sorted(n for n in os.listdir(album) if n != "cover.png")
    if left != ["1.flac", "2.flac", "Uploaded song.flac", "Uploaded tone.mp3"]:
        h.fail(f"the folder holds {left}")
    h.screenshot(d, "upload-done", width, height)
    # Play folder, then the uploaded MP3 (read back from the player).
    h.el(d, "lib-play").click()
    h.wait("Play folder loaded the uploads", lambda: h.status()["count"] == 4)
    queue = h.get("/api/queue")["entries"]
    position = next(e["position"] for e in queue if e["path"].endswith("/Uploaded tone.mp3"))
    h.post("/api/control", {"line": f"play {position}"})
    h.wait("the uploaded MP3 plays", lambda: h.status()["phase"] == "playing" and (h.status().get("path") or "").endswith("/Uploaded tone.mp3"))
    # Back to the folder's first track (300 s): the uploads last seconds, and what follows must
    # not see the queue move on by itself (on a busy machine the MP3 ended during the cards'
    # steps, which then took the next track for something a swipe played).
    h.post("/api/control", {"line": "play 1"})
    h.wait("the folder's first track plays again", lambda: (s := h.status())["phase"] == "playing" and s["index"] == 1)
    shutil.rmtree(scratch)
    h.log(f"{width}x{height}: a FLAC and an MP3 uploaded through the page and played, a text file refused with its reason")
