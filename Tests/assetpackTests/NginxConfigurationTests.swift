import Foundation
import Testing
import TestSupport

/// The nginx configuration shipped in `contrib/nginx/`, included as it is in
/// a real nginx on 127.0.0.1 and read back with curl: cache lifetimes,
/// content types, byte ranges, and what it refuses to serve.
@Suite(.timeLimit(.minutes(3)))
struct NginxConfigurationTests {
    let root = TemporaryDirectory("assetpacks-nginx-root")
    let pack = noise(300_000, seed: 41)

    init() throws {
        try root.write("demo-0123456789ab.zip", pack)
        try root.write("demo-0123456789ab.zip.pieces", Array(#"{"format":1}"#.utf8))
        try root.write("demo-0123456789ab.zip.glue", [0x50, 0x4b, 3, 4])
        try root.write("catalog.json", Array(#"{"format":1}"#.utf8))
        try root.write("catalog.json.sig", [1, 2, 3])
        try root.write(".publish.lock", [])
        try root.write("notes.txt", Array("hi\n".utf8))
        try root.write("sub/catalog.json", Array("{}".utf8))
    }

    @Test func contentAddressedPacksAreCachedForAYear() throws {
        let nginx = try NginxHost(root: root.path)
        let r = try Curl.fetch(nginx.baseURL + "/demo-0123456789ab.zip")
        #expect(r.status == 200)
        #expect(r.body == pack)
        #expect(r.headers["cache-control"] == "public, max-age=31536000, immutable")
        #expect(r.headers["content-type"] == "application/zip")
        #expect(r.headers["etag"] != nil)
        #expect(r.headers["accept-ranges"] == "bytes")
    }

    @Test func aPacksPieceMapAndGlueAreCachedForAYearAsThePackIs() throws {
        let nginx = try NginxHost(root: root.path)
        for (path, type, body) in [("/demo-0123456789ab.zip.pieces", "application/json", Array(#"{"format":1}"#.utf8)),
                                   ("/demo-0123456789ab.zip.glue", "application/octet-stream", [UInt8]([0x50, 0x4b, 3, 4]))] {
            let r = try Curl.fetch(nginx.baseURL + path)
            #expect(r.status == 200, "\(path)")
            #expect(r.body == body, "\(path)")
            #expect(r.headers["cache-control"] == "public, max-age=31536000, immutable", "\(path)")
            #expect(r.headers["content-type"] == type, "\(path)")
        }
        // Not content-addressed: a sidecar of a pack under a plain name may change.
        try root.write("demo.zip.pieces", Array("{}".utf8))
        let plain = try Curl.fetch(nginx.baseURL + "/demo.zip.pieces")
        #expect(plain.status == 200)
        #expect(plain.headers["cache-control"] == "max-age=60")
    }

    @Test func theCatalogAndItsSignatureAreRevalidatedEveryTime() throws {
        let nginx = try NginxHost(root: root.path)
        for (path, type) in [("/catalog.json", "application/json"), ("/catalog.json.sig", "application/octet-stream"),
                             ("/sub/catalog.json", "application/json")] {
            let r = try Curl.fetch(nginx.baseURL + path)
            #expect(r.status == 200, "\(path)")
            #expect(r.headers["cache-control"] == "no-cache", "\(path)")
            #expect(r.headers["content-type"] == type, "\(path)")
            // Revalidation: the ETag answers 304 with no body.
            let etag = try #require(r.headers["etag"])
            let again = try Curl.fetch(nginx.baseURL + path, ["-H", "If-None-Match: \(etag)"])
            #expect(again.status == 304, "\(path)")
            #expect(again.body.isEmpty)
        }
    }

    @Test func otherFilesGetAShortLifetime() throws {
        let nginx = try NginxHost(root: root.path)
        // A pack under a name that is not content-addressed may change.
        try root.write("demo.zip", pack)
        for path in ["/notes.txt", "/demo.zip"] {
            let r = try Curl.fetch(nginx.baseURL + path)
            #expect(r.status == 200)
            #expect(r.headers["cache-control"] == "max-age=60", "\(path)")
        }
    }

    @Test func oneRangeIsAnsweredExactlyAndSeveralGetTheWholeFile() throws {
        let nginx = try NginxHost(root: root.path)
        let url = nginx.baseURL + "/demo-0123456789ab.zip"
        let middle = try Curl.fetch(url, ["-r", "1000-1999"])
        #expect(middle.status == 206)
        #expect(middle.body == Array(pack[1000..<2000]))
        #expect(middle.headers["content-range"] == "bytes 1000-1999/\(pack.count)")
        let suffix = try Curl.fetch(url, ["-r", "-10"])
        #expect(suffix.status == 206)
        #expect(suffix.body == Array(pack.suffix(10)))
        let beyond = try Curl.fetch(url, ["-r", "\(pack.count)-"])
        #expect(beyond.status == 416)
        #expect(beyond.headers["content-range"] == "bytes */\(pack.count)")
        // max_ranges 1: a multi-range request is answered with the whole file.
        let several = try Curl.fetch(url, ["-r", "0-1,5-6"])
        #expect(several.status == 200)
        #expect(several.body == pack)
        // If-Range with the current ETag resumes; with another it restarts.
        let etag = try #require(middle.headers["etag"])
        let resumed = try Curl.fetch(url, ["-r", "299990-", "-H", "If-Range: \(etag)"])
        #expect(resumed.status == 206)
        #expect(resumed.body == Array(pack[299_990...]))
        let changed = try Curl.fetch(url, ["-r", "299990-", "-H", #"If-Range: "not-it""#])
        #expect(changed.status == 200)
        #expect(changed.body == pack)
    }

    @Test func dotFilesAndSymbolicLinksAreNotServed() throws {
        let nginx = try NginxHost(root: root.path)
        #expect(try Curl.fetch(nginx.baseURL + "/.publish.lock").status == 404)
        let outside = TemporaryDirectory("assetpacks-nginx-outside")
        try outside.write("secret", Array("secret".utf8))
        try FileManager.default.createSymbolicLink(atPath: root.file("secret-0123456789ab.zip"), withDestinationPath: outside.file("secret"))
        try FileManager.default.createSymbolicLink(atPath: root.file("inside.txt"), withDestinationPath: root.file("notes.txt"))
        for path in ["/secret-0123456789ab.zip", "/inside.txt"] {
            let r = try Curl.fetch(nginx.baseURL + path)
            #expect(r.status == 403, "\(path)")
            #expect(!r.body.elementsEqual(Array("secret".utf8)))
        }
        // Directories are not listed.
        #expect(try Curl.fetch(nginx.baseURL + "/sub/").status == 403)
    }
}
