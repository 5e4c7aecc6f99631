#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# check-docs.sh - fails when the docs name a file of the repository that does not exist (a file
# moved or renamed, its mention left behind). Needs no build (board/test.sh runs it). Checked: in
# README.md, docs/*.md and the READMEs under board/, every `backticked` name that is a Swift file
# (`Runtime.swift`, `JukeboxApp/PanelSink.swift`: found by its path's end) or a path into the
# repository's own folders (`board/…`, `Sources/…`, `Tests/…`, `systemd/…`, `docs/…`, `.ci/…`;
# a test class by its path, `Tests/JukeboxMQTTTests/MQTTBridgeTests`, is its .swift file).
# Names of other projects' files (`meta_mpd.py`, the kernel's `gpio-sim.c`), paths on a box
# (`/etc/…`), globs (`MPD*.swift`) and placeholders (`Tests/FuzzCorpus/<harness>`) are left alone.
#
#   bash board/check-docs.sh
set -euo pipefail
cd "$(dirname "$0")/.."

files=$(git ls-files 2>/dev/null || find . -type f -not -path './.git/*' -not -path './.build/*' | sed 's|^\./||')
docs=(README.md docs/*.md board/*.md board/*/README.md)
missing=0
for doc in "${docs[@]}"; do
  [ -f "$doc" ] || continue
  while IFS= read -r name; do
    case "$name" in
      *'*'*|*'<'*|/*|*' '*) continue ;;
      *.swift|board/*|Sources/*|Tests/*|systemd/*|docs/*|.ci/*) ;;
      *) continue ;;
    esac
    path=${name%/}
    # A test class named by its path (`Tests/JukeboxMQTTTests/MQTTBridgeTests`) is its file.
    [[ "$path" == */* && "$path" != *.* ]] && grep -qxF -- "$path.swift" <<<"$files" && continue
    # A path's end must match whole components: `Ports.swift` is `…/Ports.swift`, not `…/MPDPorts.swift`.
    if ! grep -qxF -- "$path" <<<"$files" && ! grep -qF -- "/$path" <<<"$files" \
       && ! grep -q -- "^$(printf '%s' "$path" | sed 's/[.[\^$]/\\&/g')/" <<<"$files"; then
      printf 'check-docs: %s names `%s`, which is not in the repository\n' "$doc" "$name" >&2
      missing=$((missing + 1))
    fi
  done < <(grep -o '`[^`]*`' "$doc" | tr -d '`' | sort -u)
done
[ "$missing" -eq 0 ] || { printf 'check-docs: FAIL: %d name(s) of missing files\n' "$missing" >&2; exit 1; }
echo "check-docs: every file the docs name is in the repository"
