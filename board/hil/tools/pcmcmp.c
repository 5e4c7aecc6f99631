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
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint32_t *load(const char *path, long *frames) {
    FILE *f = fopen(path, "rb");
    if (!f) { perror(path); exit(2); }
    fseek(f, 0, SEEK_END);
    long bytes = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint32_t *data = malloc(bytes + 4);
    if (!data || fread(data, 1, bytes, f) != (size_t)bytes) { perror(path); exit(2); }
    fclose(f);
    *frames = bytes / 4;
    return data;
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
        for (long i = s0; i <= s1; i++) {
            long j = r0 + (i - s0);
            if (j >= rn) {
                printf("recording ends at source frame %ld (t=%.3f s); %ld frames matched\n", i, i / rate, i - s0);
                return 1;
            }
            if (r[j] != s[i]) {
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
        }
        printf("bit-exact: %ld frames (%.3f s) from recording frame %ld\n", s1 - s0 + 1, (s1 - s0 + 1) / rate, r0);
        return 0;
    }
    fprintf(stderr, "usage: pcmcmp gen FILE FRAMES SEED [SILENT] | pcmcmp find SOURCE RECORDING RATE\n");
    return 2;
}
