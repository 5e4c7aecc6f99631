// SPDX-License-Identifier: MIT
import JukeboxCore

/// What the player says to an interactive `bluetoothctl` to pair one device, line by line
/// (pure: `BluetoothPairSession` feeds it bluetoothctl's lines and the time, and writes what it
/// answers). The session has an agent, which a one-shot bluetoothctl has not: bluetoothctl
/// registers one by itself when it runs interactive (capability KeyboardDisplay) and BlueZ asks
/// the agent of the client that called `Pair`, so a speaker that wants a PIN code (legacy
/// pairing), a passkey or a confirmation is answered here (bluez's `client/agent.c`: each
/// request prints `Request PIN code`, `Request passkey`, `Request confirmation` or `Request
/// authorization` on a line of its own, then holds a prompt for the answer).
///
/// The steps: wait for `Agent registered` (bluetoothctl reached bluetoothd), then `select
/// ADAPTER` (when the config chose one), `info ADDRESS` and `version` (whose `Version …` line
/// marks the end of what `info` said); paired already → done; unknown → `scan on` until the
/// device is named, then `scan off`; then `pair ADDRESS`, answering the agent's requests, until
/// `Pairing successful` or `Failed to pair: …`. Each phase has a bound (`limit`).
public struct BluetoothPairDialogue: Equatable, Sendable {
    /// Where the dialogue is.
    public enum Phase: Equatable, Sendable {
        /// Waiting for bluetoothctl to reach bluetoothd and register its agent.
        case starting
        /// `select`, `info` sent; waiting for `version`'s line.
        case checking
        /// `scan on` sent; waiting for the device to be named.
        case scanning
        /// `pair` sent; answering the agent's requests.
        case pairing
        /// A reply was given.
        case ended
    }

    /// What to do after a line.
    public enum Step: Equatable, Sendable {
        /// Write these lines to bluetoothctl (nothing: keep reading).
        case send([String])
        /// The dialogue is over: this is the reply (bluetoothctl is then ended).
        case finish(String)
    }

    /// Seconds each phase may last.
    public struct Limits: Equatable, Sendable {
        public var start: Int
        public var scan: Int
        public var pair: Int
        public init(start: Int, scan: Int, pair: Int) {
            self.start = start
            self.scan = scan
            self.pair = pair
        }
        /// The one-shot steps' bounds: `info`'s for reaching bluetoothd and for `info`, the
        /// discovery's, `pair`'s (together `BluetoothControl.longest` less its slack).
        public static let standard = Limits(start: BluetoothControl.infoLimit, scan: BluetoothControl.scanLimit, pair: BluetoothControl.limit)
    }

    public let address: String
    public let pin: String?
    public let adapter: String?
    public let limits: Limits
    public private(set) var phase = Phase.starting
    /// `info` named the device (nil: not yet said).
    private var known: Bool?
    private var paired = false
    /// bluetoothctl's last complaint (`No default controller available`, `Failed to start discovery: …`).
    private var said: String?
    private var scanStarted = 0.0
    private var found = ""
    /// The agent asked for a PIN or passkey and was given `pin`.
    private var pinGiven = false
    /// A `Request confirmation` waits for its passkey (in the prompt that follows).
    private var confirming = false
    /// The passkey shown for confirmation that was not the PIN given (answered `no`).
    private var mismatched: String?

    /// `pin`: checked by the language (`BluetoothPIN`); `adapter`: an address (the config's).
    public init(address: String, pin: String?, adapter: String?, limits: Limits = .standard) {
        self.address = address
        self.pin = pin
        self.adapter = adapter
        self.limits = limits
    }

    /// Seconds the current phase may last before `timedOut`.
    public var limit: Int {
        switch phase {
        case .starting, .checking: return limits.start
        case .scanning: return limits.scan
        case .pairing: return limits.pair
        case .ended: return 0
        }
    }

    /// One line bluetoothctl printed (colours and its prompt taken off); `now`: monotonic seconds.
    public mutating func take(_ line: String, now: Double) -> Step {
        // An agent's prompt stays at the front of the line printed after its answer
        // (`[agent] Enter PIN code: Failed to pair: …`) when nothing moved the cursor back.
        if line.hasPrefix("[agent] "), let colon = line.firstRange(of: ": ") {
            if case .send(let answer) = prompt(line), !answer.isEmpty { return .send(answer) }
            let rest = String(line[colon.upperBound...].drop { $0 == " " })
            return rest.isEmpty ? .send([]) : take(rest, now: now)
        }
        if line.hasPrefix("No default controller available") { said = line }
        switch phase {
        case .starting:
            if line == "Agent registered" || line == "Agent is already registered" {
                phase = .checking
                let select: [String] = adapter.map { ["select " + $0] } ?? []
                return .send(select + ["info " + address, "version"])
            }
            if line.hasPrefix("Failed to register agent") {
                return end("error: bluetooth pair: bluetoothctl could not register its agent (" + inert(line) + ")")
            }
        case .checking:
            if let adapter, line == "Controller \(adapter) not available" {
                return end("error: bluetooth pair: the adapter \(adapter) (the config's bluetooth.adapter) is not one of this box's (`bluetoothctl list`)")
            }
            if line.hasPrefix("Device " + address) { known = !line.hasSuffix("not available") }
            if line == "Paired: yes" { paired = true }
            guard line.hasPrefix("Version ") else { break }
            if known == true && paired { return end("ok bluetooth pair: already paired") }
            if known == true {
                phase = .pairing
                return .send(["pair " + address])
            }
            if let said, known == nil { return end("error: bluetooth pair: " + inert(said)) }
            phase = .scanning
            scanStarted = now
            return .send(["scan on"])
        case .scanning:
            if line.hasPrefix("Failed to start discovery") {
                return end("error: bluetooth pair: the discovery could not start (bluetoothctl: " + inert(line) + ")")
            }
            if line.hasPrefix("[NEW] Device " + address) || line.hasPrefix("[CHG] Device " + address) {
                found = " (found after " + BluetoothControl.tenths(now - scanStarted) + " s of scanning)"
                phase = .pairing
                return .send(["scan off", "pair " + address])
            }
        case .pairing:
            return pairing(line)
        case .ended:
            break
        }
        return .send([])
    }

    /// What bluetoothctl printed without ending the line: an agent's prompt (`[agent] Confirm
    /// passkey 123456 (yes/no):`) waits for the answer there.
    public mutating func prompt(_ text: String) -> Step {
        guard phase == .pairing, confirming, let range = text.firstRange(of: "Confirm passkey ") else { return .send([]) }
        let digits = text[range.upperBound...].prefix { $0.isASCII && $0.isNumber }
        guard !digits.isEmpty else { return .send([]) }
        confirming = false
        // The passkey a speaker with a display shows: confirmed when it is the PIN given, or
        // when none was given (what "Just Works" would do with no question at all).
        guard let pin, Int(pin) != Int(digits) else { return .send(["yes"]) }
        mismatched = String(digits)
        return .send(["no"])
    }

    /// The reply when the current phase outlived `limit`.
    public mutating func timedOut() -> String {
        let was = phase
        phase = .ended
        switch was {
        case .starting:
            return "error: bluetooth pair: bluetoothctl did not reach bluetoothd within \(limits.start) s (is bluetooth.service running?)"
        case .checking:
            return "error: bluetooth pair: bluetoothctl did not answer within \(limits.start) s" + saidPart
        case .scanning:
            return "error: bluetooth pair: \(address) was not found in \(limits.scan) s of scanning; is it on, near and in pairing mode?" + saidPart
        case .pairing:
            return "error: bluetooth pair: \(address) did not finish pairing within \(limits.pair) s; is it on, near and in pairing mode?"
        case .ended:
            return "error: bluetooth pair: ended"
        }
    }

    /// The reply when bluetoothctl ended before the dialogue did.
    public mutating func ended() -> String {
        phase = .ended
        return "error: bluetooth pair: bluetoothctl ended without pairing" + saidPart
    }

    private mutating func pairing(_ line: String) -> Step {
        switch line {
        case "Request PIN code":
            guard let pin else {
                return end("error: bluetooth pair: \(address) asks for a PIN code: bluetooth pair \(address) pin DIGITS (often 0000)")
            }
            pinGiven = true
            return .send([pin])
        case "Request passkey":
            guard let pin, pin.utf8.count <= 6 else {
                return end("error: bluetooth pair: \(address) asks for a passkey: bluetooth pair \(address) pin DIGITS (6 at most)")
            }
            pinGiven = true
            return .send([pin])
        case "Request confirmation":
            confirming = true
            return .send([])
        case "Request authorization":
            // "Just Works" started by the device: the owner asked for this pair.
            return .send(["yes"])
        case "Pairing successful":
            return end("ok bluetooth pair: Pairing successful" + found)
        default:
            break
        }
        if line.hasPrefix("Confirm passkey ") { return prompt(line) }
        if line == "Device \(address) not available" {
            return end("error: bluetooth pair: BlueZ no longer knows \(address) (" + inert(line) + ")")
        }
        guard line.hasPrefix("Failed to pair") else { return .send([]) }
        let failed = inert(line)
        if line.contains("org.bluez.Error.AlreadyExists") { return end("ok bluetooth pair: already paired") }
        let refused = ["AuthenticationFailed", "AuthenticationRejected", "AuthenticationCanceled"].contains { line.contains($0) }
        if refused, let mismatched {
            return end("error: bluetooth pair: \(address) showed the passkey \(mismatched), not the PIN given: " + failed)
        }
        if refused, pinGiven { return end("error: bluetooth pair: \(address) refused the PIN (is it the right one?): " + failed) }
        if refused { return end("error: bluetooth pair refused by the device: " + failed) }
        if line.contains("ConnectionAttemptFailed") || line.contains("Page Timeout") {
            return end("error: bluetooth pair: the device did not answer; is it on, near and in pairing mode? " + failed)
        }
        return end("error: bluetooth pair failed: " + failed)
    }

    private var saidPart: String { said.map { " (bluetoothctl: " + inert($0) + ")" } ?? "" }

    private func inert(_ text: String) -> String { DisplayText.inert(text, maxBytes: 200) }

    private mutating func end(_ reply: String) -> Step {
        phase = .ended
        return .finish(reply)
    }
}
