// SPDX-License-Identifier: MIT
import JukeboxCore
import XCTest

/// Drives `reduce` one event at a time and asserts, for every event, the whole new state and the
/// exact list of commands, in the style of a TCA `TestStore`: the caller states how the state
/// should change; any other change or any unexpected, missing or reordered command fails.
/// There is no unchecked step: a scene is set up with `send`s too, or by building the state.
/// Expected values are literals (see CoreLiterals.swift), never the core's own helpers; a failing
/// step prints what did happen as Swift, in the same vocabulary.
public final class CoreHarness {
    /// The state after the last event.
    public private(set) var state: State

    /// Starts from `state`.
    public init(_ state: State = State()) {
        self.state = state
    }

    /// Feeds `event`; `change` applies the expected changes to a copy of the previous state;
    /// `commands` is the exact expected output.
    public func send(_ event: Event, file: StaticString = #filePath, line: UInt = #line,
                     _ change: (inout State) -> Void = { _ in }, commands: [Command]) {
        var expected = state
        change(&expected)
        var actual = state
        let produced = reduce(&actual, event)
        XCTAssertEqual(produced, commands, "commands after \(event)", file: file, line: line)
        if actual != expected {
            XCTFail("state after \(event) differs:\n" + Self.diff(expected, actual), file: file, line: line)
        }
        if produced != commands || actual != expected {
            print("what happened, as Swift (check it before taking it):\n" + Self.source(from: state, to: actual, produced))
        }
        state = actual
    }

    /// The change and the commands of one step as the arguments of a `send`.
    public static func source(from before: State, to after: State, _ commands: [Command]) -> String {
        let change = CoreSource.change(from: before, to: after)
        var s = change.isEmpty ? "" : "{\n" + change.map { "    " + $0 + "\n" }.joined() + "}, "
        s += commands.isEmpty ? "commands: []" : "commands: [\n" + commands.map { "    " + CoreSource.of($0) + ",\n" }.joined() + "]"
        return s
    }

    /// Field-by-field description of how two states differ.
    public static func diff(_ expected: State, _ actual: State) -> String {
        let e = Mirror(reflecting: expected).children, a = Array(Mirror(reflecting: actual).children)
        var lines: [String] = []
        for (i, child) in e.enumerated() {
            let ev = String(describing: child.value), av = String(describing: a[i].value)
            if ev != av { lines.append("  \(child.label ?? "?"): expected \(ev)\n  \(String(repeating: " ", count: (child.label ?? "?").count)): actual   \(av)") }
        }
        if lines.isEmpty { return "  expected \(expected)\n  actual   \(actual)" }
        return lines.joined(separator: "\n")
    }
}

public extension Command {
    /// The snapshot a `persist` or `persistPlace` saves; nil for every other command (so a test
    /// that no save happens covers both).
    var savedSnapshot: Snapshot? {
        switch self {
        case .persist(let snapshot), .persistPlace(let snapshot): return snapshot
        default: return nil
        }
    }
}
