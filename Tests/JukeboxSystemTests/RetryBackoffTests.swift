// SPDX-License-Identifier: MIT
import JukeboxSystem
import XCTest

/// `RetryBackoff` by tables: each row a step (`f`: failed at t, `s`: started at t, `ok`:
/// succeeded) and the wait a failure gets.
final class RetryBackoffTests: XCTestCase {
    private enum Step {
        case started(Double)
        case failed(Double, wait: Double)
        case succeeded
    }

    private func run(_ backoff: RetryBackoff, _ steps: [Step], file: StaticString = #filePath, line: UInt = #line) {
        var b = backoff
        for (i, step) in steps.enumerated() {
            switch step {
            case .started(let t): b.started(at: t)
            case .succeeded: b.succeeded()
            case .failed(let t, let wait): XCTAssertEqual(b.failed(at: t), wait, "step \(i)", file: file, line: line)
            }
        }
    }

    func testTheWaitDoublesUpToTheLongest() {
        run(RetryBackoff(first: 1, longest: 5), [.failed(0, wait: 1), .failed(1, wait: 2), .failed(3, wait: 4), .failed(7, wait: 5), .failed(12, wait: 5)])
        // Below 1 s: the first is the longest too (a panel's maxBackoff under 1 s).
        run(RetryBackoff(first: 0.5, longest: 0.5), [.failed(0, wait: 0.5), .failed(1, wait: 0.5)])
        // A longest below the first is the first.
        run(RetryBackoff(first: 2, longest: 1), [.failed(0, wait: 2), .failed(2, wait: 2)])
    }

    func testASuccessStartsAgainFromTheFirst() {
        run(RetryBackoff(first: 1, longest: 60), [.failed(0, wait: 1), .failed(1, wait: 2), .succeeded, .failed(9, wait: 1), .failed(10, wait: 2)])
    }

    /// A run of `steady` seconds or more was working: its end waits `first`; a shorter one
    /// keeps doubling; a failure to start (no run) never resets.
    func testASteadyRunResetsTheWait() {
        run(RetryBackoff(first: 1, longest: 60, steady: 30), [
            .started(0), .failed(1, wait: 1),
            .started(2), .failed(3, wait: 2),
            .started(5), .failed(34.9, wait: 4),
            .started(39), .failed(69, wait: 1),
            .failed(70, wait: 2), .failed(72, wait: 4),
            .started(76), .failed(200, wait: 1),
        ])
        // Without `steady`, a long run changes nothing.
        run(RetryBackoff(first: 1, longest: 60), [.started(0), .failed(1, wait: 1), .started(2), .failed(500, wait: 2)])
    }
}
