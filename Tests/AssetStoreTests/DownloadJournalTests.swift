import Testing
import AssetStore
import TestSupport

/// The journal's public reads and writes, and the entry's encoding.
@Suite struct DownloadJournalTests {
    @Test func entriesRoundTripWithAndWithoutAnETag() throws {
        let f = StoreFixture("journal")
        let store = try f.store()
        let tagged = JournalEntry(pack: "A", state: .downloading, url: "http://127.0.0.1:9/A.zip", catalogVersion: "3",
                                  stagingName: "A-1.download", expectedSize: 12, sha256: Array(repeating: 7, count: 32),
                                  etag: "\"abc-12\"")
        let untagged = JournalEntry(pack: "B", state: .redownload, url: "http://127.0.0.1:9/B.zip", catalogVersion: nil,
                                    stagingName: nil, expectedSize: 0, sha256: [])
        try store.putJournalEntry(tagged)
        try store.putJournalEntry(untagged)
        #expect(try store.journalEntry(forPack: "A") == tagged)
        #expect(try store.journalEntry(forPack: "B") == untagged)
        #expect(try store.journalEntry(forPack: "C") == nil)
        #expect(Set(try store.journalEntries()) == [tagged, untagged])
        var replaced = tagged
        replaced.etag = nil
        try store.putJournalEntry(replaced)
        #expect(try store.journalEntry(forPack: "A") == replaced)
        try store.removeJournalEntry(forPack: "A")
        try store.removeJournalEntry(forPack: "missing")
        #expect(try store.journalEntries() == [untagged])
    }
}
