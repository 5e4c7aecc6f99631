#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# power-cuts.sh - the power-cut soak of the appliance image (issue 32): boots the image of
# board/image.sh in QEMU virt as board/image-test.sh does (snd-aloop as the card, the test music
# and a 3-hour silent track on the music partition, a good jukebox.json with a card map in the
# state folder on the boot partition), and kills QEMU (SIGKILL: a power cut) again and again at a
# moment a seeded generator chooses. Each boot is both the check of the last cut and the next
# victim. Kinds of cut:
#   boot      at a random moment between QEMU start and READY (never twice in a row)
#   playback  0-20 s after a status read while it plays
#   save      within ±0.3 s of a periodic place save (the next one after two seen)
#   card      0-1.5 s after `jukebox ctl card assign ID /srv/music` was asked (before or after its reply)
#   seek      0-1.5 s after `jukebox ctl seek +0:30` was asked (the place saved at once)
#   update    while `jukebox-update --no-reboot` installs a signed bundle (board/bundle.sh, of slot
#             A's root with a mark; made once a run, in the run folder) into the other slot: at a
#             fraction 0-1.15 (drawn) of the install's length (the last one measured in this run,
#             at first 150 s: measured at load ~2), counted from its start: mostly during it, some
#             after its end (tryboot.txt armed, the box playing on, the restart not yet asked)
#   trial     as update, but `jukebox-update` restarts into the new slot on trial ('reboot
#             "0 tryboot"'); the host follows the restart as the firmware would (img_firmware:
#             tryboot.txt's folder for that one boot) and cuts the TRIAL boot: half the time at a
#             moment drawn from 3 s to the QEMU start-to-commit time (last seen in this run, at
#             first 200 s), half at -3 to +12 s around the moment its player became active
#             (READY, a probe line: before jukebox-update-check's commit, during it or just after;
#             a negative draw cuts as soon as the line is seen)
# After each cut, the next boot that reaches READY must show: the root not repaired (no ext4
# journal recovery or fsck of jbroot in its kernel log or journal), /data mounted (clean, its
# journal replayed by fsck, or repaired by fsck -p: recorded with fsck's message), READY and the
# first sample at snd-aloop, playing, the place kept (resumed no more than 5 s behind what was
# heard at the cut: the position of the last status read before it plus the time from that read
# to the kill; for an acknowledged seek, its target plus the time since its reply), every card
# whose assignment was answered before the cut on the map, the bookmarks readable and no file set
# aside as damaged. After an update cut also: the slot booted at the cut booted again (a power-on
# never takes the firmware's one-shot tryboot: config.txt's slot, whether the install ended or
# not), config.txt still naming it, `rauc status` answering with that slot booted, primary and
# good, the other slot good exactly when tryboot.txt names it, and then its folder on the boot
# partition complete (kernel, initrd, cmdline.txt for it). After a trial cut: a plain start (a cut
# clears the one-shot tryboot flag) boots the slot config.txt names, which is the new one exactly
# when jukebox-update-check's commit line (or the probe's sight of config.txt changed) reached
# the console before the cut (the new one with neither only when the cut came after the player
# became active: committed, its line not yet out), the old one otherwise; config.txt parses and
# names a/ or b/; RAUC as after an update cut. When the run made an update or trial cut, the
# last boot installs the bundle again: it must succeed and leave the other slot armed so. Prints
# one line per cut (the slot booted, and RAUC's view after an update cut), `N cuts, N passed, N
# failed` and the figures; exit 1 when a cut or the last install failed. See docs/IMAGE.md
# (Power cuts).
#
#   sudo bash board/power-cuts.sh [--cuts N] [--seed S] [--minutes M] [--kinds K,K]
#                                 [IMAGE.img|IMAGE.img.xz]
#     --cuts N     cuts (default 20); N+1 boots
#     --seed S     the generator's seed (default: from the clock; printed): the same kinds, delays
#                  and card ids again (the emulated machine's timing is not replayed)
#     --minutes M  make no new cut after M minutes (then the last boot checks the last cut)
#     --kinds K,K  only these kinds, at their weights (default all: boot 1, playback 2, save 2,
#                  card 2, seek 1, update 2, trial 1 in 11); a boot cut after a boot cut
#                  becomes the first other kind listed
#     IMAGE        default: the newest $IMAGE_CACHE/out/jukebox-*-arm64.img
#
# Environment: IMAGE_CACHE (default /var/tmp/jukebox-image; this test uses IMAGE_CACHE/test/power-cuts);
# POWER_CUTS_TRIAL_MODE=at|ready|commit aims every trial cut at that moment (below).
set -euo pipefail
IT_REPO=$(cd "$(dirname "$0")/.." && pwd)
HIL_LOG_NAME=power-cuts
# shellcheck source=board/image-lib.sh
. "$IT_REPO/board/image-lib.sh"

# rnd A B R: a number from A to B (two decimals) for R, a draw of $RANDOM (taken by the caller:
# bash seeds a subshell's $RANDOM anew, so a draw inside $(…) would not replay).
rnd() { awk -v a="$1" -v b="$2" -v r="$3" 'BEGIN { printf "%.2f", a + (b - a) * r / 32767 }'; }
# now_s PHASE: seconds since that boot's QEMU start (the console's time base).
now_s() { local d=$(( ${EPOCHREALTIME/./} - $(cat "$run/qemu-$1.t0") )); printf '%d.%02d' $((d / 1000000)) $((d % 1000000 / 10000)); }
# stamp PHASE PATTERN [N]: the host's stamp of the Nth (default last) console line matching PATTERN.
stamp() { local l; l=$(grep -E "^[0-9.]+ $2" "$run/console-$1.log" 2>/dev/null | { if [ -n "${3:-}" ]; then sed -n "${3}p"; else tail -n 1; fi; }); [ -n "$l" ] && echo "${l%% *}"; }
# rest PHASE PATTERN: the rest of the last console line matching PATTERN, after it.
rest() { grep -E "^[0-9.]+ $2" "$run/console-$1.log" 2>/dev/null | tail -n 1 | sed -E "s/^[0-9.]+ $2//"; }
# before PHASE PATTERN T: the last console line matching PATTERN stamped before T (the cut), as
# "STAMP REST" (REST: the line after PATTERN); false when there is none.
before() {
  grep -E "^[0-9.]+ $2" "$run/console-$1.log" 2>/dev/null | sed -E "s/^([0-9.]+) $2/\1 /" \
    | awk -v t="$3" '$1 + 0 < t + 0 { l = $0 } END { if (l == "") exit 1; print l }'
}
# lt A B: A < B (decimals).
lt() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a + 0 < b + 0) }'; }
# field NAME JSON: a number or string field of a one-line JSON object (the first).
field() { sed -n "s/.*\"$1\":\"\{0,1\}\([^\",}]*\).*/\1/p" <<< "$2" | head -n 1; }
# check PHASE KEY: a value of the boot's check file (its lines joined with |, one at the end).
check() { sed -n "s/^$2 //p" "$run/out/check-$1" 2>/dev/null | head -n 1; }
# check1 PHASE KEY: a value of one line (without the | at its end).
check1() { local v; v=$(check "$@"); printf '%s' "${v%|}"; }
# rauc_summary FILE: "booted=X primary=Y A=STATUS B=STATUS" from `rauc status --output-format=shell`
# (read as text, never sourced: the guest's output); rootfs.0 is A, rootfs.1 B (the image's system.conf).
rauc_summary() {
  local f=$1 n
  rv() { sed -n "s/^$1='\([^']*\)'\$/\1/p" "$f" | head -n 1; }
  printf 'booted=%s primary=%s' "$(rv RAUC_SYSTEM_BOOTED_BOOTNAME)" "$(rv RAUC_BOOT_PRIMARY | sed 's/^rootfs\.0$/A/; s/^rootfs\.1$/B/')"
  for n in $(rv RAUC_SLOTS); do
    [[ "$n" =~ ^[0-9]+$ ]] && printf ' %s=%s' "$(rv "RAUC_SLOT_BOOTNAME_$n")" "$(rv "RAUC_SLOT_BOOT_STATUS_$n")"
  done
}
# rauc_judge PHASE SUFFIX SLOT [armed]: RAUC's view and the slot files of boot PHASE (SUFFIX: "" at its
# checks, _after after its install) against SLOT, the slot that must be booted, primary and good;
# the other slot good exactly when tryboot.txt names it with a complete folder (armed: it must).
# Sets rauc_note; adds to the caller's problems.
rauc_judge() {
  local sum bf other o_lc s_lc
  other=$(tr AB BA <<< "$3"); o_lc=$(tr AB ab <<< "$other"); s_lc=$(tr AB ab <<< "$3")
  bf=$(check1 "$1" "boot_files$2")
  if [ "$(check1 "$1" "rauc$2")" != rc=0 ]; then
    rauc_note="rauc status failed ($(check1 "$1" "rauc$2"): $(head -c 200 "$run/out/rauc-$1$2.txt" 2>/dev/null | tr '\n' ' ')); $bf"
    problems+=" $rauc_note;"
    return 0
  fi
  sum=$(rauc_summary "$run/out/rauc-$1$2.txt")
  rauc_note="rauc: $sum; boot partition: $bf"
  [[ " $sum " == *" booted=$3 primary=$3 "* && " $sum " == *" $3=good "* ]] || problems+=" rauc does not show slot $3 booted, primary and good ($sum);"
  [[ "$bf" == "config=$s_lc/ "* ]] || problems+=" config.txt does not name slot $3 ($bf);"
  case "$bf" in
    *" tryboot=none"*) [ "${4:-}" != armed ] || problems+=" no tryboot.txt after a complete install;"
      [[ " $sum " == *" $other=bad "* ]] || problems+=" slot $other not bad with nothing armed ($sum);" ;;
    *" tryboot=$o_lc/ folder=rauc.slot=$other"*) [[ " $sum " == *" $other=good "* ]] || problems+=" slot $other armed in tryboot.txt but not good ($sum);" ;;
    # A trial's commit cut between its two steps (config.txt's letter, then tryboot.txt removed):
    # tryboot.txt names the committed slot, which a tryboot would boot anyway (harmless).
    *" tryboot=$s_lc/ folder=rauc.slot=$3"*) [ "${4:-}" != armed ] || problems+=" tryboot.txt names the booted slot after a complete install;"
      rauc_note+=" (tryboot.txt left naming the committed slot: the commit cut between its two steps)" ;;
    *) problems+=" tryboot.txt names an incomplete folder or the wrong slot ($bf);" ;;
  esac
}

# boot_cut PHASE KIND: one boot of PHASE (main's locals: run, delay, mode, upd_est), cut (SIGKILL
# to QEMU) when KIND's moment comes; sets t_kill and cut_note when it cut. KIND trial: the install
# boot, never cut (it ends with the restart into the trial; killed when the install failed);
# tried: the trial boot.
boot_cut() {
  local ph=$1 kd=$2 bpid s s1 s2 t0=$SECONDS
  target=""
  # (bash's "Killed" for the pipeline QEMU heads, at each cut, into a file of its own)
  ( echo "${EPOCHREALTIME/./}" > "$run/qemu-$ph.t0"; img_boot "$ph" ) 2> "$run/boot-$ph.err" &
  bpid=$!
  while kill -0 "$bpid" 2>/dev/null; do
    sleep 0.05
    [ -f "$run/qemu-$ph.t0" ] && [ -s "$run/qemu.pid" ] || continue
    [ $((SECONDS - t0)) -lt 900 ] || break
    case "$kd" in
      boot) target=$delay ;;
      playback) [ -z "$target" ] && s=$(stamp "$ph" 'PC-STATUS ' 1) && target=$(awk -v s="$s" -v d="$delay" 'BEGIN { print s + d }') ;;
      save)
        if [ -z "$target" ] && s2=$(stamp "$ph" 'PC-SAVE ' 2); then
          s1=$(stamp "$ph" 'PC-SAVE ' 1)
          target=$(awk -v a="$s1" -v b="$s2" -v d="$delay" 'BEGIN { i = b - a; if (i < 2 || i > 8) i = 5; print b + i + d }')
        fi ;;
      card|seek) [ -z "$target" ] && s=$(stamp "$ph" 'PC-ACT-ASK ') && target=$(awk -v s="$s" -v d="$delay" 'BEGIN { print s + d }') ;;
      update) [ -z "$target" ] && s=$(stamp "$ph" 'PC-UPD-START') && target=$(awk -v s="$s" -v d="$delay" -v l="$upd_est" 'BEGIN { print s + d * l }') ;;
      trial) s=$(rest "$ph" 'PC-UPD-END rc=' || true); if [ -n "$s" ] && [ "$s" != 0 ]; then kill -KILL "$(cat "$run/qemu.pid")" 2>/dev/null || true; break; fi ;;
      tried)
        if [ "$mode" = at ]; then target=$delay
        elif [ "$mode" = commit ]; then
          [ -z "$target" ] && s=$(stamp "$ph" '.*jukebox-update-check: the player is READY on slot ') && target=$(awk -v s="$s" -v d="$delay" 'BEGIN { print s + d }')
        elif [ -z "$target" ]; then
          s=$(stamp "$ph" 'PC-ACTIVE ' || stamp "$ph" '.*jukebox-update-check: the player is READY') && target=$(awk -v s="$s" -v d="$delay" 'BEGIN { print s + d }')
        fi ;;
    esac
    if [ -n "$target" ] && ! lt "$(now_s "$ph")" "$target"; then
      t_kill=$(now_s "$ph")
      kill -KILL "$(cat "$run/qemu.pid")" 2>/dev/null || true
      cut_note="killed at $t_kill s"
      break
    fi
  done
  wait "$bpid" 2>/dev/null || true
}

main() {
[ "$(id -u)" -eq 0 ] || { say "run as root (apt-get, mkfs, qemu)"; exit 2; }
local cuts=20 seed="" minutes=0 img="" only="" k
while [ $# -gt 0 ]; do
  case "$1" in
    --cuts) cuts=$2; shift 2 ;;
    --seed) seed=$2; shift 2 ;;
    --minutes) minutes=$2; shift 2 ;;
    --kinds) only=$2; shift 2 ;;
    -*) say "unknown option $1"; exit 2 ;;
    *) img=$1; shift ;;
  esac
done
[[ "$cuts" =~ ^[0-9]+$ ]] && [ "$cuts" -ge 1 ] || { say "--cuts wants a number ≥ 1"; exit 2; }
# The kinds at their weights (update: at least 2 in 20 cuts most of the time, P ≈ 0.90; trial:
# at least 1 in 20, P ≈ 0.85; each trial costs three boots and an install).
local -a kinds=(boot playback playback save save card card seek update update trial)
if [ -n "$only" ]; then
  for k in ${only//,/ }; do [[ " ${kinds[*]} " == *" $k "* ]] || { say "--kinds: no kind '$k' (${kinds[*]})"; exit 2; }; done
  local -a all=("${kinds[@]}"); kinds=()
  for k in "${all[@]}"; do [[ ",$only," == *",$k,"* ]] && kinds+=("$k"); done
fi
local not_boot=playback
for k in "${kinds[@]}"; do [ "$k" = boot ] || { not_boot=$k; break; }; done
seed=${seed:-$(( ${EPOCHREALTIME/./} % 1000000 ))}
[[ "$seed" =~ ^[0-9]+$ ]] || { say "--seed wants a number"; exit 2; }
RANDOM=$seed
say "seed $seed (replay: ${POWER_CUTS_TRIAL_MODE:+POWER_CUTS_TRIAL_MODE=$POWER_CUTS_TRIAL_MODE }--seed $seed --cuts $cuts${only:+ --kinds $only})"
# shellcheck source=board/private-dir.sh
. "$IT_REPO/board/private-dir.sh"
private_dir "$IT_CACHE" IMAGE_CACHE || exit 1
mkdir -p "$A64_CACHE/tools"
hil_apt_install "$A64_CACHE/apt.log" qemu-system-arm mtools e2fsprogs fdisk sox xz-utils rauc squashfs-tools openssl
[ -n "$img" ] || img=$(find "$IT_CACHE/out" -maxdepth 1 -name 'jukebox-*-arm64.img' -printf '%T@ %p\n' 2>/dev/null | sort -n | tail -n 1 | cut -d' ' -f2-)
[ -f "${img:-}" ] || { say "no image (board/image.sh --no-xz makes one): ${img:-none}"; exit 1; }
a64_prepare_fixtures

# shellcheck disable=SC2034 # all set by img_disk and img_kernel; locals so they stay this run's
local run="$A64_CACHE/power-cuts" raw_size xz_size fat kernel cmdline boot_off music_off music_size data_off data_size music_part prefix slot_trial
rm -rf "$run" && mkdir -p "$run/out"
# The test music, and a 2-hour silent track that the boots play on into.
img_music_long
img_disk "$img" "$run/music"
# A card map in the state folder (where cards can be assigned), with a keyboard reader that is never
# plugged in (the player watches for it).
img_config 's|"logLevel": "info",|"logLevel": "info",\n  "rfid": {"reader": "keyboard", "name": "power-cuts (no such reader)", "cards": "/var/lib/jukebox/cards.json"},|'
grep -q '"rfid"' "$run/good.json" || { say "the card map did not go into jukebox.json: $(cat "$run/good.json")"; exit 1; }
img_kernel "$IT_REPO/board/power-cuts-probe.sh"
# The update bundle (only when the kind may come): slot A's root with a mark, as update-test's good
# one, signed by the image's development key (the image's keyring).
if [[ " ${kinds[*]} " == *" update "* || " ${kinds[*]} " == *" trial "* ]]; then
  local tbu=$SECONDS
  img_root_copy "$run/root.ext4" || exit 1
  echo power-cuts-2 > "$run/mark"
  debugfs -w -R "write $run/mark /etc/jukebox-update-test" "$run/root.ext4" >/dev/null 2>&1
  IMAGE_CACHE=$IT_CACHE bash "$IT_REPO/board/bundle.sh" --root "$run/root.ext4" --version power-cuts-2 --out "$run/out/update.raucb"
  rm -f "$run/root.ext4"
  say "update bundle made in $((SECONDS - tbu)) s: $(du -h --apparent-size "$run/out/update.raucb" | cut -f1)"
fi
say "image $(basename "$img"): raw $((raw_size / 1048576)) MiB; kernel $kernel; $cuts cuts"

local b kind prev="" phase t_kill detail deadline=0 boots=$((cuts + 1)) made=0 passed=0 failed=0
[ "$minutes" -gt 0 ] && deadline=$((SECONDS + minutes * 60))
local pend_problems="" ready_est=60 heard_idx="" heard_pos="" heard_note="none yet" acked_cards="" asked_cards="" killed_consoles=""
  local -a pending=()
local repairs=0 replays=0 worst_lost=0 ready_list="" fsck_msgs=""
local ahead_ok=yes s s1 s2
# The update kind: the install's length as last measured (s), the lengths seen, the slot booted
# at the pending update cut (empty: none pending), whether the run made one, the slots booted after them.
local upd_est=150 upd_lens="" upd_slot="" upd_made=0 upd_slots="" reinstall_failed=0
# The trial kind: QEMU start to the commit line in a trial boot as last seen (s); the pending
# trial cut ("NEW OLD COMMITTED READY-BEFORE-THE-CUT", empty: none); the trial figures.
local trial_est=200 trial_pend="" trial_made=0 trial_slots="" trial_lens="" vphase
for ((b = 1; b <= boots; b++)); do
  phase=$(printf 'b%03d' "$b")
  if [ "$b" -eq "$boots" ] || { [ "$deadline" -gt 0 ] && [ $SECONDS -ge "$deadline" ]; }; then
    kind=final
  else
    kind=${kinds[$((RANDOM % ${#kinds[@]}))]}
    [ "$kind" = boot ] && [ "$prev" = boot ] && kind=$not_boot
  fi
  local arg=0 want_rauc=0
  [ "$kind" = card ] && arg="PC$(printf '%03d' "$b")$((RANDOM % 1000))"
  # RAUC's view at the boot after an update cut, and at an update cut's own boot (the slot it ran
  # from); at the last boot of a run that made one, the bundle installed again after it.
  { [ -n "$upd_slot" ] || [ -n "$trial_pend" ] || [ "$kind" = update ] || [ "$kind" = trial ]; } && want_rauc=1
  [ "$kind" = final ] && [ $((upd_made + trial_made)) -gt 0 ] && want_rauc=2
  echo "$kind $arg $want_rauc" > "$run/out/plan-$phase"
  local delay r=$RANDOM mode=""
  # (update: a fraction of the install's length, not seconds; trial: mode "at" seconds from the
  # trial boot's QEMU start, "ready" seconds from its READY or commit line, whichever comes first,
  # or "commit" seconds from its commit line: a cut of the committed slot, which must boot next)
  # (POWER_CUTS_TRIAL_MODE=at|ready|commit aims every trial cut at that moment; drawn all the same,
  # so that the rest of a seed's draws stay the same; not in a $(…), as for rnd)
  if [ "$kind" = trial ]; then
    case $((RANDOM % 3)) in 0) mode="at" ;; 1) mode="ready" ;; *) mode="commit" ;; esac
    mode=${POWER_CUTS_TRIAL_MODE:-$mode}
  fi
  delay=$(case "$kind" in boot) rnd 3 "$(awk -v r="$ready_est" 'BEGIN { printf "%.0f", r * 0.95 }')" "$r" ;; playback) rnd 0 20 "$r" ;; save) rnd -0.3 0.3 "$r" ;; card|seek) rnd 0 1.5 "$r" ;; update) rnd 0 1.15 "$r" ;;
    trial) case "$mode" in at) rnd 3 "$trial_est" "$r" ;; ready) rnd -3 12 "$r" ;; *) rnd 0 20 "$r" ;; esac ;; *) echo 0 ;; esac)
  rm -f "$run/qemu.pid" "$run/out/check-$phase" "$run/tryboot"
  say "boot $b ($phase): ${kind}${delay:+ (delay $delay $(case "$kind" in update) echo "of the install's length, $upd_est s now" ;; trial) case "$mode" in at) echo "s from the trial boot's QEMU start (commit seen at $trial_est s)" ;; ready) echo "s from the trial boot's READY" ;; *) echo "s from the trial boot's commit line" ;; esac ;; *) echo s ;; esac))}"
  local tb=$SECONDS target="" cut_note="" trial_note=""
  # A power-on: the firmware's stand-in reads config.txt (the committed slot: it may have changed).
  img_kernel "$IT_REPO/board/power-cuts-probe.sh"
  boot_cut "$phase" "$kind"
  vphase=$phase
  if [ "$kind" = trial ]; then
    # The install asked the restart into the trial: followed as the firmware would (one boot from
    # tryboot.txt's folder), and that boot is the victim.
    vphase=${phase}t
    img_reboot_arg "$phase"
    local from=config.txt
    [ -f "$run/tryboot" ] || trial_note="the install boot did not end with a '0 tryboot' restart ($(grep -a -o 'reboot: Restarting system.*' "$run/console-$phase.log" | head -n 1 || echo 'no restart'); install: $(rest "$phase" 'PC-UPD-END ' || true) $(tail -n 2 "$run/out/install-$phase.log" 2>/dev/null | paste -sd'|' || true))"
    if [ -z "$trial_note" ] && [ -z "$cut_note" ]; then
      img_kernel "$IT_REPO/board/power-cuts-probe.sh"
      [ "$slot_trial" -eq 1 ] && from=tryboot.txt
      echo "tried 0 0" > "$run/out/plan-$vphase"
      rm -f "$run/qemu.pid"
      say "boot $b ($vphase): the trial boot, ${prefix:-?} from $from (the stand-in for the Pi firmware)"
      [ "$slot_trial" -eq 1 ] || trial_note="the firmware's stand-in found no tryboot.txt for the trial"
      boot_cut "$vphase" tried
    fi
  fi
  local took=$((SECONDS - tb)) s_ready first_up ready_us f
  s_ready=$(stamp "$phase" 'PC-READY ' || true)
  first_up=$(rest "$phase" 'PC-FIRST up=' || true)
  ready_us=$(rest "$phase" 'PC-READY mono_us=' | cut -d' ' -f1 || true)
  f=""
  [ -n "$s_ready" ] && [ "$first_up" != none ] && f=$(img_figures "$phase" "$first_up" "$ready_us" || true)
  say "boot $b: $took s; ${cut_note:-not cut}; QEMU start to kernel/READY/first sample: ${f:-never}"
  grep -a 'PC-NOTE' "$run/console-$phase.log" | cut -d' ' -f2- | sed 's/^/power-cuts:   /' >&2 || true

  # ---- The check of the cuts before this boot (a boot that reached READY) ----
  local checked=no
  grep -q 'PC-CHECKED' "$run/console-$phase.log" && checked=yes
  if [ "$checked" = yes ] && [ ${#pending[@]} -gt 0 ]; then
    local problems="" rk rf dk dm df resume ridx rpos status phase_now cards bm lost damaged dmsg
    rk=$(check "$phase" root_kernel); rf=$(check "$phase" root_fsck)
    # A boot cut before READY left only its console: its kernel lines of the root count too.
    # shellcheck disable=SC2086  # a list of files
    [ -z "$killed_consoles" ] || rk="$rk $(grep -hE 'EXT4-fs \(vda[25]\)' $killed_consoles 2>/dev/null | cut -d' ' -f2- | paste -sd'|' || true)"
    if grep -qiE 'recover|orphan|error|fsck' <<< "$rk$rf"; then problems+=" root repaired ($rk $rf);"; fi
    [[ "$(check "$phase" root_mount)" =~ \ ro(,|\|) ]] || problems+=" / not read-only ($(check "$phase" root_mount));"
    dm=$(check "$phase" data_mount); dk=$(check "$phase" data_kernel); df=$(check "$phase" data_fsck)
    [ -n "$dm" ] || problems+=" /data not mounted (fsck: $df $(check "$phase" data_fsck_unit));"
    if grep -qiE 'FIXED|UNEXPECTED|inconsisten|Clearing|Deleted|repair' <<< "$df"; then dmsg="repaired by fsck: $df"; repairs=$((repairs + 1))
    elif grep -qi 'recovering journal' <<< "$df$dk"; then dmsg="journal replayed: $df"; replays=$((replays + 1))
    else dmsg="clean: $df"; fi
    fsck_msgs+="  $phase: $dmsg"$'\n'
    status=$(check "$phase" status)
    phase_now=$(field phase "$status")
    [[ "$(rest "$phase" 'PC-READY mono_us=')" == *state=active* ]] && [ "$phase_now" = playing ] && [ "${first_up:-none}" != none ] \
      || problems+=" not READY and playing (READY line: $(rest "$phase" 'PC-READY '), first sample ${first_up:-none}, status $status);"
    resume=$(check "$phase" resume)
    ridx=$(grep -o ': track [0-9]* at' <<< "$resume" | grep -o '[0-9]*' || true)
    rpos=$(grep -o ' at [0-9.]* s' <<< "$resume" | grep -o '[0-9.]*' || true)
    lost=""
    if [ -z "$heard_idx" ]; then
      : # nothing heard before the first cut: any place
    elif [ -z "$rpos" ]; then
      problems+=" no 'resuming' line in the player's journal ($resume);"
    elif [ "$ridx" = "$heard_idx" ]; then
      lost=$(awk -v h="$heard_pos" -v r="$rpos" 'BEGIN { printf "%.1f", h - r }')
      lt "$lost" 5.0001 || problems+=" the place lost $lost s (heard $heard_note, resumed track $ridx at $rpos s);"
      lt -2 "$lost" || [ "$ahead_ok" = yes ] || problems+=" resumed $lost s ahead of what was heard (heard $heard_note, resumed at $rpos s);"
    elif [ "$ridx" -gt "$heard_idx" ] 2>/dev/null; then
      lost=0   # a later track: nothing lost of the one heard (it had ended, or a save of the next came first)
    else
      problems+=" resumed an earlier track ($ridx at $rpos s; heard $heard_note);"
    fi
    if [ -n "$lost" ] && lt "$worst_lost" "$lost"; then worst_lost=$lost; fi
    cards=$(check "$phase" cards)
    local id gone=""
    for id in $acked_cards; do [[ "$cards" == *"\"$id\""* ]] || gone+=" $id"; done
    [ -z "$gone" ] || problems+=" cards answered before the cut missing:$gone (map: $cards);"
    [[ "$cards" == '{"cards":'* ]] || problems+=" cards --json: $cards;"
    bm=$(check "$phase" bookmarks)
    [[ "$bm" == '{"bookmarks":'* ]] || problems+=" bookmarks --json: $bm;"
    damaged=$(check "$phase" damaged)
    [ -z "${damaged//[ |]/}" ] || problems+=" set aside as damaged: $damaged;"
    local unacked_present=""
    for id in $asked_cards; do [[ " $acked_cards " == *" $id "* ]] || { [[ "$cards" == *"\"$id\""* ]] && unacked_present+=" $id"; }; done
    # The slot booted; after an update cut the one booted at the cut, and RAUC's view (rauc_judge).
    local slot rauc_note=""
    slot=$(check1 "$phase" slot)
    problems+=$pend_problems
    if [ -n "$upd_slot" ]; then
      [ "$slot" = "$upd_slot" ] || problems+=" slot ${slot:-?} booted, not $upd_slot (booted at the update cut);"
      rauc_judge "$phase" "" "$upd_slot"
      upd_slots+=" ${slot:-?}"
    fi
    if [ -n "$trial_pend" ]; then
      # After a trial cut: the slot config.txt names booted (a power-on, no tryboot), the new one
      # exactly when the commit came before the cut (its line on the console before the kill; with
      # no line, only when the cut came after READY: committed, the line not yet out).
      local t_new t_old t_com t_rdy cfg
      read -r t_new t_old t_com t_rdy <<< "$trial_pend"
      cfg=$(check1 "$phase" boot_files | sed -n 's|^config=\([ab]\)/ .*|\1|p' | tr ab AB)
      [ -n "$cfg" ] || problems+=" config.txt missing, torn or naming no slot ($(check1 "$phase" boot_files));"
      [ "$slot" = "$cfg" ] || problems+=" slot ${slot:-?} booted, but config.txt names ${cfg:-none};"
      if [ "$t_com" = yes ]; then
        [ "$slot" = "$t_new" ] || problems+=" slot ${slot:-?} booted after a trial committed before the cut (not $t_new);"
      elif [ "$slot" = "$t_new" ]; then
        [ "$t_rdy" = yes ] || problems+=" slot $t_new booted, but its trial was cut before its player became active (never committed);"
        [ "$t_rdy" != yes ] || rauc_note+="the commit done, its line not on the console before the cut; "
      else
        [ "$slot" = "$t_old" ] || problems+=" slot ${slot:-?} booted, neither $t_old nor $t_new;"
      fi
      local rn=$rauc_note
      rauc_judge "$phase" "" "${slot:-?}"
      rauc_note="$rn$rauc_note"
      trial_slots+=" ${slot:-?}"
    fi
    local verdict=PASS
    [ -z "$problems" ] || verdict=FAIL
    local c
    for c in "${pending[@]}"; do
      made=$((made + 1))
      if [ "$verdict" = PASS ]; then passed=$((passed + 1)); else failed=$((failed + 1)); fi
      echo "cut $made ($c) checked by boot $b: $verdict: data $dmsg; resumed track ${ridx:-?} at ${rpos:-?} s, heard $heard_note, lost ${lost:-n/a} s; cards on the map:$(for id in $acked_cards; do printf ' %s' "$id"; done)${unacked_present:+ (asked, not answered, there:$unacked_present)}; slot ${slot:-?} booted${rauc_note:+; $rauc_note}${problems:+; PROBLEMS:$problems}"
    done
    if [ -n "$f" ]; then
      ready_list+="${ready_list:+ }$(cut -d' ' -f2 <<< "$f")"
      ready_est=$(cut -d' ' -f2 <<< "$f")
    fi
    pending=() killed_consoles="" upd_slot="" trial_pend="" pend_problems=""
    heard_idx=$(field index "$status"); heard_pos=$(field position "$status"); heard_note="track $heard_idx at $heard_pos s (status after the boot)"
  elif [ ${#pending[@]} -gt 0 ] && [ "$kind" != boot ]; then
    local c
    for c in "${pending[@]}"; do
      made=$((made + 1)); failed=$((failed + 1))
      echo "cut $made ($c) checked by boot $b: FAIL: the boot did not reach its checks; console tail:"
    done
    tail -n 30 "$run/console-$phase.log" | sed 's/^/  | /'
    pending=() upd_slot="" trial_pend="" pend_problems=""
  fi

  # ---- The last boot of a run with an update cut: the same bundle installed again ----
  if [ "$kind" = final ] && [ "$want_rauc" = 2 ]; then
    local problems="" rauc_note="" rs re
    rs=$(stamp "$phase" 'PC-REINSTALL-START' || true); re=$(rest "$phase" 'PC-REINSTALL-END ' || true)
    if [ "$re" = rc=0 ]; then
      rauc_judge "$phase" _after "$(check1 "$phase" slot)" armed
      local len; len=$(awk -v a="$rs" -v b="$(stamp "$phase" 'PC-REINSTALL-END ')" 'BEGIN { printf "%.0f", b - a }')
      re="installed in $len s" upd_lens+=" $len"
    else
      problems+=" the install failed or did not end (${re:-no end}): $(tail -n 3 "$run/out/install-$phase.log" 2>/dev/null | paste -sd'|')"
    fi
    [ -z "$problems" ] || reinstall_failed=1
    echo "the bundle installed again at the last boot: $([ -z "$problems" ] && echo PASS || echo FAIL): ${re:-?}; $rauc_note${problems:+; PROBLEMS:$problems}"
  fi

  # ---- This boot's cut: what was heard, and what was answered, before it ----
  [ "$kind" = final ] && break
  if [ -z "$cut_note" ]; then
    say "boot $b ended without the cut (QEMU gone or 900 s)${trial_note:+: $trial_note}"; tail -n 20 "$run/console-$vphase.log" >&2
    made=$((made + 1)); failed=$((failed + 1)); echo "cut $made ($kind) FAIL: never made"; prev=$kind; continue
  fi
  local s_stat=0 stat_line="" idx="" pos="" label=$kind
  ahead_ok=yes
  if [ "$kind" = boot ] && [ -n "$s_ready" ] && lt "$s_ready" "$t_kill"; then label="boot, READY came first"; fi
  if stat_line=$(before "$vphase" 'PC-STATUS ' "$t_kill"); then
    s_stat=${stat_line%% *} stat_line=${stat_line#* }
    idx=$(field index "$stat_line"); pos=$(field position "$stat_line")
    if [ -n "$idx" ] && [ "$(field phase "$stat_line")" = playing ]; then
      heard_idx=$idx
      heard_pos=$(awk -v p="$pos" -v s="$s_stat" -v k="$t_kill" 'BEGIN { printf "%.1f", p + k - s }')
      heard_note="track $idx at ≥ $heard_pos s ($pos s read at $s_stat s, cut at $t_kill s)"
      ahead_ok=no
    fi
  elif [ "$kind" = trial ] && stat_line=$(grep -a -E '^[0-9.]+ PC-STATUS \{"phase":"playing"' "$run/console-$phase.log" | tail -n 1 | sed 's/ PC-STATUS / /') && [ -n "$stat_line" ]; then
    # A trial cut before its boot read the status: the install boot's last read before its restart
    # (a clean stop saves the place), a lower bound of what was heard (the trial played on after it).
    s_stat=${stat_line%% *} stat_line=${stat_line#* }
    idx=$(field index "$stat_line"); pos=$(field position "$stat_line")
    if [ -n "$idx" ] && [ "$(field phase "$stat_line")" = playing ]; then
      heard_idx=$idx heard_pos=$pos
      heard_note="track $idx at ≥ $pos s (the install boot's last read, at $s_stat s, before its restart)"
    fi
  fi
  detail=""
  case "$kind" in
    save)
      local sv; sv=$(before "$phase" 'PC-SAVE ' "$t_kill" | cut -d' ' -f1 || true)
      detail=", the last place save seen at ${sv:-?} s ($(awk -v a="$t_kill" -v b="${sv:-0}" 'BEGIN { printf "%+.2f", a - b }') s)" ;;
    card|seek)
      local s_ack ack
      ack=$(before "$phase" 'PC-ACT-ACK ' "$t_kill" || true)
      s_ack=${ack%% *} ack=${ack#* }
      [ "$kind" = card ] && asked_cards+=" $arg"
      if [ -n "$s_ack" ]; then
        detail=", answered at $s_ack s before the cut: $ack"
        [ "$kind" = card ] && acked_cards+=" $arg"
        if [ "$kind" = seek ]; then
          # After the seek only its target counts: no status line after it means the read before + 30.
          if ! lt "$s_ack" "$s_stat"; then
            heard_pos=$(awk -v p="$pos" -v a="$s_ack" -v k="$t_kill" 'BEGIN { printf "%.1f", p + 30 + k - a }')
            heard_note="track $idx at ≥ $heard_pos s (seek +0:30 from $pos s answered at $s_ack s, cut at $t_kill s)"
          fi
        fi
      else
        detail=", asked at $(stamp "$phase" 'PC-ACT-ASK ' || echo ?) s, not answered before the cut"
        [ "$kind" = seek ] && ahead_ok=yes
      fi ;;
    update)
      # Where the install was: ended (its length measured: the next window's) or at rauc's last line.
      local us ue len at
      us=$(stamp "$phase" 'PC-UPD-START' || echo 0)
      ue=$(before "$phase" 'PC-UPD-END ' "$t_kill" || true)
      at=$(awk -v a="$t_kill" -v b="$us" -v l="$upd_est" 'BEGIN { printf "%.0f s into it (%.2f of %s s)", a - b, (a - b) / l, l }')
      if [ -n "$ue" ]; then
        len=$(awk -v a="${ue%% *}" -v b="$us" 'BEGIN { printf "%.0f", a - b }')
        detail=", the install from $us s ended before the cut ($len s, ${ue#* }), cut $at"
        [ "${ue#* }" = rc=0 ] || pend_problems+=" the install failed before the cut (${ue#* }: $(tail -n 2 "$run/out/install-$phase.log" | paste -sd'|'));"
        upd_est=$len upd_lens+=" $len"
      else
        detail=", the install from $us s cut $at at '$(tail -n 1 "$run/out/install-$phase.log" 2>/dev/null | sed 's/^ *//' | cut -c1-50)'"
      fi
      upd_slot=$(check1 "$phase" slot); upd_slot=${upd_slot:-?}
      upd_made=$((upd_made + 1)) ;;
    trial)
      # The install boot's slot, the one tried, where the trial boot was at the cut.
      local old new us len cfgseen tr_com tr_rdy com rdy rs
      old=$(check1 "$phase" slot); old=${old:-?}; new=$(tr AB BA <<< "$old")
      us=$(stamp "$phase" 'PC-UPD-START' || echo 0)
      rs=$(stamp "$phase" '.*reboot: Restarting system' || echo "$us")
      len=$(awk -v a="$rs" -v b="$us" 'BEGIN { printf "%.0f", a - b }'); trial_lens+=" $len"
      [ "$(tr ab AB <<< "${prefix%/}")" = "$new" ] || pend_problems+=" the trial boot took ${prefix:-?}, not slot $new's folder;"
      [ -z "$trial_note" ] || pend_problems+=" $trial_note;"
      com=$(before "$vphase" '.*jukebox-update-check: the player is READY on slot ' "$t_kill" || true)
      rdy=$(before "$vphase" 'PC-ACTIVE ' "$t_kill" || true)
      cfgseen=$(before "$vphase" "PC-CONFIG $(tr AB ab <<< "$new"). up=" "$t_kill" || true)
      tr_com=no tr_rdy=no
      [ -z "$com" ] || { tr_com=yes trial_est=$(printf '%.0f' "${com%% *}"); }
      # (the probe saw config.txt name the new slot before the cut: committed, its line perhaps
      # not yet out)
      [ -z "$cfgseen" ] || tr_com=yes
      [ -z "$rdy" ] || tr_rdy=yes
      trial_pend="$new $old $tr_com $tr_rdy"
      detail=", the install on slot $old from $us s and its restart took $len s; the trial of slot $new (${prefix:-?} from tryboot.txt) cut $(if [ -n "$com" ]; then echo "$(awk -v a="$t_kill" -v b="${com%% *}" 'BEGIN { printf "%.2f", a - b }') s after the commit line"; elif [ -n "$rdy" ]; then echo "$(awk -v a="$t_kill" -v b="${rdy%% *}" 'BEGIN { printf "%.2f", a - b }') s after the player became active, no commit line before it"; else echo "before the player became active"; fi)${cfgseen:+; config.txt seen changed before the cut}"
      trial_made=$((trial_made + 1)) ;;
  esac
  pending+=("$label at $t_kill s$detail")
  [ "$kind" = boot ] && killed_consoles+=" $run/console-$phase.log"
  [ "$kind" = trial ] && killed_consoles+=" $run/console-$vphase.log"
  prev=$kind
done
echo "---- figures"
say "QEMU start to READY per boot that reached it (s): $ready_list"
echo "$ready_list" | tr ' ' '\n' | awk 'NF { n++; s += $1; if (min == "" || $1 < min) min = $1; if ($1 > max) max = $1 } END { if (n) printf "power-cuts: boot to READY: %d boots, mean %.1f s, min %.1f s, max %.1f s\n", n, s / n, min, max }' >&2
say "data partition at the boots after a cut: $repairs repaired by fsck, $replays journal replayed by fsck, the rest clean"
printf '%s' "$fsck_msgs" >&2
say "worst place lost: $worst_lost s (files in $run)"
[ "$trial_made" -eq 0 ] || say "trial cuts: $trial_made; the slot booted after each: ${trial_slots# }; install and restart before the trial (s): ${trial_lens# }; QEMU start to the commit line in a trial boot, last seen: $trial_est s"
[ "$upd_made" -eq 0 ] || say "update cuts: $upd_made; the slot booted after each: ${upd_slots# }; installs measured (s): ${upd_lens# }"
echo "$made cuts, $passed passed, $failed failed"
[ "$failed" -eq 0 ] && [ "$made" -gt 0 ] && [ "$reinstall_failed" -eq 0 ]
}
main "$@"
