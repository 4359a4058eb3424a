import Testing
import AssetStore

/// The manifest `version` a pack records in its archive comment.
@Suite struct RecordedVersionTests {
    @Test func aVersionRoundTripsAndIsLeftOutWhenAbsent() throws {
        let with = PackDescription(id: "Tutorial", downloadPolicy: .onDemand, platforms: [.linux], version: 12)
        #expect(try PackDescription.decode(archiveComment: with.archiveComment, archive: "a.zip") == with)
        let without = PackDescription(id: "Tutorial", downloadPolicy: .onDemand, platforms: [.linux])
        #expect(!String(decoding: without.archiveComment, as: UTF8.self).contains("version"))
        #expect(try PackDescription.decode(archiveComment: without.archiveComment, archive: "a.zip")?.version == nil)
    }

    @Test(arguments: ["0", "-3", "1.0", "\"4\"", "9007199254740992"])
    func aBadRecordedVersionIsRefused(version: String) {
        let comment = Array("\(PackDescription.commentMarker)\n{\"assetPackID\":\"T\",\"downloadPolicy\":{\"onDemand\":{}},\"version\":\(version)}".utf8)
        #expect(throws: StoreError.invalidRecordedManifest(archive: "a.zip", reason: "version must be a whole number from 1 to 9007199254740991")) {
            try PackDescription.decode(archiveComment: comment, archive: "a.zip")
        }
    }
}
