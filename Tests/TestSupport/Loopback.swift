import Foundation

/// 127.0.0.1:`port` as a socket address.
private func loopbackAddress(port: UInt16) -> sockaddr_in {
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = port.bigEndian
    return address
}

/// A free TCP port on 127.0.0.1 at the time of the call: bound to port 0,
/// read back, closed. Another process may take it before the caller binds
/// it; callers that start servers on it retry.
package func freeLoopbackPort() throws -> UInt16 {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
    defer { close(fd) }
    var address = loopbackAddress(port: 0)
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer -> Int32 in
            guard bind(fd, pointer, length) == 0 else { return -1 }
            return getsockname(fd, pointer, &length)
        }
    }
    guard bound == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
    return UInt16(bigEndian: address.sin_port)
}

/// A blocking TCP socket (close-on-exec) connected to 127.0.0.1:`port`,
/// or `-errno`.
package func connectToLoopback(port: UInt16) -> Int32 {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    guard fd >= 0 else { return -errno }
    var address = loopbackAddress(port: port)
    let r = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
    }
    guard r == 0 else {
        let code = errno
        close(fd)
        return -code
    }
    return fd
}

/// Whether something accepts TCP connections on 127.0.0.1:`port`.
package func acceptsConnections(port: UInt16) -> Bool {
    let fd = connectToLoopback(port: port)
    guard fd >= 0 else { return false }
    close(fd)
    return true
}
