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
# Also every relative link, `[text](path#anchor)`: the file must exist and, in a Markdown file,
# a heading must make the anchor (GitHub's rule: lower case, punctuation dropped, spaces to `-`),
# so that moving a section from one document to another cannot leave a dead link behind.
# And no file of the repository holds a merge's conflict markers (a line that starts with seven
# `<`, `>` or `=` and a space or its end): two came into docs/ARCHITECTURE.md with a merge once.
#
#   bash board/check-docs.sh
set -euo pipefail
cd "$(dirname "$0")/.."

files=$(git ls-files 2>/dev/null || find . -type f -not -path './.git/*' -not -path './.build/*' | sed 's|^\./||')
docs=(README.md CONTRIBUTING.md docs/*.md board/*.md board/*/README.md)
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

# A document's text outside fenced code blocks.
prose() { awk '/^```/ { fenced = !fenced; next } !fenced' "$1"; }
# The anchors a Markdown file's headings make.
anchors() { prose "$1" | sed -n 's/^#\{1,6\} //p' | LC_ALL=C.UTF-8 tr '[:upper:]' '[:lower:]' \
  | LC_ALL=C.UTF-8 sed 's/[^[:alnum:]_ -]//g; s/ /-/g'; }
dead=0
for doc in "${docs[@]}"; do
  [ -f "$doc" ] || continue
  while IFS= read -r link; do
    case "$link" in *:*) continue ;; esac   # https:, mailto:
    path=${link%%#*} anchor=""
    [[ "$link" == *'#'* ]] && anchor=${link#*#}
    target=$doc
    [ -n "$path" ] && target=$(dirname "$doc")/$path
    if [ ! -e "$target" ]; then
      printf 'check-docs: %s links to `%s`, which does not exist\n' "$doc" "$link" >&2
      dead=$((dead + 1))
    elif [ -n "$anchor" ] && [[ "$target" == *.md ]] && ! anchors "$target" | grep -qxF -- "$anchor"; then
      printf 'check-docs: %s links to `%s`: no heading there makes that anchor\n' "$doc" "$link" >&2
      dead=$((dead + 1))
    fi
  done < <(prose "$doc" | grep -o '](\([^) ]*\))' | sed 's/^](//; s/)$//' | sort -u)
done

# Conflict markers left by a merge, in any tracked text file (git grep skips binary files).
markers=$(git grep -n -I -E '^(<{7}|>{7})( |$)|^={7}$' -- . 2>/dev/null || true)
if [ -n "$markers" ]; then
  printf 'check-docs: FAIL: a merge left its conflict markers:\n%s\n' "$markers" >&2
fi

[ "$missing" -eq 0 ] || printf 'check-docs: FAIL: %d name(s) of missing files\n' "$missing" >&2
[ "$dead" -eq 0 ] || printf 'check-docs: FAIL: %d dead link(s)\n' "$dead" >&2
[ "$missing" -eq 0 ] && [ "$dead" -eq 0 ] && [ -z "$markers" ] || exit 1
echo "check-docs: every file the docs name is in the repository, every link leads somewhere, no conflict markers"
