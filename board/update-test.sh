#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# update-test.sh - A/B updates with RAUC on the appliance image of board/image.sh, booted in QEMU
# virt as board/image-test.sh boots it (board/image-lib.sh). QEMU has no Raspberry Pi firmware: the
# firmware's choice of the root slot is played by the host (img_firmware: config.txt's os_prefix,
# or tryboot.txt's for one boot after the guest's kernel restarted with '0 tryboot'). That stand-in,
# not the Pi's firmware, is what this tests; RAUC, the backend, the post-install handler, the
# check that commits a trial and the bundles are the image's own.
#   boot n      slot A (the image as made): READY, plays; installs good.raucb (the image's root with
#               a mark, /etc/jukebox-update-test, version update-test-2) into slot B; tryboot
#   boot trial  slot B on trial: READY, plays, committed (config.txt: os_prefix=b/); installs
#               bad.raucb (a root whose player never starts) into slot A; tryboot
#   boot bad    slot A on trial: the player fails, jukebox-update-check restarts the box normally
#   boot back   slot B from config.txt again: READY, plays, the mark still there
# Prints `N passed, N failed` last; exit 1 when anything failed. See docs/IMAGE.md.
#
#   sudo bash board/update-test.sh IMAGE.img|IMAGE.img.xz
#
# Environment: IMAGE_CACHE (default /var/tmp/jukebox-image): the image's, whose development key
# signs the test bundles (the image's keyring); this test's files in IMAGE_CACHE/test/update.
set -euo pipefail
IT_REPO=$(cd "$(dirname "$0")/.." && pwd)
HIL_LOG_NAME=update-test
# shellcheck source=board/image-lib.sh
. "$IT_REPO/board/image-lib.sh"

main() {
[ "$(id -u)" -eq 0 ] || { say "run as root (apt-get, debugfs on the root's copy)"; exit 2; }
# shellcheck disable=SC2034 # set by image-lib.sh's functions, kept local to this run
local t_start=$SECONDS img=${1:-} run raw_size xz_size fat kernel cmdline boot_off music_off music_size data_off data_size music_part prefix slot_trial
[ -f "$img" ] || { say "usage: update-test.sh IMAGE.img|IMAGE.img.xz (board/image.sh makes one)"; exit 2; }
# shellcheck source=board/private-dir.sh
. "$IT_REPO/board/private-dir.sh"
private_dir "$IT_CACHE" IMAGE_CACHE || exit 1
mkdir -p "$A64_CACHE/tools"
hil_apt_install "$A64_CACHE/apt.log" qemu-system-arm mtools e2fsprogs fdisk sox gcc libc6-dev xz-utils rauc squashfs-tools openssl
# The test music of the arm64 HIL guest (prepare.sh makes it with the host's pcmcmp).
{ [ "$A64_CACHE/tools/pcmcmp" -nt "$IT_REPO/board/hil/tools/pcmcmp.c" ] && [ "$A64_CACHE/tools/pcmcmp" -nt "$IT_REPO/board/hil/tools/pcmfile.h" ]; } \
  || cc -O2 -Wall -o "$A64_CACHE/tools/pcmcmp" "$IT_REPO/board/hil/tools/pcmcmp.c"
a64_prepare_fixtures
run="$A64_CACHE/update"
rm -rf "$run" && mkdir -p "$run/out"
# The test music and a 2-hour silent track: every boot resumes into something to play, however
# long the install before it took.
img_music_long
img_disk "$img" "$run/music"
img_config ""
PASSED=0
FAILED=0

# The two bundles, from slot A's root file system.
img_root_copy "$run/root-good.ext4" || exit 1
cp --sparse=always "$run/root-good.ext4" "$run/root-bad.ext4"
echo update-test-2 > "$run/mark"
debugfs -w -R "write $run/mark /etc/jukebox-update-test" "$run/root-good.ext4" >/dev/null 2>&1
echo update-test-3 > "$run/mark"
debugfs -w -R "write $run/mark /etc/jukebox-update-test" "$run/root-bad.ext4" >/dev/null 2>&1
printf '[Service]\nExecStart=\nExecStart=/bin/false\n' > "$run/broken.conf"
debugfs -w -R "write $run/broken.conf /etc/systemd/system/jukebox.service.d/zz-update-test-broken.conf" "$run/root-bad.ext4" >/dev/null 2>&1
debugfs -R "cat /etc/systemd/system/jukebox.service.d/zz-update-test-broken.conf" "$run/root-bad.ext4" 2>/dev/null | grep -q /bin/false \
  || { say "could not write the broken drop-in into the bad root"; exit 1; }
local t0=$SECONDS
IMAGE_CACHE=$IT_CACHE bash "$IT_REPO/board/bundle.sh" --root "$run/root-good.ext4" --version update-test-2 --out "$run/out/good.raucb"
IMAGE_CACHE=$IT_CACHE bash "$IT_REPO/board/bundle.sh" --root "$run/root-bad.ext4" --version update-test-3 --out "$run/out/bad.raucb"
rm -f "$run/root-good.ext4" "$run/root-bad.ext4"
say "bundles made in $((SECONDS - t0)) s: good $(du -h --apparent-size "$run/out/good.raucb" | cut -f1), bad $(du -h --apparent-size "$run/out/bad.raucb" | cut -f1)"
local t_prepared=$SECONDS

# boot PHASE: the firmware's stand-in chooses the slot, then one boot; the reboot's argument kept.
boot() {
  img_kernel "$IT_REPO/board/update-probe.sh"
  # The limit for a trial's READY, shorter than the image's 600 s (TCG): a failed player fails
  # fast anyway (start limit); this bounds a hanging one.
  cmdline="$cmdline systemd.setenv=JUKEBOX_TRIAL_LIMIT=400"
  say "boot $1: ${prefix:-?} from $([ "$slot_trial" -eq 1 ] && echo tryboot.txt || echo config.txt) (the stand-in for the Pi firmware)"
  echo "${prefix:-?} $slot_trial" > "$run/chosen-$1"
  t0=$SECONDS
  img_boot "$1"
  say "boot $1: $((SECONDS - t0)) s"
  img_reboot_arg "$1"
  hil_results "$run/out/results-$1" 2>/dev/null || true
}
# chosen PHASE NAME PREFIX TRIAL: the stand-in chose PREFIX, from tryboot.txt when TRIAL is 1.
chosen() {
  if [ "$(cat "$run/chosen-$1")" = "$3 $4" ]; then hil_result PASS "$2" "the firmware stand-in booted $3 ($([ "$4" -eq 1 ] && echo tryboot.txt || echo config.txt))"
  else hil_result FAIL "$2" "expected $3 (trial $4); chosen: $(cat "$run/chosen-$1")"; fi
}
# rebooted PHASE NAME TRYBOOT: boot PHASE ended with a restart asking for tryboot (1) or a normal one (0).
rebooted() {
  local seen
  seen=$(grep -m1 -o "reboot: Restarting system.*" "$run/console-$1.log" || echo "no restart")
  if { [ "$3" -eq 1 ] && [ -f "$run/tryboot" ]; } || { [ "$3" -eq 0 ] && [ ! -f "$run/tryboot" ] && [[ "$seen" == "reboot: Restarting system"* ]]; }; then
    hil_result PASS "$2" "the kernel's last line: $seen"
  else
    hil_result FAIL "$2" "expected a restart $([ "$3" -eq 1 ] && echo "with '0 tryboot'" || echo "without tryboot"); the kernel's last line: $seen"
  fi
}

boot n
hil_finished "$run/console-n.log" 'UPD-PROBE done' "boot n: the probe did not finish" 40 || true
chosen n n-firmware a/ 0
rebooted n n-tryboot 1
# The image's module passing the flag on (board/image/tryboot/): on virt it finds no Pi firmware.
if grep -q "jukebox_tryboot: restart command '0 tryboot': no Raspberry Pi firmware" "$run/console-n.log"; then
  hil_result PASS n-tryboot-module "$(grep -m1 -o "jukebox_tryboot: restart command.*" "$run/console-n.log")"
else
  hil_result FAIL n-tryboot-module "expected jukebox_tryboot to say it found no Pi firmware at the restart; seen: $(grep -o 'jukebox_tryboot:.*' "$run/console-n.log" | head -n 2 | paste -sd'|')"
fi
if mtype -i "$fat" ::tryboot.txt 2>/dev/null | grep -qx 'os_prefix=b/' && mtype -i "$fat" ::b/cmdline.txt 2>/dev/null | grep -q 'root=PARTUUID=6a756b65-05 .*rauc.slot=B'; then
  hil_result PASS n-boot-partition "tryboot.txt names b/; b/cmdline.txt: $(mtype -i "$fat" ::b/cmdline.txt | tr -d '\r' | grep -o 'root=[^ ]* rauc.slot=[AB]')"
else
  hil_result FAIL n-boot-partition "expected tryboot.txt naming b/ and b/cmdline.txt with slot B's root; $(mdir -b -i "$fat" ::b 2>&1 | head -n 5 | paste -sd' ')"
fi

boot trial
hil_finished "$run/console-trial.log" 'UPD-PROBE done' "boot trial: the probe did not finish" 40 || true
chosen trial trial-firmware b/ 1
rebooted trial trial-tryboot 1

boot bad
chosen bad bad-firmware a/ 1
if grep -q 'jukebox-update-check: the player did not reach READY on slot A' "$run/console-bad.log"; then
  hil_result PASS bad-not-ready "$(grep -m1 'jukebox-update-check: the player did not reach READY' "$run/console-bad.log" | cut -d' ' -f2-)"
else
  hil_result FAIL bad-not-ready "expected jukebox-update-check to give the trial up; seen: $(grep -m3 'jukebox-update-check\|UPD-' "$run/console-bad.log" | cut -d' ' -f2- | paste -sd'|')"
fi
rebooted bad bad-restart 0
if mtype -i "$fat" ::config.txt | tr -d '\r' | grep -qx 'os_prefix=b/'; then
  hil_result PASS bad-config-kept "config.txt still names b/ after the failed trial of slot A"
else
  hil_result FAIL bad-config-kept "config.txt changed by the failed trial: $(mtype -i "$fat" ::config.txt | grep os_prefix)"
fi

boot back
hil_finished "$run/console-back.log" 'UPD-PROBE done' "boot back: the probe did not finish" 40 || true
chosen back back-firmware b/ 0
local p
for p in n trial back; do
  [ -f "$run/out/times-$p" ] || continue
  say "$p boot: QEMU start to kernel/READY/first sample (s): $(img_figures "$p" "$(sed -n 's/^first_up=//p' "$run/out/times-$p")" "$(sed -n 's/^ready_us=//p' "$run/out/times-$p")" || echo '?')"
done
say "prepare $((t_prepared - t_start)) s, run $((SECONDS - t_prepared)) s (files in $run)"
echo "$PASSED passed, $FAILED failed"
[ "$FAILED" -eq 0 ]
}
main "$@"
