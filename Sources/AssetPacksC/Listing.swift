import Foundation
import AssetPacks
import CAssetPacksHeader
#if canImport(Glibc)
import Glibc
#endif

/// What an `ap_packs *` or `ap_members *` points to: a snapshot's items,
/// the position, and the C strings of the item last handed out (freed when
/// the next one is).
final class Listing<Item> {
    private let items: [Item]
    private var next = 0
    private var strings: [UnsafeMutablePointer<CChar>] = []

    init(_ items: [Item]) { self.items = items }

    deinit { strings.forEach { free($0) } }

    /// The next item, with `strdup` keeping its strings until the next call.
    func advance() -> Item? {
        strings.forEach { free($0) }
        strings.removeAll(keepingCapacity: true)
        guard next < items.count else { return nil }
        defer { next += 1 }
        return items[next]
    }

    /// `s` as a C string valid until the next ``advance()``.
    func keep(_ s: String) -> UnsafePointer<CChar> {
        let copy = strdup(s)!
        strings.append(copy)
        return UnsafePointer(copy)
    }

    static func from(_ pointer: OpaquePointer?) -> Listing? {
        pointer.map { Unmanaged<Listing>.fromOpaque(UnsafeRawPointer($0)).takeUnretainedValue() }
    }

    static func release(_ pointer: OpaquePointer?) {
        guard let pointer else { return }
        Unmanaged<Listing>.fromOpaque(UnsafeRawPointer(pointer)).release()
    }

    func retainedPointer() -> OpaquePointer { OpaquePointer(Unmanaged.passRetained(self).toOpaque()) }

    /// An iterator's `_next`: checks the arguments, then fills `info`
    /// (whose `struct_size` is at `size`) from the next item with `fill`;
    /// returns 1, or 0 at the end.
    static func next<Info>(_ iterator: OpaquePointer?, _ info: UnsafeMutablePointer<Info>?, size: KeyPath<Info, Int>,
                           _ function: StaticString, fill: (Listing, Item, inout Info) -> Void) -> Int32 {
        call {
            guard let listing = from(iterator) else { throw Refusal.invalid(function, "iterator", "is NULL") }
            let info = try Argument.required(info, function, "info")
            try Argument.structSize(info.pointee[keyPath: size], MemoryLayout<Info>.size, function, "info")
            guard let item = listing.advance() else { return 0 }
            fill(listing, item, &info.pointee)
            return 1
        }
    }
}

@_cdecl("ap_packs_open")
public func ap_packs_open(_ container: OpaquePointer?, _ packs: UnsafeMutablePointer<OpaquePointer?>?) -> Int32 {
    call {
        let c = try Argument.container(container, "ap_packs_open")
        let out = try Argument.required(packs, "ap_packs_open", "packs")
        out.pointee = Listing(try c.manager.allAssetPacks()).retainedPointer()
        return AP_OK
    }
}

@_cdecl("ap_packs_next")
public func ap_packs_next(_ packs: OpaquePointer?, _ info: UnsafeMutablePointer<ap_pack_info>?) -> Int32 {
    Listing<AssetPack>.next(packs, info, size: \.struct_size, "ap_packs_next") { listing, pack, info in
        info.id = listing.keep(pack.id)
        info.version = listing.keep(pack.version)
        info.download_policy = listing.keep(pack.downloadPolicy.name)
        info.sha256 = listing.keep(pack.sha256)
        info.archive_size = pack.archiveSize
        info.member_count = pack.memberCount
        info.total_size = pack.totalSize
        info.install_time = Int64(pack.installDate.timeIntervalSince1970.rounded(.down))
    }
}

@_cdecl("ap_packs_free")
public func ap_packs_free(_ packs: OpaquePointer?) { Listing<AssetPack>.release(packs) }

@_cdecl("ap_members_open")
public func ap_members_open(_ container: OpaquePointer?, _ pack: UnsafePointer<CChar>?, _ directory: UnsafePointer<CChar>?,
                            _ members: UnsafeMutablePointer<OpaquePointer?>?) -> Int32 {
    call {
        let c = try Argument.container(container, "ap_members_open")
        let pack = try Argument.string(pack, "ap_members_open", "pack")
        let directory = try Argument.optionalString(directory, "ap_members_open", "directory")
        let out = try Argument.required(members, "ap_members_open", "members")
        out.pointee = Listing(try c.manager.members(inAssetPackWithID: pack, under: directory)).retainedPointer()
        return AP_OK
    }
}

@_cdecl("ap_members_next")
public func ap_members_next(_ members: OpaquePointer?, _ info: UnsafeMutablePointer<ap_member_info>?) -> Int32 {
    Listing<AssetMember>.next(members, info, size: \.struct_size, "ap_members_next") { listing, member, info in
        info.fill(member, pack: listing.keep(member.pack), path: listing.keep(member.path))
    }
}

@_cdecl("ap_members_free")
public func ap_members_free(_ members: OpaquePointer?) { Listing<AssetMember>.release(members) }
