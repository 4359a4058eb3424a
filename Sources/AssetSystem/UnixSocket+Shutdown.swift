internal import CAssetShim

extension UnixSocket {
    /// Ends the sending direction only: the peer reads end of stream after
    /// what was sent, and can still answer. The corresponding C function is
    /// `shutdown` with `SHUT_WR`.
    public func shutdownWriting() throws(Errno) {
        let sock = descriptor.rawValue
        _ = try valueOrErrno("shutdown") { cas_shutdown_write(sock) }
    }
}
