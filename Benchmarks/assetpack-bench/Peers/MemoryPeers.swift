#if canImport(Glibc)
import Glibc
#endif

/// `memcpy` of a whole buffer into another, both already faulted in: the
/// memory limit.
struct MemcpyCopy: Operation {
    let source: ByteBuffer
    let destination: ByteBuffer

    mutating func run(_ item: Int) throws -> Int {
        memcpy(destination.pointer, source.pointer, source.capacity)
        return Int(destination.pointer.load(as: UInt8.self))
    }
}

/// A bare Unix-socket round trip: one byte to an echo thread and back over
/// a `socketpair`, the floor under any descriptor handout by a daemon.
final class EchoSocket {
    let client: Int32
    private let server: Int32
    private let thread: pthread_t

    init() throws {
        var fds: [Int32] = [-1, -1]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &fds) == 0 else {
            throw PeerError("socketpair: errno \(errno)")
        }
        client = fds[0]
        server = fds[1]
        var t = pthread_t()
        let rc = pthread_create(&t, nil, { argument in
            let fd = Int32(Int(bitPattern: argument))
            var byte: UInt8 = 0
            while read(fd, &byte, 1) == 1 {
                if write(fd, &byte, 1) != 1 { break }
            }
            return nil
        }, UnsafeMutableRawPointer(bitPattern: Int(server)))
        guard rc == 0 else {
            close(client)
            close(server)
            throw PeerError("pthread_create: \(rc)")
        }
        thread = t
    }

    deinit {
        // The echo thread reads end of file and returns; then both ends close.
        shutdown(client, Int32(SHUT_RDWR))
        pthread_join(thread, nil)
        close(client)
        close(server)
    }
}

struct UnixSocketRoundTrip: Operation {
    let socket: EchoSocket

    @inline(__always)
    mutating func run(_ item: Int) throws -> Int {
        var byte = UInt8(truncatingIfNeeded: item)
        guard write(socket.client, &byte, 1) == 1, read(socket.client, &byte, 1) == 1 else {
            throw PeerError("socket round trip: errno \(errno)")
        }
        return Int(byte)
    }
}
