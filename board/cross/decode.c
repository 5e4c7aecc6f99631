// SPDX-License-Identifier: MIT
// decode.c - the reference decode for board/emulate-arm64.sh, cross-compiled for arm64 and run under
// qemu: FILE decoded by libsndfile (the same library jukebox uses) into raw interleaved samples of
// the type jukebox plays it as (Decoder.sampleType in Sources/JukeboxAudio/Decoder.swift):
// 8/16-bit-class subtypes as int16, 24/32-bit-class as int32, everything else (MP3, Vorbis,
// Opus, float) as float. sndfile-convert cannot serve: it rescales float output to a peak of 1.0.
#include <sndfile.h>
#include <stdio.h>

int main(int argc, char **argv) {
    if (argc != 3) { fprintf(stderr, "usage: decode IN OUT.raw\n"); return 2; }
    SF_INFO info = {0};
    SNDFILE *in = sf_open(argv[1], SFM_READ, &info);
    if (!in) { fprintf(stderr, "decode: %s: %s\n", argv[1], sf_strerror(NULL)); return 1; }
    FILE *out = fopen(argv[2], "wb");
    if (!out) { perror(argv[2]); return 1; }
    int type; // 0 int16, 1 int32, 2 float
    switch (info.format & SF_FORMAT_SUBMASK) {
    case SF_FORMAT_PCM_S8: case SF_FORMAT_PCM_U8: case SF_FORMAT_PCM_16: case SF_FORMAT_ULAW:
    case SF_FORMAT_ALAW: case SF_FORMAT_DWVW_12: case SF_FORMAT_DWVW_16: case SF_FORMAT_DPCM_8:
    case SF_FORMAT_DPCM_16: case SF_FORMAT_ALAC_16:
        type = 0; break;
    case SF_FORMAT_PCM_24: case SF_FORMAT_PCM_32: case SF_FORMAT_DWVW_24: case SF_FORMAT_ALAC_20:
    case SF_FORMAT_ALAC_24: case SF_FORMAT_ALAC_32:
        type = 1; break;
    default:
        type = 2;
    }
    static union { short s[4096 * 8]; int i[4096 * 8]; float f[4096 * 8]; } buf;
    if (info.channels < 1 || info.channels > 8) { fprintf(stderr, "decode: %d channels\n", info.channels); return 1; }
    size_t frame = (type == 0 ? 2 : 4) * (size_t)info.channels;
    for (;;) {
        sf_count_t n = type == 0 ? sf_readf_short(in, buf.s, 4096)
                     : type == 1 ? sf_readf_int(in, buf.i, 4096) : sf_readf_float(in, buf.f, 4096);
        if (n <= 0) break;
        if (fwrite(&buf, frame, (size_t)n, out) != (size_t)n) { perror(argv[2]); return 1; }
    }
    sf_close(in);
    return fclose(out) == 0 ? 0 : 1;
}
