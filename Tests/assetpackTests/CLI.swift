import Foundation
import TestSupport

/// Runs the real `assetpack` binary, built next to the test bundle.
enum CLI {
    /// The built `assetpack` executable.
    static let binary = Program.built("assetpack")

    /// Runs `assetpack args…` with the container in the environment.
    @discardableResult
    static func assetpack(_ args: [String], container: String? = nil, stdin: Data? = nil) throws -> Program.Result {
        var env = ProcessInfo.processInfo.environment
        if let container { env["ASSETPACKS_CONTAINER"] = container }
        return try Program.run(binary, args, environment: env, stdin: stdin)
    }
}

extension TemporaryDirectory {
    /// The container these tests use: `container` inside the directory.
    var container: String { file("container") }
}
