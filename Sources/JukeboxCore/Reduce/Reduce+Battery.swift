// SPDX-License-Identifier: MIT

// The battery: a warning once at the low level, and at the critical level the place saved and the
// box powered off cleanly (instead of dying mid-write). Readings are facts from the monitor; every
// decision is here.
extension State {
    /// The message while the battery is low (the display and the status show it).
    static func batteryLowText(_ percent: Double?) -> String {
        percent.map { "battery low: \(Int($0.rounded())) %" } ?? "battery low"
    }
    static let batteryEmptyText = "battery empty: saving and powering off"

    /// The low-battery pin changed: the last reading again with the pin's word. A pin let go while
    /// the power-off it asked for did not happen (a charger plugged into a PowerBoost lets LBO go)
    /// re-arms it, as charging does.
    mutating func batteryPin(low: Bool, _ step: inout Step) {
        let was = battery.pinLow
        battery.pinLow = low
        var reading = battery.reading ?? BatteryReading()
        reading.low = low
        if was, !low, battery.poweringOff {
            battery.poweringOff = false
            if message == State.batteryEmptyText { message = nil }
        }
        batteryReading(reading, &step)
    }

    mutating func batteryReading(_ measured: BatteryReading, _ step: inout Step) {
        // A chip's reading does not know the pin: the pin's word stands until the pin changes.
        var reading = measured
        reading.low = measured.low || battery.pinLow
        battery.reading = reading
        guard let rules = settings.battery else { return }
        let charging = reading.charging == true
        if charging {
            // Charging: every warning may come again, and a power-off that did not happen is over.
            battery.warned = false
            battery.poweringOff = false
            if message?.hasPrefix("battery ") == true { message = nil }
            return
        }
        let critical = reading.low || (reading.percent.map { $0 <= rules.criticalPercent } ?? false)
        if critical {
            guard !battery.poweringOff else { return }
            battery.poweringOff = true
            battery.warned = true
            // As a pause: the place is kept, and saved before the power goes.
            if phase == .playing { apply(.pause, &step) }
            message = State.batteryEmptyText
            step.forceSave = true
            step.commands.append(.report(State.batteryEmptyText + " (" + (reading.low ? "low-battery pin" : "\(Int((reading.percent ?? 0).rounded())) %") + "): running " + settings.powerCommand.joined(separator: " ")))
            step.commands.append(.runProgram(settings.powerCommand))
            return
        }
        guard let percent = reading.percent else { return }
        if percent > rules.warnPercent + BatterySettings.rearmMargin {
            battery.warned = false
            if message?.hasPrefix("battery low") == true { message = nil }
            return
        }
        guard percent <= rules.warnPercent, !battery.warned else { return }
        battery.warned = true
        message = State.batteryLowText(percent)
        step.commands.append(.report(State.batteryLowText(percent) + ": charge the box soon"))
        warningChime(&step)
    }
}
