#!/bin/bash
# SPDX-License-Identifier: MIT
# image-probe.sh: the guest side of board/image-test.sh. Not part of the image: the test passes a
# unit to the image's systemd as a credential on the kernel command line (systemd.extra-unit.*),
# which mounts the host's run folder (9p) at /mnt and runs this. Output on ttyAMA0 (the host
# stamps each line with its own clock); results as HIL-RESULT lines in /mnt/results-PHASE, files
# for the host in /mnt. PHASE (/mnt/phase): good (the first boot, a good jukebox.json), bad (the
# next boot, a broken jukebox.json on the boot partition), nodata (the data partition hidden: its
# label changed by the host) or back (the next boot, the data partition as it was).
set -uo pipefail
OUT=/mnt
PHASE=$(cat "$OUT/phase")
R="$OUT/results-$PHASE"
: > "$R"
# shellcheck source=board/image-probe-lib.sh
. "$OUT/probe-lib.sh"
probe_start IMG-PROBE

# The first sample at snd-aloop, recorded from its first frames.
probe_card
arecord -q -D hw:Loopback,1,0 -f S16_LE -r 44100 -c 2 -t raw /run/rec.raw 2>/run/arecord.err &
rec=$!
probe_first_sample
echo "IMG-FIRST-SAMPLE up=${first:-none}"
probe_ready
echo "IMG-READY mono_us=$ready state=$ready_state"
# 4.5 s of playing recorded: the test noise (2.5 s) is at the start of the queue on the first boot.
if [ -n "$first" ]; then
  while awk -v a="$(up)" -v b="$first" 'BEGIN { exit !(a < b + 4.5) }'; do nap 0.2; done
fi
kill -INT $rec 2>/dev/null; wait $rec 2>/dev/null
cp /run/rec.raw "$OUT/rec-$PHASE.raw" 2>/dev/null
printf 'first_up=%s\nready_us=%s\n' "${first:-}" "$ready" > "$OUT/times-$PHASE"

# What the settings on the boot partition made of this boot.
status=$(timeout 60 jukebox ctl status --json 2>&1 | tail -n 1)
problems=$(cat /run/jukebox-setup/problems 2>/dev/null)
setup_log=$(journalctl -b -o cat -u jukebox-setup.service 2>&1 | grep 'jukebox-setup' | tail -n 20)
[ "$(systemctl show -p ActiveState --value jukebox.service)" = active ] && [[ "$status" == *'"phase":"playing"'* ]] \
  && [ -n "$first" ] && result PASS "$PHASE-ready" "jukebox.service active (READY=1), playing to hw:Loopback: $status" \
  || result FAIL "$PHASE-ready" "expected jukebox.service active and playing; seen $(systemctl show -p ActiveState,SubState,StatusText jukebox.service | tr '\n' ' ')" "status: $status" "first sample at: ${first:-never}" "$(journalctl -b -o cat -u jukebox.service | tail -n 15)"

# Every line of the setup problems file reaches the player (status --json "setupProblems"), as a
# JSON string ('"' and '\' escaped: the lines hold no control characters).
missing="" n=0
while IFS= read -r line; do
  [ -n "$line" ] || continue
  n=$((n + 1)) l=${line//\\/\\\\} l=${l//\"/\\\"}
  [[ "$status" == *'"setupProblems":['*"\"$l\""* ]] || missing="$missing | $line"
done <<< "$problems"
[ "$n" -gt 0 ] && [ -z "$missing" ] \
  && result PASS "$PHASE-problems-status" "the $n line(s) of /run/jukebox-setup/problems in status --json setupProblems" \
  || result FAIL "$PHASE-problems-status" "expected every line of the problems file in status --json setupProblems" "problems ($n):$missing" "status: $status"
# The place the next boots must find (the track playing, and at least this far into it, when
# stopped below).
path=$(sed -n 's/.*"path":"\([^"]*\)".*/\1/p' <<< "$status")
pos=$(sed -n 's/.*"position":\([0-9.]*\).*/\1/p' <<< "$status")
printf '%s\n%s\n' "$path" "$pos" > "$OUT/place-$PHASE"

# Stopped now (a SIGTERM: saved while playing the tone), so that the next boot resumes playing it,
# instead of finding the queue played out by the time the slow checks below are done.
systemctl stop jukebox.service

opts=$(findmnt -no OPTIONS /)
if touch /probe-write 2>/dev/null; then ro="writable"; rm -f /probe-write; else ro="EROFS"; fi
rw_list=$(findmnt -rno TARGET,FSTYPE,OPTIONS | awk '$3 ~ /(^|,)rw(,|$)/ && $1 !~ /^\/(proc|sys|dev|run)/ {print $1 "(" $2 ")"}' | paste -sd' ')
[[ ",$opts," == *,ro,* ]] && [ "$ro" = EROFS ] \
  && result PASS "$PHASE-read-only-root" "/ mounted $opts, a write fails ($ro); writable: $rw_list" \
  || result FAIL "$PHASE-read-only-root" "expected / mounted ro; seen $opts, a write: $ro"

in_force=$(tr -d ' \n' < /etc/jukebox/config.json)
case "$PHASE" in
good)
  host=$(cat /proc/sys/kernel/hostname) zone=$(readlink -f /etc/localtime) ssh=$(systemctl is-active ssh.service)
  kept=no; cmp -s /run/jukebox-setup/jukebox.json /data/system/jukebox.json && kept=yes
  [ "$host" = jbtest ] && [ "$zone" = /usr/share/zoneinfo/Europe/Berlin ] && [ "$ssh" = active ] && [ "$kept" = yes ] \
    && [[ "$in_force" == *'"hw:Loopback,0,0"'* ]] && [[ "$problems" == *wifi.txt* ]] \
    && result PASS good-settings "host name $host, $zone, ssh $ssh, jukebox.json kept as the last good one, the bad wifi.txt refused: $problems" \
    || result FAIL good-settings "expected host jbtest, Europe/Berlin, ssh active, jukebox.json kept, wifi.txt refused" \
         "seen host $host, zone $zone, ssh $ssh, kept $kept, config in force: $in_force" "problems: $problems" "$setup_log"
  dev=$(readlink -f /dev/disk/by-label/jbmusic)
  part=$(( $(cat "/sys/class/block/${dev##*/}/size") / 2048 )) fs=$(df -m --output=size /srv/music | tail -n 1 | tr -d ' ')
  [ -e /data/system/music-grown ] && [ "$part" -gt 400 ] && [ "$fs" -gt 350 ] \
    && result PASS music-grown "the music partition grown to $part MiB (file system $fs MiB), /srv/music: $(ls /srv/music | paste -sd,)" \
    || result FAIL music-grown "expected the music partition grown past 400 MiB; seen $part MiB, file system $fs MiB" "$(journalctl -b -o cat -u jukebox-grow-music.service -u systemd-growfs@srv-music.service | tail -n 10)"
  ;;
bad)
  kept=no; cmp -s /run/jukebox-setup/jukebox.json /data/system/jukebox.json && kept=yes
  [[ "$problems" == *'jukebox.json on the boot partition is not used'* ]] && [ "$kept" = yes ] && [[ "$in_force" == *'"hw:Loopback,0,0"'* ]] \
    && result PASS bad-config-kept "the broken jukebox.json refused, the last good one in force: $problems" \
    || result FAIL bad-config-kept "expected the broken jukebox.json refused and the last good one used" "problems: $problems" "kept $kept, in force: $in_force" "$setup_log"
  ;;
nodata)
  # The data partition's label was changed by the host: the player's state in a tmpfs, said first.
  state_fs=$(findmnt -no FSTYPE /var/lib/jukebox) data_mounted=no
  mountpoint -q /data && data_mounted=yes
  [ "$state_fs" = tmpfs ] && [ "$data_mounted" = no ] && [[ "$(head -n 1 <<< "$problems")" == 'no data partition (label jbdata) was found: '* ]] \
    && result PASS nodata-ram-state "/data not mounted, /var/lib/jukebox a tmpfs, said first: $(head -n 1 <<< "$problems")" \
    || result FAIL nodata-ram-state "expected /var/lib/jukebox on a tmpfs, /data not mounted, the data problem first" \
         "seen /var/lib/jukebox $state_fs, /data mounted $data_mounted" "problems: $problems" \
         "$(journalctl -b -o cat -u jukebox-data.service -u data.mount | tail -n 10)"
  ;;
back)
  # The data partition as it was: the place saved at the end of the bad boot is found again (the
  # same track, further than the bad boot had played when it was looked at; a fresh queue, as
  # in the boot without /data, is a few seconds into the tone by now).
  src=$(findmnt -no SOURCE /var/lib/jukebox)
  { read -r saved; read -r saved_pos; } < "$OUT/place-bad" 2>/dev/null || saved="" saved_pos=""
  [[ "$src" == *'[/jukebox]' ]] && [ -n "$saved" ] && [ "$path" = "$saved" ] && [[ "$problems" != *'data partition'* ]] \
    && awk -v a="${pos:-0}" -v b="${saved_pos:-x}" 'BEGIN { exit !(b != "x" && a + 0 >= b + 0) }' \
    && [ -f /data/system/jukebox.json ] && [[ "$in_force" == *'"hw:Loopback,0,0"'* ]] \
    && result PASS back-state-kept "/var/lib/jukebox is $src again; playing $path at $pos s, where boot 2 stopped (seen at $saved_pos s)" \
    || result FAIL back-state-kept "expected /var/lib/jukebox bound from /data/jukebox and the place of the bad boot" \
         "seen source $src, playing '$path' at ${pos:-?} s, saved '$saved' at ${saved_pos:-?} s" "problems: $problems" "in force: $in_force"
  ;;
esac
{
  echo "== systemd-analyze"; systemd-analyze 2>&1
  echo "== systemd-analyze critical-chain jukebox.service"; systemd-analyze critical-chain --no-pager jukebox.service 2>&1
  echo "== blame (top 15)"; systemd-analyze blame --no-pager 2>&1 | head -n 15
  echo "== failed units"; systemctl --failed --no-legend --no-pager 2>&1
  echo "== jukebox-setup"; printf '%s\n' "$setup_log"
  echo "== mounts"; findmnt -rno TARGET,SOURCE,FSTYPE,OPTIONS | grep -v -E '^/(proc|sys|dev)'
} > "$OUT/analyze-$PHASE.txt" 2>&1
echo "IMG-PROBE done"
sync
systemctl poweroff
