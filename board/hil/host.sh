# SPDX-License-Identifier: MIT
# shellcheck shell=bash
# host.sh (sourced by board/hil/run.sh and board/hil/arm64.sh): what the hosts of both HIL
# machines do alike, defined once: installing the host packages, the guest image's driver and
# snapshot units, and counting the guests' result lines. The caller sets PASSED and FAILED to 0;
# HIL_LOG_NAME names the caller in log lines (default hil).

# hil_apt_install LOG PACKAGE[=VERSION]...: installs the Debian packages that are missing (one
# apt-get call; update only when needed), apt's output in LOG. Waits for the dpkg lock:
# board/test.sh runs the arm64 guest and the amd64 guests side by side.
hil_apt_install() {
  local log=$1 missing=() p
  shift
  for p in "$@"; do
    dpkg-query -W -f='${Status}\n' "${p%%=*}" 2>/dev/null | grep -q '^install ok installed' || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  printf '%s: installing %s\n' "${HIL_LOG_NAME:-hil}" "${missing[*]}" >&2
  if ! DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=900 install -y -q --no-install-recommends "${missing[@]}" >"$log" 2>&1; then
    DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=900 update -q >/dev/null
    DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=900 install -y -q --no-install-recommends "${missing[@]}" >"$log" 2>&1 \
      || { tail -n 20 "$log" >&2; return 1; }
  fi
}

# hil_guest_units ROOT DESCRIPTION TTY COMMAND: into the image at ROOT, enabled,
#   hil-guest.service     the test driver: COMMAND (run by /bin/sh -c), its output on TTY
#   hil-snapshot.service  the state file as a power cut left it, copied to /run before jukebox
#                         can overwrite it (for the power-cut check)
hil_guest_units() {
  local r=$1 wants=$1/etc/systemd/system/multi-user.target.wants
  printf '%s\n' "[Unit]" "Description=$2" "After=local-fs.target systemd-modules-load.service" \
    "[Service]" "Type=simple" "ExecStart=/bin/sh -c '$4'" "StandardOutput=tty" "StandardError=tty" \
    "TTYPath=$3" "[Install]" "WantedBy=multi-user.target" > "$r/etc/systemd/system/hil-guest.service"
  cat > "$r/etc/systemd/system/hil-snapshot.service" <<'UNIT'
[Unit]
Description=jukebox HIL: copy the state file as found at boot
DefaultDependencies=no
After=local-fs.target
Before=jukebox.service
[Service]
Type=oneshot
ExecStart=/bin/sh -c 'cp /var/lib/jukebox/state.json /run/hil-state-at-boot.json 2>/dev/null; cp /var/lib/jukebox/state.json.place /run/hil-place-at-boot.json 2>/dev/null || true'
[Install]
WantedBy=multi-user.target
UNIT
  mkdir -p "$wants"
  ln -sf /etc/systemd/system/hil-guest.service "$wants/hil-guest.service"
  ln -sf /etc/systemd/system/hil-snapshot.service "$wants/hil-snapshot.service"
}

# hil_results LOG: prints a guest console log's result lines (HIL-RESULT, the indented lines
# under them, HIL-INIT-FAILED) and counts the results into PASSED and FAILED.
hil_results() {
  local line
  tr -d '\r' < "$1" | grep -E '^(HIL-RESULT|  |HIL-INIT-FAILED)' || true
  while IFS= read -r line; do
    case "$line" in
      "HIL-RESULT PASS "*) PASSED=$((PASSED + 1)) ;;
      "HIL-RESULT FAIL "*) FAILED=$((FAILED + 1)) ;;
    esac
  done < <(tr -d '\r' < "$1")
}

# hil_finished LOG PATTERN WHAT LINES: true when the console log has a line matching PATTERN (the
# guest got to its end); otherwise says WHAT with the log's last LINES lines and counts a failure.
hil_finished() {
  grep -q "$2" "$1" && return 0
  printf '%s: %s; console tail:\n' "${HIL_LOG_NAME:-hil}" "$3" >&2
  tail -n "$4" "$1" >&2
  FAILED=$((FAILED + 1))
  return 1
}

# hil_result PASS|FAIL NAME [TEXT]: a result the host itself decides, printed and counted.
hil_result() {
  echo "HIL-RESULT $1 $2${3:+: $3}"
  if [ "$1" = PASS ]; then PASSED=$((PASSED + 1)); else FAILED=$((FAILED + 1)); fi
}
