import Foundation
import AssetSystem

// systemd socket activation (``DescriptorDaemon/Configuration/acceptsSocketActivation``).
extension DescriptorDaemon {
    /// The listening socket systemd passed (descriptor 3), when `LISTEN_PID`
    /// is this process and `LISTEN_FDS` ≥ 1; then the `LISTEN_*` variables
    /// are unset, so that nothing this process starts takes them for its own.
    ///
    /// - Throws: `ENOTSOCK`, `EAFNOSUPPORT`, `ESOCKTNOSUPPORT`, `EINVAL`
    ///   or `EBADF` when descriptor 3 is not a listening Unix stream socket.
    static func activatedListener() throws(Errno) -> UnixListener? {
        let environment = ProcessInfo.processInfo.environment
        guard let pid = environment["LISTEN_PID"].flatMap(Int32.init), pid == getpid(),
              let count = environment["LISTEN_FDS"].flatMap(Int.init), count >= 1 else { return nil }
        for name in ["LISTEN_PID", "LISTEN_FDS", "LISTEN_FDNAMES"] { unsetenv(name) }
        do {
            return try UnixListener(inheriting: 3)
        } catch {
            throw error.with(operation: "systemd socket activation (LISTEN_FDS=\(count)): descriptor 3 is not a listening Unix stream socket")
        }
    }
}
