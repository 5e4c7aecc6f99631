// SPDX-License-Identifier: MIT
import JukeboxCore

/// What a driver did with one call.
public enum PanelUpdate: Sendable, Equatable {
    /// The panel is being initialised; call again at or after `retryAt` (monotonic seconds).
    case initialising(retryAt: Double)
    /// The changes were sent: `bytes` payload bytes in `writes` I2C transactions.
    case sent(bytes: Int, writes: Int)
    /// The panel already showed the frame; nothing was sent.
    case unchanged
}

/// A display driver: turns frames into I2C writes, sending only what changed.
///
/// Contract: a call never sleeps more than about 0.2 ms itself (long waits are returned as
/// `.initialising(retryAt:)`); its I2C transfers take what the bus needs (≤ 12 ms for a full 16x2
/// at 100 kHz, ≤ 25 ms for a full OLED frame at 400 kHz). A write error marks the panel for a full
/// re-initialisation at the next call and is thrown. Not thread-safe: one owner.
public protocol PanelDriver: AnyObject {
    /// The text grid the frames should have.
    var geometry: PanelLayout { get }
    /// Brings the panel towards showing `frame` at monotonic time `now` (seconds).
    func update(_ frame: DisplayFrame, now: Double) throws(DeviceError) -> PanelUpdate
    /// Forgets what the panel shows; the next `update` initialises it again and redraws everything.
    func invalidate()
}

extension PanelDriver {
    /// One I2C transaction of the driver's. A failed write leaves the panel in a state nobody
    /// knows, so the driver forgets what it shows (`invalidate`) before the error is thrown: the
    /// contract's "marks the panel for a full re-initialisation", defined once for every driver.
    func write(_ bytes: [UInt8], via transport: I2CTransport, address: UInt8) throws(DeviceError) {
        do {
            try transport.write(address: address, bytes: bytes)
        } catch {
            invalidate()
            throw error
        }
    }
}

extension DisplayFrame {
    /// The rows padded or cut to `geometry`, as arrays of characters.
    func grid(_ geometry: PanelLayout) -> [[Character]] {
        (0..<geometry.rows).map { index in
            var cells = index < rows.count ? Array(rows[index]) : []
            if cells.count > geometry.columns { cells.removeLast(cells.count - geometry.columns) }
            while cells.count < geometry.columns { cells.append(" ") }
            return cells
        }
    }
}
