import Foundation
import Testing
import AssetSystem
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// `UnixListener(inheriting:)`, which takes a socket handed over by socket
/// activation: a listening Unix stream socket is taken, anything else is
/// refused with its own errno and left open.
@Suite struct InheritedListenerTests {
    @Test func aListeningUnixStreamSocketIsTakenWithItsPath() throws {
        let dir = TemporaryDirectory()
        let path = dir.path + "/sock"
        let fd = try #require(Self.listening(path))
        let listener = try UnixListener(inheriting: fd)
        #expect(listener.path == path && listener.descriptor.rawValue == fd)
        #expect(fcntl(fd, F_GETFD) & FD_CLOEXEC != 0)
        let client = try UnixSocket.connect(to: path)
        let served = try listener.accept()
        try client.sendAll([7])
        #expect(try served.receive(upTo: 1).bytes == [7])
    }

    /// A socket(2), bind(2) and listen(2) of the caller's, as a service
    /// manager makes it (without close-on-exec).
    static func listening(_ path: String) -> Int32? {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: Array(path.utf8)) }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard fd >= 0, bound == 0, listen(fd, 8) == 0 else { return nil }
        return fd
    }

    @Test func anythingElseIsRefusedWithItsErrnoAndLeftOpen() throws {
        var pipeEnds: [Int32] = [0, 0]
        #expect(pipe(&pipeEnds) == 0)
        var pair: [Int32] = [0, 0]
        #expect(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &pair) == 0)
        var datagram: [Int32] = [0, 0]
        #expect(socketpair(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0, &datagram) == 0)
        let tcp = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        let cases: [(Int32, Errno)] = [(pipeEnds[0], Errno(ENOTSOCK)), (pair[0], .invalidArgument),
                                       (datagram[0], Errno(ESOCKTNOSUPPORT)), (tcp, Errno(EAFNOSUPPORT))]
        for (fd, expected) in cases {
            #expect(throws: expected) { _ = try UnixListener(inheriting: fd) }
            #expect(fcntl(fd, F_GETFD) >= 0, "descriptor \(fd) was closed")
        }
        for fd in pipeEnds + pair + datagram + [tcp] { close(fd) }
        // A number nothing has open (well past any descriptor limit).
        #expect(throws: Errno.badFileDescriptor) { _ = try UnixListener(inheriting: 1 << 30) }
    }
}
