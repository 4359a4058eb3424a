import AssetStore
import AssetSystem

/// Building replies (daemon side) and reading them (client side). See
/// ``DaemonProtocol`` for the layout.
enum DaemonReply {
    /// The header and body of a success; the descriptor travels with it.
    static func success(offset: Int64, length: Int64, size: Int64, source: MemberDescriptor.Source, crc32: UInt32) -> [UInt8] {
        Success(offset: offset, length: length, size: size, source: source, crc32: crc32).withUnsafeBytes { Array($0) }
    }

    /// A success's header and body held inline, in 48 bytes of its own:
    /// the daemon sends one per handout, and an array would be an
    /// allocation (by a path of the standard library's that is not
    /// specialized) for each.
    struct Success: Sendable {
        static let size = DaemonProtocol.headerSize + DaemonProtocol.successBodySize
        private var words: (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0, 0, 0)

        /// `slot` is the client's slot of a kept shared description (0: none);
        /// `reuse` says the reply passes no descriptor, the client's kept
        /// one in `slot` stands for it.
        init(offset: Int64, length: Int64, size: Int64, source: MemberDescriptor.Source, crc32: UInt32, slot: UInt8 = 0, reuse: Bool = false) {
            Swift.withUnsafeMutableBytes(of: &words) { out in
                DaemonReply.writeHeader(into: out, status: DaemonProtocol.success, bodyLength: DaemonProtocol.successBodySize)
                let body = DaemonProtocol.headerSize
                out.storeBytes(of: offset.littleEndian, toByteOffset: body, as: Int64.self)
                out.storeBytes(of: length.littleEndian, toByteOffset: body + 8, as: Int64.self)
                out.storeBytes(of: size.littleEndian, toByteOffset: body + 16, as: Int64.self)
                // The source byte, the slot, the reuse byte, a reserved zero byte.
                out.storeBytes(of: source == .archive ? 0 : 1, toByteOffset: body + 24, as: UInt8.self)
                out.storeBytes(of: slot, toByteOffset: body + 25, as: UInt8.self)
                out.storeBytes(of: reuse ? 1 : 0, toByteOffset: body + 26, as: UInt8.self)
                out.storeBytes(of: crc32.littleEndian, toByteOffset: body + 28, as: UInt32.self)
            }
        }

        func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
            try Swift.withUnsafeBytes(of: words) { try body($0) }
        }
    }

    /// A failure with `code`, the code's fields, and `message` last.
    static func failure(_ code: AssetPackError.Code, number: Int64 = 0, fields: [String] = [], message: String) -> [UInt8] {
        var body: [UInt8] = []
        body.appendLittleEndian(number)
        body.appendLittleEndian(UInt16(fields.count + 1))
        for field in fields { body.appendField(field) }
        body.appendField(message)
        // Fields are cut to 65535 bytes each; keep the whole under the limit.
        if body.count > DaemonProtocol.maximumReplyBody {
            return failure(.daemonFailed, message: String(message.utf8.prefix(1024)) ?? "reply too long")
        }
        var out = header(status: UInt16(code.rawValue), bodyLength: body.count)
        out.append(contentsOf: body)
        return out
    }

    /// The failure that carries `error`: its code is the status, and the
    /// fields are those ``DaemonProtocol`` lists for it. A code the table
    /// does not list goes as `daemonFailed`, which every client reads.
    static func failure(for error: AssetPackError) -> [UInt8] {
        guard let fields = tableFields(of: error) else { return failure(.daemonFailed, message: error.message) }
        return failure(error.code, number: Int64(error.systemError ?? 0), fields: fields, message: error.message)
    }

    /// The fields the table in ``DaemonProtocol`` lists for `error`'s code
    /// (none for refusals), or `nil` for a code it does not list.
    static func tableFields(of error: AssetPackError) -> [String]? {
        let reason = String(error.reason.rawValue)
        switch error.code {
        case .assetPackNotFound: return [error.pack ?? ""]
        case .fileNotFound: return [error.member ?? ""] + (error.pack.map { [$0] } ?? [])
        case .ambiguousPath: return [error.member ?? ""] + error.packs
        case .invalidPackID: return [error.pack ?? "", reason]
        case .invalidPath: return [error.member ?? "", reason]
        case .corruptRecord: return [error.pack ?? "", reason] + (error.member.map { [$0] } ?? [])
        case .archiveMissing: return [error.pack ?? "", error.path ?? ""]
        case .badArchive: return [error.path ?? "", error.member ?? "", reason]
        case .limitExceeded: return [error.path ?? "", error.member ?? "", reason, error.pack ?? ""]
        case .system, .index: return error.path.map { [$0] } ?? []
        case .peerNotAllowed, .malformedRequest, .requestTooLarge, .unsupportedVersion, .daemonBusy, .daemonFailed:
            return []
        case .requestNotPermitted: return [error.pack ?? "", error.path ?? "", reason]
        case .invalidManifest, .invalidRecordedManifest, .lockTimeout, .notAFile, .noContainer, .unsupportedSchema,
             .unsupportedURL, .daemonUnavailable, .symlinkInContainer,
             .invalidCatalog, .unsupportedCatalogFormat, .catalogUnsigned, .catalogKeyMismatch, .catalogSignatureInvalid,
             .catalogRollback, .catalogExpired, .invalidKey, .invalidTrustState, .publishRefused, .catalogChannelMismatch,
             .downloadNotFound, .downloadRefused, .downloadSizeMismatch, .downloadChecksumMismatch,
             .downloadRetriesExhausted, .downloadFailed, .catalogUnavailable, .downloadCancelled, .noDownloadInProgress, .invalidOption,
             .downloadTimedOut, .invalidCAFile, .downloadTooLarge,
             .invalidPieceMap:
            return nil
        }
    }

    /// A reply header, in an array with room for the body after it.
    static func header(status: UInt16, bodyLength: Int) -> [UInt8] {
        var header: (UInt64, UInt64) = (0, 0)
        Swift.withUnsafeMutableBytes(of: &header) { writeHeader(into: $0, status: status, bodyLength: bodyLength) }
        var out = [UInt8]()
        out.reserveCapacity(DaemonProtocol.headerSize + bodyLength)
        Swift.withUnsafeBytes(of: header) { out.append(contentsOf: $0) }
        return out
    }

    /// Writes a reply header into the first ``DaemonProtocol/headerSize`` bytes of `out`.
    fileprivate static func writeHeader(into out: UnsafeMutableRawBufferPointer, status: UInt16, bodyLength: Int) {
        precondition(out.count >= DaemonProtocol.headerSize)
        out.storeBytes(of: DaemonProtocol.replyMagic.littleEndian, toByteOffset: 0, as: UInt32.self)
        out.storeBytes(of: DaemonProtocol.version.littleEndian, toByteOffset: 4, as: UInt16.self)
        out.storeBytes(of: status.littleEndian, toByteOffset: 6, as: UInt16.self)
        out.storeBytes(of: UInt32(bodyLength).littleEndian, toByteOffset: 8, as: UInt32.self)
        out.storeBytes(of: UInt32(0), toByteOffset: 12, as: UInt32.self)
    }

    // MARK: Reading

    /// A reply header's status code and body length, or why it is not one.
    static func parseHeader(_ h: UnsafeRawBufferPointer) -> Result<(status: UInt16, length: Int), ProtocolViolation> {
        guard h.littleEndian(UInt32.self, at: 0) == DaemonProtocol.replyMagic else { return .failure(.init("bad magic")) }
        let version = h.littleEndian(UInt16.self, at: 4)
        guard version == DaemonProtocol.version else { return .failure(.init("protocol version \(version)")) }
        let length = Int(h.littleEndian(UInt32.self, at: 8))
        guard length <= DaemonProtocol.maximumReplyBody else { return .failure(.init("a body of \(length) bytes")) }
        return .success((h.littleEndian(UInt16.self, at: 6), length))
    }

    /// What a success says about the descriptor that came with it.
    struct Placement: Equatable {
        var offset: Int64
        var length: Int64
        var size: Int64
        var source: MemberDescriptor.Source
        var crc32: UInt32
        /// The client's slot of the kept shared description, 0 for none.
        var slot: Int = 0
        /// No descriptor came: the one kept in ``slot`` stands for it.
        var reuse: Bool = false
    }

    /// Reads a success body; `keeps` says whether the request asked the
    /// daemon to name kept descriptions (``DaemonProtocol/keepFlag``).
    static func placement(_ body: UnsafeRawBufferPointer, keeps: Bool = false) -> Result<Placement, ProtocolViolation> {
        guard body.count == DaemonProtocol.successBodySize else { return .failure(.init("a success body of \(body.count) bytes")) }
        let p = Placement(offset: body.littleEndian(Int64.self, at: 0), length: body.littleEndian(Int64.self, at: 8),
                          size: body.littleEndian(Int64.self, at: 16), source: body[24] == 0 ? .archive : .memory,
                          crc32: body.littleEndian(UInt32.self, at: 28), slot: Int(body[25]), reuse: body[26] != 0)
        guard body[24] <= 1, p.offset >= 0, p.length >= 0, p.size >= 0,
              p.offset <= p.size, p.length <= p.size - p.offset else {
            return .failure(.init("a range \(p.offset)+\(p.length) outside a file of \(p.size) bytes"))
        }
        guard body[26] <= 1, body[27] == 0 else { return .failure(.init("a success with reserved bytes \(body[26]) \(body[27])")) }
        guard p.slot <= DaemonProtocol.keptSlots else { return .failure(.init("kept slot \(p.slot)")) }
        guard p.slot == 0 || (keeps && p.source == .archive) else {
            return .failure(.init(keeps ? "a memory file for kept slot \(p.slot)" : "kept slot \(p.slot) to a request that keeps none"))
        }
        guard !p.reuse || p.slot != 0 else { return .failure(.init("a reuse of no kept slot")) }
        return .success(p)
    }

    /// Turns a failure body back into the error it carries.
    static func error(status: UInt16, body: UnsafeRawBufferPointer, socket: String) -> Result<AssetPackError, ProtocolViolation> {
        guard body.count >= 10 else { return .failure(.init("a failure body of \(body.count) bytes")) }
        let number = body.littleEndian(Int64.self, at: 0)
        let count = Int(body.littleEndian(UInt16.self, at: 8))
        var fields: [String] = []
        var at = 10
        for _ in 0..<count {
            guard at + 2 <= body.count else { return .failure(.init("a field past the end")) }
            let n = Int(body.littleEndian(UInt16.self, at: at))
            guard at + 2 + n <= body.count,
                  let s = String(strictUTF8: UnsafeRawBufferPointer(rebasing: body[(at + 2)..<(at + 2 + n)])) else {
                return .failure(.init("a field past the end or not UTF-8"))
            }
            fields.append(s)
            at += 2 + n
        }
        guard at == body.count, let message = fields.popLast() else { return .failure(.init("a failure without a message")) }
        let f = fields
        let bad = Result<AssetPackError, ProtocolViolation>.failure(.init("status \(status) with \(f.count) fields"))
        func reason(_ text: String) -> AssetPackError.Reason? { Int32(text).flatMap(AssetPackError.Reason.init(rawValue:)) }
        guard status != DaemonProtocol.success else { return .failure(.init("a success without a descriptor")) }
        guard let code = AssetPackError.Code(rawValue: Int32(status)) else {
            return .success(AssetPackError(.daemonFailed, path: socket, message: "descriptor daemon at \(socket): \(message)"))
        }
        let e: AssetPackError
        switch code {
        case .assetPackNotFound:
            guard f.count == 1 else { return bad }
            e = AssetPackError(code, pack: f[0], message: message)
        case .fileNotFound:
            guard (1...2).contains(f.count) else { return bad }
            e = AssetPackError(code, pack: f.count == 2 ? f[1] : nil, member: f[0], message: message)
        case .ambiguousPath:
            guard f.count >= 1 else { return bad }
            e = AssetPackError(code, member: f[0], packs: Array(f.dropFirst()), message: message)
        case .invalidPackID:
            guard f.count == 2, let r = reason(f[1]) else { return bad }
            e = AssetPackError(code, reason: r, pack: f[0], message: message)
        case .invalidPath:
            guard f.count == 2, let r = reason(f[1]) else { return bad }
            e = AssetPackError(code, reason: r, member: f[0], message: message)
        case .corruptRecord:
            guard (2...3).contains(f.count), let r = reason(f[1]) else { return bad }
            e = AssetPackError(code, reason: r, pack: f[0], member: f.count == 3 ? f[2] : nil, message: message)
        case .archiveMissing:
            guard f.count == 2 else { return bad }
            e = AssetPackError(code, pack: f[0], path: f[1], message: message)
        case .badArchive:
            guard f.count == 3, let r = reason(f[2]) else { return bad }
            e = AssetPackError(code, reason: r, member: f[1].isEmpty ? nil : f[1], path: f[0], message: message)
        case .limitExceeded:
            guard f.count == 4, let r = reason(f[2]) else { return bad }
            e = AssetPackError(code, reason: r, pack: f[3].isEmpty ? nil : f[3], member: f[1].isEmpty ? nil : f[1],
                               path: f[0], message: message)
        case .system, .index:
            guard f.count <= 1, let n = Int32(exactly: number) else { return bad }
            e = AssetPackError(code, path: f.first, systemError: n, message: "descriptor daemon: " + message)
        case .peerNotAllowed, .malformedRequest, .requestTooLarge, .unsupportedVersion, .daemonBusy, .daemonFailed:
            e = AssetPackError(code, path: socket, message: "descriptor daemon at \(socket) refused the request: \(message)")
        case .requestNotPermitted:
            guard f.count == 3, let r = reason(f[2]) else { return bad }
            e = AssetPackError(code, reason: r, pack: f[0].isEmpty ? nil : f[0], path: f[1].isEmpty ? nil : f[1],
                               message: "descriptor daemon at \(socket) refused the request: \(message)")
        case .invalidManifest, .invalidRecordedManifest, .lockTimeout, .notAFile, .noContainer, .unsupportedSchema,
             .unsupportedURL, .daemonUnavailable, .symlinkInContainer,
             .invalidCatalog, .unsupportedCatalogFormat, .catalogUnsigned, .catalogKeyMismatch, .catalogSignatureInvalid,
             .catalogRollback, .catalogExpired, .invalidKey, .invalidTrustState, .publishRefused, .catalogChannelMismatch,
             .downloadNotFound, .downloadRefused, .downloadSizeMismatch, .downloadChecksumMismatch,
             .downloadRetriesExhausted, .downloadFailed, .catalogUnavailable, .downloadCancelled, .noDownloadInProgress, .invalidOption,
             .downloadTimedOut, .invalidCAFile, .downloadTooLarge,
             .invalidPieceMap:
            // Sent only in reply to a download request (DaemonProtocol+Downloads).
            guard let error = downloadError(code, number: number, fields: f, message: message) else {
                return .failure(.init("status \(status), which the daemon does not send"))
            }
            e = error
        }
        return .success(e)
    }

    /// A reply that breaks the protocol, and how.
    struct ProtocolViolation: Error, Equatable {
        let what: String
        init(_ what: String) { self.what = what }
    }
}
