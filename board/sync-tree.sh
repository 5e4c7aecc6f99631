# SPDX-License-Identifier: MIT
# shellcheck shell=bash
#
# sync-tree.sh - sourced: sync_tree SRC DST makes DST a copy of the repository's files in SRC
# (tracked, and new ones not ignored; every file when SRC is no git checkout) in which a file whose
# bytes did not change keeps its time stamp and inode. A clean clone (CI) has every file new, so
# SwiftPM would compile everything again; built from this copy, it compiles what changed since the
# build before. The copy holds exactly those files: what SRC no longer has is removed (a stale
# source would be compiled in), except DST's own .build (the builds this is for) and .git.
# Prints how many files changed.

sync_tree() {
  local src=$1 dst=$2 list f changed=0
  list=$(mktemp)
  if git -C "$src" rev-parse --git-dir >/dev/null 2>&1; then
    git -C "$src" ls-files -z --cached --others --exclude-standard >"$list"
  else
    (cd "$src" && find . -path ./.build -prune -o -path ./.git -prune -o \( -type f -o -type l \) -printf '%P\0') >"$list"
  fi
  mkdir -p "$dst"
  while IFS= read -r -d '' f; do
    [ -e "$src/$f" ] || [ -L "$src/$f" ] || continue   # deleted, not yet committed
    if [ -L "$src/$f" ] || [ -L "$dst/$f" ]; then
      [ "$(readlink "$src/$f")" = "$(readlink "$dst/$f" 2>/dev/null)" ] && continue
    elif cmp -s "$src/$f" "$dst/$f"; then
      continue
    fi
    mkdir -p "$dst/$(dirname "$f")"
    rm -f "$dst/$f"
    cp -P "$src/$f" "$dst/$f"
    changed=$((changed + 1))
  done <"$list"
  (cd "$dst" && find . -path ./.build -prune -o -path ./.git -prune -o \( -type f -o -type l \) -printf '%P\0') | sort -z >"$list.dst"
  tr '\0' '\n' <"$list" | sort | tr '\n' '\0' >"$list.src"
  comm -z -23 "$list.dst" "$list.src" | (cd "$dst" && xargs -0 -r rm -f --)
  find "$dst" -mindepth 1 -type d -empty -not -path "$dst/.build" -not -path "$dst/.build/*" -delete
  rm -f "$list" "$list.dst" "$list.src"
  echo "$changed"
}
