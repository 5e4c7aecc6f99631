# SPDX-License-Identifier: MIT
"""The simulated phone of AirPlayTests: pyatv streaming to a real shairport-sync over RAOP.

Started by Tests/JukeboxEndToEndTests/AirPlayTests.swift with the Python of the pyatv venv that
board/setup.sh makes. It connects in pyatv's manual mode (no mDNS on the sender's side) to
shairport-sync on 127.0.0.1:PORT and reads commands on stdin, one a line:

    stream SECONDS   one AirPlay session of SECONDS of a 440 Hz tone (connect, ANNOUNCE, SETUP,
                     RECORD, the audio in real time, TEARDOWN)
    quit             end

and says on stdout, one a line, `EVENT T` with T = CLOCK_MONOTONIC seconds (the clock the test
device's event log uses, `t=`), so the test measures on one clock:

    record T      the RECORD request is about to be sent (the stream starts: shairport-sync runs
                  its begin hook when it receives it, and answers when the hook returned)
    recorded T    RECORD answered
    streaming T   the first audio packet is about to be sent
    teardown T    the TEARDOWN request is about to be sent (the stream ends)
    done T        the session is over (the TEARDOWN answered, the connection closed)
    error TEXT    the session failed

Started as `airplay_sender.py PORT [NAME]`: with NAME its ANNOUNCE carries the header
`X-Apple-Client-Name: NAME`, the sender's name an iPhone sends (and shairport-sync passes on in its
metadata, `ssnc`/`snam`); pyatv sends none of its own.

One change to what pyatv sends, and why: pyatv 0.18.0 announces its uncompressed PCM with
`a=rtpmap:96 L16/44100/2` and also an `a=fmtp:` line (ALAC's parameters). shairport-sync (3.3.8,
and 4.3 too) takes any `a=fmtp:` line for Apple Lossless (rtsp.c, handle_announce), feeds the PCM
to its ALAC decoder and dies of SIGSEGV. A sender that announces PCM the way shairport-sync reads
it sends no `fmtp` line, so this script takes that line out of pyatv's ANNOUNCE template: the
simulated phone says what it sends; nothing on the receiving side is changed.
"""

import asyncio
import io
import math
import struct
import sys
import time
import wave

import pyatv
from pyatv.conf import AppleTV, ManualService
from pyatv.const import Protocol
from pyatv.support import rtsp

# Without the fmtp line (see above). Checked, so a pyatv whose template changed fails loudly.
if "a=fmtp:" not in rtsp.ANNOUNCE_PAYLOAD:
    sys.exit("pyatv's ANNOUNCE template has no a=fmtp: line any more: look at this script again")
rtsp.ANNOUNCE_PAYLOAD = rtsp.ANNOUNCE_PAYLOAD.split("a=fmtp:")[0]


def say(event, text=None):
    """One line on stdout, flushed (the test reads it as it comes)."""
    value = text if text is not None else "%.6f" % time.clock_gettime(time.CLOCK_MONOTONIC)
    sys.stdout.write("%s %s\n" % (event, value))
    sys.stdout.flush()


def tone(seconds):
    """A WAV of SECONDS of a 440 Hz tone, 44.1 kHz stereo 16 bit, in memory."""
    frames = int(44100 * seconds)
    samples = bytearray()
    for i in range(frames):
        value = int(8000 * math.sin(2 * math.pi * 440 * i / 44100))
        samples += struct.pack("<hh", value, value)
    out = io.BytesIO()
    with wave.open(out, "wb") as w:
        w.setnchannels(2)
        w.setsampwidth(2)
        w.setframerate(44100)
        w.writeframes(bytes(samples))
    out.seek(0)
    return out


def instrument():
    """Timestamps at the RTSP requests that start and end the stream, and at the first packet."""
    record, teardown = rtsp.RtspSession.record, rtsp.RtspSession.teardown

    async def timed_record(self, *args, **kwargs):
        say("record")
        response = await record(self, *args, **kwargs)
        say("recorded")
        return response

    async def timed_teardown(self, *args, **kwargs):
        say("teardown")
        return await teardown(self, *args, **kwargs)

    rtsp.RtspSession.record = timed_record
    rtsp.RtspSession.teardown = timed_teardown

    from pyatv.protocols.raop import stream_client

    send = stream_client.StreamClient._send_packet

    async def timed_send(self, source, first_packet, transport):
        if first_packet:
            say("streaming")
        return await send(self, source, first_packet, transport)

    stream_client.StreamClient._send_packet = timed_send


def name_announce(name):
    """Has every ANNOUNCE carry `X-Apple-Client-Name: NAME` (what an iPhone sends)."""
    exchange = rtsp.RtspSession.exchange

    async def named_exchange(self, method, *args, headers=None, **kwargs):
        if method == "ANNOUNCE":
            headers = dict(headers or {})
            headers["X-Apple-Client-Name"] = name
        return await exchange(self, method, *args, headers=headers, **kwargs)

    rtsp.RtspSession.exchange = named_exchange


async def session(port, seconds):
    """One AirPlay session: connect, stream, tear down, close."""
    config = AppleTV("127.0.0.1", "jukebox test phone")
    # What shairport-sync 3.3.8 advertises (its mDNS TXT record): unencrypted PCM or ALAC over UDP.
    properties = {"et": "0,1", "cn": "0,1", "tp": "UDP", "ss": "16", "sr": "44100", "ch": "2", "md": "0,1,2"}
    config.add_service(ManualService("jukebox-test-phone", Protocol.RAOP, port, properties))
    atv = await pyatv.connect(config, asyncio.get_running_loop())
    try:
        await atv.stream.stream_file(tone(seconds))
    finally:
        atv.close()


async def main():
    port = int(sys.argv[1])
    instrument()
    if len(sys.argv) > 2:
        name_announce(sys.argv[2])
    loop = asyncio.get_running_loop()
    say("ready")
    while True:
        line = await loop.run_in_executor(None, sys.stdin.readline)
        words = line.split()
        if not words or words[0] == "quit":
            return
        if words[0] == "stream" and len(words) == 2:
            try:
                await asyncio.wait_for(session(port, float(words[1])), timeout=float(words[1]) + 20)
                say("done")
            except Exception as error:  # reported, and the next command is read
                say("error", repr(error).replace("\n", " "))
        else:
            say("error", "unknown command: " + line.strip())


if __name__ == "__main__":
    asyncio.run(main())
