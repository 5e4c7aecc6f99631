#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# bundle-test.sh - the update's host-side parts, in seconds (no image, no QEMU): board/bundle.sh
# makes a bundle of a small root with a fresh development key, verified with `rauc info --keyring`
# as the box verifies it before installing; a bundle signed by another key and a truncated one are
# refused, with rauc's reason. Then the custom backend (board/image/jukebox-rauc-backend) on a
# folder laid out as the boot partition: an install arms tryboot.txt, mark-good on the trial
# commits config.txt, a trial never marked good leaves config.txt as it was. Prints
# `N passed, N failed`; exit 1 when anything failed. See docs/IMAGE.md.
#
#   bash board/bundle-test.sh
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
PASSED=0 FAILED=0
pass() { PASSED=$((PASSED + 1)); printf 'PASS %s: %s\n' "$1" "$2"; }
fail() { FAILED=$((FAILED + 1)); printf 'FAIL %s: %s\n' "$1" "$2"; }
for t in rauc mksquashfs openssl mkfs.ext4; do
  command -v "$t" >/dev/null || { echo "bundle-test: $t is missing (apt-get install rauc squashfs-tools openssl e2fsprogs)" >&2; exit 2; }
done
w=$(mktemp -d "${TMPDIR:-/tmp}/bundle-test.XXXXXX")
trap 'rm -rf "$w"' EXIT
# A small root: random bytes, so that its squashfs is bigger than one block (rauc's minimum).
mkdir -p "$w/root/etc"
head -c 262144 /dev/urandom > "$w/root/etc/noise"
echo 2.0-test > "$w/root/etc/jukebox-release"
mkfs.ext4 -q -F -L jbroot -d "$w/root" "$w/root.ext4" 8M >/dev/null
export IMAGE_CACHE=$w/cache
if bash "$REPO/board/bundle.sh" --root "$w/root.ext4" --version 2.0-test --out "$w/out/good.raucb" 2> "$w/make.log"; then
  pass make "$(tail -n 1 "$w/make.log")"
else
  fail make "board/bundle.sh failed: $(tail -n 3 "$w/make.log" | paste -sd'|')"
fi
cert=$w/cache/keys/dev.cert.pem
key_mode=$(stat -c %a "$w/cache/keys/dev.key.pem" 2>/dev/null || echo none)
if [ "$key_mode" = 600 ]; then pass dev-key-private "the development key is readable by its owner only (mode $key_mode)"
else fail dev-key-private "the development key's mode is $key_mode, expected 600"; fi

# info BUNDLE CERT: rauc info's exit status and output (in $w/info.log).
info() { rauc info --keyring="$2" "$1" > "$w/info.log" 2>&1; }
if info "$w/out/good.raucb" "$cert" && grep -q "Version:.*'2.0-test'" "$w/info.log" && grep -q "Compatible:.*'jukebox-pi-arm64'" "$w/info.log" \
  && grep -q 'Bundle Format:.*verity' "$w/info.log"; then
  pass verifies "rauc info --keyring: $(grep -m1 'Verified' "$w/info.log" | sed 's/.*: Verified/verified/'); version 2.0-test, compatible jukebox-pi-arm64, verity"
else
  fail verifies "expected the bundle to verify with its certificate: $(tail -n 4 "$w/info.log" | paste -sd'|')"
fi
# Another key: the same bundle checked against a keyring that does not hold its signer.
openssl req -x509 -newkey rsa:2048 -nodes -keyout "$w/other.key" -out "$w/other.cert" -subj "/CN=another builder" >/dev/null 2>&1
if info "$w/out/good.raucb" "$w/other.cert"; then
  fail wrong-key "a bundle signed by another key was accepted"
elif grep -q 'signature verification failed' "$w/info.log"; then
  pass wrong-key "refused: $(grep -m1 'signature verification failed' "$w/info.log")"
else
  fail wrong-key "refused, but not for its signature: $(tail -n 2 "$w/info.log" | paste -sd'|')"
fi
# Signed by another key and checked against the box's keyring (a bundle from someone else).
IMAGE_CACHE=$w/cache bash "$REPO/board/bundle.sh" --root "$w/root.ext4" --version 2.0-other --out "$w/out/other.raucb" \
  --key "$w/other.key" --cert "$w/other.cert" 2> "$w/make-other.log" || true
if [ -f "$w/out/other.raucb" ] && ! info "$w/out/other.raucb" "$cert" && grep -q 'signature verification failed' "$w/info.log"; then
  pass foreign-bundle "a bundle signed by another builder refused: $(grep -m1 'signature verification failed' "$w/info.log")"
else
  fail foreign-bundle "expected a bundle signed by another key to be made and refused: $(tail -n 2 "$w/make-other.log" "$w/info.log" | paste -sd'|')"
fi
# Truncated (a download cut short).
head -c "$(( $(stat -c %s "$w/out/good.raucb") / 2 ))" "$w/out/good.raucb" > "$w/out/cut.raucb"
if info "$w/out/cut.raucb" "$cert"; then
  fail truncated "a bundle cut in half was accepted"
else
  pass truncated "refused: $(grep -v '^rauc-Message' "$w/info.log" | tail -n 1)"
fi
# --key without --cert is an error, not a bundle signed by the development key.
if bash "$REPO/board/bundle.sh" --root "$w/root.ext4" --version 3 --out "$w/out/half.raucb" --key "$w/other.key" 2> "$w/half.log"; then
  fail key-alone "--key without --cert made a bundle"
else
  pass key-alone "$(tail -n 1 "$w/half.log")"
fi

# The custom backend (board/image/jukebox-rauc-backend) on a folder laid out as the boot partition.
b=$w/boot
mkdir -p "$b/a" "$b/b"
printf 'arm_64bit=1\nkernel=vmlinuz\ninitramfs initrd.img followkernel\nos_prefix=a/\n' > "$b/config.txt"
echo 'root=PARTUUID=6a756b65-02 rauc.slot=A' > "$b/a/cmdline.txt"
echo 'root=PARTUUID=6a756b65-05 rauc.slot=B' > "$b/b/cmdline.txt"
echo 'console=tty0 rauc.slot=A' > "$w/cmdline"
be() { JUKEBOX_BOOT=$b JUKEBOX_CMDLINE=$w/cmdline sh "$REPO/board/image/jukebox-rauc-backend" "$@" 2>> "$w/backend.log"; }
# expect NAME WHAT EXPECTED ACTUAL
expect() { if [ "$3" = "$4" ]; then pass "$1" "$2: $4"; else fail "$1" "$2: expected '$3', got '$4' ($(tail -n 1 "$w/backend.log"))"; fi; }
size0=$(stat -c %s "$b/config.txt")
expect backend-primary "a fresh image: primary, current, B's state" "A A bad" "$(be get-primary) $(be get-current) $(be get-state B)"
be set-state B bad || true
be set-primary B || true
expect backend-arm "after an install into B (set-state B bad, set-primary B): config.txt still A, tryboot.txt names b/, B good" \
  "A os_prefix=b/ good" "$(be get-primary) $(grep os_prefix "$b/tryboot.txt" 2>/dev/null) $(be get-state B)"
# The firmware's trial boot of B: the command line is B's; the player READY: mark-good.
echo 'console=tty0 rauc.slot=B' > "$w/cmdline"
if be set-state A bad; then fail backend-trial-install "an install over the committed slot A during B's trial was allowed"
else pass backend-trial-install "an install over the committed slot during a trial refused: $(tail -n 1 "$w/backend.log")"; fi
be set-state B good || true
expect backend-commit "mark-good on B's trial: config.txt names b/ (same size, no tryboot.txt)" \
  "B os_prefix=b/ $size0 no" "$(be get-primary) $(grep os_prefix "$b/config.txt") $(stat -c %s "$b/config.txt") $([ -e "$b/tryboot.txt" ] && echo yes || echo no)"
# An update into A from B that fails its trial: the firmware boots config.txt (B) again.
be set-state A bad || true
be set-primary A || true
echo 'console=tty0 rauc.slot=B' > "$w/cmdline"
expect backend-failed-trial "a trial of A never marked good, the next start from config.txt" "B B" "$(be get-primary) $(be get-current)"
be set-state A bad || true
expect backend-bad-removes-trial "A marked bad: no tryboot.txt, A bad" "no bad" "$([ -e "$b/tryboot.txt" ] && echo yes || echo no) $(be get-state A)"
if be set-state A good; then fail backend-good-unbooted "a slot neither booted nor committed was marked good"
else pass backend-good-unbooted "marking good a slot neither booted nor committed refused: $(tail -n 1 "$w/backend.log")"; fi
# A power cut between the commit's two steps (config.txt's letter overwritten, tryboot.txt not
# removed yet), made here by doing the first step alone: a window of milliseconds that the soak
# (board/power-cuts.sh) cannot aim at. The next start boots B from config.txt; RAUC must see B
# committed and good, A bad, and the next install into A must arm it over the stale tryboot.txt.
b=$w/boot-cut
mkdir -p "$b/a" "$b/b"
printf 'arm_64bit=1\nkernel=vmlinuz\ninitramfs initrd.img followkernel\nos_prefix=a/\n' > "$b/config.txt"
echo 'console=tty0 rauc.slot=A' > "$w/cmdline"
be set-state B bad || true
be set-primary B || true
echo 'console=tty0 rauc.slot=B' > "$w/cmdline"
sed -i 's|^os_prefix=a/|os_prefix=b/|' "$b/config.txt"
expect backend-commit-cut "cut between the commit's steps: primary, B's and A's states, tryboot.txt" \
  "B good bad os_prefix=b/" "$(be get-primary) $(be get-state B) $(be get-state A) $(grep os_prefix "$b/tryboot.txt" 2>/dev/null)"
if be set-state B good; then pass backend-commit-cut-again "mark-good of the committed slot again: accepted"
else fail backend-commit-cut-again "mark-good of the committed slot refused: $(tail -n 1 "$w/backend.log")"; fi
be set-state A bad || true
be set-primary A || true
expect backend-commit-cut-next "the next install into A after that cut: config.txt B, tryboot.txt names a/, A good" \
  "B os_prefix=a/ good" "$(be get-primary) $(grep os_prefix "$b/tryboot.txt" 2>/dev/null) $(be get-state A)"
echo "$PASSED passed, $FAILED failed"
[ "$FAILED" -eq 0 ]
