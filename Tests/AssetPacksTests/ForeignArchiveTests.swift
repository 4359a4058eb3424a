import Foundation
import Testing
import AssetPacks
import AssetArchive
import TestSupport

/// Archives from Python's zipfile install, and every member reads back as
/// exactly the bytes Python put in.
@Suite struct ForeignArchiveTests {
    @Test func everyMemberOfASeventyThousandEntryArchiveReadsBack() throws {
        let directory = TemporaryDirectory("foreign")
        let root = directory.path
        // Python writes the archive (deflated and stored, a data-descriptor
        // stream, UTF-8 names) and a digest of every member.
        let script = """
            import hashlib, io, json, sys, zipfile
            root = sys.argv[1]
            class Unseekable(io.RawIOBase):
                def __init__(self, f): self.f = f
                def writable(self): return True
                def write(self, b): return self.f.write(b)
            digests = {}
            with open(root + '/big.zip', 'wb') as raw:
                with zipfile.ZipFile(Unseekable(raw), 'w') as z:
                    for i in range(70001):
                        name = 'd%03d/ファイル%05d.txt' % (i % 300, i) if i % 1000 == 0 else 'd%03d/f%05d.bin' % (i % 300, i)
                        data = (b'member %d ' % i) * (i % 13) + bytes([i % 256]) * (i % 5)
                        method = zipfile.ZIP_DEFLATED if i % 2 else zipfile.ZIP_STORED
                        z.writestr(zipfile.ZipInfo(name), data, compress_type=method)
                        digests[name] = hashlib.sha256(data).hexdigest()
            json.dump(digests, open(root + '/digests.json', 'w'))
            """
        let python = try Program.run("python3", ["-c", script, root])
        #expect(python.status == 0, "\(python.stderr)")
        let digests = try #require(JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: root + "/digests.json"))) as? [String: String])
        #expect(digests.count == 70001)

        let manager = try AssetPackManager(container: AssetPackManager.Container(path: root + "/container"))
        let result = try manager.installPack(at: root + "/big.zip")
        #expect(result.pack.id == "big" && result.pack.memberCount == 70001)
        let members = try manager.members(inAssetPackWithID: "big")
        #expect(Set(members.map(\.path)) == Set(digests.keys))
        var mismatches: [String] = []
        for (name, digest) in digests {
            let data = try manager.contents(at: name, searchingInAssetPackWithID: "big")
            let ours = data.withUnsafeBytes { SHA256.hex(SHA256.hash($0)) }
            if ours != digest { mismatches.append(name) }
        }
        #expect(mismatches.isEmpty, "\(mismatches.prefix(5))")
    }
}
