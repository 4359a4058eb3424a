import Foundation
import Testing
import AssetArchive
import AssetIndex
import AssetStore
import AssetSystem
@testable import AssetPacks

/// The daemon's wire format, without a daemon: requests parse back, every
/// bad header is refused with the right status, and every error the store
/// reports crosses the wire with its code, reason and names.
@Suite struct DaemonProtocolTests {
    func parse(_ bytes: [UInt8]) -> DaemonRequest.Header {
        bytes.withUnsafeBytes { DaemonRequest.parseHeader(UnsafeRawBufferPointer(rebasing: $0[..<16])) }
    }

    @Test(arguments: [
        DaemonRequest(pack: "com.example.Game", path: "Levels/1.json"),
        DaemonRequest(pack: nil, path: "données/日本.txt", standalone: true),
        DaemonRequest(pack: "p", path: ""),
        DaemonRequest(pack: "p", path: "a/b", shared: true),
        DaemonRequest(pack: nil, path: "a", standalone: true, shared: true),
        DaemonRequest(pack: "p", path: "a/b", shared: true, keeps: true),
        DaemonRequest(pack: nil, path: "a", standalone: true, shared: true, keeps: true),
    ])
    func requestsRoundTrip(_ request: DaemonRequest) throws {
        let bytes = request.encoded
        #expect(Array(bytes[0..<4]) == Array("APDQ".utf8))
        #expect(bytes[12] == (request.standalone ? 1 : 0) | (request.shared ? 2 : 0) | (request.keeps ? 4 : 0) && bytes[13] == 0)
        guard case .body(let length, let packLength, let standalone, let shared, let keeps) = parse(bytes) else {
            Issue.record("refused: \(parse(bytes))")
            return
        }
        #expect(16 + length == bytes.count)
        let decoded = bytes.withUnsafeBytes {
            DaemonRequest.decode(body: UnsafeRawBufferPointer(rebasing: $0[16...]), packLength: packLength, standalone: standalone, shared: shared, keeps: keeps)
        }
        #expect(decoded == request)
    }

    /// Keeping descriptions means nothing without shared ones: a request
    /// never says it.
    @Test func keepingGoesOnlyWithTheSharedPosition() {
        #expect(!DaemonRequest(pack: "p", path: "a", keeps: true).keeps)
        #expect(DaemonRequest(pack: "p", path: "a", keeps: true).encoded[12] == 0)
        #expect(DaemonBatchRequest(pack: "p", paths: ["a"], standalone: false, shared: false, keeps: true).encoded[12] == 0)
    }

    @Test(arguments: [false, true]) func batchesCarryTheSharedFlagsForEveryMember(keeps: Bool) {
        let batch = DaemonBatchRequest(pack: "p", paths: ["a", "b"], standalone: false, shared: true, keeps: keeps)
        let bytes = batch.encoded
        #expect(bytes[12] == (keeps ? 6 : 2))
        guard case .batch(let length, let packLength, let standalone, let shared, let keptFlag) = parse(bytes) else {
            Issue.record("refused: \(parse(bytes))")
            return
        }
        #expect(!standalone && shared && keptFlag == keeps && 16 + length == bytes.count)
        let decoded = bytes.withUnsafeBytes {
            DaemonBatchRequest.decode(body: UnsafeRawBufferPointer(rebasing: $0[16...]), packLength: packLength, standalone: standalone,
                                      shared: shared, keeps: keptFlag)
        }
        #expect(decoded == .success(batch))
        #expect(batch.members.allSatisfy { $0.shared && !$0.standalone && $0.keeps == keeps })
    }

    static func header(_ edit: (inout [UInt8]) -> Void) -> [UInt8] {
        var h = DaemonRequest(pack: "abc", path: "x/y").encoded
        edit(&h)
        return h
    }

    @Test func badHeadersAreRefusedWithTheirStatus() {
        func status(_ h: [UInt8]) -> AssetPackError.Code? {
            if case .refused(let s, _) = parse(h) { return s }
            return nil
        }
        #expect(status(Self.header { $0[0] = 0x42 }) == .malformedRequest)            // magic
        #expect(status(Self.header { $0[4] = 2 }) == .unsupportedVersion)             // version
        #expect(status(Self.header { $0[6] = 7 }) == .malformedRequest)               // kind
        #expect(status(Self.header { $0[12] = 0x80 }) == .malformedRequest)           // unknown flag
        #expect(status(Self.header { $0[12] = 0x08 }) == .malformedRequest)           // the first bit past keep
        #expect(status(Self.header { $0[12] = 0x04 }) == .malformedRequest)           // keep without shared
        #expect(status(Self.header { $0[12] = 0x05 }) == .malformedRequest)           // keep with standalone, without shared
        #expect(status(Self.header { $0[13] = 0x01 }) == .malformedRequest)           // a flag in the high byte
        #expect(status(Self.header { $0[12] = 0x03 }) == nil)                         // standalone and shared
        #expect(status(Self.header { $0[12] = 0x07 }) == nil)                         // standalone, shared and keep
        if case .refused(_, let message) = parse(Self.header { $0[12] = 0x08 }) { #expect(message == "unknown flags 8") }
        if case .refused(_, let message) = parse(Self.header { $0[12] = 0x04 }) {
            #expect(message == "flags 4: keeping descriptions (4) without the shared position (2)")
        } else { Issue.record("keep without shared was not refused") }
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
    func roundTrip(_ error: AssetPackError) -> AssetPackError? {
        let reply = DaemonReply.failure(for: error)
        return reply.withUnsafeBytes { raw -> AssetPackError? in
            guard case .success(let h) = DaemonReply.parseHeader(raw), h.length == raw.count - 16 else { return nil }
            guard case .success(let e) = DaemonReply.error(status: h.status, body: UnsafeRawBufferPointer(rebasing: raw[16...]), socket: "/s") else { return nil }
            return e
        }
    }

    @Test func storeErrorsCrossTheWireWithTheirCodeReasonAndNames() {
        let cases: [StoreError] = [
            .assetPackNotFound("p"), .fileNotFound(path: "a/b", pack: "p"), .fileNotFound(path: "a/b", pack: nil),
            .ambiguousPath("a", packs: ["p", "q"]), .invalidPackID("x/y", reason: .badCharacter),
            .invalidPackID("x y", reason: .derivedFromFileName(.badCharacter)),
            .invalidPath("long", reason: .tooLongToIndex(maximum: 3)),
            .corruptRecord(pack: "p", member: "m", reason: .dataOutsideArchive),
            .corruptRecord(pack: "p", member: nil, reason: .undecodable("record is truncated")),
            .archiveMissing(pack: "p", path: "/c/packs/p.zip"),
            .archive(.crcMismatch(archive: "/c/packs/p.zip", path: "m", expected: 1, actual: 2)),
            .archive(.truncated(archive: "/c/packs/p.zip")),
            .limitExceeded(archive: "/c/packs/p.zip", pack: "p", member: "m", problem: .memberTooLarge(size: 2, maximum: 1)),
            .limitExceeded(archive: "/in/p.zip", pack: nil, member: nil, problem: .packTooLarge(size: 2, maximum: 1)),
        ]
        for engine in cases {
            let error = AssetPackError(engine)
            #expect(roundTrip(error) == error, "\(engine)")
        }
        // System and index errors keep their number and path; the message
        // says the daemon met them.
        for error in [AssetPackError(.system(Errno(Errno.tooManyOpenFiles.rawValue, operation: "open", path: "/c/packs/p.zip"))),
                      AssetPackError(.index(LMDBError(-30_791, operation: "mdb_txn_begin", path: "/c/index")))] {
            let back = roundTrip(error)
            #expect(back?.code == error.code && back?.systemError == error.systemError && back?.path == error.path)
            #expect(back?.message == "descriptor daemon: " + error.message)
        }
        // An error that has no wire status of its own comes back as a daemon failure.
        let other = roundTrip(AssetPackError(StoreError.lockTimeout(LockTimeout(path: "/l", seconds: 1, holder: .unknown))))
        #expect(other?.code == .daemonFailed && other?.path == "/s")
    }

    /// The status on the wire is the error's code: the header's bytes 6–7
    /// are `code.rawValue`, little-endian.
    @Test func wireStatusesAreTheErrorCodes() {
        for engine in [StoreError.assetPackNotFound("p"), .fileNotFound(path: "x", pack: nil), .archiveMissing(pack: "p", path: "/a")] {
            let error = AssetPackError(engine)
            let reply = DaemonReply.failure(for: error)
            #expect(UInt16(reply[6]) | UInt16(reply[7]) << 8 == UInt16(error.code.rawValue))
        }
        let success = DaemonReply.success(offset: 0, length: 0, size: 0, source: .memory, crc32: 0)
        #expect(success[6] == 0 && success[7] == 0)
    }

    @Test func refusalsComeBackWithTheirCode() {
        for code in [AssetPackError.Code.peerNotAllowed, .malformedRequest, .requestTooLarge, .unsupportedVersion, .daemonBusy, .daemonFailed] {
            let reply = DaemonReply.failure(code, message: "because")
            let back = reply.withUnsafeBytes { raw in
                DaemonReply.error(status: UInt16(code.rawValue), body: UnsafeRawBufferPointer(rebasing: raw[16...]), socket: "/s")
            }
            guard case .success(let e) = back, e.code == code, e.path == "/s", e.message.hasSuffix("because") else {
                Issue.record("\(code): \(back)")
                continue
            }
        }
    }

    @Test func successBodiesOutsideTheFileAreProtocolViolations() {
        func placement(offset: Int64, length: Int64, size: Int64) -> DaemonReply.Placement? {
            let reply = DaemonReply.success(offset: offset, length: length, size: size, source: .archive, crc32: 0x1234_5678)
            return reply.withUnsafeBytes { raw in
                if case .success(let p) = DaemonReply.placement(UnsafeRawBufferPointer(rebasing: raw[16...])) { return p }
                return nil
            }
        }
        #expect(placement(offset: 4096, length: 100, size: 8192) == .init(offset: 4096, length: 100, size: 8192, source: .archive, crc32: 0x1234_5678))
        #expect(placement(offset: 8000, length: 500, size: 8192) == nil)
        #expect(placement(offset: -1, length: 1, size: 8192) == nil)
        #expect(placement(offset: .max, length: .max, size: .max) == nil)
    }

    /// The kept-slot bytes of a success: read as the request that asked
    /// (or did not ask) to keep descriptions, and every reading the
    /// protocol rules out refused with what is wrong.
    @Test func keptSlotsAreReadOnlyWhereTheyCanBe() {
        func read(_ edit: (inout [UInt8]) -> Void, keeps: Bool = true) -> Result<DaemonReply.Placement, DaemonReply.ProtocolViolation> {
            var body = Array(DaemonReply.success(offset: 16, length: 4, size: 64, source: .archive, crc32: 9).dropFirst(16))
            edit(&body)
            return body.withUnsafeBytes { DaemonReply.placement($0, keeps: keeps) }
        }
        let plain = DaemonReply.Placement(offset: 16, length: 4, size: 64, source: .archive, crc32: 9)
        #expect(read({ _ in }) == .success(plain) && read({ _ in }, keeps: false) == .success(plain))
        var kept = plain
        kept.slot = 3
        #expect(read({ $0[25] = 3 }) == .success(kept))
        kept.reuse = true
        #expect(read({ $0[25] = 3; $0[26] = 1 }) == .success(kept))
        let encoded = DaemonReply.Success(offset: 16, length: 4, size: 64, source: .archive, crc32: 9, slot: 3, reuse: true)
        #expect(encoded.withUnsafeBytes { DaemonReply.placement(UnsafeRawBufferPointer(rebasing: $0[16...]), keeps: true) } == .success(kept))
        #expect(read({ $0[25] = 5 }) == .failure(.init("kept slot 5")))
        #expect(read({ $0[25] = 1 }, keeps: false) == .failure(.init("kept slot 1 to a request that keeps none")))
        #expect(read({ $0[24] = 1; $0[25] = 1 }) == .failure(.init("a memory file for kept slot 1")))
        #expect(read({ $0[26] = 1 }) == .failure(.init("a reuse of no kept slot")))
        #expect(read({ $0[25] = 1; $0[26] = 2 }) == .failure(.init("a success with reserved bytes 2 0")))
        #expect(read({ $0[27] = 1 }) == .failure(.init("a success with reserved bytes 0 1")))
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
