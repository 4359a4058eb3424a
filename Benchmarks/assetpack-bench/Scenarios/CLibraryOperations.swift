import AssetPacksC

/// A container opened through libassetpacks' C API (`ap_open`), closed with its owner.
final class CLibraryContainer {
    let handle: OpaquePointer

    init(path: String) throws {
        var handle: OpaquePointer?
        let rc = ap_open(path, 0, &handle)
        guard rc == 0, let handle else { throw PeerError("ap_open \(path): \(String(cString: ap_last_error_message()))") }
        self.handle = handle
    }

    deinit { ap_close(handle) }
}

/// `ap_read` + `ap_release` through the C API, as a C program calls them:
/// C-string pack and paths, the borrowed bytes (summed when consuming),
/// then released.
struct CLibraryRead: Operation {
    let container: CLibraryContainer
    let pack: CStrings
    let paths: CStrings
    let consume: Bool

    @inline(__always)
    mutating func run(_ item: Int) throws -> Int {
        var bytes: UnsafeRawPointer?
        var size = 0
        var held: OpaquePointer?
        let rc = ap_read(container.handle, pack[0], paths[item], &bytes, &size, &held)
        guard rc == 0, let bytes else { throw PeerError("ap_read: \(String(cString: ap_last_error_message()))") }
        let result = consume ? Int(truncatingIfNeeded: sumBytes(bytes, size)) : size
        ap_release(held)
        return result
    }
}
