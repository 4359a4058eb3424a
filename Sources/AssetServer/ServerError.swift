import AssetSystem

/// Why the server could not start or had to stop, with the address or path it concerns.
package enum ServerError: Error, Sendable, CustomStringConvertible {
    /// The directory to serve could not be opened (missing, not a directory, not readable).
    case directory(path: String, Errno)
    /// The address is not a numeric IPv4 or IPv6 address.
    case invalidAddress(String)
    /// Listening failed (the port is taken, the address is not this host's, …).
    case listen(address: String, port: Int, Errno)
    /// More connections were asked for than descriptors are available.
    case tooManyConnections(asked: Int, available: Int)
    /// A system call of the event loop failed.
    case system(Errno)

    package var description: String {
        switch self {
        case .directory(let path, let e): "cannot serve '\(path)': \(e.message)"
        case .invalidAddress(let a): "'\(a)' is not a numeric IPv4 or IPv6 address"
        case .listen(let a, let p, let e): "cannot listen on \(HTTPServer.hostPort(a, p)): \(e.message)"
        case .tooManyConnections(let asked, let available):
            "--max-connections \(asked) needs more descriptors than the limit allows (at most \(available))"
        case .system(let e): "\(e)"
        }
    }
}
