internal import CAssetShim

/// Runs `body`, a shim call that returns a non-negative value or a negated
/// errno, retrying while it reports `EINTR`. The one place EINTR is retried.
@inline(__always)
package func valueOrErrno<T: SignedInteger>(
    _ operation: @autoclosure () -> String, path: String? = nil, _ body: () -> T
) throws(Errno) -> T {
    while true {
        let result = body()
        if result >= 0 { return result }
        let code = Int32(truncatingIfNeeded: 0 - result)
        if code == Errno.interrupted.rawValue { continue }
        throw Errno(code, operation: operation(), path: path)
    }
}

/// As `valueOrErrno`, without retrying: for `close`, and for waits that a signal
/// is meant to end.
@inline(__always)
package func valueOrErrnoOnce<T: SignedInteger>(
    _ operation: @autoclosure () -> String, path: String? = nil, _ body: () -> T
) throws(Errno) -> T {
    let result = body()
    if result >= 0 { return result }
    throw Errno(Int32(truncatingIfNeeded: 0 - result), operation: operation(), path: path)
}
