#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# bundle.sh - a signed RAUC update bundle jukebox-<version>-arm64.raucb of the appliance image's
# root file system (the ext4 that board/image.sh puts in root slot A), for `jukebox-update` on the
# box (docs/IMAGE.md, "A/B updates with RAUC"). board/image.sh calls it with the root it has just
# made; it can be run alone on any root of the same kind.
#
#   bash board/bundle.sh --root ROOT.ext4 --version V --out FILE.raucb [--key KEY --cert CERT]
#   bash board/bundle.sh --keyring-of          (prints the development certificate's path, made if needed)
#
#   --root ROOT.ext4  the root file system image (one slot's content, written as it is)
#   --version V       the bundle's version (rauc info, rauc status on the box)
#   --out FILE        the bundle to make (.raucb)
#   --key KEY         the signing key (PEM or a PKCS#11 URL) and --cert CERT its certificate; both or
#   --cert CERT       neither. Without them: the development key $IMAGE_CACHE/keys/dev.key.pem,
#                     made here at the first use (never put into an image: only its certificate is,
#                     as the box's keyring)
#
# Environment: IMAGE_CACHE (default /var/tmp/jukebox-image) for the development key.
set -euo pipefail
BUNDLE_COMPATIBLE=jukebox-pi-arm64
BUNDLE_CACHE=${IMAGE_CACHE:-/var/tmp/jukebox-image}

bsay() { printf 'bundle: %s\n' "$*" >&2; }
bdie() { bsay "error: $*"; exit 1; }

# bundle_dev_key: the development key and certificate in $BUNDLE_CACHE/keys (made once; the key
# readable by its owner only). Prints "KEY CERT".
bundle_dev_key() {
  local k="$BUNDLE_CACHE/keys"
  if [ ! -s "$k/dev.key.pem" ] || [ ! -s "$k/dev.cert.pem" ]; then
    mkdir -p "$k" && chmod 0700 "$k"
    (umask 077 && openssl req -x509 -newkey rsa:3072 -nodes -sha256 -days 3650 \
      -keyout "$k/dev.key.pem" -out "$k/dev.cert.pem" \
      -subj "/O=jukebox development/CN=jukebox development bundle key $(hostname)" >/dev/null 2>&1) \
      || bdie "openssl could not make the development key in $k"
    chmod 0644 "$k/dev.cert.pem"
    bsay "made the development signing key $k/dev.key.pem (not for boxes you give away: see --key)"
  fi
  printf '%s %s\n' "$k/dev.key.pem" "$k/dev.cert.pem"
}

main() {
  local root="" version="" out="" key="" cert="" w
  while [ $# -gt 0 ]; do
    case "$1" in
      --root) [ $# -ge 2 ] || bdie "--root needs a file"; root=$2; shift ;;
      --version) [ $# -ge 2 ] || bdie "--version needs a value"; version=$2; shift ;;
      --out) [ $# -ge 2 ] || bdie "--out needs a file"; out=$2; shift ;;
      --key) [ $# -ge 2 ] || bdie "--key needs a file"; key=$2; shift ;;
      --cert) [ $# -ge 2 ] || bdie "--cert needs a file"; cert=$2; shift ;;
      --keyring-of) read -r _ cert <<< "$(bundle_dev_key)"; echo "$cert"; return 0 ;;
      -h|--help) sed -n '3,22p' "$0" | sed 's/^# \{0,1\}//'; return 0 ;;
      *) bdie "unknown argument: $1 (try --help)" ;;
    esac
    shift
  done
  [ -f "$root" ] || bdie "--root $root: no such file"
  [[ "$version" =~ ^[A-Za-z0-9][A-Za-z0-9.+~_-]{0,63}$ ]] || bdie "--version '$version': 1-64 letters, digits and . + ~ _ -"
  [[ "$out" == *.raucb ]] || bdie "--out '$out': a bundle's name ends in .raucb"
  if [ -z "$key" ] && [ -z "$cert" ]; then read -r key cert <<< "$(bundle_dev_key)"
  elif [ -z "$key" ] || [ -z "$cert" ]; then bdie "--key and --cert go together"; fi
  { command -v rauc >/dev/null && command -v mksquashfs >/dev/null; } \
    || bdie "rauc and mksquashfs are needed (apt-get install rauc squashfs-tools)"
  w=$(mktemp -d "${TMPDIR:-/var/tmp}/bundle.XXXXXX")
  # shellcheck disable=SC2064
  trap "rm -rf '$w'" EXIT
  mkdir "$w/content"
  # A hard link when it can (the root is hundreds of MiB), else a copy.
  ln "$root" "$w/content/root.ext4" 2>/dev/null || cp --sparse=always "$root" "$w/content/root.ext4"
  {
    echo "[update]"
    echo "compatible=$BUNDLE_COMPATIBLE"
    echo "version=$version"
    echo "description=jukebox appliance root file system"
    echo "build=$(date -u +%Y%m%dT%H%M%SZ)"
    echo
    # verity: the bundle is checked block by block as it is read (dm-verity), so a bundle changed
    # after its signature was checked is refused too; plain is deprecated.
    echo "[bundle]"
    echo "format=verity"
    echo
    echo "[image.rootfs]"
    echo "filename=root.ext4"
  } > "$w/content/manifest.raucm"
  mkdir -p "$(dirname "$out")"
  rm -f "$out"
  rauc bundle --cert="$cert" --key="$key" "$w/content" "$out" > "$w/log" 2>&1 \
    || { cat "$w/log" >&2; bdie "rauc bundle failed"; }
  # The bundle checked as the box will check it: its signature against the certificate.
  rauc info --keyring="$cert" "$out" > "$w/info" 2>&1 || { cat "$w/info" >&2; bdie "the new bundle does not verify"; }
  bsay "made $out ($(du -h --apparent-size "$out" | cut -f1), version $version, compatible $BUNDLE_COMPATIBLE, signed by $(openssl x509 -noout -subject -in "$cert" 2>/dev/null | sed 's/^subject=//'))"
}
main "$@"
