// SPDX-License-Identifier: MIT
// jukebox-fuzz: the control language, config and state file parsers under libFuzzer or, in a
// plain build, a seeded randomized property tester. Every input also checks the parser's
// properties (round trips, messages that name the problem, bounded output); a failed property
// is a crash. Under `--sanitize=fuzzer -Xswiftc -DLIBFUZZER` libFuzzer's own `main` runs and
// calls into LibFuzzer.swift; hence `@main` here rather than a main.swift, whose top-level code
// SwiftPM's fuzzer build (-parse-as-library) refuses even inside an inactive `#if`.
#if !LIBFUZZER
import Glibc

/// The randomized mode's entry point.
@main
enum JukeboxFuzzMain {
    static func main() {
        exit(CLI.runRandom(Array(CommandLine.arguments.dropFirst())))
    }
}
#endif
