import AssetSystem

/// A download request (kind 2): the daemon downloads and installs a pack
/// from a catalog, on a thread of its own (``DescriptorDaemon``).
///
/// The header is a request header (``DaemonProtocol``) with kind 2; its
/// flags are bit 0 = wait (reply when the download has ended) and bit 1 =
/// discretionary (queued behind downloads that are not); bytes 14–15 are the
/// pack ID's length. The body is the pack ID, then three or four fields,
/// each a u16 length and UTF-8 bytes, filling the body exactly: the catalog
/// URL, the catalog's public key as its text (`ed25519:BASE64`, empty for
/// none), a CA file's absolute path (empty for none), and the catalog's
/// channel — sent only when it is not `default`, which its absence means,
/// so that a daemon from before channels still takes the requests of the
/// default channel.
///
/// **Reply.** A success (status 0) carries no descriptor; its body is a
/// result (u8: 0 = installed, 1 = accepted), then one field (u16 length,
/// UTF-8): the installed version, empty for "accepted". With wait the reply
/// comes when the download has ended — installed (or found current), or a
/// failure; without, at once: accepted. A failure's body is as for
/// descriptors; the codes that table does not list carry four fields before
/// the message: pack, path (the URL or file), reason (decimal), field —
/// each empty when none.
///
/// Request fields that cannot be used are refused with their own code and
/// the connection stays open: an invalid pack ID `invalidPackID` (with its
/// reason), a URL that is not `http://` or `https://` `unsupportedURL`, key
/// text that is not a key `invalidKey` (`malformedPublicKey`).
struct DaemonDownloadRequest: Sendable, Equatable {
    var pack: String
    var catalogURL: String
    /// The key's text, `ed25519:BASE64`; `nil` (sent empty) for none.
    var publicKey: String?
    /// An absolute path; `nil` (sent empty) for none.
    var caFile: String?
    /// The catalog's channel (the fourth field; absent for `default`).
    var channel = AssetPackCatalog.defaultChannel
    /// Whether the reply waits for the download's end.
    var wait: Bool
    /// Whether the download may wait behind others.
    var discretionary: Bool

    /// The request's bytes: header and body.
    var encoded: [UInt8] {
        var body = Array(pack.utf8)
        for field in [catalogURL, publicKey ?? "", caFile ?? ""] { body.appendField(field) }
        if channel != AssetPackCatalog.defaultChannel { body.appendField(channel) }
        return DaemonProtocol.request(kind: DaemonProtocol.downloadKind,
                                      flags: (wait ? DaemonProtocol.waitFlag : 0) | (discretionary ? DaemonProtocol.discretionaryFlag : 0),
                                      packLength: pack.utf8.count, body: body)
    }

    /// Decodes a body whose header ``DaemonRequest/parseHeader(_:)`` read as
    /// `.download`; `nil` when the fields do not fill the body exactly or a
    /// string is not valid UTF-8.
    static func decode(body: UnsafeRawBufferPointer, packLength: Int, wait: Bool, discretionary: Bool) -> DaemonDownloadRequest? {
        guard let pack = String(strictUTF8: UnsafeRawBufferPointer(rebasing: body[..<packLength])) else { return nil }
        var at = packLength
        var fields: [String] = []
        while fields.count < 4 && (fields.count < 3 || at < body.count) {
            guard body.count - at >= 2 else { return nil }
            let n = Int(body.littleEndian(UInt16.self, at: at))
            guard body.count - at - 2 >= n,
                  let text = String(strictUTF8: UnsafeRawBufferPointer(rebasing: body[(at + 2)..<(at + 2 + n)])) else {
                return nil
            }
            fields.append(text)
            at += 2 + n
        }
        guard at == body.count else { return nil }
        var request = DaemonDownloadRequest(pack: pack, catalogURL: fields[0], publicKey: fields[1].isEmpty ? nil : fields[1],
                                            caFile: fields[2].isEmpty ? nil : fields[2], wait: wait, discretionary: discretionary)
        if fields.count == 4 { request.channel = fields[3] }
        return request
    }
}

extension DaemonReply {
    /// What a download request's success says.
    enum DownloadOutcome: Equatable {
        /// The download ended with this version installed.
        case installed(version: String)
        /// The daemon took the request (no wait); the download goes on.
        case accepted
    }

    /// The header and body of a download request's success.
    static func success(_ outcome: DownloadOutcome) -> [UInt8] {
        var body: [UInt8] = []
        switch outcome {
        case .installed(let version):
            body.append(0)
            body.appendField(version)
        case .accepted:
            body.append(1)
            body.appendField("")
        }
        return header(status: DaemonProtocol.success, bodyLength: body.count) + body
    }

    /// Reads a download request's success body.
    static func downloadOutcome(_ body: UnsafeRawBufferPointer) -> Result<DownloadOutcome, ProtocolViolation> {
        guard body.count >= 3, body[0] <= 1 else { return .failure(.init("a download success body of \(body.count) bytes")) }
        let n = Int(body.littleEndian(UInt16.self, at: 1))
        guard body.count == 3 + n, let version = String(strictUTF8: UnsafeRawBufferPointer(rebasing: body[3...])) else {
            return .failure(.init("a download success body whose version does not fill it"))
        }
        if body[0] == 1 {
            guard version.isEmpty else { return .failure(.init("an accepted download with a version")) }
            return .success(.accepted)
        }
        return .success(.installed(version: version))
    }

    /// The failure that carries `error` in reply to a download request:
    /// as ``failure(for:)`` for the codes the descriptor table lists, and
    /// pack, path, reason and field for the others.
    static func downloadFailure(for error: AssetPackError) -> [UInt8] {
        guard tableFields(of: error) == nil else { return failure(for: error) }
        let fields = [error.pack ?? "", error.path ?? "", String(error.reason.rawValue), error.field ?? ""]
        return failure(error.code, number: Int64(error.systemError ?? 0), fields: fields, message: error.message)
    }

    /// The error of a failure with a code the descriptor table does not
    /// list (``tableFields(of:)``): pack, path, reason, field, each empty when none.
    static func downloadError(_ code: AssetPackError.Code, number: Int64, fields f: [String], message: String) -> AssetPackError? {
        guard f.count == 4, let raw = Int32(f[2]), let reason = AssetPackError.Reason(rawValue: raw),
              let n = Int32(exactly: number) else { return nil }
        func some(_ s: String) -> String? { s.isEmpty ? nil : s }
        return AssetPackError(code, reason: reason, pack: some(f[0]), path: some(f[1]), field: some(f[3]),
                              systemError: n == 0 ? nil : n, message: message)
    }
}
