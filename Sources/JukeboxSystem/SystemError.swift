// SPDX-License-Identifier: MIT
import Glibc

/// A failed system call: which call, on what, and errno's text. The one error type of the system
/// helpers; the adapters turn it into their own (`DeviceError`, `OutputError`) where a caller must
/// tell cases apart.
public struct SystemError: Error, Equatable, CustomStringConvertible, Sendable {
    /// The call that failed, e.g. "rename".
    public var call: String
    /// What it was called on (a path), if anything.
    public var subject: String
    /// errno at the failure.
    public var errno: Int32
    /// Why, when errno's text would not say it (a check of ours, not a failed call).
    public var reason: String? = nil

    /// An error for `call` on `subject` that failed with `errno` (or for `reason`).
    public init(call: String, subject: String, errno: Int32, reason: String? = nil) {
        self.call = call
        self.subject = subject
        self.errno = errno
        self.reason = reason
    }

    /// The reason as a person reads it: `rename /a → /b: No space left on device`.
    public var description: String {
        "\(call) \(subject): \(reason ?? errnoText(errno))"
    }
}

/// errno's text: `No such file or directory`.
public func errnoText(_ code: Int32) -> String { String(cString: strerror(code)) }

/// The one way into libc that can fail with -1: retries EINTR (bounded, so a signal storm cannot
/// hold a thread forever) and turns -1 into a typed error naming the call and its subject.
@discardableResult
public func sys(_ call: String, _ subject: String = "", _ body: () -> Int) throws(SystemError) -> Int {
    for _ in 0..<100 {
        let r = body()
        if r != -1 { return r }
        if errno == EINTR { continue }
        throw SystemError(call: call, subject: subject, errno: errno)
    }
    throw SystemError(call: call, subject: subject, errno: EINTR)
}

/// Calls `call` again while it fails with EINTR, at most `attempts` times in all, and returns its
/// last result with errno as it left it: for callers that map errno to an error of their own.
public func retryingEINTR<T: BinaryInteger>(attempts: Int = 9, _ call: () -> T) -> T {
    var result = call()
    var tries = 1
    while result < 0, errno == EINTR, tries < attempts {
        result = call()
        tries += 1
    }
    return result
}
