// SPDX-License-Identifier: MIT
// jukebox-fuzz: the parsers under libFuzzer or randomized inputs (placeholder).
print("jukebox-fuzz: nothing yet")
