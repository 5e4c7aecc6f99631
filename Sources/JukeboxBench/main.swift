// SPDX-License-Identifier: MIT
// jukebox-bench: prints the figures of README "Performance and reliability" (placeholder).
print("{}")
