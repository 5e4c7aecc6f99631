// SPDX-License-Identifier: MIT
import Foundation

/// A small HTTP server on 127.0.0.1 (Python's `http.server`, started by the test) serving an MP3 file
/// (and any more `files`) as the kinds of stream a radio meets. Paths:
/// - `/icy?metaint=N[&file=NAME][&type=T][&drop=B][&garbage=1][&once=1][&pace=BYTES_PER_S][&latin1=1]`: an `ICY 200 OK` stream (`icy-name: Test FM`, or `Café FM` in Latin-1 with `latin1`)
///   of the MP3, or of `files[NAME]` with its Content-Type (`type` replaces it; `type=` sends none)
///   with a `StreamTitle` block every N audio bytes (`Song 1`, `Song 2`, …; with `garbage`, random
///   bytes and a title full of control characters); the file again and again (once with `once`,
///   from its start on every connection);
///   with `drop`, the connection is closed after B body bytes and the next one continues where the
///   audio left off (a live stream: what was sent and not played is lost); with `stall=B&stallfor=S`,
///   the first connection to that URL sends nothing for S seconds once B body bytes are out, then
///   goes on (a stalled source; a reconnection continues where the audio left off); with `pace`, sent no
///   faster than that many bytes a second (a live source: no burst at the start).
/// - `/file.mp3`: the file as a plain HTTP/1.0 response with a Content-Length; `/file/NAME` the same
///   for `files[NAME]`.
/// - `/redirect/K`: K redirects (302) then `/file.mp3`.
/// - `/station.pls`, `/station.m3u` (and `/bare.m3u` as `text/plain`): playlists naming
///   `/icy?metaint=8192&once=1`; `/nested.m3u` names `/station.pls`; `/loop.m3u` names itself;
///   `/hls.m3u8` is an HLS media playlist.
/// - `/dir/NAME[?norange=1]`: the file NAME of `servedFolder`, read again at every request (a test rewrites a
///   live HLS playlist), typed by its extension (`.m3u8`, `.ts`, `.aac`); 404 when missing. A
///   `Range: bytes=N-` is answered `206` from byte N (`416` past the end), unless `norange`
///   (a server that ignores ranges: the whole file, `200`). With `drop=B`, the first whole
///   response to that URL ends after B bytes of its body (a connection lost mid-file). Each
///   answer has an `ETag` (the file's CRC-32); an `If-Range` that is not it gets the whole file.
/// - `/served/NAME`: the body bytes sent so far for `/dir/NAME`, as decimal text.
/// - `/missing`: 404. `/page.html`: an HTML page. `/ogg`: `audio/ogg` that is "OggS" and zeros (no valid page).
/// - `/endless`: a status line, then header lines without end. `/endlessline`: a status line, then
///   one header line without end.
/// - `/slowheaders?every=S`: an ICY stream's headers, one byte every S seconds.
/// - `/trickle?every=S[&file=NAME][&fast=N]`: a stream of the MP3 (`icy-br: 128`, no metadata)
///   or of `files[NAME]` (its Content-Type, no `icy-br`) whose body comes a byte every S seconds,
///   after its first N bytes at once.
/// - `/gzip`: the MP3 gzipped, with `Content-Encoding: gzip`, whatever the request accepts.
/// - `/silent`: `ICY 200 OK` headers, then nothing (a stalled server).
public final class RadioServer {
    /// The port it listens on, on 127.0.0.1.
    public let port: Int
    /// With `tls`, the server's self-signed certificate (PEM, for 127.0.0.1 by subjectAltName): a
    /// client told to trust it (`radio.caFile`) accepts the server; nil without `tls`.
    public let certificatePath: String?
    private let tls: Bool
    private let process: Process

    static let script = #"""
import http.server, socketserver, sys, os, random, time, ssl, gzip, re, zlib
from urllib.parse import urlparse, parse_qs
MP3 = open(sys.argv[1], 'rb').read()
# More bodies, by name: RADIO_FILES is "name|content-type|path" entries joined by newlines.
FILES = {'mp3': (MP3, 'audio/mpeg')}
for entry in os.environ.get('RADIO_FILES', '').split('\n'):
    if entry:
        name, ctype, path = entry.split('|', 2)
        FILES[name] = (open(path, 'rb').read(), ctype)
offsets = {}
stalled = set()
# Body bytes sent for each /dir/ file, by name (read back as /served/NAME).
SERVED = {}

class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = 'HTTP/1.0'
    def log_message(self, *args): pass
    def raw(self, text):
        self.wfile.write(text.encode('latin-1'))
    def do_GET(self):
        url = urlparse(self.path)
        q = {k: v[0] for k, v in parse_qs(url.query).items()}
        try:
            if url.path == '/icy': self.icy(q)
            elif url.path == '/file.mp3':
                self.raw('HTTP/1.0 200 OK\r\nContent-Type: audio/mpeg\r\nContent-Length: %d\r\n\r\n' % len(MP3))
                self.wfile.write(MP3)
            elif url.path.startswith('/file/') and url.path[6:] in FILES:
                body, ctype = FILES[url.path[6:]]
                self.raw('HTTP/1.0 200 OK\r\nContent-Type: %s\r\nContent-Length: %d\r\n\r\n' % (ctype, len(body)))
                self.wfile.write(body)
            elif url.path.startswith('/dir/') and os.environ.get('RADIO_DIR') and re.fullmatch(r'[A-Za-z0-9._-]+', url.path[5:]) and not url.path[5:].startswith('.'):
                try:
                    body = open(os.path.join(os.environ['RADIO_DIR'], url.path[5:]), 'rb').read()
                except OSError:
                    body = None
                if body is None:
                    self.raw('HTTP/1.0 404 Not Found\r\nContent-Length: 0\r\n\r\n')
                else:
                    ctype = {'m3u8': 'application/vnd.apple.mpegurl', 'ts': 'video/mp2t', 'aac': 'audio/aac'}.get(url.path.rsplit('.', 1)[-1], 'application/octet-stream')
                    name = url.path[5:]
                    etag = '"%08x"' % zlib.crc32(body)
                    asked = re.fullmatch(r'bytes=(\d+)-', self.headers.get('Range', ''))
                    if asked and self.headers.get('If-Range') not in (None, etag):
                        asked = None
                    if asked and not q.get('norange'):
                        first = int(asked.group(1))
                        if first >= len(body):
                            self.raw('HTTP/1.0 416 Range Not Satisfiable\r\nContent-Range: bytes */%d\r\nContent-Length: 0\r\n\r\n' % len(body))
                            return
                        self.raw('HTTP/1.0 206 Partial Content\r\nContent-Type: %s\r\nETag: %s\r\nContent-Range: bytes %d-%d/%d\r\nContent-Length: %d\r\n\r\n'
                                 % (ctype, etag, first, len(body) - 1, len(body), len(body) - first))
                        self.wfile.write(body[first:])
                        SERVED[name] = SERVED.get(name, 0) + len(body) - first
                        return
                    self.raw('HTTP/1.0 200 OK\r\nContent-Type: %s\r\nETag: %s\r\nContent-Length: %d\r\n\r\n' % (ctype, etag, len(body)))
                    if q.get('drop') and self.path not in stalled:
                        stalled.add(self.path)
                        self.wfile.write(body[:int(q['drop'])])
                        SERVED[name] = SERVED.get(name, 0) + min(len(body), int(q['drop']))
                        return
                    self.wfile.write(body)
                    SERVED[name] = SERVED.get(name, 0) + len(body)
            elif url.path.startswith('/served/'):
                body = str(SERVED.get(url.path[8:], 0)).encode()
                self.raw('HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\nContent-Length: %d\r\n\r\n' % len(body))
                self.wfile.write(body)
            elif url.path.startswith('/redirect/'):
                k = int(url.path.split('/')[-1])
                target = '/redirect/%d' % (k - 1) if k > 1 else '/file.mp3'
                self.raw('HTTP/1.0 302 Found\r\nLocation: %s\r\nContent-Length: 0\r\n\r\n' % target)
            elif url.path in ('/station.pls', '/station.m3u', '/nested.m3u', '/loop.m3u', '/hls.m3u8', '/bare.m3u'):
                base = 'http://127.0.0.1:%d' % self.server.server_address[1]
                stream = base + '/icy?metaint=8192&once=1'
                body, kind = {
                    '/station.pls': ('[playlist]\r\nNumberOfEntries=1\r\nFile1=%s\r\nTitle1=Test FM\r\nLength1=-1\r\nVersion=2\r\n' % stream, 'audio/x-scpls'),
                    '/station.m3u': ('#EXTM3U\n#EXTINF:-1,Test FM\n%s\n' % stream, 'audio/x-mpegurl'),
                    '/nested.m3u': ('%s/station.pls\n' % base, 'audio/x-mpegurl'),
                    '/loop.m3u': ('%s/loop.m3u\n' % base, 'audio/x-mpegurl'),
                    '/hls.m3u8': ('#EXTM3U\n#EXT-X-TARGETDURATION:10\n#EXTINF:10,\nseg1.aac\n#EXT-X-ENDLIST\n', 'application/vnd.apple.mpegurl'),
                    '/bare.m3u': ('%s\n' % stream, 'text/plain'),
                }[url.path]
                self.raw('HTTP/1.0 200 OK\r\nContent-Type: %s\r\nContent-Length: %d\r\n\r\n' % (kind, len(body)))
                self.wfile.write(body.encode())
            elif url.path == '/page.html':
                body = b'<!DOCTYPE html><html><body>Not a stream</body></html>'
                self.raw('HTTP/1.0 200 OK\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: %d\r\n\r\n' % len(body))
                self.wfile.write(body)
            elif url.path == '/ogg':
                self.raw('HTTP/1.0 200 OK\r\nContent-Type: audio/ogg\r\n\r\n')
                self.wfile.write(b'OggS' + bytes(4096))
            elif url.path == '/endless':
                self.raw('HTTP/1.0 200 OK\r\n')
                line = ('X-Filler: ' + 'a' * 100 + '\r\n').encode()
                while True: self.wfile.write(line)
            elif url.path == '/endlessline':
                self.raw('HTTP/1.0 200 OK\r\nX-Filler: ')
                chunk = b'a' * 4096
                while True: self.wfile.write(chunk)
            elif url.path == '/slowheaders':
                every = float(q.get('every', '1'))
                for byte in b'ICY 200 OK\r\nContent-Type: audio/mpeg\r\nicy-br: 128\r\nicy-name: Slow FM\r\n\r\n':
                    self.wfile.write(bytes([byte]))
                    self.wfile.flush()
                    time.sleep(every)
                self.wfile.write(MP3)
            elif url.path == '/trickle':
                every = float(q.get('every', '1'))
                fast = int(q.get('fast', '0'))
                if 'file' in q:
                    body, ctype = FILES[q['file']]
                    self.raw('HTTP/1.0 200 OK\r\nContent-Type: %s\r\n\r\n' % ctype)
                else:
                    body = MP3
                    self.raw('ICY 200 OK\r\nContent-Type: audio/mpeg\r\nicy-br: 128\r\n\r\n')
                self.wfile.write(body[:fast])
                self.wfile.flush()
                for byte in body[fast:]:
                    self.wfile.write(bytes([byte]))
                    self.wfile.flush()
                    time.sleep(every)
            elif url.path == '/gzip':
                body = gzip.compress(MP3)
                self.raw('HTTP/1.0 200 OK\r\nContent-Type: audio/mpeg\r\nContent-Encoding: gzip\r\nContent-Length: %d\r\n\r\n' % len(body))
                self.wfile.write(body)
            elif url.path == '/silent':
                self.raw('ICY 200 OK\r\nContent-Type: audio/mpeg\r\nicy-metaint: 8192\r\n\r\n')
                self.wfile.flush()
                time.sleep(30)
            else:
                self.raw('HTTP/1.0 404 Not Found\r\nContent-Type: text/plain\r\nContent-Length: 9\r\n\r\nnot found')
        except (BrokenPipeError, ConnectionResetError, ssl.SSLError):  # a listener gone (over TLS too)
            pass
    def icy(self, q):
        metaint = int(q.get('metaint', '8192'))
        drop = int(q.get('drop', '0'))
        garbage = q.get('garbage') == '1'
        once = q.get('once') == '1'
        pace = int(q.get('pace', '0'))
        stall = int(q.get('stall', '0'))
        stall_for = float(q.get('stallfor', '0'))
        key = self.path
        started = time.monotonic()
        name = 'Caf\xe9 FM' if q.get('latin1') == '1' else 'Test FM'
        MP3, ctype = FILES.get(q.get('file', 'mp3'), FILES['mp3'])
        if 'type' in q: ctype = q['type']
        self.raw('ICY 200 OK\r\nicy-name: ' + name + '\r\nicy-br: 128\r\nicy-metaint: %d\r\n' % metaint
                 + ('Content-Type: %s\r\n' % ctype if ctype else '') + '\r\n')
        pos = 0 if once else offsets.get(key, 0)
        sent = 0
        block = 0
        rng = random.Random(1)
        while True:
            if once and pos >= len(MP3): return
            chunk = bytearray()
            while len(chunk) < metaint:
                take = MP3[pos % len(MP3):pos % len(MP3) + metaint - len(chunk)]
                if once: take = take[:max(0, len(MP3) - pos)]
                if not take: break
                chunk += take
                pos += len(take)
            block += 1
            if garbage:
                text = rng.randbytes(rng.randrange(0, 200)) + b"StreamTitle='\x01Bad\x07 \x1b[2JTitle\x00';"
            else:
                text = ("StreamTitle='Song %d';StreamUrl='';" % (1 + block // 4)).encode()
            text += bytes(-len(text) % 16)
            meta = bytes([len(text) // 16]) + text
            if len(chunk) < metaint: meta = b''
            out = bytes(chunk) + meta
            if drop and sent + len(out) > drop:
                cut = drop - sent
                offsets[key] = pos - len(chunk) + min(cut, len(chunk))
                self.wfile.write(out[:cut])
                return
            self.wfile.write(out)
            sent += len(out)
            offsets[key] = pos
            if stall and sent >= stall and key not in stalled:
                # Once per URL: the connection goes silent, then goes on (if the client kept it).
                stalled.add(key)
                self.wfile.flush()
                time.sleep(stall_for)
            if pace:
                ahead = started + sent / pace - time.monotonic()
                if ahead > 0: time.sleep(ahead)

class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True

server = Server(('127.0.0.1', int(os.environ.get('RADIO_PORT', '0'))), Handler)
if len(sys.argv) > 3:
    # HTTPS with the given (self-signed) certificate and key: a client that checks certificates refuses it.
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(sys.argv[2], sys.argv[3])
    server.socket = context.wrap_socket(server.socket, server_side=True)
print(server.server_address[1], flush=True)
server.serve_forever()
"""#

    /// Why the server cannot run here (a test skips with it).
    public struct Unavailable: Error, CustomStringConvertible {
        public var description: String
    }

    /// The python3 the server runs on, or `Unavailable` (the arm64 chroot has none). Tests call it
    /// before making their audio, which under qemu-aarch64 takes seconds a skip need not spend.
    public static func python() throws -> String {
        guard let python = ["/usr/bin/python3", "/usr/local/bin/python3"].first(where: {
            FileManager.default.isExecutableFile(atPath: $0)
        }) else { throw Unavailable(description: "python3 is not installed: no local radio server") }
        return python
    }

    /// Starts the server over `mp3` (a path), writing its script into `folder`, on `port` (0: any free
    /// one); with `tls`, HTTPS
    /// with a self-signed certificate made by `openssl` (so a checking client refuses it unless
    /// told to trust `certificatePath`). Throws
    /// `Unavailable` without python3 (the arm64 chroot has none), without openssl for `tls`, or
    /// when it does not start.
    /// `files` maps a name (letters and digits) to a file and the Content-Type it is served with;
    /// `servedFolder`'s files are served as `/dir/NAME`.
    public init(mp3: String, folder: String, tls: Bool = false, port wanted: Int = 0,
                files: [String: (path: String, contentType: String)] = [:], servedFolder: String? = nil) throws {
        let python = try Self.python()
        let scriptPath = folder + "/radio_server.py"
        try Self.script.write(toFile: scriptPath, atomically: false, encoding: .utf8)
        process = Process()
        process.executableURL = URL(fileURLWithPath: python)
        process.arguments = [scriptPath, mp3]
        var environment = ProcessInfo.processInfo.environment
        if wanted != 0 { environment["RADIO_PORT"] = String(wanted) }
        if let servedFolder { environment["RADIO_DIR"] = servedFolder }
        environment["RADIO_FILES"] = files.sorted { $0.key < $1.key }.map { "\($0.key)|\($0.value.contentType)|\($0.value.path)" }
            .joined(separator: "\n")
        process.environment = environment
        if tls {
            guard FileManager.default.isExecutableFile(atPath: "/usr/bin/openssl") else {
                throw Unavailable(description: "openssl is not installed: no HTTPS test server")
            }
            let openssl = Process()
            openssl.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
            openssl.arguments = ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=127.0.0.1",
                                 "-addext", "subjectAltName=IP:127.0.0.1", "-keyout", folder + "/key.pem", "-out", folder + "/cert.pem"]
            openssl.standardOutput = FileHandle.nullDevice
            openssl.standardError = FileHandle.nullDevice
            try openssl.run()
            openssl.waitUntilExit()
            guard openssl.terminationStatus == 0 else { throw Unavailable(description: "openssl could not make a certificate") }
            process.arguments! += [folder + "/cert.pem", folder + "/key.pem"]
        }
        let out = Pipe()
        process.standardOutput = out
        try process.run()
        // The first line is the port; the server is listening before it prints it.
        var line = Data()
        while let byte = try out.fileHandleForReading.read(upToCount: 1), !byte.isEmpty, byte != Data([10]) {
            line += byte
        }
        guard let port = Int(String(decoding: line, as: UTF8.self)) else {
            process.terminate()
            throw Unavailable(description: "the local radio server did not start")
        }
        self.port = port
        self.tls = tls
        certificatePath = tls ? folder + "/cert.pem" : nil
    }

    deinit {
        process.terminate()
        process.waitUntilExit()
    }

    /// `http://127.0.0.1:PORT` + `path`.
    public func url(_ path: String) -> String { (tls ? "https" : "http") + "://127.0.0.1:\(port)\(path)" }
}
