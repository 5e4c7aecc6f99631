// SPDX-License-Identifier: MIT
@testable import JukeboxAudio
import XCTest

/// `SampleConversion.convert` from float: whatever a decoder hands over becomes a sample, never a trap.
final class SampleConversionTests: XCTestCase {
    func testNonFiniteFloatsBecomeSilenceOrFullScaleInIntegerSamples() {
        let source: [Float] = [.nan, -.nan, .infinity, -.infinity, 2, -2, 0.5]
        var int16 = [Int16](repeating: 7, count: source.count)
        var int32 = [Int32](repeating: 7, count: source.count)
        source.withUnsafeBytes { from in
            int16.withUnsafeMutableBytes { SampleConversion.convert(from.baseAddress!, from: .float32, to: .int16, $0.baseAddress!, samples: source.count) }
            int32.withUnsafeMutableBytes { SampleConversion.convert(from.baseAddress!, from: .float32, to: .int32, $0.baseAddress!, samples: source.count) }
        }
        XCTAssertEqual(int16, [0, 0, 32767, -32768, 32767, -32768, 16384])
        XCTAssertEqual(int32, [0, 0, 2_147_483_647, -2_147_483_648, 2_147_483_647, -2_147_483_648, 1_073_741_824])
    }
}
