// SPDX-License-Identifier: MIT
#if LIBFUZZER
import Glibc

/// The harness libFuzzer runs; chosen by `LLVMFuzzerInitialize` from the command line.
nonisolated(unsafe) var selectedHarness = Harness.command

/// Called by libFuzzer's `main` before it reads its flags: takes the harness name (first
/// argument) off the command line, so `jukebox-fuzz HARNESS -flags... CORPUS` works; also puts it
/// in JUKEBOX_FUZZ_HARNESS so processes libFuzzer starts itself (-fork, -minimize_crash) agree.
@_cdecl("LLVMFuzzerInitialize")
public func fuzzerInitialize(_ argc: UnsafeMutablePointer<Int32>,
                             _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>) -> Int32 {
    let args = (0..<Int(argc.pointee)).map { String(cString: argv.pointee![$0]!) }
    if args.count > 1, args[1] == "dict" || args[1] == "-h" || args[1] == "--help" || Harness(rawValue: args[1]) != nil {
        let (harness, _) = CLI.harness(Array(args.dropFirst()))
        selectedHarness = harness
        setenv("JUKEBOX_FUZZ_HARNESS", harness.rawValue, 1)
        // A new argv without the harness, with the harness's -max_len unless one is given.
        var rest = [args[0]] + args.dropFirst(2)
        if !rest.contains(where: { $0.hasPrefix("-max_len=") }) { rest.append("-max_len=\(harness.maxLength)") }
        let v = UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>.allocate(capacity: rest.count + 1)
        for (i, arg) in rest.enumerated() { v[i] = strdup(arg) }
        v[rest.count] = nil
        argv.pointee = v
        argc.pointee = Int32(rest.count)
    } else if let name = getenv("JUKEBOX_FUZZ_HARNESS").map({ String(cString: $0) }), let harness = Harness(rawValue: name) {
        selectedHarness = harness
    } else {
        CLI.fail("the first argument must be the harness (command, config, state or runtime)")
    }
    return 0
}

/// libFuzzer's entry: one input through the selected harness (a crash or failed property stops
/// the process, and libFuzzer keeps the input).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzerTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let bytes = size == 0 || data == nil ? [] : Array(UnsafeBufferPointer(start: data, count: size))
    selectedHarness.run(bytes)
    return 0
}
#endif
