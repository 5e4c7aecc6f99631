// SPDX-License-Identifier: MIT

/// Apple Lossless (ALAC) packets to PCM, written here from the format's published description
/// (Apple's ALAC release, 2011): no Debian library decodes ALAC in MP4 short of FFmpeg's whole
/// libavcodec, and the algorithm is small (adaptive Rice codes, an adaptive FIR predictor, stereo
/// decorrelation). Each packet stands alone, so a seek is exact. Mono and stereo (a box plays two
/// channels); 16, 20, 24 and 32 bits. Every read is bounds-checked: a damaged packet is an error
/// for that packet, never a trap.
struct ALACDecoder {
    /// Frames per packet (4096 usually).
    let frameLength: Int
    let bitDepth: Int
    let channels: Int
    let sampleRate: Int
    /// Rice parameters: the history multiplier, its initial value, the largest k.
    let historyMult: Int
    let initialHistory: Int
    let riceLimit: Int

    /// The 24-byte ALACSpecificConfig (the "magic cookie" in the `alac` box).
    init(cookie: [UInt8]) throws(MP4Error) {
        guard cookie.count >= 24 else { throw MP4Error("damaged file: the ALAC configuration is cut short") }
        func u32(_ at: Int) -> Int { cookie[at..<at + 4].reduce(0) { $0 << 8 | Int($1) } }
        frameLength = u32(0)
        bitDepth = Int(cookie[5])
        historyMult = Int(cookie[6])
        initialHistory = Int(cookie[7])
        riceLimit = Int(cookie[8])
        channels = Int(cookie[9])
        sampleRate = u32(20)
        guard (1...65536).contains(frameLength) else { throw MP4Error("damaged file: ALAC packets of \(frameLength) frames") }
        guard [16, 20, 24, 32].contains(bitDepth) else { throw MP4Error("ALAC with \(bitDepth)-bit samples is not supported (16, 20, 24, 32)") }
        guard (1...2).contains(channels) else { throw MP4Error("ALAC with \(channels) channels is not supported (mono and stereo)") }
        guard (1...32).contains(riceLimit) else { throw MP4Error("damaged file: ALAC's Rice limit is \(riceLimit)") }
    }

    /// One packet's samples, interleaved, at `bitDepth` bits (sign-extended into Int32).
    func decode(_ packet: [UInt8]) throws(MP4Error) -> [Int32] {
        var bits = BitReader(packet)
        var output: [Int32] = []
        var channelsDone = 0
        while true {
            let tag = try bits.read(3)
            switch tag {
            case 0, 1:  // a single channel, or a pair
                let n = tag == 0 ? 1 : 2
                guard channelsDone + n <= channels else { throw MP4Error("damaged ALAC packet: more channels than the file has") }
                let element = try decodeElement(&bits, channels: n)
                if channels == n { output = element } else { throw MP4Error("damaged ALAC packet: a channel layout this player does not play") }
                channelsDone += n
            case 4:  // data stream element: skipped
                try bits.skip(4)
                let aligned = try bits.read(1) == 1
                var count = try bits.read(8)
                if count == 255 { count += try bits.read(8) }
                if aligned { bits.alignToByte() }
                try bits.skip(8 * count)
            case 6:  // fill element: skipped
                var count = try bits.read(4)
                if count == 15 { count += try bits.read(8) - 1 }
                try bits.skip(8 * count)
            case 7:  // end
                guard channelsDone == channels else { throw MP4Error("damaged ALAC packet: it ends before every channel") }
                return output
            default:
                throw MP4Error("damaged ALAC packet: element type \(tag)")
            }
        }
    }

    private func decodeElement(_ bits: inout BitReader, channels n: Int) throws(MP4Error) -> [Int32] {
        try bits.skip(4 + 12)  // element instance tag, unused header bits
        let hasSize = try bits.read(1) == 1
        let extraBits = try bits.read(2) * 8  // low bits sent verbatim ("shift" in Apple's words)
        let uncompressed = try bits.read(1) == 1
        let frames = hasSize ? try bits.read(32) : frameLength
        guard frames >= 1, frames <= frameLength else { throw MP4Error("damaged ALAC packet: \(frames) frames") }
        guard extraBits < bitDepth else { throw MP4Error("damaged ALAC packet: \(extraBits) verbatim bits") }
        var samples = [[Int32]](repeating: [Int32](repeating: 0, count: frames), count: n)

        if uncompressed {
            for i in 0..<frames {
                for ch in 0..<n { samples[ch][i] = try bits.signed(bitDepth) }
            }
        } else {
            // Bits per residual: the verbatim bits are not in it; a pair's side channel needs one more.
            let bps = bitDepth - extraBits + n - 1
            let shift = try bits.read(8)
            let leftWeight = try bits.read(8)
            var modes: [(type: Int, quant: Int, mult: Int, coefs: [Int32])] = []
            for _ in 0..<n {
                let type = try bits.read(4)
                let quant = try bits.read(4)
                let mult = try bits.read(3)
                let order = try bits.read(5)
                guard quant > 0, order < frames || order == 0 else { throw MP4Error("damaged ALAC packet: predictor order \(order)") }
                var coefs = [Int32](repeating: 0, count: order)
                // Sent last-first: the first one read weighs the nearest past sample.
                for j in stride(from: order - 1, through: 0, by: -1) { coefs[j] = try bits.signed(16) }
                modes.append((type, quant, mult, coefs))
            }
            var verbatim: [[Int32]] = []
            if extraBits > 0 {
                verbatim = [[Int32]](repeating: [Int32](repeating: 0, count: frames), count: n)
                for i in 0..<frames {
                    for ch in 0..<n { verbatim[ch][i] = Int32(try bits.read(extraBits)) }
                }
            }
            for ch in 0..<n {
                let mode = modes[ch]
                var residual = try rice(&bits, frames: frames, bps: bps, mult: mode.mult * historyMult / 4)
                if mode.type == 15 {
                    // Type 15 runs the predictor twice, first as a plain first-order one.
                    residual = Self.predict(residual, bps: bps, coefs: [], order: 31, quant: 0)
                } else if mode.type != 0 {
                    throw MP4Error("damaged ALAC packet: prediction type \(mode.type)")
                }
                samples[ch] = Self.predict(residual, bps: bps, coefs: mode.coefs, order: mode.coefs.count, quant: mode.quant)
            }
            if n == 2 && leftWeight != 0 {
                for i in 0..<frames {
                    let mid = samples[0][i], side = samples[1][i]
                    let right = mid &- ((side &* Int32(truncatingIfNeeded: leftWeight)) >> Int32(shift))
                    samples[0][i] = right &+ side
                    samples[1][i] = right
                }
            }
            if extraBits > 0 {
                for ch in 0..<n {
                    for i in 0..<frames { samples[ch][i] = samples[ch][i] << Int32(extraBits) | verbatim[ch][i] }
                }
            }
        }
        if n == 1 { return samples[0] }
        var interleaved = [Int32](repeating: 0, count: 2 * frames)
        for i in 0..<frames {
            interleaved[2 * i] = samples[0][i]
            interleaved[2 * i + 1] = samples[1][i]
        }
        return interleaved
    }

    /// The residuals: adaptive Rice codes, whose parameter follows a running mean (`history`),
    /// with runs of zeros coded as a count where the signal is quiet.
    private func rice(_ bits: inout BitReader, frames: Int, bps: Int, mult: Int) throws(MP4Error) -> [Int32] {
        var out = [Int32](repeating: 0, count: frames)
        var history = initialHistory
        var signModifier = 0
        var i = 0
        while i < frames {
            let k = min(Self.log2(history >> 9 &+ 3), riceLimit)
            let x = try scalar(&bits, k: k, bps: bps) + signModifier
            signModifier = 0
            out[i] = Int32(truncatingIfNeeded: (x >> 1) ^ -(x & 1))
            if x > 0xffff {
                history = 0xffff
            } else {
                history = history + x * mult - ((history * mult) >> 9)
            }
            if history < 128 && i + 1 < frames {
                let kz = min(7 - Self.log2(history) + ((history + 16) >> 6), riceLimit)
                var run = try scalar(&bits, k: kz, bps: 16)
                if run > 0 {
                    // A run past the packet's end is damage; what fits is kept (zeros already).
                    run = min(run, frames - i - 1)
                    i += run
                }
                if run <= 0xffff { signModifier = 1 }
                history = 0
            }
            i += 1
        }
        return out
    }

    /// One Rice-coded value with parameter `k`: a unary prefix (at most 8; 9 ones escape to `bps`
    /// bits verbatim), then k bits, where the value is prefix·(2^k − 1) plus the bits minus one,
    /// or k − 1 bits when those would read 0 or 1.
    private func scalar(_ bits: inout BitReader, k: Int, bps: Int) throws(MP4Error) -> Int {
        var prefix = 0
        while prefix < 9, try bits.read(1) == 1 { prefix += 1 }
        if prefix > 8 { return try bits.read(bps) }
        guard k != 1 else { return prefix }
        var x = (prefix << k) - prefix
        let extra = try bits.peek(k)
        if extra > 1 {
            x += extra - 1
            try bits.skip(k)
        } else {
            try bits.skip(k - 1)
        }
        return x
    }

    /// The adaptive FIR predictor: each sample is the residual plus a prediction from the
    /// `order` samples before it, and the coefficients move toward what would have predicted
    /// better. Order 31 (with no coefficients) is a plain first-order predictor. Arithmetic wraps
    /// as 32-bit integers do in the reference, and each sample is cut to `bps` bits.
    static func predict(_ residual: [Int32], bps: Int, coefs initial: [Int32], order: Int, quant: Int) -> [Int32] {
        let n = residual.count
        var out = [Int32](repeating: 0, count: n)
        guard n > 0 else { return out }
        out[0] = residual[0]
        if order == 0 {
            return residual
        }
        if order == 31 {
            for i in 1..<n { out[i] = signExtend(out[i - 1] &+ residual[i], bps) }
            return out
        }
        var coefs = initial
        var i = 1
        while i <= order && i < n {
            out[i] = signExtend(out[i - 1] &+ residual[i], bps)
            i += 1
        }
        while i < n {
            let base = i - order  // out[base + j] for j in 0..<order; d is the sample before them
            let d = out[base - 1]
            var sum: Int32 = 0
            for j in 0..<order { sum = sum &+ (out[base + j] &- d) &* coefs[j] }
            var val = Int32(truncatingIfNeeded: (Int64(sum) + (Int64(1) << (quant - 1))) >> Int64(quant))
            var error = residual[i]
            val = val &+ d &+ error
            out[i] = signExtend(val, bps)
            let errorSign = sign(error)
            if errorSign != 0 {
                var j = 0
                while j < order && error &* errorSign > 0 {
                    var v = d &- out[base + j]
                    let s = sign(v) &* errorSign
                    coefs[j] = coefs[j] &- s
                    v = v &* s
                    error = error &- (v >> Int32(quant)) &* Int32(j + 1)
                    j += 1
                }
            }
            i += 1
        }
        return out
    }

    static func sign(_ v: Int32) -> Int32 { v > 0 ? 1 : v < 0 ? -1 : 0 }

    static func signExtend(_ v: Int32, _ bits: Int) -> Int32 {
        guard bits < 32 else { return v }
        let shift = Int32(32 - bits)
        return (v << shift) >> shift
    }

    /// floor(log2(v)) for v ≥ 1; 0 for 0.
    static func log2(_ v: Int) -> Int { v <= 0 ? 0 : (Int.bitWidth - 1 - v.leadingZeroBitCount) }
}

/// Bits from a byte array, most significant first; reading past the end throws.
struct BitReader {
    let bytes: [UInt8]
    private(set) var position = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    func peek(_ n: Int) throws(MP4Error) -> Int {
        guard n >= 0, n <= 32, position + n <= bytes.count * 8 else { throw MP4Error("damaged ALAC packet: it ends early") }
        var value = 0
        var at = position
        var left = n
        while left > 0 {
            let byte = Int(bytes[at >> 3])
            let offset = at & 7
            let take = min(left, 8 - offset)
            value = value << take | (byte >> (8 - offset - take)) & ((1 << take) - 1)
            at += take
            left -= take
        }
        return value
    }

    mutating func read(_ n: Int) throws(MP4Error) -> Int {
        let value = try peek(n)
        position += n
        return value
    }

    mutating func signed(_ n: Int) throws(MP4Error) -> Int32 {
        ALACDecoder.signExtend(Int32(truncatingIfNeeded: try read(n)), n)
    }

    mutating func skip(_ n: Int) throws(MP4Error) {
        guard n >= 0, position + n <= bytes.count * 8 else { throw MP4Error("damaged ALAC packet: it ends early") }
        position += n
    }

    mutating func alignToByte() { position = (position + 7) & ~7 }
}
