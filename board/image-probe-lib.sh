# SPDX-License-Identifier: MIT
# shellcheck shell=bash
# shellcheck disable=SC2034 # a library: its functions set its caller's variables
# image-probe-lib.sh: what the guest probes of board/image-test.sh (image-probe.sh),
# board/update-test.sh (update-probe.sh) and board/power-cuts.sh (power-cuts-probe.sh) do alike, sourced from the run folder (/mnt/probe-lib.sh,
# copied there by img_kernel in board/image-lib.sh). Not part of the image.

# result PASS|FAIL NAME TEXT [LINE...]: a HIL-RESULT line in $R (the caller's results file), the
# LINEs indented under it.
result() { printf 'HIL-RESULT %s %s\n' "$1" "$2" >> "$R"; shift 2; for l in "$@"; do printf '  %s\n' "$l" >> "$R"; done; }
# up: the guest's /proc/uptime (seconds).
up() { local u _r; read -r u _r < /proc/uptime; printf '%s' "$u"; }
# probe_start NAME: the line "NAME start up=U" the host stamps (img_figures: QEMU start to the
# kernel's clock zero), and nap's pipe; sets end, the time limit of the waits below (600 s: a boot
# without /data waits out its device's timeout, 180 s in fstab, first).
probe_start() {
  echo "$1 start up=$(up)"
  mkfifo /run/probe-tick && exec {tick}<>/run/probe-tick
  end=$(( EPOCHSECONDS + 600 ))
}
# nap SECONDS: a pause with bash's own timed read (no process).
nap() { read -r -t "$1" -u "$tick" _ || true; }
# probe_card: waits for snd-aloop's card.
probe_card() { while [ ! -e /proc/asound/Loopback ] && [ "$EPOCHSECONDS" -lt "$end" ]; do nap 0.05; done; }
# probe_first_sample: sets first, the uptime at which snd-aloop's playback substream went RUNNING
# (the player's first frames reached the start threshold), empty if never. Polled every 50 ms
# with bash's own reads (no process per poll).
probe_first_sample() {
  local st=/proc/asound/Loopback/pcm0p/sub0/status s
  first=""
  while [ "$EPOCHSECONDS" -lt "$end" ]; do
    s=$(<"$st") 2>/dev/null || s=""
    if [[ "$s" == *RUNNING* ]]; then first=$(up); break; fi
    nap 0.05
  done
}
# probe_ready: waits while jukebox.service is activating (Type=notify: until READY=1); sets ready,
# its ActiveEnterTimestampMonotonic (µs), and ready_state, its ActiveState.
probe_ready() {
  while [ "$(systemctl show -p ActiveState --value jukebox.service)" = activating ] && [ "$EPOCHSECONDS" -lt "$end" ]; do nap 0.2; done
  ready=$(systemctl show -p ActiveEnterTimestampMonotonic --value jukebox.service)
  ready_state=$(systemctl show -p ActiveState --value jukebox.service)
}
