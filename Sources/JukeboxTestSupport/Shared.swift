// SPDX-License-Identifier: MIT
import Synchronization

/// A value a test shares with the thread under test (a loop, a sink's thread, a log's observer):
/// every read and write under one lock.
public final class Shared<Value: Sendable>: Sendable {
    private let value: Mutex<Value>

    public init(_ value: Value) {
        self.value = Mutex(value)
    }

    /// Runs `body` on the value, under the lock.
    public func withLock<T: Sendable>(_ body: (inout Value) -> T) -> T {
        value.withLock { body(&$0) }
    }
}
