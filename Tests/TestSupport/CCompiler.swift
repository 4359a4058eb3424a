import Foundation

/// Builds C (and C++) programs with the system's `cc` / `c++` for the tests
/// of the project's C surfaces, into a temporary directory of their own.
package struct CCompiler {
    /// Where the programs are written; removed when the value goes away.
    package let directory: TemporaryDirectory

    package init(_ label: String = "cc") { directory = TemporaryDirectory("assetpacks-" + label) }

    /// What a compiler run said when it failed.
    package struct Failure: Error, CustomStringConvertible {
        package let description: String
    }

    /// Compiles and links `sources` into the executable `name` with
    /// `flags` (`-Wall -Wextra -Werror` and `-std=c11` come first), using
    /// `compiler` (`cc` or `c++`); returns its path.
    ///
    /// - Throws: ``Failure`` with the compiler's messages.
    @discardableResult
    package func build(_ name: String, sources: [String], flags: [String] = [], compiler: String = "cc",
                       standard: String? = "-std=c11") throws -> String {
        let output = directory.file(name)
        let arguments = ["-Wall", "-Wextra", "-Werror"] + (standard.map { [$0] } ?? []) + sources + ["-o", output] + flags
        let r = try Program.run(compiler, arguments)
        guard r.status == 0 else { throw Failure(description: "\(compiler) \(arguments.joined(separator: " ")):\n\(r.stderr)") }
        return output
    }

    /// Compiles `source` (C text) only, as `language` (`c`, `c++`) under
    /// `flags`, to check that it is accepted; returns the compiler's messages
    /// (empty when there were none).
    ///
    /// - Throws: ``Failure`` when it is refused.
    @discardableResult
    package func check(_ source: String, language: String = "c", flags: [String]) throws -> String {
        let file = directory.file("check-\(UUID().uuidString.prefix(8)).\(language == "c" ? "c" : "cc")")
        try Data(source.utf8).write(to: URL(fileURLWithPath: file))
        let compiler = language == "c" ? "cc" : "c++"
        let arguments = ["-fsyntax-only", "-Wall", "-Wextra", "-Werror", "-x", language] + flags + [file]
        let r = try Program.run(compiler, arguments)
        guard r.status == 0 else { throw Failure(description: "\(compiler) \(arguments.joined(separator: " ")):\n\(r.stderr)") }
        return r.stderr
    }
}
