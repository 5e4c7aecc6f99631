# SPDX-License-Identifier: MIT
# shellcheck shell=bash
#
# private-dir.sh - sourced. `private_dir DIR VARIABLE [--check]` makes DIR (mode 755) or checks
# the one that is there. DIR is a cache or build folder in a place everybody can write to
# (/var/tmp, /tmp), where anyone could have made a folder of that name first and put a compiler, a
# sysroot, a disk image or an ALSA plugin in it for us to run as root. DIR must be a real directory
# (not a symbolic link), owned by us and writable by nobody else; otherwise it is refused, naming
# VARIABLE, which chooses another folder. With --check a missing DIR is left for the caller to make.
private_dir() {
  local dir=$1 variable=$2
  if [ ! -e "$dir" ] && [ ! -L "$dir" ]; then
    [ "${3:-}" = --check ] && return 0
    mkdir -p "$(dirname "$dir")"
    # -m applies to DIR only; a folder made meanwhile by someone else is caught below.
    mkdir -m 755 "$dir" 2>/dev/null || true
  fi
  if [ -L "$dir" ] || [ ! -d "$dir" ] || [ "$(stat -c %u "$dir")" != "$(id -u)" ] \
     || [ $(( 0$(stat -c %a "$dir") & 022 )) -ne 0 ]; then
    echo "$dir: not a private folder of this user (a symbolic link, another owner, or writable by others); refusing to use it: set $variable to another folder" >&2
    return 1
  fi
}
