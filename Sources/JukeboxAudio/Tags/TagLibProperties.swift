// SPDX-License-Identifier: MIT
import Glibc

/// TagLib 2's C property API (`taglib_property_get`, `taglib_complex_property_get`), looked up at
/// run time: TagLib 1.13's header lacks it and Swift cannot test a C macro's value in `#if`, so one
/// binary serves both versions.
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

    // TagLib 2's `TagLib_Complex_Property_Picture_Data` (tag_c.h): four C strings, then the size.
    private struct PictureData {
        var mimeType: UnsafeMutablePointer<CChar>?
        var description: UnsafeMutablePointer<CChar>?
        var pictureType: UnsafeMutablePointer<CChar>?
        var data: UnsafeMutablePointer<CChar>?
        var size: UInt32
    }
    private typealias ComplexGet = @convention(c) (UnsafeRawPointer?, UnsafePointer<CChar>?) -> UnsafeMutableRawPointer?
    private typealias PictureFrom = @convention(c) (UnsafeMutableRawPointer?, UnsafeMutableRawPointer?) -> Void
    private typealias ComplexFree = @convention(c) (UnsafeMutableRawPointer?) -> Void

    /// Whether the installed TagLib reads embedded pictures (TagLib 2's complex properties).
    static var readsPictures: Bool {
        let handle = dlopen(nil, RTLD_NOW)
        defer { if let handle { dlclose(handle) } }
        let names: [String] = ["taglib_complex_property_get", "taglib_picture_from_complex_property", "taglib_complex_property_free"]
        return names.allSatisfy { (name: String) in dlsym(handle, name) != nil }
    }

    /// The first embedded picture of an open `TagLib_File` (its MIME type and bytes), nil when it
    /// has none, when it is larger than `limit` bytes, or on TagLib 1.x.
    static func picture(file: UnsafeRawPointer, limit: Int) -> EmbeddedPicture? {
        let handle = dlopen(nil, RTLD_NOW)
        defer { if let handle { dlclose(handle) } }
        guard let getSymbol = dlsym(handle, "taglib_complex_property_get"),
              let fromSymbol = dlsym(handle, "taglib_picture_from_complex_property"),
              let freeSymbol = dlsym(handle, "taglib_complex_property_free") else { return nil }
        let get = unsafeBitCast(getSymbol, to: ComplexGet.self)
        let from = unsafeBitCast(fromSymbol, to: PictureFrom.self)
        let free = unsafeBitCast(freeSymbol, to: ComplexFree.self)
        guard let properties = get(file, "PICTURE") else { return nil }
        defer { free(properties) }
        var picture = PictureData(mimeType: nil, description: nil, pictureType: nil, data: nil, size: 0)
        withUnsafeMutableBytes(of: &picture) { from(properties, $0.baseAddress) }
        // The data lives in `properties`: copied before they are freed.
        guard let data = picture.data, picture.size > 0, Int(picture.size) <= limit else { return nil }
        let bytes = [UInt8](UnsafeRawBufferPointer(start: data, count: Int(picture.size)))
        let mime = picture.mimeType.map { String(cString: $0) } ?? ""
        return EmbeddedPicture(mimeType: mime, bytes: bytes)
    }
}
