// SPDX-License-Identifier: MIT
import Glibc

/// The command line of both builds: harness selection, `dict`, and the randomized mode's options.
enum CLI {
    static let usage = """
usage: jukebox-fuzz HARNESS [options]          (HARNESS: command, config, state, runtime, hls, ts, fmp4 or feed)
       jukebox-fuzz dict HARNESS               print the harness's tokens as a libFuzzer dictionary
randomized mode (a plain build):
  --seconds S      stop after S seconds (default 10)
  --runs N         stop after N inputs (default: no limit)
  --seed N         the random seed (default 1); the same seed gives the same inputs
  --corpus DIR     replay every file in DIR first and mutate them (may be repeated)
  --crash-dir DIR  where a crashing input is written (default .)
  --replay-only    only replay the corpus
libFuzzer build: every argument after HARNESS goes to libFuzzer (-max_total_time=60 CORPUS ...).
"""

    static func fail(_ message: String) -> Never {
        printError("jukebox-fuzz: \(message)\n\(usage)")
        exit(2)
    }

    /// Handles what both builds share; returns the harness and the arguments after it.
    static func harness(_ arguments: [String]) -> (Harness, [String]) {
        guard let first = arguments.first else { fail("which harness?") }
        if first == "-h" || first == "--help" { print(usage); exit(0) }
        if first == "dict" {
            guard arguments.count == 2, let harness = Harness(rawValue: arguments[1]) else { fail("dict needs a harness") }
            for token in harness.tokens { print("\"" + LibFuzzerDictionary.escape(token) + "\"") }
            exit(0)
        }
        guard let harness = Harness(rawValue: first) else { fail("unknown harness \"\(first)\"") }
        return (harness, Array(arguments.dropFirst()))
    }

    /// The randomized mode's command line; returns the exit status.
    static func runRandom(_ all: [String]) -> Int32 {
        var (harness, arguments) = harness(all)
        var options = RandomRun.Options()
        while let arg = arguments.first {
            arguments.removeFirst()
            func value() -> String {
                guard let v = arguments.first else { fail("\(arg) needs a value") }
                arguments.removeFirst()
                return v
            }
            switch arg {
            case "--seconds": guard let v = Double(value()), v >= 0 else { fail("--seconds needs a number") }; options.seconds = v
            case "--runs": guard let v = Int(value()), v >= 0 else { fail("--runs needs a count") }; options.runs = v
            case "--seed": guard let v = UInt64(value()) else { fail("--seed needs a number") }; options.seed = v
            case "--corpus": options.corpora.append(value())
            case "--crash-dir": options.crashDir = value()
            case "--replay-only": options.replayOnly = true
            default:
                if arg.hasPrefix("-") && !arg.hasPrefix("--") {
                    fail("\(arg) is a libFuzzer option; this build is the randomized mode (see board/fuzz.sh)")
                }
                fail("unknown option \(arg)")
            }
        }
        return RandomRun(harness: harness, options: options).run()
    }
}
