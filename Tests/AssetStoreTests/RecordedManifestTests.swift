import Testing
import TestSupport
import AssetStore

/// The manifest a pack records in its archive comment: refusals that say
/// where, and bytes that stay the same from version to version.
@Suite struct RecordedManifestTests {
    @Test(arguments: [
        ("[2e-]", "not valid JSON: line 1, column 5: invalid number: expected a digit in the exponent, found ']'"),
        ("{\"assetPackID\":\"a\",\n \"assetPackID\":\"b\"}", "not valid JSON: line 2, column 2: duplicate key \"assetPackID\" in object"),
        ("{\"assetPackID\":\"a\"} // note", "not valid JSON: line 1, column 21: unexpected '/' after the document's value"),
        ("[]", "not a JSON object"),
        ("{\"downloadPolicy\":{\"onDemand\":{}}}", "assetPackID is missing"),
    ])
    func recordedManifestRefusalsSayWhere(json: String, reason: String) {
        let comment = Array("AssetPacks-Manifest/1\n".utf8) + Array(json.utf8)
        #expect {
            try PackDescription.decode(archiveComment: comment, archive: "p.zip")
        } throws: { error in
            guard case StoreError.invalidRecordedManifest("p.zip", let r) = error else { return false }
            return r == reason
        }
    }

    @Test func recordedManifestWithInvalidUTF8IsRefused() {
        let comment = Array("AssetPacks-Manifest/1\n{\"assetPackID\":\"".utf8) + [0xc0, 0xaf] + Array("\"}".utf8)
        #expect {
            try PackDescription.decode(archiveComment: comment, archive: "p.zip")
        } throws: { error in
            guard case StoreError.invalidRecordedManifest(_, let r) = error else { return false }
            return r == "not valid JSON: line 1, column 17: invalid UTF-8 (byte 0xC0)"
        }
    }

    /// Packs made before stay byte-identical: the recorded manifest is the
    /// marker line and compact JSON with sorted keys, exactly these bytes.
    @Test(arguments: [
        (PackDescription(id: "bench", downloadPolicy: .onDemand, platforms: [.linux]),
         #"{"assetPackID":"bench","downloadPolicy":{"onDemand":{}},"platforms":["linux"]}"#),
        (PackDescription(id: "x.y-z_1", downloadPolicy: .essential([.subsequentUpdate]), platforms: [.linux, .visionOS]),
         #"{"assetPackID":"x.y-z_1","downloadPolicy":{"essential":{"installationEventTypes":["subsequentUpdate"]}},"platforms":["linux","visionOS"]}"#),
        (PackDescription(id: "Tutorial", downloadPolicy: .prefetch([.subsequentUpdate, .firstInstallation]), platforms: []),
         #"{"assetPackID":"Tutorial","downloadPolicy":{"prefetch":{"installationEventTypes":["firstInstallation","subsequentUpdate"]}},"platforms":[]}"#),
    ])
    func archiveCommentBytesAreStable(description: PackDescription, json: String) {
        #expect(description.archiveComment == Array(("AssetPacks-Manifest/1\n" + json).utf8))
    }
}
