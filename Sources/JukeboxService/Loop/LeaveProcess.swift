// SPDX-License-Identifier: MIT
import CLinux

/// Ends the process with `code` once its own orderly stop is done (the place saved, the device
/// closed), without running exit(3)'s handlers: stdio is flushed, and an `-sanitize=address` build
/// still checks for leaks; nothing else runs.
///
/// Why not `exit`: threads nobody waits for may still run at that point (a station's fetch in its
/// first TLS set-up, a lookup), and the libraries they are inside register handlers that free their
/// globals at exit. OpenSSL's `OPENSSL_cleanup` freed its error-string table under a stream thread
/// still initialising it, and the player died of SIGSEGV on its way out (ThreadSanitizer caught it
/// in CI; a service stopped while a station connects would leave a core dump instead).
public func leaveProcess(_ code: Int32) -> Never {
    clinux_leave_process(code)
    fatalError("_exit returned")
}
