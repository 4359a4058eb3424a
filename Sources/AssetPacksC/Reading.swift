import Foundation
import AssetPacks
import CAssetPacksHeader
#if canImport(Glibc)
import Glibc
#endif

// An `ap_data *` is a retained reference to what keeps the bytes valid:
// the archive mapping's pages for a stored member (shared with every other
// reader of that archive), the inflated buffer for a deflated one.

@_cdecl("ap_read")
public func ap_read(_ container: OpaquePointer?, _ pack: UnsafePointer<CChar>?, _ path: UnsafePointer<CChar>?,
                    _ data: UnsafeMutablePointer<UnsafeRawPointer?>?, _ size: UnsafeMutablePointer<Int>?,
                    _ handle: UnsafeMutablePointer<OpaquePointer?>?) -> Int32 {
    call {
        let c = try Argument.container(container, "ap_read")
        let pack = try Argument.pack(pack, "ap_read")
        let path = try Argument.string(path, "ap_read", "path")
        let data = try Argument.required(data, "ap_read", "data")
        let size = try Argument.required(size, "ap_read", "size")
        let handle = try Argument.required(handle, "ap_read", "handle")
        let borrowed = try c.manager.borrowedContents(at: path, searchingInAssetPackWithID: pack)
        data.pointee = borrowed.bytes.baseAddress ?? UnsafeRawPointer(emptyCString)
        size.pointee = borrowed.bytes.count
        handle.pointee = OpaquePointer(Unmanaged.passRetained(borrowed.owner).toOpaque())
        return AP_OK
    }
}

@_cdecl("ap_release")
public func ap_release(_ handle: OpaquePointer?) {
    guard let handle else { return }
    Unmanaged<AnyObject>.fromOpaque(UnsafeRawPointer(handle)).release()
}

@_cdecl("ap_copy")
public func ap_copy(_ container: OpaquePointer?, _ pack: UnsafePointer<CChar>?, _ path: UnsafePointer<CChar>?,
                    _ buffer: UnsafeMutableRawPointer?, _ capacity: Int, _ size: UnsafeMutablePointer<Int>?) -> Int32 {
    call {
        let c = try Argument.container(container, "ap_copy")
        let pack = try Argument.pack(pack, "ap_copy")
        let path = try Argument.string(path, "ap_copy", "path")
        let size = try Argument.required(size, "ap_copy", "size")
        let need = Int(try c.manager.member(at: path, searchingInAssetPackWithID: pack).size)
        guard let buffer else {
            guard capacity == 0 else { throw Refusal.invalid("ap_copy", "buffer", "is NULL with a capacity of \(capacity)") }
            size.pointee = need
            return AP_OK
        }
        // Checked before reading, and again after: an update between the
        // two may have changed the size.
        var data: Data?
        if need <= capacity { data = try c.manager.contents(at: path, searchingInAssetPackWithID: pack, verifyingChecksum: true) }
        guard let data, data.count <= capacity else {
            size.pointee = data?.count ?? need
            throw Refusal(code: AP_ERANGE, message: "ap_copy: \(path) is \(data?.count ?? need) bytes, the buffer \(capacity)",
                          pack: pack, member: path)
        }
        data.copyBytes(to: buffer.assumingMemoryBound(to: UInt8.self), count: data.count)
        size.pointee = data.count
        return AP_OK
    }
}

/// The C strings of the thread's last `ap_stat`, kept until its next one.
private final class StatStrings {
    var pack: UnsafeMutablePointer<CChar>?
    var path: UnsafeMutablePointer<CChar>?

    func replace(pack newPack: String, path newPath: String) {
        free(pack)
        free(path)
        pack = strdup(newPack)
        path = strdup(newPath)
    }

    deinit {
        free(pack)
        free(path)
    }

    private static let perThread = ThreadLocal { StatStrings() }

    static var current: StatStrings { perThread.current }
}

@_cdecl("ap_stat")
public func ap_stat(_ container: OpaquePointer?, _ pack: UnsafePointer<CChar>?, _ path: UnsafePointer<CChar>?,
                    _ info: UnsafeMutablePointer<ap_member_info>?) -> Int32 {
    call {
        let c = try Argument.container(container, "ap_stat")
        let pack = try Argument.pack(pack, "ap_stat")
        let path = try Argument.string(path, "ap_stat", "path")
        let info = try Argument.required(info, "ap_stat", "info")
        try Argument.structSize(info.pointee.struct_size, MemoryLayout<ap_member_info>.size, "ap_stat", "info")
        let member = try c.manager.member(at: path, searchingInAssetPackWithID: pack)
        let strings = StatStrings.current
        strings.replace(pack: member.pack, path: member.path)
        info.pointee.fill(member, pack: strings.pack!, path: strings.path!)
        return AP_OK
    }
}

extension ap_member_info {
    /// Fills the fields after `struct_size` from `member`, with its strings at `pack` and `path`.
    mutating func fill(_ member: AssetMember, pack: UnsafePointer<CChar>, path: UnsafePointer<CChar>) {
        self.pack = pack
        self.path = path
        size = member.size
        stored_size = member.storedSize
        method = member.method == .deflated ? AP_METHOD_DEFLATED : AP_METHOD_STORED
        crc32 = member.crc32
    }
}
