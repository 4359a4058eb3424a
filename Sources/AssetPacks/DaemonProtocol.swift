import AssetSystem

/// The descriptor daemon's wire format, spoken over a Unix stream socket.
///
/// Every message is a 16-byte header followed by a body; integers are
/// little-endian, strings UTF-8.
///
/// **Request** (client → daemon):
///
/// | offset | size | field |
/// |---|---|---|
/// | 0  | 4 | magic `APDQ` (bytes `41 50 44 51`) |
/// | 4  | 2 | protocol version, 1 |
/// | 6  | 2 | kind: 1 = descriptor, 2 = download, 3 = batch |
/// | 8  | 4 | body length, at most ``maximumRequestBody`` |
/// | 12 | 2 | flags: descriptor and batch: bit 0 = standalone, bit 1 = shared position, bit 2 = the client keeps shared descriptions (only with bit 1); download: bit 0 = wait, bit 1 = discretionary; other bits 0 |
/// | 14 | 2 | pack ID length in bytes, 0 for "search every pack" (descriptor and batch) |
/// | 16 | … | descriptor: the pack ID, then the member path (the rest of the body); download: see ``DaemonDownloadRequest``; batch: see ``DaemonBatchRequest`` |
///
/// **Reply** (daemon → client), one per request, in order:
///
/// | offset | size | field |
/// |---|---|---|
/// | 0  | 4 | magic `APDR` (bytes `41 50 44 52`) |
/// | 4  | 2 | protocol version, 1 |
/// | 6  | 2 | status: 0 = success, else an ``AssetPackError/Code`` |
/// | 8  | 4 | body length, at most ``maximumReplyBody`` |
/// | 12 | 4 | reserved, 0 |
///
/// With the shared-position flag, a stored member's descriptor may be an
/// open description the daemon keeps for this connection and hands out
/// for every member of the same archive, as a process's own handouts
/// share one (``AssetStore/descriptor(for:inPack:options:)`` without
/// `.ownOffset`): its file position is set to the member's start when it
/// is handed out and is the same for all of them, so the client reads with
/// `pread` at the offset. Without the flag, every descriptor is a new open
/// description with a file position of its own. The flag changes nothing
/// for memory files, each of which is a new open description.
///
/// With the keep flag as well, the client keeps each shared description it
/// is passed, in the slot (1 to 4) its reply names, until a later reply
/// passes another description for that slot or the connection ends; a
/// later reply for a member of the same archive then passes nothing and
/// names the slot, and the client duplicates what it keeps there and sets
/// the position to the member's start itself (``DaemonReply/Success``).
/// The descriptor the caller gets is the same as without the flag — a new
/// descriptor of the connection's description — but no descriptor crosses
/// the socket for it.
///
/// A success carries the descriptor (`SCM_RIGHTS`, on the reply's first
/// byte) and a 32-byte body: offset (i64), length (i64), size of the file
/// behind the descriptor (i64), source (u8: 0 archive, 1 memory file), the
/// kept slot (u8: 0 none, 1–4 with the keep flag), whether the reply reuses
/// that slot instead of passing a descriptor (u8: 0 or 1), a zero byte,
/// and the CRC-32 the member's bytes must have (u32).
///
/// A failure's status is the ``AssetPackError/Code`` of the error it
/// carries — one table for the Swift API, the wire and the C library. It
/// carries no descriptor; its body is a number (i64: the `errno` or LMDB
/// code for `system` and `index`, else 0), a field count (u16), and that
/// many fields, each a u16 length and UTF-8 bytes; the last field is always
/// the daemon's one-line message. The fields before it, per code:
///
/// | code | fields |
/// |---|---|
/// | `assetPackNotFound` (1) | ID |
/// | `fileNotFound` (2) | path, and the pack when one was named |
/// | `ambiguousPath` (3) | path, then each pack |
/// | `invalidPackID` (4), `invalidPath` (5) | the value, the reason (an ``AssetPackError/Reason`` raw value, in decimal) |
/// | `corruptRecord` (6) | pack, reason, and the member when known |
/// | `archiveMissing` (7) | pack, path |
/// | `badArchive` (8) | archive, member path (empty when none), reason |
/// | `system` (9), `index` (10) | the path, when known |
/// | `limitExceeded` (24) | archive, member path (empty when none), reason, pack (empty when none) |
/// | refusals (64–68), `daemonFailed` (69) | none |
///
/// A download request (kind 2) is answered as ``DaemonDownloadRequest``
/// describes; a daemon that predates it answers `malformedRequest`
/// ("unknown request kind 2") and closes the connection, which tells a
/// client to download in its own process.
///
/// A batch request (kind 3) is answered with one reply per member, in
/// order, as ``DaemonBatchRequest`` describes.
///
/// Requests may be pipelined: a client may send several before reading,
/// and the replies come in the order of the requests.
///
/// A request whose header is wrong (magic, version, kind, flags, lengths)
/// gets a failure reply and the connection closes, since the stream can no
/// longer be framed. A request whose header is right but whose body is not
/// (bad UTF-8) gets a failure reply and the connection stays open.
enum DaemonProtocol {
    /// The protocol version this build speaks.
    static let version: UInt16 = 1
    /// The size of request and reply headers.
    static let headerSize = 16
    /// The longest request body the daemon reads: a 128-byte pack ID and a
    /// path of up to 8064 bytes.
    static let maximumRequestBody = 8192
    /// The longest reply body a client reads.
    static let maximumReplyBody = 65536

    static let requestMagic: UInt32 = 0x5144_5041   // "APDQ"
    static let replyMagic: UInt32 = 0x5244_5041     // "APDR"
    static let descriptorKind: UInt16 = 1
    static let downloadKind: UInt16 = 2
    /// A batch: several members of one pack (or searched for) in one request.
    static let batchKind: UInt16 = 3
    /// The most members one batch request may name.
    static let maximumBatch = 64
    static let standaloneFlag: UInt16 = 1
    /// The client accepts a descriptor that shares its open description
    /// (and file position) with the connection's others of the same archive.
    static let sharedFlag: UInt16 = 2
    /// With ``sharedFlag``: the client keeps the shared descriptions it is
    /// passed, so that a reply may name a kept one instead of passing it.
    static let keepFlag: UInt16 = 4
    /// Shared descriptions one connection keeps at most, and so the highest
    /// slot a reply names.
    static let keptSlots = 4
    static let waitFlag: UInt16 = 1
    static let discretionaryFlag: UInt16 = 2
    static let successBodySize = 32
    /// The status of a success reply.
    static let success: UInt16 = 0

    /// `request` (encoded, kind 1 or 3) without `flags` (``sharedFlag``,
    /// ``keepFlag``), for a daemon that predates them.
    static func without(_ flags: UInt16, in request: [UInt8]) -> [UInt8] {
        var out = request
        out[12] &= ~UInt8(truncatingIfNeeded: flags)
        return out
    }

    /// A request: its header (`kind`, `flags`, the pack ID's length in the
    /// body) and `body`.
    static func request(kind: UInt16, flags: UInt16, packLength: Int, body: [UInt8]) -> [UInt8] {
        var out = [UInt8]()
        out.reserveCapacity(headerSize + body.count)
        appendRequestHeader(to: &out, kind: kind, flags: flags, bodyLength: body.count, packLength: packLength)
        out.append(contentsOf: body)
        return out
    }

    /// Appends a request header, written on the stack and appended at once
    /// (an append per field cost a client more than the rest of a request).
    static func appendRequestHeader(to out: inout [UInt8], kind: UInt16, flags: UInt16, bodyLength: Int, packLength: Int) {
        var header: (UInt64, UInt64) = (0, 0)
        withUnsafeMutableBytes(of: &header) { h in
            h.storeBytes(of: requestMagic.littleEndian, toByteOffset: 0, as: UInt32.self)
            h.storeBytes(of: version.littleEndian, toByteOffset: 4, as: UInt16.self)
            h.storeBytes(of: kind.littleEndian, toByteOffset: 6, as: UInt16.self)
            h.storeBytes(of: UInt32(truncatingIfNeeded: bodyLength).littleEndian, toByteOffset: 8, as: UInt32.self)
            h.storeBytes(of: flags.littleEndian, toByteOffset: 12, as: UInt16.self)
            h.storeBytes(of: UInt16(truncatingIfNeeded: packLength).littleEndian, toByteOffset: 14, as: UInt16.self)
        }
        withUnsafeBytes(of: header) { out.append(contentsOf: $0) }
    }
}

/// One request: which member, in which pack, how.
struct DaemonRequest: Sendable, Equatable {
    /// The pack to look in, or `nil` to search every installed pack.
    var pack: String?
    /// The member's path.
    var path: String
    /// Whether to ask for a standalone descriptor (offset 0, exactly the member).
    var standalone: Bool
    /// Whether a stored member's descriptor may share its open description
    /// with the connection's others of the same archive (``DaemonProtocol/sharedFlag``).
    var shared: Bool
    /// Whether the client keeps the shared descriptions it is passed
    /// (``DaemonProtocol/keepFlag``; only with ``shared``).
    var keeps: Bool

    /// A request for the member at `path`, in `pack` or in whichever
    /// installed pack holds it.
    init(pack: String?, path: String, standalone: Bool = false, shared: Bool = false, keeps: Bool = false) {
        self.pack = pack
        self.path = path
        self.standalone = standalone
        self.shared = shared
        self.keeps = keeps && shared
    }

    /// The request's header flags.
    static func flags(standalone: Bool, shared: Bool, keeps: Bool = false) -> UInt16 {
        (standalone ? DaemonProtocol.standaloneFlag : 0) | (shared ? DaemonProtocol.sharedFlag : 0)
            | (shared && keeps ? DaemonProtocol.keepFlag : 0)
    }

    /// The request's bytes: header and body.
    var encoded: [UInt8] {
        let packLength = pack?.utf8.count ?? 0
        let body = packLength + path.utf8.count
        var out = [UInt8]()
        out.reserveCapacity(DaemonProtocol.headerSize + body)
        DaemonProtocol.appendRequestHeader(to: &out, kind: DaemonProtocol.descriptorKind, flags: Self.flags(standalone: standalone, shared: shared, keeps: keeps),
                                           bodyLength: body, packLength: packLength)
        if let pack { out.append(contentsOf: pack.utf8) }
        out.append(contentsOf: path.utf8)
        return out
    }

    /// What a request header says: how long the body is, or why the
    /// connection cannot go on.
    enum Header: Equatable {
        case body(length: Int, packLength: Int, standalone: Bool, shared: Bool, keeps: Bool)
        /// A download request (``DaemonDownloadRequest``).
        case download(length: Int, packLength: Int, wait: Bool, discretionary: Bool)
        /// A batch request (``DaemonBatchRequest``).
        case batch(length: Int, packLength: Int, standalone: Bool, shared: Bool, keeps: Bool)
        case refused(AssetPackError.Code, String)
    }

    /// Checks a request header (``DaemonProtocol/headerSize`` bytes).
    static func parseHeader(_ h: UnsafeRawBufferPointer) -> Header {
        precondition(h.count >= DaemonProtocol.headerSize)
        guard h.littleEndian(UInt32.self, at: 0) == DaemonProtocol.requestMagic else {
            return .refused(.malformedRequest, "not a descriptor daemon request (bad magic)")
        }
        let version = h.littleEndian(UInt16.self, at: 4)
        guard version == DaemonProtocol.version else {
            return .refused(.unsupportedVersion, "protocol version \(version) is not supported (this daemon speaks \(DaemonProtocol.version))")
        }
        let kind = h.littleEndian(UInt16.self, at: 6)
        guard kind == DaemonProtocol.descriptorKind || kind == DaemonProtocol.downloadKind || kind == DaemonProtocol.batchKind else {
            return .refused(.malformedRequest, "unknown request kind \(kind)")
        }
        let length = Int(h.littleEndian(UInt32.self, at: 8))
        guard length <= DaemonProtocol.maximumRequestBody else {
            return .refused(.requestTooLarge, "request body of \(length) bytes exceeds the limit of \(DaemonProtocol.maximumRequestBody)")
        }
        let flags = h.littleEndian(UInt16.self, at: 12)
        let known = kind == DaemonProtocol.downloadKind ? DaemonProtocol.waitFlag | DaemonProtocol.discretionaryFlag
                                                        : DaemonProtocol.standaloneFlag | DaemonProtocol.sharedFlag | DaemonProtocol.keepFlag
        guard flags & ~known == 0 else { return .refused(.malformedRequest, "unknown flags \(flags)") }
        if kind != DaemonProtocol.downloadKind && flags & DaemonProtocol.keepFlag != 0 && flags & DaemonProtocol.sharedFlag == 0 {
            return .refused(.malformedRequest, "flags \(flags): keeping descriptions (4) without the shared position (2)")
        }
        let packLength = Int(h.littleEndian(UInt16.self, at: 14))
        guard packLength <= length else {
            return .refused(.malformedRequest, "pack ID length \(packLength) exceeds the body length \(length)")
        }
        if kind == DaemonProtocol.downloadKind {
            return .download(length: length, packLength: packLength, wait: flags & DaemonProtocol.waitFlag != 0,
                             discretionary: flags & DaemonProtocol.discretionaryFlag != 0)
        }
        let standalone = flags & DaemonProtocol.standaloneFlag != 0
        let shared = flags & DaemonProtocol.sharedFlag != 0
        let keeps = flags & DaemonProtocol.keepFlag != 0
        if kind == DaemonProtocol.batchKind {
            return .batch(length: length, packLength: packLength, standalone: standalone, shared: shared, keeps: keeps)
        }
        return .body(length: length, packLength: packLength, standalone: standalone, shared: shared, keeps: keeps)
    }

    /// Decodes a body whose header ``parseHeader(_:)`` accepted; `nil` when
    /// a string is not valid UTF-8.
    static func decode(body: UnsafeRawBufferPointer, packLength: Int, standalone: Bool, shared: Bool = false, keeps: Bool = false) -> DaemonRequest? {
        let packBytes = UnsafeRawBufferPointer(rebasing: body[..<packLength])
        let pathBytes = UnsafeRawBufferPointer(rebasing: body[packLength...])
        guard let path = String(strictUTF8: pathBytes) else { return nil }
        if packLength == 0 { return DaemonRequest(pack: nil, path: path, standalone: standalone, shared: shared, keeps: keeps) }
        guard let pack = String(strictUTF8: packBytes) else { return nil }
        return DaemonRequest(pack: pack, path: path, standalone: standalone, shared: shared, keeps: keeps)
    }
}

/// A batch request (kind 3): several members, of one pack or each searched
/// for in every installed pack, in one round trip.
///
/// The header is a request header (``DaemonProtocol``) with kind 3; flags
/// bit 0 = standalone, bit 1 = shared position, bit 2 = keep (for every member); bytes 14–15 the pack ID's length
/// (0: search every pack). The body is the pack ID, then a member count
/// (u16, 1 to ``DaemonProtocol/maximumBatch``), then that many paths, each a
/// u16 length and UTF-8 bytes, filling the body exactly.
///
/// **Replies.** One per member, in the members' order, each exactly the
/// reply a descriptor request (kind 1) for that member would get: a
/// success with its descriptor, or that member's failure — a member that
/// is not found does not keep the others from being answered. A batch
/// refused as a whole gets a single failure and no member replies:
/// `requestTooLarge` for a count over ``DaemonProtocol/maximumBatch``,
/// `malformedRequest` for a count of 0, paths that do not fill the body, or
/// one that is not UTF-8. Neither status is ever a member's reply, so a
/// client reading a batch's first reply knows which it got. The connection
/// stays open in both cases (the header framed the body). A daemon that
/// predates batches answers `malformedRequest` ("unknown request kind 3")
/// and closes the connection: the client then asks member by member.
struct DaemonBatchRequest: Sendable, Equatable {
    var pack: String?
    var paths: [String]
    var standalone: Bool
    /// As ``DaemonRequest/shared``, for every member.
    var shared: Bool = false
    /// As ``DaemonRequest/keeps``, for every member.
    var keeps: Bool = false

    /// Why a batch's body is refused as a whole.
    enum Refusal: Error, Equatable {
        /// More members than ``DaemonProtocol/maximumBatch``.
        case tooMany(Int)
        /// No member, paths that do not fill the body, or bytes that are not UTF-8.
        case malformed(String)

        var reply: [UInt8] {
            switch self {
            case .tooMany(let count):
                DaemonReply.failure(.requestTooLarge, message: "a batch of \(count) members exceeds the limit of \(DaemonProtocol.maximumBatch)")
            case .malformed(let message):
                DaemonReply.failure(.malformedRequest, message: message)
            }
        }
    }

    /// The request's bytes: header and body.
    var encoded: [UInt8] {
        var body = pack.map { Array($0.utf8) } ?? []
        let packLength = body.count
        body.appendLittleEndian(UInt16(truncatingIfNeeded: paths.count))
        for path in paths { body.appendField(path) }
        return DaemonProtocol.request(kind: DaemonProtocol.batchKind, flags: DaemonRequest.flags(standalone: standalone, shared: shared, keeps: keeps),
                                      packLength: packLength, body: body)
    }

    /// The descriptor request for each member, as the daemon answers them.
    var members: [DaemonRequest] { paths.map { DaemonRequest(pack: pack, path: $0, standalone: standalone, shared: shared, keeps: keeps) } }

    /// Decodes a body whose header ``DaemonRequest/parseHeader(_:)`` read as `.batch`.
    static func decode(body: UnsafeRawBufferPointer, packLength: Int, standalone: Bool, shared: Bool = false, keeps: Bool = false) -> Result<DaemonBatchRequest, Refusal> {
        let pack: String?
        if packLength == 0 { pack = nil } else {
            guard let text = String(strictUTF8: UnsafeRawBufferPointer(rebasing: body[..<packLength])) else {
                return .failure(.malformed("the batch's pack ID is not valid UTF-8"))
            }
            pack = text
        }
        guard body.count - packLength >= 2 else { return .failure(.malformed("the batch has no member count")) }
        let count = Int(body.littleEndian(UInt16.self, at: packLength))
        guard count <= DaemonProtocol.maximumBatch else { return .failure(.tooMany(count)) }
        guard count > 0 else { return .failure(.malformed("a batch of no members")) }
        var at = packLength + 2
        var paths: [String] = []
        paths.reserveCapacity(count)
        for i in 0..<count {
            guard body.count - at >= 2 else { return .failure(.malformed("the batch's member \(i + 1) of \(count) runs past its body")) }
            let n = Int(body.littleEndian(UInt16.self, at: at))
            guard body.count - at - 2 >= n else { return .failure(.malformed("the batch's member \(i + 1) of \(count) runs past its body")) }
            guard let path = String(strictUTF8: UnsafeRawBufferPointer(rebasing: body[(at + 2)..<(at + 2 + n)])) else {
                return .failure(.malformed("the batch's member \(i + 1) of \(count) is not valid UTF-8"))
            }
            paths.append(path)
            at += 2 + n
        }
        guard at == body.count else { return .failure(.malformed("\(body.count - at) bytes follow the batch's last member")) }
        return .success(DaemonBatchRequest(pack: pack, paths: paths, standalone: standalone, shared: shared, keeps: keeps && shared))
    }
}

extension Array where Element == UInt8 {
    mutating func appendLittleEndian<T: FixedWidthInteger>(_ value: T) {
        Swift.withUnsafeBytes(of: value.littleEndian) { append(contentsOf: $0) }
    }

    /// Appends a u16 length and the string's UTF-8 bytes, cut to 65535 bytes.
    mutating func appendField(_ text: String) {
        let bytes = Array(text.utf8.prefix(Int(UInt16.max)))
        appendLittleEndian(UInt16(bytes.count))
        append(contentsOf: bytes)
    }
}

extension UnsafeRawBufferPointer {
    func littleEndian<T: FixedWidthInteger>(_: T.Type, at offset: Int) -> T {
        T(littleEndian: loadUnaligned(fromByteOffset: offset, as: T.self))
    }
}
