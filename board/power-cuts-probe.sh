#!/bin/bash
# SPDX-License-Identifier: MIT
# power-cuts-probe.sh: the guest side of board/power-cuts.sh, run as image-probe.sh is (a unit
# given to the image's systemd on the kernel command line, the host's run folder at /mnt over
# 9p); not part of the image. Each boot: the first sample at snd-aloop and READY on the console,
# then what the boot found after the last power cut into /mnt/check-PHASE (the host judges it),
# then the moment the host cuts in, by /mnt/plan-PHASE ("KIND ARG RAUC"; RAUC 1: RAUC's view and
# the boot partition's slot files checked too, 2: and then the bundle installed again, at the end):
#   boot      (the host cuts before READY; if READY comes first, as playback)
#   playback  status lines while it plays
#   save      a status line, then a PC-SAVE line each time the place file is replaced
#   card      a status line, PC-ACT-ASK, `jukebox ctl card assign ARG /srv/music`, PC-ACT-ACK
#   seek      a status line, PC-ACT-ASK, `jukebox ctl seek +0:30`, PC-ACT-ACK
#   update    status lines, and beside them PC-UPD-START, `jukebox-update --no-reboot
#             /mnt/update.raucb` (its output in /mnt/install-PHASE.log), PC-UPD-END rc=N
#   trial     as update, but `jukebox-update` itself restarts the box into the new slot on
#             trial ('reboot "0 tryboot"'); the host follows the restart (PHASE t)
#   tried     the trial boot: PC-ACTIVE when jukebox.service is active, PC-CONFIG-FIRST (config.txt's
#             slot once the boot partition is mounted) and PC-CONFIG at each change of it, status
#             lines (the host cuts it; jukebox-update-check commits the slot or not, on the console)
#   final     the checks only (RAUC 2: then PC-REINSTALL-START, the install, PC-REINSTALL-END rc=N
#             and RAUC's view after it), then power-off
# Console lines start with PC-; the host stamps each with its own clock.
set -uo pipefail
OUT=/mnt
PHASE=$(cat "$OUT/phase")
read -r KIND ARG RAUC < "$OUT/plan-$PHASE" || KIND=final
RAUC=${RAUC:-0}
C="$OUT/check-$PHASE"
STATE=/var/lib/jukebox
# A trace for the host (a boot cut anywhere leaves it as far as it went).
exec {trace}>"$OUT/trace-$PHASE" && BASH_XTRACEFD=$trace && set -x
# shellcheck source=board/image-probe-lib.sh
. "$OUT/probe-lib.sh"
probe_start PC-PROBE
echo "PC-KIND $KIND $ARG"
ctl() { timeout 60 jukebox ctl "$@" 2>&1 | tail -n 1; }
status() { echo "PC-STATUS $(ctl status --json)"; }

# No first sample after 240 s: what the player and systemd say, into /mnt/late-PHASE (the journal
# is in RAM, lost with the next cut).
( nap 240; [ -e /run/pc-first ] || { systemctl status --no-pager jukebox.service jukebox-setup.service jukebox-data.service; journalctl -b -o cat -u jukebox.service | tail -n 40; cat /proc/asound/cards /proc/asound/Loopback/pcm0p/sub0/status; timeout 60 jukebox ctl status --json; cat /etc/jukebox/config.json; } > "$OUT/late-$PHASE" 2>&1 ) &
# The first boot only: the player may start before /srv/music is mounted (nothing orders it after
# the music partition) and find no music (no state to resume yet). It waits for music to arrive
# there and plays it, so this should no longer trigger; kept as a safety net: a queue still empty
# 30 s after the unit became active is said on the console (PC-NOTE) and the music loaded by hand
# (the partition mounted first if it is not: before the fix in jukebox-grow-music, its growth
# unmounted it).
if [ "$PHASE" = b001 ]; then
  ( while [ "$(systemctl show -p ActiveState --value jukebox.service)" != active ]; do nap 1; done
    for _ in $(seq 30); do [[ "$(ctl status --json)" == *'"count":0'* ]] || exit 0; nap 1; done
    if [[ "$(ctl status --json)" == *'"count":0'* ]]; then
      m=mounted; mountpoint -q /srv/music || { m="not mounted (started by hand)"; systemctl start srv-music.mount; }
      echo "PC-NOTE the player found no music at its start (/srv/music $m): $(ctl load /srv/music)"
    fi ) &
fi
# The trial boot: the moment the player became active (READY; jukebox-update-check commits the slot
# only after it) and each change of config.txt's slot, as this boot saw them (polled every 0.2 s).
if [ "$KIND" = tried ]; then
  ( cfg() { sed -n 's|^os_prefix=||p' /boot/firmware/config.txt 2>/dev/null | tr -d '\r' | tail -n 1; }
    # (the boot partition is mounted later than this starts: its first slot is the one to watch)
    until c=$(cfg); [ -n "$c" ]; do nap 0.2; done
    echo "PC-CONFIG-FIRST $c up=$(up)"; a=""
    while :; do
      [ -n "$a" ] || [ "$(systemctl show -p ActiveState --value jukebox.service)" != active ] || { a=1; echo "PC-ACTIVE up=$(up)"; }
      n=$(cfg); [ -z "$n" ] || [ "$n" = "$c" ] || { c=$n; echo "PC-CONFIG $c up=$(up)"; }
      nap 0.2
    done ) &
fi
probe_card
# A listener on the loopback's other side for the whole boot, as in image-test (snd-aloop's
# playback side was never seen RUNNING without one).
arecord -q -D hw:Loopback,1,0 -f S16_LE -r 44100 -c 2 -t raw /dev/null 2>/run/arecord.err &
probe_first_sample
echo "PC-FIRST up=${first:-none}"
[ -z "$first" ] || : > /run/pc-first
probe_ready
echo "PC-READY mono_us=$ready state=$ready_state"

# What this boot found: one "key value" line each (values on one line).
line() { printf '%s %s\n' "$1" "$(tr '\n' '|' <<< "$2")" >> "$C"; }
: > "$C"
line root_mount "$(findmnt -no SOURCE,OPTIONS /)"
# (either root slot: vda2 is A, vda5 B)
line root_kernel "$(journalctl -k -b -o cat | grep -E 'EXT4-fs \(vda[25]\)')"
line root_fsck "$(journalctl -b -o cat -t systemd-fsck | grep -E 'jbroot|vda[25]')"
line data_mount "$(findmnt -no SOURCE,OPTIONS /data)"
line data_kernel "$(journalctl -k -b -o cat | grep -E 'EXT4-fs \(vda3\)')"
line data_fsck "$(journalctl -b -o cat -t systemd-fsck | grep -E 'jbdata|vda3')"
line data_fsck_unit "$(systemctl show -p Result,ExecMainStatus --value 'systemd-fsck@dev-disk-by\x2dlabel-jbdata.service' | paste -sd' ')"
line resume "$(journalctl -b -u jukebox.service -o cat | grep -m1 '^resuming ')"
line jukebox_warnings "$(journalctl -b -u jukebox.service -o cat -p warning | head -n 10)"
line damaged "$(find "$STATE" -maxdepth 1 -name '*damaged*' -printf '%f ')"
line state_files "$(find "$STATE" -maxdepth 1 -printf '%f:%s ')"
line slot "$(tr ' ' '\n' < /proc/cmdline | sed -n 's/^rauc\.slot=//p')"
# rauc_view SUFFIX: RAUC's status (shell format) in /mnt/rauc-PHASE[SUFFIX].txt (the host reads it),
# and the boot partition's slot files: config.txt's and tryboot.txt's os_prefix, and whether the
# folder tryboot.txt names holds a kernel, an initrd and a cmdline.txt for its slot.
rauc_view() {
  local t d
  line "rauc$1" "rc=$(timeout 120 rauc status --output-format=shell > "$OUT/rauc-$PHASE$1.txt" 2>&1; echo $?)"
  t=$(sed -n 's|^os_prefix=||p' /boot/firmware/tryboot.txt 2>/dev/null | tr -d '\r' | tail -n 1)
  d=/boot/firmware/$t
  line "boot_files$1" "config=$(sed -n 's|^os_prefix=||p' /boot/firmware/config.txt | tr -d '\r' | tail -n 1) tryboot=${t:-none}$([ -z "$t" ] || echo " folder=$([ -s "${d}vmlinuz" ] && [ -s "${d}initrd.img" ] && grep -o 'rauc\.slot=[AB]' "${d}cmdline.txt" 2>/dev/null || echo incomplete)")"
}
if [ "$RAUC" != 0 ]; then
  rauc_view ""
  line boot_kernel "$(journalctl -k -b -o cat | grep -E 'FAT-fs \(vda1\)')"
fi
line status "$(ctl status --json)"
line cards "$(ctl cards --json)"
line bookmarks "$(ctl bookmarks --json)"
echo "PC-CHECKED"

if [ "$KIND" = final ]; then
  if [ "$RAUC" = 2 ]; then
    echo "PC-REINSTALL-START"
    jukebox-update --no-reboot "$OUT/update.raucb" > "$OUT/install-$PHASE.log" 2>&1
    echo "PC-REINSTALL-END rc=$?"
    rauc_view _after
  fi
  sync; systemctl poweroff; exit 0
fi
status
case "$KIND" in
save)
  place=$STATE/state.json.place
  touch -d @0 /run/pc-ref
  [ -e "$place" ] && touch -r "$place" /run/pc-ref
  while :; do
    if [ "$place" -nt /run/pc-ref ]; then echo "PC-SAVE up=$(up)"; touch -r "$place" /run/pc-ref; fi
    nap 0.02
  done
  ;;
card)
  echo "PC-ACT-ASK card assign $ARG /srv/music"
  echo "PC-ACT-ACK $(ctl card assign "$ARG" /srv/music)"
  ;;
seek)
  echo "PC-ACT-ASK seek +0:30"
  echo "PC-ACT-ACK $(ctl seek +0:30)"
  ;;
update)
  # In the background: the status lines go on while it installs (what was heard at the cut).
  ( echo "PC-UPD-START"
    jukebox-update --no-reboot "$OUT/update.raucb" > "$OUT/install-$PHASE.log" 2>&1
    echo "PC-UPD-END rc=$?" ) &
  ;;
trial)
  ( echo "PC-UPD-START"
    jukebox-update "$OUT/update.raucb" > "$OUT/install-$PHASE.log" 2>&1
    echo "PC-UPD-END rc=$?" ) &
  ;;
esac
while :; do status; nap 1; done
