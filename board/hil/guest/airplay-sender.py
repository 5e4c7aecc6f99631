#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""airplay-sender.py HOST PORT NAME: a classic AirPlay sender, as little of one as shairport-sync
needs to begin and end a session (board/hil `airplay`; read in shairport-sync 4.3's rtsp.c):

  OPTIONS; ANNOUNCE with X-Apple-Client-Name: NAME and an SDP of uncompressed PCM
  (`a=rtpmap:96 L16/44100/2`, no `a=fmtp:` line: any fmtp line is taken for Apple Lossless);
  SETUP with a Transport naming our control and timing ports (two UDP sockets of ours, so
  shairport-sync's timing requests reach a socket); RECORD (shairport-sync runs its
  run_this_before_play_begins hook, waits for it, and only then answers); then one line on stdin:
  `teardown` sends TEARDOWN (shairport-sync runs run_this_after_play_ends) and exits; end of
  input closes the connection without a word (a sender that quits).

Prints `EVENT UPTIME [CODE]` lines (record-sent, record-answered, teardown-sent,
teardown-answered), UPTIME on CLOCK_BOOTTIME (the guest's /proc/uptime). No audio is sent:
the session is begun and ended by RTSP alone. Exit 1 with `ERROR …` when an answer is not 200.
"""
import socket
import sys
import time


def now():
    return "%.3f" % time.clock_gettime(time.CLOCK_BOOTTIME)


class Session:
    def __init__(self, host, port):
        self.sock = socket.create_connection((host, port), timeout=60)
        self.buf = b""
        self.cseq = 0
        self.url = "rtsp://%s/3413821438" % host

    def request(self, method, headers=None, body=b"", url=None):
        self.cseq += 1
        lines = ["%s %s RTSP/1.0" % (method, url or self.url), "CSeq: %d" % self.cseq,
                 "User-Agent: AirPlay/381.13", "DACP-ID: 14413BE4996FEA4D",
                 "Active-Remote: 2543110914"]
        for k, v in (headers or {}).items():
            lines.append("%s: %s" % (k, v))
        if body:
            lines.append("Content-Length: %d" % len(body))
        data = ("\r\n".join(lines) + "\r\n\r\n").encode("utf-8") + body
        self.sock.sendall(data)

    def answer(self):
        while b"\r\n\r\n" not in self.buf:
            chunk = self.sock.recv(4096)
            if not chunk:
                raise RuntimeError("connection closed before an answer")
            self.buf += chunk
        head, self.buf = self.buf.split(b"\r\n\r\n", 1)
        lines = head.decode("latin-1").split("\r\n")
        code = int(lines[0].split()[1])
        length = 0
        for line in lines[1:]:
            k, _, v = line.partition(":")
            if k.strip().lower() == "content-length":
                length = int(v.strip())
        while len(self.buf) < length:
            chunk = self.sock.recv(4096)
            if not chunk:
                break
            self.buf += chunk
        self.buf = self.buf[length:]
        return code

    def expect(self, what):
        code = self.answer()
        if code != 200:
            print("ERROR %s answered %d" % (what, code), flush=True)
            sys.exit(1)
        return code


def main():
    host, port, name = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    s = Session(host, port)
    s.request("OPTIONS", url="*")
    s.expect("OPTIONS")
    sdp = ("v=0\r\no=iTunes 3413821438 0 IN IP4 %s\r\ns=iTunes\r\nc=IN IP4 %s\r\nt=0 0\r\n"
           "m=audio 0 RTP/AVP 96\r\na=rtpmap:96 L16/44100/2\r\n" % (host, host)).encode()
    s.request("ANNOUNCE", {"Content-Type": "application/sdp", "X-Apple-Client-Name": name}, sdp)
    s.expect("ANNOUNCE")
    control = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    timing = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    control.bind((host, 0))
    timing.bind((host, 0))
    transport = "RTP/AVP/UDP;unicast;interleaved=0-1;mode=record;control_port=%d;timing_port=%d" % (
        control.getsockname()[1], timing.getsockname()[1])
    s.request("SETUP", {"Transport": transport})
    s.expect("SETUP")
    print("record-sent", now(), flush=True)
    s.request("RECORD", {"Session": "1", "Range": "npt=0-", "RTP-Info": "seq=0;rtptime=0"})
    code = s.expect("RECORD")
    print("record-answered", now(), code, flush=True)
    line = sys.stdin.readline()
    if line.strip() != "teardown":
        return  # a sender that quits: the connection closes with the process
    print("teardown-sent", now(), flush=True)
    s.request("TEARDOWN", {"Session": "1"})
    code = s.expect("TEARDOWN")
    print("teardown-answered", now(), code, flush=True)


if __name__ == "__main__":
    main()
