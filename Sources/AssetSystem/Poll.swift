internal import CAssetShim

/// Waiting for descriptors to become readable.
public enum Poll {
    /// Waits until at least one of `descriptors` (at most 64) is readable, at
    /// end of stream or in error, or until `timeout` seconds pass (`nil`: no
    /// limit).
    ///
    /// - Returns: the positions in `descriptors` of those that are ready;
    ///   empty when the time ran out.
    /// - Throws: `Errno` from `poll` (`EINVAL` for more than 64 descriptors).
    ///   A signal does not end the wait early. The corresponding C function is `poll`.
    public static func readable(_ descriptors: [Int32], timeout: Double?) throws(Errno) -> [Int] {
        let milliseconds: Int32 = timeout.map { Int32(clamping: Int(($0 * 1000).rounded(.up))) } ?? -1
        var mask: UInt64 = 0
        _ = try descriptors.withUnsafeBufferPointer { fds in
            Result { () throws(Errno) in
                try valueOrErrno("poll") { cas_poll_readable(fds.baseAddress, Int32(fds.count), max(milliseconds, -1), &mask) }
            }
        }.get()
        return descriptors.indices.filter { mask & (1 << UInt64($0)) != 0 }
    }
}
