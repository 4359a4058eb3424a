import AssetPacks

/// How a command fails: a usage error (exit 64) or a failure (exit 1, or the
/// given code).
enum CLIError: Error {
    case usage(String)
    case failure(String, code: Int32 = ExitCode.failure)

    /// A failure from the library, one line.
    static func from(_ error: AssetPackError) -> CLIError { .failure(error.message) }
}

/// Exit codes, as STYLE.md gives them.
enum ExitCode {
    static let success: Int32 = 0
    static let failure: Int32 = 1
    static let usage: Int32 = 64
}

extension CLIError {
    /// The message, without the exit code.
    var message: String {
        switch self {
        case .usage(let message), .failure(let message, _): message
        }
    }
}
