import Foundation
import Testing

/// A way of writing a system constant as a number that the sources must not
/// use. Open flags and `AT_*` values differ between architectures (on arm64
/// x86-64's `O_DIRECTORY` is `O_DIRECT`), so they come from the C headers;
/// error numbers are spelled by name so that a reader need not know them.
struct NumberRule: Sendable, CustomTestStringConvertible {
    /// What the rule forbids, for the failure message.
    let name: String
    /// A regular expression over one line of code (comments and string
    /// contents removed).
    let pattern: String
    /// The directories, relative to the package root, whose Swift files the
    /// rule applies to.
    let scope: [String]

    var testDescription: String { name }

    static let all: [NumberRule] = [
        NumberRule(name: "open flags as a number", pattern: #"OpenOptions\(\s*rawValue:\s*-?[0-9]"#,
                   scope: ["Sources"]),
        NumberRule(name: "AT_FDCWD as -100", pattern: #"(^|[^\w.])-100\b"#, scope: ["Sources"]),
        // Octal beyond the permission bits (more than four digits) is a flag
        // or a file type: O_*, S_IF*. ZIP's mode bits in AssetArchive are the
        // format's, not the host's, so the rule stops at AssetSystem.
        NumberRule(name: "flag or file type as an octal literal", pattern: #"\b0o[0-7]{5,}\b"#,
                   scope: ["Sources/AssetSystem"]),
        NumberRule(name: "Errno made from a number", pattern: #"\bErrno\(\s*-?[0-9]"#,
                   scope: ["Sources", "Benchmarks", "Tests"]),
        // `-r == 13`: the shim returns the negated errno.
        NumberRule(name: "errno compared with a number",
                   pattern: #"(\berrno|\.rawValue|(^|[^\w)\]])-[A-Za-z_]\w*)\s*[=!]=\s*[1-9][0-9]*\b"#,
                   scope: ["Sources", "Benchmarks", "Tests"]),
    ]

    func regex() throws -> NSRegularExpression { try NSRegularExpression(pattern: pattern) }

    func matches(_ code: String) throws -> Bool { try regex().matches(code) }
}

/// Removes comments and the contents of string literals (plain, raw and
/// multi-line) from Swift source lines, so that only code is matched. Lines
/// are given in order; a block comment or a multi-line string carries over.
/// String interpolation is not parsed: its code counts as string contents.
struct CodeLines {
    private var inBlockComment = false
    /// The delimiter that ends the string literal being read, if any.
    private var stringClose: String?
    private var stringIsRaw = false

    mutating func code(of line: String) -> String {
        var out = ""
        var rest = Substring(line)
        while let c = rest.first {
            if inBlockComment {
                if rest.hasPrefix("*/") { inBlockComment = false; rest = rest.dropFirst(2) } else { rest = rest.dropFirst() }
                continue
            }
            if let close = stringClose {
                if rest.hasPrefix(close) { stringClose = nil; out += close; rest = rest.dropFirst(close.count); continue }
                rest = rest.dropFirst(c == "\\" && !stringIsRaw ? 2 : 1)
                continue
            }
            if rest.hasPrefix("//") { break }
            if rest.hasPrefix("/*") { inBlockComment = true; out += " "; rest = rest.dropFirst(2); continue }
            let hashes = rest.prefix { $0 == "#" }.count
            let opening = rest.dropFirst(hashes)
            if opening.hasPrefix("\"") {
                let quotes = opening.hasPrefix("\"\"\"") ? "\"\"\"" : "\""
                out += String(repeating: "#", count: hashes) + quotes
                stringClose = quotes + String(repeating: "#", count: hashes)
                stringIsRaw = hashes > 0
                rest = opening.dropFirst(quotes.count)
                continue
            }
            out.append(c)
            rest = rest.dropFirst()
        }
        // Only a multi-line string goes on past the end of its line.
        if let close = stringClose, !close.hasPrefix("\"\"\"") { stringClose = nil }
        return out
    }
}

extension NSRegularExpression {
    func matches(_ string: String) -> Bool {
        firstMatch(in: string, range: NSRange(string.startIndex..., in: string)) != nil
    }
}

@Suite struct SourceConstantsTests {
    /// The package root: the nearest directory above this file with a Package.swift.
    static var packageRoot: URL {
        var url = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        while !FileManager.default.fileExists(atPath: url.appendingPathComponent("Package.swift").path) {
            precondition(url.path != "/", "no Package.swift above \(#filePath)")
            url.deleteLastPathComponent()
        }
        return url
    }

    /// One line of a Swift file under the package root.
    struct SourceLine: Sendable {
        var path: String
        var number: Int
        var text: String
        /// The line without comments and string contents.
        var code: String
    }

    /// ``sourceLines()``, read once for all rules.
    static let allLines = Result { try sourceLines() }

    /// Every line of the Swift files under Sources, Benchmarks and Tests.
    static func sourceLines() throws -> [SourceLine] {
        let root = packageRoot
        var result: [SourceLine] = []
        for directory in ["Sources", "Benchmarks", "Tests"] {
            let base = root.appendingPathComponent(directory)
            let names = try FileManager.default.subpathsOfDirectory(atPath: base.path).filter { $0.hasSuffix(".swift") }
            for name in names.sorted() {
                let text = try String(contentsOf: base.appendingPathComponent(name), encoding: .utf8)
                var lines = CodeLines()
                for (index, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
                    let line = String(line)
                    result.append(SourceLine(path: directory + "/" + name, number: index + 1, text: line, code: lines.code(of: line)))
                }
            }
        }
        return result
    }

    @Test(arguments: NumberRule.all)
    func sourcesSpellNoSystemConstantAsANumber(_ rule: NumberRule) throws {
        let inScope = try Self.allLines.get().filter { line in rule.scope.contains { line.path.hasPrefix($0 + "/") } }
        #expect(!inScope.isEmpty, "no Swift files under \(rule.scope)")
        let regex = try rule.regex()
        let found = inScope.filter { regex.matches($0.code) }
            .map { "\($0.path):\($0.number): \($0.text.trimmingCharacters(in: .whitespaces))" }
        #expect(found.isEmpty, "\(rule.name):\n\(found.joined(separator: "\n"))")
    }

    /// Lines as they were before the constants came from the headers.
    @Test(arguments: [
        "    public static let directory = OpenOptions(rawValue: 0o200000)",
        "    public static let writeOnly = OpenOptions(rawValue: 0o1)",
        "        case .workingDirectory: return -100 // AT_FDCWD",
        "        let r = cas_mkdirat(-100, path, mode_t(permissions))",
        "    public var isRegularFile: Bool { mode & 0o170000 == 0o100000 }",
        #"            if n == 0 { throw Errno(5 /* EIO */, operation: "copy_file_range: source ended early") }"#,
        #"                throw .system(Errno(2, operation: "open", path: path))"#,
        "        if -r == Errno.wouldBlock.rawValue || -r == 13 /* EACCES */ { return false }",
        "            if errno == 4 { continue }",
        "        #expect(error.rawValue == 28)",
    ])
    func rulesCatchTheOldSpellings(_ line: String) throws {
        var lines = CodeLines()
        let code = lines.code(of: line)
        #expect(try NumberRule.all.contains { try $0.matches(code) })
    }

    @Test(arguments: [
        "        let fd = try FileDescriptor.open(path, [.readWrite, .create], permissions: 0o644)",
        "        public static let noOverwrite = PutFlags(rawValue: 1)",
        #"            if n == 0 { throw Errno.ioError.with(operation: "copy: source ended early") }"#,
        #"        throw Errno(-r, operation: "mkdir", path: path)"#,
        "        if code == Errno.interrupted.rawValue { continue }",
        "        case .workingDirectory: return AT_FDCWD",
        "        let left = count - 100",
        "        let last = values[count-1] == 2",
        "        #expect(n == 100)",
        "        #expect(try fd.read(count: 10, at: 90) == Array(90..<100))",
        #"        let proc = "/proc/self/fd/-100""#,
        #"        let s = "Errno(5, operation: x)""#,
        "        let x = 1 // Errno(5) in a comment, errno == 4",
        "        let x = 1 /* -100 */ + 2",
    ])
    func rulesLeaveOtherNumbersAlone(_ line: String) throws {
        var lines = CodeLines()
        let code = lines.code(of: line)
        #expect(try !NumberRule.all.contains { try $0.matches(code) })
    }
}
