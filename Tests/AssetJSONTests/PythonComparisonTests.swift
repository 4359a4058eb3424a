import AssetJSON
import TestSupport
import Foundation
import Testing

/// Python 3, when the machine has it.
private let python: String? = ["/usr/bin/python3", "/usr/local/bin/python3"].first {
    FileManager.default.isExecutableFile(atPath: $0)
}

/// A second opinion on what strict JSON is: Python's `json` module, made
/// strict where it is lenient by default (it accepts NaN and Infinity,
/// repeated keys, lone surrogate escapes; it is told to refuse them here,
/// and the bytes are decoded as strict UTF-8 first).
@Suite(.enabled(if: python != nil))
struct PythonComparisonTests {

    static let oracle = """
        import json, sys, unicodedata
        def refuse(_): raise ValueError("constant")
        def pairs(members):
            keys = [unicodedata.normalize("NFC", k) for k, _ in members]
            if len(set(keys)) != len(keys): raise ValueError("duplicate")
            return dict(members)
        def check(v):
            if isinstance(v, str): v.encode("utf-8")
            elif isinstance(v, list):
                for x in v: check(x)
            elif isinstance(v, dict):
                for k, x in v.items(): check(k); check(x)
        for line in open(sys.argv[1]):
            try:
                text = bytes.fromhex(line.strip()).decode("utf-8")
                if text.startswith("\\ufeff"): raise ValueError("bom")
                check(json.loads(text, parse_constant=refuse, object_pairs_hook=pairs))
                print(1)
            except Exception:
                print(0)
        """

    static let tricky: [[UInt8]] = [
        "[]", "{}", "[1]", "[-0]", "[1e1]", "[1E+1]", "[1.5e-1]", "[0.0]", "[01]", "[1.]", "[.1]", "[-]", "[+1]",
        "[1e]", "[1e+]", "[2e-]", "[- 1]", "[-01]", "[0e1]", "[1ee1]", "[0x1]", "[Infinity]", "[-Infinity]", "[NaN]",
        "[1,]", "[,1]", "[1,,2]", "{\"a\":1,}", "{\"a\"}", "{\"a\":}", "{a:1}", "{'a':1}", "['a']", "[\"\\u0000\"]",
        "[\"\\uD800\"]", "[\"\\uDBFF\\uDFFF\"]", "[\"\\uDFFF\\uDBFF\"]", "[\"\\ud83d\\ude00\"]", "[\"\\x41\"]", "[\"\\a\"]",
        "[\"\\/\"]", "[\"\t\"]", "[\"\u{7F}\"]", "[\"a\nb\"]", "[true ,false, null ]", "[tru]", "[nulll]", "1 2", " 1 ",
        "\"\"", "", " ", "{\"a\":1,\"a\":2}", "{\"\u{E9}\":1,\"e\u{301}\":2}", "{\"a\":{\"a\":1}}", "[\u{0C}]", "[\u{A0}]",
        "\u{FEFF}[]", "[1]\u{0}", "[\"\u{2028}\"]", "[1e400]", "[-1e-400]", "[123456789012345678901234567890]",
        "// c\n[]", "/* */[]", "[[[]]]", "{\"\":\"\"}", "[\"\\uD800\\u\"]", "[\"\\u12\"]", "[\"\\u123g\"]",
        "{\"a\" :1 , \"b\" : 2 }", "[\"\\\"]", "\"\\\\\"", "[\"\u{10FFFF}\"]", "{\"a\":1}}", "]", "}",
        "{\"a\":1 \"b\":2}", "[\"a\",]", "{\"a\":[}", "{\"a\":1,\"b\"}", "[\"\\uDE00\"]", "[\"\\uD83D\\uDE00\\uDE00\"]",
        "{\"\\u0061\":1,\"a\":2}", "[\u{B}1]", "[1\r\n]", "[\"\\U0041\"]", "[1.0e+0001]", "[-0.0e-0]", "nul", "truefalse",
    ].map { Array($0.utf8) } + [
        [0x22, 0xc0, 0x80, 0x22], [0x22, 0xc1, 0xbf, 0x22], [0x22, 0xe0, 0x9f, 0xbf, 0x22], [0x22, 0xf0, 0x8f, 0xbf, 0xbf, 0x22],
        [0x22, 0xed, 0xa0, 0x80, 0x22], [0x22, 0xed, 0x9f, 0xbf, 0x22], [0x22, 0xee, 0x80, 0x80, 0x22],
        [0x22, 0xf4, 0x8f, 0xbf, 0xbf, 0x22], [0x22, 0xf4, 0x90, 0x80, 0x80, 0x22], [0x22, 0x80, 0x22], [0x22, 0xbf, 0x22],
        [0x22, 0xfe, 0x22], [0x22, 0xff, 0x22], [0x22, 0xc2, 0x22], [0x22, 0xe2, 0x82, 0x22], [0x22, 0xc2], [0x5b, 0xff, 0x5d],
    ]

    @Test func strictAcceptanceAgreesWithPython() throws {
        var rng = SplitMix64(seed: 0x5059_5448_4f4e)
        let seeds = seedDocuments.map { Array($0.utf8) }
        var corpus = Self.tricky
        for _ in 0 ..< 3000 { corpus.append(MutationTests.mutate(seeds.randomElement(using: &rng)!, &rng)) }

        let input = FileManager.default.temporaryDirectory.path + "/assetjson-python-\(UInt32.random(in: 0 ... .max)).txt"
        defer { try? FileManager.default.removeItem(atPath: input) }
        let hex = corpus.map { $0.map { String($0 >> 4, radix: 16) + String($0 & 0xf, radix: 16) }.joined() }
        try Data((hex.joined(separator: "\n") + "\n").utf8).write(to: URL(fileURLWithPath: input))

        let process = Process()
        process.executableURL = URL(fileURLWithPath: try #require(python))
        process.arguments = ["-c", Self.oracle, input]
        let out = Pipe()
        process.standardOutput = out
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let output = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        let verdicts = String(decoding: output, as: UTF8.self).split(separator: "\n").map { $0 == "1" }
        try #require(verdicts.count == corpus.count)

        var disagreements: [String] = []
        for (document, pythonAccepts) in zip(corpus, verdicts) {
            let accepts = refusal(document) == nil
            if accepts != pythonAccepts {
                disagreements.append("\(pythonAccepts ? "Python" : "AssetJSON") alone accepts \(document.map { String($0, radix: 16) })")
            }
        }
        #expect(disagreements.isEmpty, "\(disagreements.prefix(10))")
        #expect(verdicts.filter { $0 }.count > 100, "the corpus has valid documents too")
    }
}
