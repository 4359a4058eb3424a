import Testing
@testable import AssetServer

/// Request targets to paths beneath the root: decoding, and every target
/// that could name something outside refused with its reason.
@Suite struct RequestTargetTests {
    func segments(_ target: String) throws -> [String] {
        try RequestTarget(parsing: target).segments.map { String(decoding: $0, as: UTF8.self) }
    }

    func problem(_ target: String) -> TargetProblem? {
        do {
            _ = try RequestTarget(parsing: target)
            return nil
        } catch {
            return error
        }
    }

    @Test func decodesOriginAndAbsoluteForms() throws {
        #expect(try segments("/") == [])
        #expect(try segments("/a/b.zip") == ["a", "b.zip"])
        #expect(try segments("/a%20b/c%C3%A9?q=/../x") == ["a b", "cé"])
        #expect(try segments("//a/./b//") == ["a", "b"])
        #expect(try segments("http://example.com/a/b") == ["a", "b"])
        #expect(try segments("HTTP://example.com:8080/x?y") == ["x"])
        #expect(try segments("http://example.com") == [])
        #expect(try segments("http://example.com?x") == [])
        #expect(try RequestTarget(parsing: "/d/").trailingSlash)
        #expect(try !RequestTarget(parsing: "/d").trailingSlash)
        #expect(try RequestTarget(parsing: "/a%20b/c?x").rawPath == "/a%20b/c")
        #expect(try RequestTarget(parsing: "/a/b").relativePath == Array("a/b".utf8))
        #expect(try RequestTarget(parsing: "/").relativePath == Array(".".utf8))
    }

    @Test(arguments: [
        ("/../x", TargetProblem.dotDot), ("/a/../../x", .dotDot), ("/%2e%2e/x", .dotDot), ("/%2E%2E", .dotDot),
        ("/.%2e/x", .dotDot), ("http://h/../etc/passwd", .dotDot),
        ("/a%2Fb", .encodedSeparator), ("/a%2fb", .encodedSeparator), ("/a%5Cb", .encodedSeparator), ("/a\\b", .encodedSeparator),
        ("/%2e%2e%2fetc", .encodedSeparator),
        ("/a%00b", .nulByte), ("/a%", .invalidEscape), ("/a%2", .invalidEscape), ("/a%zz", .invalidEscape), ("/%g0", .invalidEscape),
        ("*", .notAPath), ("example.com:443", .notAPath), ("ftp://h/x", .notAPath), ("a/b", .notAPath),
        ("/a#b", .fragment),
    ])
    func refusesTargetsThatCouldLeaveTheRoot(_ target: String, _ expected: TargetProblem) {
        #expect(problem(target) == expected, "\(target)")
        #expect(HTTPRefusal.badTarget(expected).status == 400)
    }

    @Test func percentEncodesSegmentsForLinks() {
        #expect(RequestTarget.percentEncoded(Array("a b/é~.zip".utf8)) == "a%20b%2F%C3%A9~.zip")
    }
}
