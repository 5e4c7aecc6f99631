// SPDX-License-Identifier: MIT

// Idle power-off (the sleep timer: `Reduce+Sleep.swift`). A timer the shell runs (`startTimer`), so nothing
// here reads a clock: the countdown's seconds come from the `at` of each firing.
extension State {
    /// Seconds before idle power-off during which it counts down on the display and the status
    /// (or the whole wait, when that is shorter).
    public static let powerOffCountdown = 60.0

    /// Whether idle power-off is waiting: configured, and the player stopped or paused with no
    /// other program holding the sound (an interruption is someone else playing, not idleness;
    /// a player waiting for its device or its music wants to play).
    var idleForPowerOff: Bool {
        guard settings.idlePowerOff != nil else { return false }
        return phase == .stopped || phase == .paused
    }

    /// After every event: (re)arms idle power-off when the player became idle or a person did
    /// something (`activity`), disarms it when it plays.
    mutating func followIdleness(activity: Bool, _ step: inout Step) {
        guard idleForPowerOff, let wait = settings.idlePowerOff else {
            if idleArmed {
                idleArmed = false
                step.commands.append(.cancelTimer(.idlePowerOff))
                endCountdown()
            }
            return
        }
        guard !idleArmed || activity else { return }
        idleArmed = true
        endCountdown()
        step.commands.append(.startTimer(.idlePowerOff, after: max(0, wait - State.powerOffCountdown)))
    }

    /// The idle timer fired: start or continue the countdown, or run the power command at its end.
    mutating func idleTimerFired(at time: Double, _ step: inout Step) {
        guard idleArmed, idleForPowerOff, let wait = settings.idlePowerOff else { return }
        let end = powerOffAt ?? time + min(State.powerOffCountdown, wait)
        powerOffAt = end
        let left = end - time
        // A firing within half a second of the end is the end (the shell's timers are not exact).
        guard left > 0.5 else {
            endCountdown()
            // Nothing more until a person acts: a power command that fails (or a test's `true`)
            // does not run again and again.
            step.commands.append(.report("idle for \(TimeFormat.minutes(wait)): running \(settings.powerCommand.joined(separator: " "))"))
            step.forceSave = true
            step.commands.append(.runProgram(settings.powerCommand))
            return
        }
        message = State.countdownText(left)
        step.commands.append(.startTimer(.idlePowerOff, after: min(1, left)))
    }

    /// What the countdown shows with `left` seconds to go.
    static func countdownText(_ left: Double) -> String {
        "power off in \(Int(left.rounded())) s (any key cancels)"
    }

    // The countdown's message goes with it; another message (a skipped file) stays.
    private mutating func endCountdown() {
        if powerOffAt != nil, message?.hasPrefix("power off in ") == true { message = nil }
        powerOffAt = nil
    }
}
