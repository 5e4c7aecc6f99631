// SPDX-License-Identifier: MIT
import JukeboxCore
import Foundation

/// The randomized mode: replays a corpus, then runs seeded random inputs (mutated corpus files
/// and inputs built from the harness's tokens) for a bounded time or number of runs.
struct RandomRun {
    struct Options {
        var seconds = 10.0
        var runs: Int?
        var seed: UInt64 = 1
        var corpora: [String] = []
        var crashDir = "."
        var replayOnly = false
    }

    let harness: Harness
    let options: Options

    /// Returns the exit status: 0 when every input passed (a crash never returns).
    func run() -> Int32 {
        let crashFile = "\(options.crashDir)/crash-\(harness.rawValue)-seed\(options.seed)"
        CrashCapture.install(file: crashFile, capacity: harness.maxLength)
        let start = now()
        var corpus: [[UInt8]] = []
        for folder in options.corpora {
            guard let names = try? FileManager.default.contentsOfDirectory(atPath: folder) else {
                printError("jukebox-fuzz: cannot read corpus folder \(folder)\n")
                return 2
            }
            for name in names.sorted() where !name.hasPrefix(".") {
                guard let data = FileManager.default.contents(atPath: "\(folder)/\(name)") else { continue }
                let bytes = Array(data.prefix(harness.maxLength))
                CrashCapture.set(bytes)
                harness.run(bytes)
                corpus.append(bytes)
            }
        }
        print("jukebox-fuzz \(harness.rawValue): replayed \(corpus.count) corpus files, all passed")
        if options.replayOnly { return 0 }

        var random = SeededGenerator(seed: options.seed)
        var runs = 0, accepted = 0
        var longest = 0.0
        let deadline = start + options.seconds
        while runs < (options.runs ?? Int.max) {
            if runs % 64 == 0 && now() >= deadline { break }
            let input: [UInt8]
            if corpus.isEmpty || random.below(3) == 0 {
                input = harness.generate(&random)
            } else {
                let base = corpus[random.below(corpus.count)]
                let other = corpus[random.below(corpus.count)]
                input = Mutator.mutate(base, tokens: harness.tokens, other: other, maxLength: harness.maxLength, &random)
            }
            CrashCapture.set(input)
            let t0 = now()
            if harness.run(input) {
                accepted += 1
                // Accepted inputs are good ground for further mutation (a crude feedback loop).
                if corpus.count < 5000 && random.below(16) == 0 { corpus.append(input) }
            }
            longest = max(longest, now() - t0)
            runs += 1
        }
        let elapsed = now() - start
        let rate = elapsed > 0 ? Double(runs) / elapsed : 0
        print("jukebox-fuzz \(harness.rawValue): random mode, seed \(options.seed): \(runs) executions in "
              + "\(Int(elapsed * 10) / 10) s (\(Int(rate)) exec/s), \(accepted) accepted, \(runs - accepted) refused, "
              + "slowest input \(Int(longest * 1000)) ms")
        return 0
    }

    func now() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }
}
