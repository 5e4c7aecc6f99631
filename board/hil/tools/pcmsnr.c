// SPDX-License-Identifier: MIT
// pcmsnr: the oracle for a lossy path (bt-loop: SBC over A2DP), where pcmcmp's bit-for-bit check
// cannot hold. 16-bit stereo PCM, raw or WAV.
//
//   pcmsnr SOURCE RECORDING RATE MIN_DB
//       finds where the recording's sound sits in SOURCE (cross-correlation of the mono mix, by
//       FFT, of up to 2^16 recorded frames against the whole source: the codec's delay and a lost
//       start of the stream are any offset, and the recording may begin up to 4096 frames before
//       the source does: a codec's pre-echo), then compares every overlapping frame of both
//       channels: the least-squares gain g of the recording against the source, and
//         SNR = 10 log10(sum (g s)^2 / sum (r - g s)^2)
//       over the whole overlap and over each 100 ms block of it (a dropout or a slip shows as a
//       bad block, however good the rest). Prints one line:
//         "snr D dB (worst 100 ms block W dB at t=S s), gain G dB, N frames (T s) from source
//          frame F (t=S s), recording frame R"                exit 0 when both D and W >= MIN_DB
//         "no sound in recording" / "recording too short"     exit 1
// The reference is the source as sent: a decoder that shifts the signal by a fraction of a frame
// costs SNR, which is what a listener would hear too.
#include <complex.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pcmfile.h"

static int16_t *load(const char *path, long *frames) {
    long bytes;
    int16_t *data = (int16_t *)pcm_file(path, &bytes);
    *frames = bytes / 4;
    return data;
}

// In-place iterative radix-2 FFT (n a power of two); inverse when sign is +1 (unscaled).
static void fft(double complex *a, long n, int sign) {
    for (long i = 1, j = 0; i < n; i++) {
        long bit = n >> 1;
        for (; j & bit; bit >>= 1) j ^= bit;
        j ^= bit;
        if (i < j) { double complex t = a[i]; a[i] = a[j]; a[j] = t; }
    }
    for (long len = 2; len <= n; len <<= 1) {
        double complex w = cexp(sign * 2 * M_PI * I / len);
        for (long i = 0; i < n; i += len) {
            double complex u = 1;
            for (long k = 0; k < len / 2; k++) {
                double complex x = a[i + k], y = a[i + k + len / 2] * u;
                a[i + k] = x + y;
                a[i + k + len / 2] = x - y;
                u *= w;
            }
        }
    }
}

static double mono(const int16_t *p, long frame) { return (p[2 * frame] + p[2 * frame + 1]) / 2.0; }

int main(int argc, char **argv) {
    if (argc != 5) {
        fprintf(stderr, "usage: pcmsnr SOURCE RECORDING RATE MIN_DB\n");
        return 2;
    }
    long ns, nr;
    int16_t *src = load(argv[1], &ns), *rec = load(argv[2], &nr);
    double rate = atof(argv[3]), min_db = atof(argv[4]);
    long block = (long)(rate / 10);
    // The recording's sound: first to last frame above -60 dBFS (silence before the stream
    // starts and after it stops is not part of the comparison).
    long first = 0, last = nr - 1;
    while (first < nr && abs(rec[2 * first]) < 32 && abs(rec[2 * first + 1]) < 32) first++;
    while (last > first && abs(rec[2 * last]) < 32 && abs(rec[2 * last + 1]) < 32) last--;
    if (first >= nr) { printf("no sound in recording\n"); return 1; }
    long chunk = last - first + 1;
    if (chunk > 65536) chunk = 65536;
    if (chunk < block || ns < block) { printf("recording too short: %ld frames of sound\n", last - first + 1); return 1; }
    // c[k] = sum_j rec[first + j] * src[k + j]: the source frame k where the chunk starts.
    long n = 1;
    while (n < ns + chunk) n <<= 1;
    double complex *a = calloc(n, sizeof *a), *b = calloc(n, sizeof *b);
    if (!a || !b) { fprintf(stderr, "out of memory\n"); return 2; }
    for (long i = 0; i < ns; i++) a[i] = mono(src, i);
    for (long j = 0; j < chunk; j++) b[j] = mono(rec, first + j);
    fft(a, n, -1);
    fft(b, n, -1);
    for (long i = 0; i < n; i++) a[i] *= conj(b[i]);
    fft(a, n, 1);
    // Negative lags too (a[n + k], k < 0): a codec's pre-echo can put the recording's first
    // frame above -60 dBFS a few frames before the source's first sound (SBC: 4 frames, seen
    // in bt-loop), and the match then starts before source frame 0.
    long best = 0, max_before = chunk < 4096 ? chunk - 1 : 4096;
    double peak = creal(a[0]);
    for (long k = -max_before; k < ns; k++) {
        double v = creal(a[k < 0 ? n + k : k]);
        if (v > peak) { peak = v; best = k; }
    }
    free(a);
    free(b);
    if (best < 0) { first -= best; best = 0; }
    // Recording frame first + j is source frame best + j, as far as both go.
    long overlap = last - first + 1;
    if (best + overlap > ns) overlap = ns - best;
    double ss = 0, sr = 0;
    for (long j = 0; j < overlap; j++)
        for (int c = 0; c < 2; c++) {
            double s = src[2 * (best + j) + c], r = rec[2 * (first + j) + c];
            ss += s * s;
            sr += s * r;
        }
    if (ss == 0) { printf("the source is silent where the recording matches it\n"); return 1; }
    double g = sr / ss, sig = 0, err = 0, worst = INFINITY;
    long worst_at = 0;
    for (long b0 = 0; b0 < overlap; b0 += block) {
        double bs = 0, be = 0;
        for (long j = b0; j < overlap && j < b0 + block; j++)
            for (int c = 0; c < 2; c++) {
                double s = g * src[2 * (best + j) + c], e = rec[2 * (first + j) + c] - s;
                bs += s * s;
                be += e * e;
            }
        sig += bs;
        err += be;
        // Only whole blocks with sound in the source count for the worst one.
        double db = be > 0 ? 10 * log10(bs / be) : 200;
        if (b0 + block <= overlap && bs > 0 && db < worst) { worst = db; worst_at = b0; }
    }
    double snr = err > 0 ? 10 * log10(sig / err) : 200;
    if (worst == INFINITY) worst = snr;
    printf("snr %.1f dB (worst 100 ms block %.1f dB at t=%.2f s), gain %.2f dB, %ld frames (%.2f s) from source frame %ld (t=%.3f s), recording frame %ld\n",
           snr, worst, (best + worst_at) / rate, 20 * log10(fabs(g)), overlap, overlap / rate, best, best / rate, first);
    return snr >= min_db && worst >= min_db ? 0 : 1;
}
