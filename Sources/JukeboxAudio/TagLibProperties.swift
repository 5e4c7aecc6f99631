// SPDX-License-Identifier: MIT
import Glibc

/// TagLib 2's C property API (`taglib_property_get`), looked up at run time: TagLib 1.13's header
/// lacks it and Swift cannot test a C macro's value in `#if`, so one binary serves both versions.
enum TagLibProperties {
    private typealias Get = @convention(c) (UnsafeRawPointer?, UnsafePointer<CChar>?) -> UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?
    private typealias Free = @convention(c) (UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Void

    /// The DISCNUMBER property of an open `TagLib_File`, or nil (always nil on TagLib 1.x).
    static func discNumber(file: UnsafeRawPointer) -> Int? {
        let handle = dlopen(nil, RTLD_NOW)
        defer { if let handle { dlclose(handle) } }
        guard let getSymbol = dlsym(handle, "taglib_property_get"),
              let freeSymbol = dlsym(handle, "taglib_property_free") else { return nil }
        let get = unsafeBitCast(getSymbol, to: Get.self)
        let free = unsafeBitCast(freeSymbol, to: Free.self)
        guard let values = get(file, "DISCNUMBER") else { return nil }
        defer { free(values) }
        guard let first = values[0] else { return nil }
        return TagReader.leadingNumber(String(cString: first))
    }
}
