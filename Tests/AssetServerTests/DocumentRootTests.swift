import Foundation
import Testing
import TestSupport
@testable import AssetServer

/// Lookups beneath the served directory, with `openat2` and with the
/// component-by-component fallback: neither ever leaves the directory.
@Suite struct DocumentRootTests {
    func target(_ path: String) throws -> RequestTarget { try RequestTarget(parsing: path) }

    func kind(_ lookup: DocumentRoot.Lookup) -> String {
        switch lookup {
        case .file(let f): "file \(f.size)"
        case .listing: "listing"
        case .redirect(let to): "redirect \(to)"
        case .notFound: "404"
        case .forbidden: "403"
        case .failed(let e): "failed \(e)"
        }
    }

    @Test(arguments: [true, false])
    func neverLeavesTheDirectory(_ openat2: Bool) throws {
        let dir = TemporaryDirectory("assetpack-docroot")
        try dir.write("root/a.txt", "abc")
        try dir.write("root/sub/b.txt", "b")
        try dir.write("secret.txt", "secret")
        #expect(symlink(dir.file("secret.txt"), dir.file("root/abs")) == 0)
        #expect(symlink("../secret.txt", dir.file("root/rel")) == 0)
        #expect(symlink("..", dir.file("root/up")) == 0)
        #expect(symlink("a.txt", dir.file("root/inside")) == 0)
        #expect(symlink("sub", dir.file("root/subdir-link")) == 0)
        let root = try DocumentRoot(path: dir.file("root"), allowOpenat2: openat2)
        #expect(kind(root.lookup(try target("/a.txt"))) == "file 3")
        #expect(kind(root.lookup(try target("/sub/b.txt"))) == "file 1")
        #expect(kind(root.lookup(try target("/sub"))) == "redirect /sub/")
        #expect(kind(root.lookup(try target("/sub/"))) == "listing")
        #expect(kind(root.lookup(try target("/"))) == "listing")
        #expect(kind(root.lookup(try target("/nothing"))) == "404")
        #expect(kind(root.lookup(try target("/a.txt/x"))) == "404")
        for escape in ["/abs", "/rel", "/up/secret.txt", "/up/root/a.txt"] {
            #expect(kind(root.lookup(try target(escape))) == "404", "\(escape)")
        }
        // Inside the directory: followed with openat2, refused by the fallback.
        #expect(kind(root.lookup(try target("/inside"))) == (openat2 ? "file 3" : "404"))
        #expect(kind(root.lookup(try target("/subdir-link/b.txt"))) == (openat2 ? "file 1" : "404"))
    }

    @Test func aMissingDirectoryOrAFileIsAServerError() {
        let dir = TemporaryDirectory("assetpack-docroot")
        #expect(throws: ServerError.self) { try DocumentRoot(path: dir.file("missing")) }
        do {
            _ = try DocumentRoot(path: dir.file("missing"))
        } catch {
            guard case .directory(let path, let errno) = error else { Issue.record("\(error)"); return }
            #expect(path == dir.file("missing") && errno == .noSuchFile)
        }
    }

    @Test func listingsEscapeNamesAndLinkThemEncoded() throws {
        let dir = TemporaryDirectory("assetpack-docroot")
        try dir.write("root/<b>&.txt", "x")
        try dir.write("root/d/x", "x")
        let root = try DocumentRoot(path: dir.file("root"))
        guard case .listing(let html) = root.lookup(try target("/")) else {
            Issue.record("no listing")
            return
        }
        let text = String(decoding: html, as: UTF8.self)
        #expect(text.contains("<a href=\"%3Cb%3E%26.txt\">&lt;b&gt;&amp;.txt</a>"))
        #expect(text.contains("<a href=\"d/\">d/</a>"))
        #expect(text.hasPrefix("<!DOCTYPE html>"))
    }

    /// A name with ESC, a C1 control or a bidi override shows them spelled
    /// out, never raw; its link is the exact name, percent-encoded.
    @Test func listingsNeverHoldControlOrBidiCharactersRaw() throws {
        let dir = TemporaryDirectory("assetpack-docroot")
        try dir.write("root/red\u{1b}[31m.txt", "x")
        try dir.write("root/invoice\u{202e}fdp.exe", "x")
        try dir.write("root/c1\u{9b}2J'q.txt", "x")
        let root = try DocumentRoot(path: dir.file("root"))
        guard case .listing(let html) = root.lookup(try target("/")) else {
            Issue.record("no listing")
            return
        }
        #expect(!html.contains { $0 < 0x20 && $0 != 0x0a || $0 == 0x7f })
        let text = String(decoding: html, as: UTF8.self)
        #expect(!text.unicodeScalars.contains { (0x80 ..< 0xa0).contains($0.value) || $0.value == 0x202e })
        #expect(text.contains("<a href=\"red%1B%5B31m.txt\">red\\x1b[31m.txt</a>"))
        #expect(text.contains("<a href=\"invoice%E2%80%AEfdp.exe\">invoice\\u{202e}fdp.exe</a>"))
        #expect(text.contains(">c1\\u{9b}2J&#39;q.txt</a>"))
    }
}
