internal import CAssetShim

extension FileDescriptor {
    /// Sets the file's permission bits to `mode` (07777 of it) when they
    /// differ and this process's effective uid owns the file; another
    /// user's file is left as it is. Returns whether the bits changed.
    /// The corresponding C functions are `fstat` and `fchmod`.
    @discardableResult
    public func setPermissionsIfOwned(_ mode: UInt32) throws(Errno) -> Bool {
        let fd = rawValue
        return try valueOrErrno("fchmod") { cas_fchmod_owned(fd, 0o7777, mode) } == 1
    }

    /// Adds the permission `bits` the file lacks when this process's
    /// effective uid owns it; another user's file is left as it is.
    /// Returns whether the bits changed. The corresponding C functions are
    /// `fstat` and `fchmod`.
    @discardableResult
    public func addPermissionsIfOwned(_ bits: UInt32) throws(Errno) -> Bool {
        let fd = rawValue
        return try valueOrErrno("fchmod") { cas_fchmod_owned(fd, 0, bits) } == 1
    }
}
