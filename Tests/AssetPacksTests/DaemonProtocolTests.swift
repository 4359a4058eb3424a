import Foundation
import Testing
import AssetArchive
import AssetIndex
@testable import AssetPacks

/// The daemon's wire format, without a daemon: requests parse back, every
/// bad header is refused with the right status, and every error the store
/// reports crosses the wire as the same case.
@Suite struct DaemonProtocolTests {
    func parse(_ bytes: [UInt8]) -> DaemonRequest.Header {
        bytes.withUnsafeBytes { DaemonRequest.parseHeader(UnsafeRawBufferPointer(rebasing: $0[..<16])) }
    }

    @Test(arguments: [
        DaemonRequest(pack: "com.example.Game", path: "Levels/1.json"),
        DaemonRequest(pack: nil, path: "données/日本.txt", standalone: true),
        DaemonRequest(pack: "p", path: ""),
    ])
    func requestsRoundTrip(_ request: DaemonRequest) throws {
        let bytes = request.encoded
        #expect(Array(bytes[0..<4]) == Array("APDQ".utf8))
        guard case .body(let length, let packLength, let standalone) = parse(bytes) else {
            Issue.record("refused: \(parse(bytes))")
            return
        }
        #expect(16 + length == bytes.count)
        let decoded = bytes.withUnsafeBytes {
            DaemonRequest.decode(body: UnsafeRawBufferPointer(rebasing: $0[16...]), packLength: packLength, standalone: standalone)
        }
        #expect(decoded == request)
    }

    static func header(_ edit: (inout [UInt8]) -> Void) -> [UInt8] {
        var h = DaemonRequest(pack: "abc", path: "x/y").encoded
        edit(&h)
        return h
    }

    @Test func badHeadersAreRefusedWithTheirStatus() {
        func status(_ h: [UInt8]) -> DaemonStatus? {
            if case .refused(let s, _) = parse(h) { return s }
            return nil
        }
        #expect(status(Self.header { $0[0] = 0x42 }) == .malformedRequest)            // magic
        #expect(status(Self.header { $0[4] = 2 }) == .unsupportedVersion)             // version
        #expect(status(Self.header { $0[6] = 7 }) == .malformedRequest)               // kind
        #expect(status(Self.header { $0[12] = 0x80 }) == .malformedRequest)           // unknown flag
        #expect(status(Self.header { $0[14] = 99 }) == .malformedRequest)             // pack longer than body
        #expect(status(Self.header { $0[8] = 0x01; $0[9] = 0x20 }) == .requestTooLarge)  // 8193 bytes
        #expect(status(Self.header { $0[8] = 0; $0[9] = 0x20; $0[14] = 0 }) == nil)    // 8192 is allowed
    }

    @Test func invalidUTF8InTheBodyIsNotARequest() {
        let body: [UInt8] = [0x61, 0xff, 0x62]
        let decoded = body.withUnsafeBytes { DaemonRequest.decode(body: $0, packLength: 1, standalone: false) }
        #expect(decoded == nil)
    }

    /// Encodes `error` as the daemon would and decodes it as the client does.
    func roundTrip(_ error: StoreError) -> StoreError? {
        let reply = DaemonReply.failure(for: error, pack: "p", path: "m")
        return reply.withUnsafeBytes { raw -> StoreError? in
            guard case .success(let h) = DaemonReply.parseHeader(raw), h.length == raw.count - 16 else { return nil }
            guard case .success(let e) = DaemonReply.error(status: h.status, body: UnsafeRawBufferPointer(rebasing: raw[16...]), socket: "/s") else { return nil }
            return e
        }
    }

    @Test func storeErrorsCrossTheWireAsTheSameCase() {
        let cases: [StoreError] = [
            .assetPackNotFound("p"), .fileNotFound(path: "a/b", pack: "p"), .fileNotFound(path: "a/b", pack: nil),
            .ambiguousPath("a", packs: ["p", "q"]), .invalidPackID("x/y", reason: "why"), .invalidPath("", reason: "empty"),
            .corruptRecord(pack: "p", member: "m", reason: "r"), .corruptRecord(pack: "p", member: nil, reason: "r"),
            .archiveMissing(pack: "p", path: "/c/packs/p.zip"),
            .system(Errno.tooManyOpenFiles.with(operation: "open", path: "/c/packs/p.zip")), .system(Errno.noMemory.with(operation: "mmap")),
            .index(LMDBError(-30_791, operation: "mdb_txn_begin", path: "/c/index")),
        ]
        for error in cases {
            // Errors carry no Equatable; their one-line descriptions say everything they hold.
            guard let back = roundTrip(error) else { Issue.record("\(error) did not come back"); continue }
            switch (error, back) {
            case (.system(let a), .system(let b)):
                #expect(a.rawValue == b.rawValue && a.path == b.path && b.operation == "descriptor daemon: " + a.operation)
            case (.index(let a), .index(let b)):
                #expect(a.code == b.code && a.path == b.path && b.operation == "descriptor daemon: " + a.operation)
            default:
                #expect(back.description == error.description)
            }
        }
        guard case .archive(.corruptData("p", "m", let detail)) = roundTrip(.archive(.crcMismatch(archive: "p.zip", path: "m", expected: 1, actual: 2))) else {
            Issue.record("archive damage did not come back as corruptData")
            return
        }
        #expect(detail.contains("m"))
        guard case .daemonRefused("/s", .failed, _) = roundTrip(.lockTimeout(path: "/l", seconds: 1)) else {
            Issue.record("an error without a wire status did not come back as a refusal")
            return
        }
    }

    @Test func refusalsComeBackWithTheirReason() {
        for reason in [StoreError.DaemonRefusal.peerNotAllowed, .malformedRequest, .requestTooLarge, .unsupportedVersion, .busy, .failed] {
            let reply = DaemonReply.failure(DaemonStatus(rawValue: reason.rawValue)!, message: "because")
            let back = reply.withUnsafeBytes { raw in
                DaemonReply.error(status: DaemonStatus(rawValue: reason.rawValue)!.rawValue, body: UnsafeRawBufferPointer(rebasing: raw[16...]), socket: "/s")
            }
            guard case .success(.daemonRefused("/s", let got, "because")) = back, got == reason else {
                Issue.record("\(reason): \(back)")
                continue
            }
        }
    }

    @Test func successBodiesOutsideTheFileAreProtocolViolations() {
        func placement(offset: Int64, length: Int64, size: Int64) -> DaemonReply.Placement? {
            let reply = DaemonReply.success(offset: offset, length: length, size: size, source: .archive)
            return reply.withUnsafeBytes { raw in
                if case .success(let p) = DaemonReply.placement(UnsafeRawBufferPointer(rebasing: raw[16...])) { return p }
                return nil
            }
        }
        #expect(placement(offset: 4096, length: 100, size: 8192) == .init(offset: 4096, length: 100, size: 8192, source: .archive))
        #expect(placement(offset: 8000, length: 500, size: 8192) == nil)
        #expect(placement(offset: -1, length: 1, size: 8192) == nil)
        #expect(placement(offset: .max, length: .max, size: .max) == nil)
    }

    @Test func malformedFailureBodiesAreProtocolViolations() {
        let good = DaemonReply.failure(.assetPackNotFound, fields: ["p"], message: "m")
        for cut in [good.count - 1, 16 + 9, 16 + 12] {
            let result = good.withUnsafeBytes { raw in
                DaemonReply.error(status: 1, body: UnsafeRawBufferPointer(rebasing: raw[16..<cut]), socket: "/s")
            }
            guard case .failure = result else { Issue.record("cut at \(cut) accepted: \(result)"); continue }
        }
        // The right shape for another status is the wrong shape for this one.
        let twoFields = DaemonReply.failure(.archiveMissing, fields: ["p", "x"], message: "m")
        let result = twoFields.withUnsafeBytes { raw in
            DaemonReply.error(status: 1, body: UnsafeRawBufferPointer(rebasing: raw[16...]), socket: "/s")
        }
        guard case .failure = result else { Issue.record("accepted \(result)"); return }
    }
}
