// SPDX-License-Identifier: MIT
// pcmcmp: the audio oracle of the HIL tests (16-bit stereo raw PCM, 4 bytes a frame).
//
//   pcmcmp gen FILE FRAMES SEED [SILENT_FRAMES]
//       writes FRAMES frames of deterministic pseudo-random full-scale noise (never an all-zero
//       frame) followed by SILENT_FRAMES zero frames.
//   pcmcmp find SOURCE RECORDING RATE
//       finds SOURCE's sound (first to last non-zero frame) in RECORDING, aligned on the first
//       non-zero frame, and checks it is there bit for bit. Prints one line:
//         "bit-exact: N frames from recording frame R"                             exit 0
//         "mismatch at source frame F (t=S s): expected XXXXXXXX, seen YYYYYYYY; N frames matched" exit 1
//         "gap: N frames (M ms) of silence inserted at source frame F …"             exit 1
//         "no sound in recording" / "recording ends at source frame F (t=S s)"      exit 1
//   pcmcmp window SOURCE RECORDING RATE
//       finds the recording (first to last non-zero frame) in SOURCE at any offset: a recording
//       made in the middle of a track. The first 64 recorded frames pick the offset (noise or a
//       dithered tone: one place in the source); from there every frame must match. Prints one line:
//         "bit-exact: N frames (T s) at source frame F (t=S s)"                     exit 0
//         "mismatch …" / "gap: …" as for find, at the offset that matched longest      exit 1
//         "not in source: recording frames R.. (first 64) found nowhere"             exit 1
//   pcmcmp f2s IN OUT
//       converts raw 32-bit float samples (a recording of a float stream: the Loopback's capture
//       takes the playback's format) to 16 bits, x * 32768 rounded and clamped, as the player's
//       own conversion does: exact for samples that came from 16 bits.
// SOURCE and RECORDING are raw PCM, or WAV files (the samples of their data chunk).
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pcmfile.h"

static uint32_t *load(const char *path, long *frames) {
    long bytes;
    uint32_t *data = (uint32_t *)pcm_file(path, &bytes);
    *frames = bytes / 4;
    return data;
}

// How many frames match from s[s0] and r[r0] on, up to s1 (exclusive) or the recording's end rn.
static long matched(const uint32_t *s, long s0, long s1, const uint32_t *r, long r0, long rn) {
    long n = 0;
    while (s0 + n < s1 && r0 + n < rn && s[s0 + n] == r[r0 + n]) n++;
    return n;
}

// The line for a comparison that started at s[s0] / r[r0] and stopped at source frame i.
static int report(const uint32_t *s, long s0, long i, const uint32_t *r, long r0, long rn, double rate) {
    long j = r0 + (i - s0);
    if (j >= rn) {
        printf("recording ends at source frame %ld (t=%.3f s); %ld frames matched\n", i, i / rate, i - s0);
        return 1;
    }
    // Silence followed by the rest of the source is an underrun (a gap), not wrong data.
    long z = j;
    while (z < rn && r[z] == 0) z++;
    if (r[j] == 0 && z < rn && r[z] == s[i]) {
        printf("gap: %ld frames (%.1f ms) of silence inserted at source frame %ld (t=%.3f s, an underrun); %ld frames matched before it\n",
               z - j, (z - j) * 1000 / rate, i, i / rate, i - s0);
        return 1;
    }
    printf("mismatch at source frame %ld (t=%.3f s, recording frame %ld): expected %08x, seen %08x; %ld frames matched\n",
           i, i / rate, j, s[i], r[j], i - s0);
    return 1;
}

int main(int argc, char **argv) {
    if (argc >= 5 && strcmp(argv[1], "gen") == 0) {
        FILE *f = fopen(argv[2], "wb");
        if (!f) { perror(argv[2]); return 2; }
        long frames = atol(argv[3]), silent = argc > 5 ? atol(argv[5]) : 0;
        uint32_t x = (uint32_t)strtoul(argv[4], NULL, 0) | 1u;
        for (long i = 0; i < frames; i++) {
            x ^= x << 13; x ^= x >> 17; x ^= x << 5;  // xorshift32
            uint32_t frame = x ? x : 1;
            fwrite(&frame, 4, 1, f);
        }
        uint32_t zero = 0;
        for (long i = 0; i < silent; i++) fwrite(&zero, 4, 1, f);
        return fclose(f) == 0 ? 0 : 2;
    }
    if (argc == 5 && strcmp(argv[1], "find") == 0) {
        long sn, rn;
        uint32_t *s = load(argv[2], &sn), *r = load(argv[3], &rn);
        double rate = atof(argv[4]);
        long s0 = 0, s1 = sn - 1, r0 = 0;
        while (s0 < sn && s[s0] == 0) s0++;
        while (s1 > s0 && s[s1] == 0) s1--;
        while (r0 < rn && r[r0] == 0) r0++;
        if (s0 == sn) { printf("source is silent\n"); return 1; }
        if (r0 == rn) { printf("no sound in recording (%ld frames, all zero)\n", rn); return 1; }
        long i = s0 + matched(s, s0, s1 + 1, r, r0, rn);
        if (i <= s1) return report(s, s0, i, r, r0, rn, rate);
        printf("bit-exact: %ld frames (%.3f s) from recording frame %ld\n", s1 - s0 + 1, (s1 - s0 + 1) / rate, r0);
        return 0;
    }
    if (argc == 5 && strcmp(argv[1], "window") == 0) {
        long sn, rn;
        uint32_t *s = load(argv[2], &sn), *r = load(argv[3], &rn);
        double rate = atof(argv[4]);
        long r0 = 0, r1 = rn - 1;
        while (r0 < rn && r[r0] == 0) r0++;
        while (r1 > r0 && r[r1] == 0) r1--;
        if (r0 == rn) { printf("no sound in recording (%ld frames, all zero)\n", rn); return 1; }
        long len = r1 - r0 + 1, seed = len < 64 ? len : 64, best = -1, best_n = -1;
        for (long o = 0; o + seed <= sn; o++) {
            if (s[o] != r[r0] || matched(s, o, o + seed, r, r0, r0 + seed) < seed) continue;
            long n = matched(s, o, sn, r, r0, r1 + 1);
            if (n == len) {
                printf("bit-exact: %ld frames (%.3f s) at source frame %ld (t=%.3f s)\n", len, len / rate, o, o / rate);
                return 0;
            }
            if (n > best_n) { best = o; best_n = n; }
        }
        if (best < 0) { printf("not in source: recording frames %ld.. (first %ld) found nowhere\n", r0, seed); return 1; }
        return report(s, best, best + best_n, r, r0, r1 + 1, rate);
    }
    if (argc == 4 && strcmp(argv[1], "f2s") == 0) {
        FILE *in = fopen(argv[2], "rb"), *out = fopen(argv[3], "wb");
        if (!in || !out) { perror(in ? argv[3] : argv[2]); return 2; }
        float x;
        while (fread(&x, sizeof x, 1, in) == 1) {
            double v = x != x ? 0 : (double)x * 32768;
            v = v < -32768 ? -32768 : v > 32767 ? 32767 : v;
            int16_t s = (int16_t)(v < 0 ? v - 0.5 : v + 0.5);
            fwrite(&s, sizeof s, 1, out);
        }
        fclose(in);
        return fclose(out) == 0 ? 0 : 2;
    }
    fprintf(stderr, "usage: pcmcmp gen FILE FRAMES SEED [SILENT] | pcmcmp find|window SOURCE RECORDING RATE | pcmcmp f2s IN OUT\n");
    return 2;
}
