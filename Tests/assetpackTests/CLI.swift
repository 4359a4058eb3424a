import Foundation
import TestSupport

/// Runs the real `assetpack` binary, built next to the test bundle.
enum CLI {
    /// The built `assetpack` executable.
    static let binary = Program.built("assetpack")

    /// A system root with no files: neither on battery nor busy. The CLI's
    /// children get it unless a test names another (ASSETPACKS_SYSTEM_ROOT).
    static let neutralSystemRoot = "/nonexistent/assetpacks-test-system"

    /// Runs `assetpack args…` with the container in the environment.
    @discardableResult
    static func assetpack(_ args: [String], container: String? = nil, stdin: Data? = nil) throws -> Program.Result {
        var env = ProcessInfo.processInfo.environment
        if let container { env["ASSETPACKS_CONTAINER"] = container }
        // Prefetch downloads defer on battery and load: a test machine's own
        // must not decide a test, so tests name the conditions they want.
        if env["ASSETPACKS_SYSTEM_ROOT"] == nil { env["ASSETPACKS_SYSTEM_ROOT"] = neutralSystemRoot }
        return try Program.run(binary, args, environment: env, stdin: stdin)
    }
}

extension TemporaryDirectory {
    /// The container these tests use: `container` inside the directory.
    var container: String { file("container") }
}
