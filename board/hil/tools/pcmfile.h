// SPDX-License-Identifier: MIT
// pcmfile.h: how pcmcmp and pcmsnr read their audio (included by both, each one file otherwise).
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// The samples of PATH: a WAV file's data chunk (moved to the front of the buffer), or the whole
// file when it is not RIFF/WAVE (raw PCM). *bytes is their length. Exits 2 on a read error.
static uint8_t *pcm_file(const char *path, long *bytes) {
    FILE *f = fopen(path, "rb");
    if (!f) { perror(path); exit(2); }
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *raw = malloc(n + 4);
    if (!raw || fread(raw, 1, n, f) != (size_t)n) { perror(path); exit(2); }
    fclose(f);
    *bytes = n;
    if (n < 12 || memcmp(raw, "RIFF", 4) != 0 || memcmp(raw + 8, "WAVE", 4) != 0) return raw;
    long at = 12;
    while (at + 8 <= n) {
        uint32_t size = raw[at + 4] | raw[at + 5] << 8 | raw[at + 6] << 16 | (uint32_t)raw[at + 7] << 24;
        if (memcmp(raw + at, "data", 4) == 0) {
            long len = size < n - at - 8 ? (long)size : n - at - 8;
            memmove(raw, raw + at + 8, len);
            *bytes = len;
            return raw;
        }
        at += 8 + size + (size & 1);
    }
    fprintf(stderr, "%s: a WAV file without a data chunk\n", path);
    exit(2);
}
