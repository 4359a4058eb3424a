import AssetPacks
import CAssetPacksHeader
#if canImport(Glibc)
import Glibc
#endif

/// The calling thread's last error (`ap_last_error_*`): one record per
/// thread (``ThreadLocal``), freed at thread exit.
final class ErrorRecord {
    var code: Int32 = 0
    var reason: Int32 = 0
    var systemError: Int32 = 0
    private(set) var message: UnsafeMutablePointer<CChar>?
    private(set) var pack: UnsafeMutablePointer<CChar>?
    private(set) var member: UnsafeMutablePointer<CChar>?
    private(set) var path: UnsafeMutablePointer<CChar>?

    deinit { clearStrings() }

    func set(code: Int32, reason: Int32, systemError: Int32, message: String,
             pack: String?, member: String?, path: String?) {
        clearStrings()
        self.code = code
        self.reason = reason
        self.systemError = systemError
        self.message = strdup(message)
        self.pack = pack.flatMap { strdup($0) }
        self.member = member.flatMap { strdup($0) }
        self.path = path.flatMap { strdup($0) }
    }

    private func clearStrings() {
        free(message)
        free(pack)
        free(member)
        free(path)
        message = nil
        pack = nil
        member = nil
        path = nil
    }

    private static let perThread = ThreadLocal { ErrorRecord() }

    /// This thread's record, made on first use.
    static var current: ErrorRecord { perThread.current }

    /// This thread's record if it has one (the getters do not make one).
    static var existing: ErrorRecord? { perThread.existing }
}

/// Records `error` as this thread's last error; returns its C code.
@inline(never)
func fail(_ error: AssetPackError) -> Int32 {
    let code = -error.code.rawValue
    ErrorRecord.current.set(code: code, reason: error.reason.rawValue, systemError: error.systemError ?? 0,
                            message: error.message, pack: error.pack, member: error.member, path: error.path)
    return code
}

/// Records one of the C layer's own errors (`AP_EINVAL`, `AP_ERANGE`,
/// `AP_EREADONLY`); returns `code`.
@inline(never)
func fail(_ code: Int32, _ message: String, pack: String? = nil, member: String? = nil, path: String? = nil) -> Int32 {
    ErrorRecord.current.set(code: code, reason: 0, systemError: 0, message: message, pack: pack, member: member, path: path)
    return code
}

@_cdecl("ap_last_error_message")
public func ap_last_error_message() -> UnsafePointer<CChar> {
    guard let message = ErrorRecord.existing?.message else { return emptyCString }
    return UnsafePointer(message)
}

@_cdecl("ap_last_error_code")
public func ap_last_error_code() -> Int32 { ErrorRecord.existing?.code ?? AP_OK }

@_cdecl("ap_last_error_reason")
public func ap_last_error_reason() -> Int32 { ErrorRecord.existing?.reason ?? 0 }

@_cdecl("ap_last_error_errno")
public func ap_last_error_errno() -> Int32 { ErrorRecord.existing?.systemError ?? 0 }

@_cdecl("ap_last_error_pack")
public func ap_last_error_pack() -> UnsafePointer<CChar>? { ErrorRecord.existing?.pack.map { UnsafePointer($0) } }

@_cdecl("ap_last_error_member")
public func ap_last_error_member() -> UnsafePointer<CChar>? { ErrorRecord.existing?.member.map { UnsafePointer($0) } }

@_cdecl("ap_last_error_path")
public func ap_last_error_path() -> UnsafePointer<CChar>? { ErrorRecord.existing?.path.map { UnsafePointer($0) } }
