import Foundation
import Testing
import AssetDelivery
import AssetStore
import AssetSystem
@testable import AssetPacks

/// The download request (kind 2) and its replies, without a daemon.
@Suite struct DaemonDownloadProtocolTests {
    func decode(_ bytes: [UInt8]) -> DaemonDownloadRequest? {
        bytes.withUnsafeBytes { raw -> DaemonDownloadRequest? in
            guard case .download(let length, let packLength, let wait, let discretionary) =
                    DaemonRequest.parseHeader(UnsafeRawBufferPointer(rebasing: raw[..<16])),
                  16 + length == raw.count else { return nil }
            return DaemonDownloadRequest.decode(body: UnsafeRawBufferPointer(rebasing: raw[16...]), packLength: packLength,
                                                wait: wait, discretionary: discretionary)
        }
    }

    @Test(arguments: [
        DaemonDownloadRequest(pack: "com.example.Big", catalogURL: "https://cdn.example/catalog.json",
                              publicKey: "ed25519:" + String(repeating: "A", count: 43) + "=", caFile: "/etc/ca.pem",
                              wait: true, discretionary: false),
        DaemonDownloadRequest(pack: "p", catalogURL: "http://127.0.0.1:8/c.json", publicKey: nil, caFile: nil,
                              wait: false, discretionary: true),
        DaemonDownloadRequest(pack: "", catalogURL: "", publicKey: nil, caFile: "/données", wait: true, discretionary: true),
    ])
    func requestsRoundTrip(_ request: DaemonDownloadRequest) {
        let bytes = request.encoded
        #expect(Array(bytes[0..<4]) == Array("APDQ".utf8) && bytes[6] == 2 && bytes[7] == 0)
        #expect(decode(bytes) == request)
    }

    /// The channel is a fourth field, sent only when it is not `default`:
    /// a default request is the three-field body a daemon before channels reads.
    @Test func theChannelIsAFourthFieldOnlyWhenNotDefault() throws {
        var request = DaemonDownloadRequest(pack: "p", catalogURL: "http://h/c.json", publicKey: nil, caFile: nil,
                                            wait: true, discretionary: false)
        let plain = request.encoded
        #expect(plain.count == 16 + 1 + (2 + 15) + 2 + 2)
        #expect(decode(plain)?.channel == "default")
        request.channel = "beta"
        let withChannel = request.encoded
        let field: [UInt8] = [4, 0] + Array("beta".utf8)
        #expect(Array(withChannel[16...]) == Array(plain[16...]) + field)
        #expect(decode(request.encoded) == request)
        request.channel = "be ta"
        #expect {
            try DescriptorDaemon.Downloads.key(of: decode(request.encoded)!, deadlines: .init())
        } throws: { error in
            (error as? AssetPackError)?.code == .invalidOption && (error as? AssetPackError)?.field == "catalog.channel"
        }
    }

    @Test func bodiesWhoseFieldsDoNotFillThemAreNotRequests() {
        let good = DaemonDownloadRequest(pack: "p", catalogURL: "http://h/c.json", publicKey: nil, caFile: nil,
                                         wait: true, discretionary: false).encoded
        func withBody(_ body: [UInt8]) -> [UInt8] {
            var h = Array(good[..<16])
            h.replaceSubrange(8..<12, with: withUnsafeBytes(of: UInt32(body.count).littleEndian, Array.init))
            return h + body
        }
        let body = Array(good[16...])
        #expect(decode(withBody(body)) != nil)
        #expect(decode(withBody(body + [0])) == nil)                       // a byte past the fields
        #expect(decode(withBody(Array(body.dropLast()))) == nil)           // the last field cut short
        #expect(decode(withBody(Array(body.prefix(1 + 2 + 15)))) == nil)   // fields missing
        var badUTF8 = body
        badUTF8[3] = 0xff                                                  // inside the URL
        #expect(decode(withBody(badUTF8)) == nil)
        // A download's flags are wait and discretionary; anything else is refused.
        var flags = good
        flags[12] = 4
        guard case .refused(.malformedRequest, _) = flags.withUnsafeBytes({ DaemonRequest.parseHeader($0) }) else {
            Issue.record("flag 4 accepted")
            return
        }
    }

    @Test func outcomesRoundTrip() {
        for outcome in [DaemonReply.DownloadOutcome.installed(version: "12"), .accepted] {
            let reply = DaemonReply.success(outcome)
            #expect(reply[6] == 0 && reply[7] == 0)
            let back = reply.withUnsafeBytes { DaemonReply.downloadOutcome(UnsafeRawBufferPointer(rebasing: $0[16...])) }
            #expect(back == .success(outcome))
        }
        // An "accepted" that names a version, an unknown result, a short body.
        for body: [UInt8] in [[1, 1, 0, 0x31], [2, 0, 0], [0, 5, 0, 0x31]] {
            guard case .failure = body.withUnsafeBytes({ DaemonReply.downloadOutcome($0) }) else {
                Issue.record("\(body) accepted")
                continue
            }
        }
    }

    /// Encodes `error` as the daemon answers a download request, and decodes
    /// it as the client does.
    func roundTrip(_ error: AssetPackError) -> AssetPackError? {
        DaemonReply.downloadFailure(for: error).withUnsafeBytes { raw -> AssetPackError? in
            guard case .success(let h) = DaemonReply.parseHeader(raw), h.length == raw.count - 16,
                  case .success(let e) = DaemonReply.error(status: h.status, body: UnsafeRawBufferPointer(rebasing: raw[16...]), socket: "/s")
            else { return nil }
            return e
        }
    }

    @Test func downloadErrorsCrossTheWireWithTheirCodeReasonAndNames() {
        let url = "http://h/Big-1.zip"
        let cases: [AssetPackError] = [
            AssetPackError(delivery: .downloadFailed(url: url, pack: "Big", problem: .notFound(status: 404), detail: "")),
            AssetPackError(delivery: .downloadFailed(url: url, pack: "Big", problem: .sizeMismatch(expected: 2, received: 3), detail: "")),
            AssetPackError(delivery: .downloadFailed(url: url, pack: "Big", problem: .retriesExhausted(attempts: 6), detail: "reset")),
            AssetPackError(delivery: .catalogUnavailable(url: "http://h/catalog.json", problem: .notFound(status: 404), detail: "")),
            AssetPackError(.invalidCatalog, reason: .catalogMissingField, path: "http://h/catalog.json", field: "packs[0].sha256",
                           message: "catalog: packs[0].sha256 is missing"),
            AssetPackError(.invalidKey, reason: .malformedPublicKey, path: "public key", message: "not a key"),
            AssetPackError(.unsupportedURL, pack: "Big", path: "ftp://h/c.json", message: "not http"),
            AssetPackError(.lockTimeout, path: "/c/downloads/Big.lock", message: "timed out"),
            AssetPackError(.notInstalled("Nope")),
            AssetPackError(.invalidPackID("a/b", reason: .badCharacter)),
        ]
        for error in cases {
            #expect(roundTrip(error) == error, "\(error)")
        }
        // A system error keeps its number; the message says the daemon met it.
        let system = AssetPackError(.system(Errno(Errno.noSpace.rawValue, operation: "write", path: "/c/staging/x")))
        let back = roundTrip(system)
        #expect(back?.code == .system && back?.systemError == system.systemError && back?.path == system.path)
    }

    @Test func aPieceMapErrorHasItsCodeReasonAndNamesAndCrossesTheWire() {
        let url = "http://h/Big-0123456789ab.zip.pieces"
        let error = AssetPackError(delivery: .badPieceMap(url: url, pack: "Big", problem: .overlapping, detail: "members[3] overlaps"))
        #expect(error.code == .invalidPieceMap && error.reason == .pieceMapOverlapping && error.pack == "Big" && error.path == url)
        #expect(error.message == "\(url): unusable piece map of 'Big': members[3] overlaps")
        #expect(roundTrip(error) == error)
    }
}
