import AssetArchive
import AssetIndex

/// Building replies (daemon side) and reading them (client side). See
/// ``DaemonProtocol`` for the layout.
enum DaemonReply {
    /// The header and body of a success; the descriptor travels with it.
    static func success(offset: Int64, length: Int64, size: Int64, source: AssetDescriptor.Source) -> [UInt8] {
        var out = header(status: .success, bodyLength: DaemonProtocol.successBodySize)
        out.appendLittleEndian(offset)
        out.appendLittleEndian(length)
        out.appendLittleEndian(size)
        out.append(source == .archive ? 0 : 1)
        out.append(contentsOf: repeatElement(0, count: 7))
        return out
    }

    /// A failure with `status`, the status's fields, and `message` last.
    static func failure(_ status: DaemonStatus, number: Int64 = 0, fields: [String] = [], message: String) -> [UInt8] {
        var body: [UInt8] = []
        body.appendLittleEndian(number)
        body.appendLittleEndian(UInt16(fields.count + 1))
        for field in fields { body.appendField(field) }
        body.appendField(message)
        // Fields are cut to 65535 bytes each; keep the whole under the limit.
        if body.count > DaemonProtocol.maximumReplyBody {
            return failure(.failed, message: String(message.utf8.prefix(1024)) ?? "reply too long")
        }
        return header(status: status, bodyLength: body.count) + body
    }

    /// The failure that carries `error` for a request about `path` in `pack`.
    static func failure(for error: StoreError, pack: String?, path: String) -> [UInt8] {
        let message = error.description
        switch error {
        case .assetPackNotFound(let id):
            return failure(.assetPackNotFound, fields: [id], message: message)
        case .fileNotFound(let path, let pack):
            return failure(.fileNotFound, fields: [path] + (pack.map { [$0] } ?? []), message: message)
        case .ambiguousPath(let path, let packs):
            return failure(.ambiguousPath, fields: [path] + packs, message: message)
        case .invalidPackID(let id, let reason):
            return failure(.invalidPackID, fields: [id, reason], message: message)
        case .invalidPath(let path, let reason):
            return failure(.invalidPath, fields: [path, reason], message: message)
        case .corruptRecord(let pack, let member, let reason):
            return failure(.corruptRecord, fields: [pack, reason] + (member.map { [$0] } ?? []), message: message)
        case .archiveMissing(let pack, let path):
            return failure(.archiveMissing, fields: [pack, path], message: message)
        case .archive:
            return failure(.archiveDamaged, fields: [pack ?? "", path], message: message)
        case .system(let e):
            return failure(.system, number: Int64(e.rawValue), fields: [e.operation] + (e.path.map { [$0] } ?? []), message: message)
        case .index(let e):
            return failure(.index, number: Int64(e.code), fields: [e.operation] + (e.path.map { [$0] } ?? []), message: message)
        default:
            return failure(.failed, message: message)
        }
    }

    private static func header(status: DaemonStatus, bodyLength: Int) -> [UInt8] {
        var out = [UInt8]()
        out.reserveCapacity(DaemonProtocol.headerSize + bodyLength)
        out.appendLittleEndian(DaemonProtocol.replyMagic)
        out.appendLittleEndian(DaemonProtocol.version)
        out.appendLittleEndian(status.rawValue)
        out.appendLittleEndian(UInt32(bodyLength))
        out.appendLittleEndian(UInt32(0))
        return out
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
        var source: AssetDescriptor.Source
    }

    /// Reads a success body.
    static func placement(_ body: UnsafeRawBufferPointer) -> Result<Placement, ProtocolViolation> {
        guard body.count == DaemonProtocol.successBodySize else { return .failure(.init("a success body of \(body.count) bytes")) }
        let p = Placement(offset: body.littleEndian(Int64.self, at: 0), length: body.littleEndian(Int64.self, at: 8),
                          size: body.littleEndian(Int64.self, at: 16), source: body[24] == 0 ? .archive : .memory)
        guard body[24] <= 1, p.offset >= 0, p.length >= 0, p.size >= 0,
              p.offset <= p.size, p.length <= p.size - p.offset else {
            return .failure(.init("a range \(p.offset)+\(p.length) outside a file of \(p.size) bytes"))
        }
        return .success(p)
    }

    /// Turns a failure body back into the error it carries.
    static func error(status: UInt16, body: UnsafeRawBufferPointer, socket: String) -> Result<StoreError, ProtocolViolation> {
        guard body.count >= 10 else { return .failure(.init("a failure body of \(body.count) bytes")) }
        let number = body.littleEndian(Int64.self, at: 0)
        let count = Int(body.littleEndian(UInt16.self, at: 8))
        var fields: [String] = []
        var at = 10
        for _ in 0..<count {
            guard at + 2 <= body.count else { return .failure(.init("a field past the end")) }
            let n = Int(body.littleEndian(UInt16.self, at: at))
            guard at + 2 + n <= body.count,
                  let s = String(validating: UnsafeRawBufferPointer(rebasing: body[(at + 2)..<(at + 2 + n)]), as: UTF8.self) else {
                return .failure(.init("a field past the end or not UTF-8"))
            }
            fields.append(s)
            at += 2 + n
        }
        guard at == body.count, let message = fields.popLast() else { return .failure(.init("a failure without a message")) }
        let f = fields
        func need(_ range: ClosedRange<Int>) -> Bool { range.contains(f.count) }
        let bad = Result<StoreError, ProtocolViolation>.failure(.init("status \(status) with \(f.count) fields"))
        guard let known = DaemonStatus(rawValue: status) else {
            return .success(.daemonRefused(socket: socket, reason: .failed, message: message))
        }
        switch known {
        case .success:
            return .failure(.init("a success without a descriptor"))
        case .assetPackNotFound:
            return need(1...1) ? .success(.assetPackNotFound(f[0])) : bad
        case .fileNotFound:
            return need(1...2) ? .success(.fileNotFound(path: f[0], pack: f.count == 2 ? f[1] : nil)) : bad
        case .ambiguousPath:
            return need(1...Int.max) ? .success(.ambiguousPath(f[0], packs: Array(f.dropFirst()))) : bad
        case .invalidPackID:
            return need(2...2) ? .success(.invalidPackID(f[0], reason: f[1])) : bad
        case .invalidPath:
            return need(2...2) ? .success(.invalidPath(f[0], reason: f[1])) : bad
        case .corruptRecord:
            return need(2...3) ? .success(.corruptRecord(pack: f[0], member: f.count == 3 ? f[2] : nil, reason: f[1])) : bad
        case .archiveMissing:
            return need(2...2) ? .success(.archiveMissing(pack: f[0], path: f[1])) : bad
        case .archiveDamaged:
            return need(2...2) ? .success(.archive(.corruptData(archive: f[0], path: f[1], detail: message))) : bad
        case .system:
            guard need(1...2), let code = Int32(exactly: number) else { return bad }
            return .success(.system(Errno(code, operation: "descriptor daemon: " + f[0], path: f.count == 2 ? f[1] : nil)))
        case .index:
            guard need(1...2), let code = Int32(exactly: number) else { return bad }
            return .success(.index(LMDBError(code, operation: "descriptor daemon: " + f[0], path: f.count == 2 ? f[1] : nil)))
        case .peerNotAllowed, .malformedRequest, .requestTooLarge, .unsupportedVersion, .busy, .failed:
            let reason = StoreError.DaemonRefusal(rawValue: status) ?? .failed
            return .success(.daemonRefused(socket: socket, reason: reason, message: message))
        }
    }

    /// A reply that breaks the protocol, and how.
    struct ProtocolViolation: Error, Equatable {
        let what: String
        init(_ what: String) { self.what = what }
    }
}
