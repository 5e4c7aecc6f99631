#!/bin/bash
# SPDX-License-Identifier: MIT
# update-probe.sh: the guest side of board/update-test.sh (given to the image's systemd as
# image-test's probe is: board/image-lib.sh's img_kernel; not part of the image). Output on
# ttyAMA0, results as HIL-RESULT lines in /mnt/results-PHASE. PHASE (/mnt/phase):
#   n       slot A, the image as made: READY and playing, then `jukebox-update /mnt/good.raucb`
#   trial   slot B on trial (tryboot): READY, committed by jukebox-update-check, the new root's
#           mark seen, then `jukebox-update /mnt/bad.raucb` (a root whose player never starts)
#   bad     slot A on trial with the bad root: nothing to do here (jukebox-update-check restarts)
#   back    slot B again, from config.txt: READY, playing, the update's mark, A marked bad
set -uo pipefail
OUT=/mnt
PHASE=$(cat "$OUT/phase")
R="$OUT/results-$PHASE"
: > "$R"
# shellcheck source=board/image-probe-lib.sh
. "$OUT/probe-lib.sh"
probe_start UPD-PROBE
slot=$(tr ' ' '\n' < /proc/cmdline | sed -n 's/^rauc\.slot=//p')
mark=$(cat /etc/jukebox-update-test 2>/dev/null || echo none)
echo "UPD-SLOT $slot mark=$mark"
[ "$PHASE" = bad ] && { echo "UPD-PROBE waiting (the trial of a root whose player never starts)"; exit 0; }

probe_card
probe_first_sample
probe_ready
printf 'first_up=%s\nready_us=%s\n' "${first:-}" "$ready" > "$OUT/times-$PHASE"
status=$(timeout 60 jukebox ctl status --json 2>&1 | tail -n 1)
if [ "$ready_state" = active ] && [ -n "$first" ] && [[ "$status" == *'"phase":"playing"'* ]]; then
  result PASS "$PHASE-ready" "slot $slot: jukebox.service active (READY=1), the first sample at snd-aloop, playing"
else
  result FAIL "$PHASE-ready" "slot $slot: expected READY and playing; seen $ready_state, first sample ${first:-never}" "status: $status" "$(journalctl -b -o cat -u jukebox.service | tail -n 10)"
fi
# jukebox-update-check has done its part (oneshot, RemainAfterExit: active once done).
while [ "$(systemctl show -p ActiveState --value jukebox-update-check.service)" = activating ] && [ "$EPOCHSECONDS" -lt "$end" ]; do nap 0.5; done
journalctl -b -o cat -u jukebox-update-check.service > "$OUT/update-check-$PHASE.log" 2>&1
timeout 120 rauc status --detailed > "$OUT/rauc-status-$PHASE.txt" 2>&1
timeout 60 rauc status --output-format=shell > "$OUT/rauc-shell-$PHASE.txt" 2>&1
cp /boot/firmware/config.txt "$OUT/config-$PHASE.txt" 2>/dev/null
echo "UPD-STATUS $(tr '\n' ' ' < "$OUT/rauc-shell-$PHASE.txt" | cut -c1-600)"

case "$PHASE" in
  n)
    if [ "$slot" = A ] && [ "$mark" = none ]; then result PASS n-slot "slot A booted, the image's own root"
    else result FAIL n-slot "expected slot A without the update's mark; seen slot $slot, mark $mark"; fi
    # The firmware's tryboot flag (board/image/tryboot/): loaded on every box, idle off a Pi.
    if grep -q '^jukebox_tryboot ' /proc/modules; then
      result PASS n-tryboot-loaded "jukebox_tryboot loaded: $(journalctl -k -b -o cat | grep -m1 'jukebox_tryboot: no Raspberry Pi firmware')"
    else
      result FAIL n-tryboot-loaded "jukebox_tryboot is not loaded" "$(journalctl -b -o cat -u systemd-modules-load.service | tail -n 5)"
    fi
    echo "UPD-INSTALL good.raucb"
    t0=$EPOCHSECONDS
    if jukebox-update --no-reboot "$OUT/good.raucb" > "$OUT/install-n.log" 2>&1; then
      result PASS n-install "jukebox-update installed good.raucb into slot B in $((EPOCHSECONDS - t0)) s: $(grep -m1 'installed into' "$OUT/install-n.log")"
      ls -la /boot/firmware/b/ > "$OUT/boot-b-n.txt" 2>&1
      echo "UPD-PROBE done"
      systemctl reboot --reboot-argument='0 tryboot'
      exit 0
    fi
    result FAIL n-install "jukebox-update good.raucb failed after $((EPOCHSECONDS - t0)) s" "$(tail -n 15 "$OUT/install-n.log")"
    ;;
  trial)
    if [ "$slot" = B ] && [ "$mark" = update-test-2 ]; then result PASS trial-slot "slot B booted on trial, holding the update's root (/etc/jukebox-update-test: $mark)"
    else result FAIL trial-slot "expected slot B with the update's mark; seen slot $slot, mark $mark"; fi
    if grep -q "slot B marked good and committed" "$OUT/update-check-trial.log" && grep -qx 'os_prefix=b/' /boot/firmware/config.txt; then
      result PASS trial-committed "$(grep -m1 'marked good' "$OUT/update-check-trial.log"); config.txt: os_prefix=b/"
    else
      result FAIL trial-committed "expected slot B marked good and config.txt naming b/" "$(cat "$OUT/update-check-trial.log")" "$(grep os_prefix /boot/firmware/config.txt)"
    fi
    echo "UPD-INSTALL bad.raucb"
    t0=$EPOCHSECONDS
    if jukebox-update --no-reboot "$OUT/bad.raucb" > "$OUT/install-trial.log" 2>&1; then
      result PASS trial-install-bad "jukebox-update installed bad.raucb into slot A in $((EPOCHSECONDS - t0)) s"
      echo "UPD-PROBE done"
      systemctl reboot --reboot-argument='0 tryboot'
      exit 0
    fi
    result FAIL trial-install-bad "jukebox-update bad.raucb failed" "$(tail -n 15 "$OUT/install-trial.log")"
    ;;
  back)
    if [ "$slot" = B ] && [ "$mark" = update-test-2 ]; then result PASS back-slot "slot B booted again from config.txt after the failed trial of slot A (mark $mark)"
    else result FAIL back-slot "expected slot B with the update's mark; seen slot $slot, mark $mark"; fi
    # rauc status's own view: booted B, B primary, A (the failed trial) bad.
    # shellcheck disable=SC1091 # rauc status --output-format=shell, written above
    a_status=$( . "$OUT/rauc-shell-back.txt" 2>/dev/null
      for i in ${RAUC_SLOTS:-}; do eval "[ \"\${RAUC_SLOT_BOOTNAME_$i:-}\" = A ] && echo \"\${RAUC_SLOT_BOOT_STATUS_$i:-}\""; done )
    if grep -q "RAUC_SYSTEM_BOOTED_BOOTNAME='B'" "$OUT/rauc-shell-back.txt" && [ "$a_status" = bad ]; then
      result PASS back-rauc "rauc status: booted B, $(grep -o "RAUC_SYSTEM_PRIMARY='[^']*'" "$OUT/rauc-shell-back.txt"), slot A's boot status $a_status"
    else
      result FAIL back-rauc "expected rauc status to show B booted and A bad (A: '$a_status')" "$(head -c 1200 "$OUT/rauc-shell-back.txt")"
    fi
    ;;
esac
echo "UPD-PROBE done"
systemctl poweroff
