# SPDX-License-Identifier: MIT
# shellcheck shell=bash
# Uploads into the installed, socket-activated jukebox-web.service (docs/WEB.md "Upload"), for the
# systemd guest's driver (board/hil/guest/service.sh, sourced after service-lib.sh): raw HTTP
# through bash's /dev/tcp (the guest has no curl; busybox wget cannot stream a body and hold the
# connection open, which the power-cut step needs). Expects OUT, note, begin, finish, since.

WEB=127.0.0.1
WEB_PIN=2468
UPLOAD_DIR=/srv/music
UPLOAD_JOURNAL=/var/lib/jukebox/web-uploads

# urlencode TEXT: every byte but letters, digits and -._ as %XX.
urlencode() {
  local LC_ALL=C s=$1 out="" c i
  for ((i = 0; i < ${#s}; i++)); do
    c=${s:i:1}
    case $c in [a-zA-Z0-9._-]) out+=$c ;; *) out+=$(printf '%%%02X' "'$c") ;; esac
  done
  printf '%s' "$out"
}

# web_http HEAD [BODYFILE]: sends HEAD (the request line and headers, CRLF-ended) and the file's
# bytes to port 80, prints the whole answer (Connection: close), bounded to 120 s.
web_http() {
  timeout 120 bash -c 'exec 3<>/dev/tcp/'"$WEB"'/80 || exit 1; printf "%s" "$1" >&3; [ -z "$2" ] || cat "$2" >&3; cat <&3' _ "$1" "${2:-}"
}

# web_sign_in: sets the PIN as the box's owner does (`jukebox web-pin`: the page cannot set it),
# then signs in; sets WEB_COOKIE and WEB_CSRF.
web_sign_in() {
  local body answer
  printf '%s\n' "$WEB_PIN" | timeout 30 jukebox web-pin --config /etc/jukebox/config.json > /tmp/web-pin.log 2>&1 \
    || { echo "HIL: jukebox web-pin failed: $(cat /tmp/web-pin.log)"; return 1; }
  body=/tmp/web-pin.json
  printf '{"pin":"%s"}' "$WEB_PIN" > "$body"
  local head
  # printf -v, never $(...): a command substitution strips the head's final LF, and the server
  # rightly refuses the bare CR left behind.
  printf -v head 'POST /api/login HTTP/1.1\r\nHost: %s\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: %s\r\n\r\n' "$WEB" "$(stat -c %s "$body")"
  answer=$(web_http "$head" "$body")
  WEB_COOKIE=$(grep -o 'jb_session=[0-9a-f]*' <<<"$answer" | head -n 1)
  WEB_CSRF=$(grep -o '"csrf":"[0-9a-f]*"' <<<"$answer" | head -n 1 | cut -d'"' -f4)
  [ -n "$WEB_COOKIE" ] && [ -n "$WEB_CSRF" ]
}

# upload_head VAR FOLDER NAME LENGTH: sets VAR to the request line and headers of an upload
# (printf -v: a command substitution would strip the final LF).
upload_head() {
  local -n into=$1
  shift
  # shellcheck disable=SC2034 # a nameref: printf -v sets the caller's variable
  printf -v into 'POST /api/upload?folder=%s&name=%s HTTP/1.1\r\nHost: %s\r\nConnection: close\r\nContent-Type: application/octet-stream\r\nCookie: %s\r\nX-CSRF-Token: %s\r\nContent-Length: %s\r\n\r\n' \
    "$(urlencode "$1")" "$(urlencode "$2")" "$WEB" "$WEB_COOKIE" "$WEB_CSRF" "$3"
}

# hidden_uploads: the upload temporary files in the music folder (and below).
hidden_uploads() { find "$UPLOAD_DIR" -name '.upload-*.part' 2>/dev/null; }
some_hidden() { [ -n "$(hidden_uploads)" ]; }
none_hidden() { [ -z "$(hidden_uploads)" ]; }

# deb-upload (boot 1, after deb-web): a WAV uploaded into the sandboxed service lands in
# /srv/music owned by jukebox, readable, byte for byte; the player (its own read-only sandbox)
# lists it with its length; a text file named .wav is refused with the decoder's reason and
# leaves nothing; the same name again is a 409. The uploaded folder is removed after, so the
# later scenarios find /srv/music as they expect.
scenario_deb_upload() {
  begin deb-upload
  local t answer head src=/tmp/upload-src.wav listing
  t=$(uptime_s)
  cp "$OUT/music/Track 1.wav" "$src"
  [[ "$(systemctl show -p ReadWritePaths --value jukebox-web.service)" == *"$UPLOAD_DIR"* ]] \
    || note "expected ReadWritePaths with $UPLOAD_DIR in jukebox-web.service, seen '$(systemctl show -p ReadWritePaths --value jukebox-web.service)'"
  [ "$(stat -c '%G %a' "$UPLOAD_DIR")" = "jukebox 2775" ] || note "expected $UPLOAD_DIR group jukebox, mode 2775, seen $(stat -c '%U:%G %a' "$UPLOAD_DIR")"
  web_sign_in || note "could not set the PIN or sign in through port 80"
  upload_head head "$UPLOAD_DIR" "HIL upload/Track 1.wav" "$(stat -c %s "$src")"
  answer=$(web_http "$head" "$src")
  grep -q '^HTTP/1.1 201' <<<"$answer" || note "expected 201 for the upload, seen: $(tr '\r\n' '  ' <<<"$answer" | tail -c 400)"
  local put="$UPLOAD_DIR/HIL upload/Track 1.wav"
  cmp -s "$src" "$put" || note "the uploaded file is not the sent one: $(ls -la "$UPLOAD_DIR/HIL upload" 2>&1)"
  [ "$(stat -c '%U %a' "$put" 2>&1)" = "jukebox 644" ] || note "expected the file owned by jukebox, mode 644, seen $(stat -c '%U %a' "$put" 2>&1)"
  listing=$(jukebox ctl --socket "$SOCK" ls --json "$UPLOAD_DIR/HIL upload" 2>&1)
  [[ "$listing" == *'"name":"Track 1.wav"'* && "$listing" == *'"seconds":'[1-9]* ]] || note "expected the player to list the upload with its length, seen: $listing"
  printf 'not audio, whatever its name says\n%.0s' {1..100} > /tmp/upload-text.wav
  upload_head head "$UPLOAD_DIR" "notes.wav" "$(stat -c %s /tmp/upload-text.wav)"
  answer=$(web_http "$head" /tmp/upload-text.wav)
  grep -q 'not audio the player can play' <<<"$answer" || note "expected the text file refused as not audio, seen: $(tr '\r\n' '  ' <<<"$answer" | tail -c 300)"
  [ ! -e "$UPLOAD_DIR/notes.wav" ] || note "the refused file is in $UPLOAD_DIR"
  upload_head head "$UPLOAD_DIR" "HIL upload/Track 1.wav" "$(stat -c %s "$src")"
  answer=$(web_http "$head" "$src")
  grep -q '^HTTP/1.1 409' <<<"$answer" || note "expected 409 for the same name again, seen: $(tr '\r\n' '  ' <<<"$answer" | tail -c 300)"
  [ -z "$(hidden_uploads)" ] || note "temporary files left: $(hidden_uploads)"
  [ -z "$(ls -A "$UPLOAD_JOURNAL" 2>/dev/null)" ] || note "the journal is not empty: $(ls -A "$UPLOAD_JOURNAL")"
  rm -rf "$UPLOAD_DIR/HIL upload"
  finish "uploaded $(stat -c %s "$src") bytes through port 80 into $UPLOAD_DIR (201, owner jukebox, 644, same bytes, listed by the player), text refused, 409 again ($(since "$t") s)"
}

# Boot 2, before the power cut: an upload held half-sent (its connection open, the rest never
# comes), its hidden temporary file on disk and synced, when the host kills the machine.
start_upload_for_power_cut() {
  local src="$OUT/music/Track 2.wav" head
  web_sign_in || { echo "HIL upload-power-cut: could not sign in"; return 1; }
  upload_head head "$UPLOAD_DIR" "Cut upload.wav" "$(stat -c %s "$src")"
  bash -c 'exec 3<>/dev/tcp/'"$WEB"'/80 || exit 1; printf "%s" "$1" >&3; head -c 300000 "$2" >&3; sleep 3600' _ "$head" "$src" &
  wait_for 30 some_hidden || { echo "HIL upload-power-cut: no temporary file appeared"; return 1; }
  sleep 1
  sync
  echo "HIL upload-power-cut: held half-sent: $(hidden_uploads | tr '\n' ' ')"
}

# upload-power-cut (boot 3): what the cut left is never listed (its name is hidden, the final
# name never existed), and the web face's start removes it (its journal in /var/lib/jukebox).
scenario_upload_power_cut() {
  begin upload-power-cut
  local t left listing after
  t=$(uptime_s)
  left=$(hidden_uploads | wc -l)
  # Nothing held half-sent before the cut means nothing was tested.
  [ "$left" -ge 1 ] || note "expected the half-sent upload's temporary file on disk after the cut, found none"
  [ ! -e "$UPLOAD_DIR/Cut upload.wav" ] || note "the cut upload is in the library under its name"
  listing=$(jukebox ctl --socket "$SOCK" ls --json "$UPLOAD_DIR" 2>&1)
  [[ "$listing" != *".upload-"* && "$listing" != *"Cut upload"* ]] || note "the player lists the cut upload: $listing"
  # The first request starts jukebox-web.service, which removes what its journal names.
  timeout 30 "$OUT/busybox" wget -q -O /dev/null "http://$WEB/api/session" > /tmp/web-get.log 2>&1 || note "GET /api/session failed: $(cat /tmp/web-get.log)"
  wait_for 20 none_hidden || note "expected the temporary files removed at the web face's start, seen: $(hidden_uploads)"
  after=$(ls -A "$UPLOAD_JOURNAL" 2>/dev/null | wc -l)
  [ "$after" = 0 ] || note "expected the journal emptied, seen $(ls -A "$UPLOAD_JOURNAL")"
  finish "after the cut: $left temporary file(s) found at boot (hidden, not listed), removed at the web face's start; no file under the upload's name ($(since "$t") s)"
}
