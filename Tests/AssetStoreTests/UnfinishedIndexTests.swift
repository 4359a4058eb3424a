import Foundation
import Testing
@testable import AssetStore
import AssetIndex
import TestSupport

/// A container whose creation was cut short (a kill or a power cut) between
/// LMDB making the index and the store's first commit, the schema version
/// record: residue a crash is expected to leave, so verify calls it
/// reclaimable (`index.unfinished`), and the next writer finishes it. An
/// index that holds anything else without the record is still damage.
@Suite struct UnfinishedIndexTests {
    /// Deletes the schema version record, leaving everything else.
    func deleteSchema(_ store: AssetStore) throws {
        try store.update { (txn) throws(StoreError) in
            try indexCall { () throws(LMDBError) in _ = try txn.delete(store.meta, key: IndexSchema.schemaKey) }
        }
    }

    func looker(_ f: StoreFixture) throws -> AssetStore {
        var options = AssetStore.Options()
        options.createsContainer = false
        options.clearsStaleReaders = false
        return try f.store(options)
    }

    @Test func anEmptyIndexWithoutItsSchemaRecordIsReclaimableAndRepairWritesIt() throws {
        let f = StoreFixture()
        try deleteSchema(try f.store())
        let store = try looker(f)
        let report = try store.verify()
        #expect(report.findings.map(\.code) == [.indexUnfinished])
        #expect(report.findings.first?.severity == .reclaimable && report.findings.first?.object == "index")
        #expect(!report.hasErrors)

        let repaired = try store.verify(options: .init(repair: true))
        #expect(repaired.repairs.map(\.codes) == [[.indexUnfinished]] && repaired.repairs.allSatisfy(\.done))
        #expect(repaired.remaining.isEmpty)
        #expect(try store.verify().findings.isEmpty)
    }

    @Test func theNextWriterFinishesAnUnfinishedIndex() throws {
        let f = StoreFixture()
        try deleteSchema(try f.store())
        #expect(try looker(f).verify().findings.map(\.code) == [.indexUnfinished])
        let writer = try f.store()
        try writer.install(packAt: try f.pack("a.zip", id: "a", ["x": [1]]))
        #expect(try looker(f).verify().findings.isEmpty)
    }

    @Test func anIndexWithRecordsButNoSchemaRecordIsStillAnError() throws {
        let f = StoreFixture()
        let writer = try f.store()
        try writer.install(packAt: try f.pack("a.zip", id: "a", ["x": [1]]))
        try deleteSchema(writer)
        let report = try looker(f).verify()
        #expect(report.findings.map(\.code) == [.schemaMissing])
        #expect(report.hasErrors)
    }
}
