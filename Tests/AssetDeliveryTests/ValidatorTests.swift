import Foundation
import Testing
import AssetDelivery
import AssetStore
import AssetSystem
import TestSupport

/// What a client keeps of a server's validators and sends back: only
/// entity-tags, and in `If-Range` only strong validators (RFC 9110 §8.8,
/// §13.1.5) — checked against a hostile server on 127.0.0.1 that logs the
/// requests it gets.
@Suite(.enabled(if: Program.available("python3"))) struct ValidatorTests {
    @Test(arguments: [
        ("\"abc\"", true, false), ("W/\"abc\"", true, true), ("\"\"", true, false), ("\"caf\u{e9}\"", true, false),
        ("\"a\u{01}b\"", false, false), ("\"a b\"", false, false), ("abc", false, false), ("\"abc", false, false),
        ("w/\"abc\"", false, false), ("W/abc", false, false), ("\"a\"b\"", false, false), ("\"a\u{7f}\"", false, false),
    ])
    func entityTagsFollowTheGrammar(text: String, isTag: Bool, isWeak: Bool) {
        #expect(HTTPValidator.isEntityTag(text) == isTag)
        #expect(HTTPValidator.isWeak(text) == isWeak)
    }

    @Test func onlyStrongValidatorsGoIntoIfRange() {
        let modified = "Sun, 06 Nov 1994 08:49:37 GMT"
        #expect(HTTPValidator.rangeValidator(etag: "\"v1\"", lastModified: modified, date: nil) == "\"v1\"")
        // A weak ETag allows neither it nor the date (the client has an entity-tag).
        #expect(HTTPValidator.rangeValidator(etag: "W/\"v1\"", lastModified: modified, date: "Mon, 07 Nov 1994 08:49:37 GMT") == nil)
        // Last-Modified is strong only with a Date at least a second after it.
        #expect(HTTPValidator.rangeValidator(etag: nil, lastModified: modified, date: "Sun, 06 Nov 1994 08:49:38 GMT") == modified)
        #expect(HTTPValidator.rangeValidator(etag: nil, lastModified: modified, date: modified) == nil)
        #expect(HTTPValidator.rangeValidator(etag: nil, lastModified: modified, date: nil) == nil)
        #expect(HTTPValidator.isRangeValidator(modified) && HTTPValidator.isRangeValidator("\"v1\""))
        #expect(!HTTPValidator.isRangeValidator("W/\"v1\"") && !HTTPValidator.isRangeValidator("\"v\u{1b}1\""))
    }

    /// A pack file served by a hostile server whose first answer is cut
    /// after a third of the body, and a downloader of one attempt.
    final class CutShort {
        let site: DownloaderTests.Site
        let entry: Catalog.Entry
        let file: [UInt8]
        let server: HostileServer
        var request: DownloadRequest { DownloadRequest(entry, url: server.baseURL + "/" + entry.url) }
        var cut: Int { file.count / 3 }

        init(headers: [(String, String)], currentValidators: [String]? = nil) throws {
            site = try DownloaderTests.Site()
            entry = try site.publish(version: 1, size: 1 << 20)
            file = try site.dir.read("site/" + entry.url)
            server = try HostileServer(routes: ["/" + entry.url: .init(headers: headers, body: file, honorsRange: true,
                                                                 currentValidators: currentValidators, cutAfter: file.count / 3)])
        }

        /// The first download: cut short, its partial file kept; returns the journal's validator.
        func firstAttempt() throws -> String? {
            #expect {
                try site.downloader(attempts: 1).download(request)
            } throws: { error in
                guard case .downloadFailed(_, "P", .retriesExhausted(attempts: 1), _) = error as? DeliveryError else { return false }
                return true
            }
            let entries = try site.store.journalEntries()
            #expect(entries.count == 1)
            return entries.first?.etag
        }

        /// The resume, which must complete with one range request.
        func resume() throws -> HostileServer.Request? {
            try site.downloader(attempts: 1).download(request)
            #expect(try site.big() == site.payload[1])
            let gets = server.requests()
            #expect(gets.count == 2, "\(gets.map(\.headers))")
            #expect(gets.first?.header("range") == nil)
            let resume = gets.last
            #expect(resume?.header("range") == "bytes=\(cut)-")
            return resume
        }
    }

    @Test(arguments: ["\"ab\u{01}cd\"", "\"ab\u{1b}[31mcd\"", "ab cd", "\"ab\u{7f}\""])
    func anETagThatIsNotAnEntityTagIsNeitherStoredNorSentBack(etag: String) throws {
        let s = try CutShort(headers: [("ETag", etag)])
        defer { s.server.stop() }
        #expect(try s.firstAttempt() == nil)
        let resume = try s.resume()
        #expect(resume?.header("if-range") == nil)
    }

    /// Apache's weak ETag for a file changed within the second: the resume
    /// asks for the rest with no If-Range (this server, like one that
    /// compares strongly, would answer a 200 of the whole file to any) and
    /// continues from the byte it had.
    @Test func aWeakETagIsNotSentInIfRangeAndTheResumeContinues() throws {
        let s = try CutShort(headers: [("ETag", "W/\"5f3-1a2b\""), ("Last-Modified", "Sun, 06 Nov 1994 08:49:37 GMT"),
                                       ("Date", "Mon, 07 Nov 1994 08:49:37 GMT")],
                             currentValidators: [])
        defer { s.server.stop() }
        #expect(try s.firstAttempt() == nil)
        let resume = try s.resume()
        #expect(resume?.header("if-range") == nil)
    }

    @Test func aStrongETagIsSentInIfRange() throws {
        let s = try CutShort(headers: [("ETag", "\"5f3-1a2b\"")], currentValidators: ["\"5f3-1a2b\""])
        defer { s.server.stop() }
        #expect(try s.firstAttempt() == "\"5f3-1a2b\"")
        #expect(try s.resume()?.header("if-range") == "\"5f3-1a2b\"")
    }

    /// Without an ETag, Last-Modified goes into If-Range only when the
    /// response's Date is a second or more after it.
    @Test(arguments: [("Sun, 06 Nov 1994 08:49:38 GMT", true), ("Sun, 06 Nov 1994 08:49:37 GMT", false)])
    func lastModifiedIsSentOnlyWhenStrong(date: String, strong: Bool) throws {
        let modified = "Sun, 06 Nov 1994 08:49:37 GMT"
        let s = try CutShort(headers: [("Last-Modified", modified), ("Date", date)], currentValidators: [modified])
        defer { s.server.stop() }
        #expect(try s.firstAttempt() == (strong ? modified : nil))
        #expect(try s.resume()?.header("if-range") == (strong ? modified : nil))
    }

    /// A journal entry an older version wrote with a weak ETag: not sent.
    @Test func aWeakValidatorInAnOldJournalIsNotSent() throws {
        let s = try CutShort(headers: [])
        defer { s.server.stop() }
        try s.site.leavePartial(s.request, count: s.cut, etag: "W/\"old\"")
        try s.site.downloader(attempts: 1).download(s.request)
        #expect(try s.site.big() == s.site.payload[1])
        let gets = s.server.requests()
        #expect(gets.count == 1 && gets.first?.header("range") == "bytes=\(s.cut)-" && gets.first?.header("if-range") == nil)
    }

    /// A catalog whose ETag has a control character: the cache keeps no
    /// `etag`, and the next fetch sends no If-None-Match.
    @Test func aCatalogETagWithAControlCharacterIsNotCached() throws {
        let dir = TemporaryDirectory("validators")
        let catalog = Catalog(sequence: 1, published: CatalogTime(seconds: 1_796_117_400), expires: nil, packs: [], channel: "default")
        let server = try HostileServer(routes: ["/catalog.json": .init(headers: [("ETag", "\"v\u{01}1\"")], body: catalog.encoded())])
        defer { server.stop() }
        var options = Downloader.Options()
        options.maximumAttempts = 1
        let fetcher = try CatalogFetcher(catalogURL: server.baseURL + "/catalog.json", publicKey: nil,
                                         store: AssetStore(container: GroupContainer(path: dir.file("container"))), options: options)
        #expect(try fetcher.fetch(now: CatalogTime(seconds: 1_796_117_400)).origin == .server)
        #expect(!FileManager.default.fileExists(atPath: fetcher.cacheDirectory + "/etag"))
        #expect(try fetcher.fetch(now: CatalogTime(seconds: 1_796_117_400)).origin == .server)
        let gets = server.requests().filter { $0.target == "/catalog.json" }
        #expect(gets.count == 2 && gets.allSatisfy { $0.header("if-none-match") == nil })
    }
}
