import Foundation
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

/// A bare Unix-socket round trip: one byte to an echo and back, the floor
/// under any descriptor handout by a daemon. The echo is a thread of this
/// process over a `socketpair` (``init()``), or — what a daemon's client
/// really pays, a switch to another process and its address space — a
/// process of its own (``init(process:directory:)``: this executable as
/// `--worker echo`, over a Unix socket it listens on).
final class EchoSocket {
    let client: Int32
    private enum Echo {
        case thread(pthread_t, server: Int32)
        case process(WorkerProcess)
    }
    private let echo: Echo

    init() throws {
        var fds: [Int32] = [-1, -1]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &fds) == 0 else {
            throw PeerError("socketpair: errno \(errno)")
        }
        client = fds[0]
        let server = fds[1]
        var t = pthread_t()
        let rc = pthread_create(&t, nil, { argument in
            EchoSocket.serve(Int32(Int(bitPattern: argument)))
            return nil
        }, UnsafeMutableRawPointer(bitPattern: Int(server)))
        guard rc == 0 else {
            close(client)
            close(server)
            throw PeerError("pthread_create: \(rc)")
        }
        echo = .thread(t, server: server)
    }

    /// The echo in another process: `executable --worker echo SOCKET`,
    /// listening on a socket in `directory`.
    init(process executable: String, directory: String) throws {
        let path = (directory.hasSuffix("/") ? String(directory.dropLast()) : directory) + "/assetpack-bench-echo-\(getpid()).sock"
        unlink(path)
        let worker = try WorkerProcess(executable: executable, ["echo", path])
        try worker.waitUntilReady()
        client = try EchoSocket.connect(path)
        echo = .process(worker)
    }

    /// The echo's process, for one in another process.
    var processID: Int32? {
        if case .process(let worker) = echo { return worker.pid }
        return nil
    }

    deinit {
        // The echo reads end of file and returns; then both ends close.
        shutdown(client, Int32(SHUT_RDWR))
        switch echo {
        case .thread(let thread, let server):
            pthread_join(thread, nil)
            close(server)
        case .process(let worker):
            _ = try? worker.result(EchoReport.self)
        }
        close(client)
    }

    /// Echoes every byte `fd` sends until its end of file; returns how many.
    @discardableResult
    static func serve(_ fd: Int32) -> Int {
        var count = 0
        var byte: UInt8 = 0
        while read(fd, &byte, 1) == 1 {
            if write(fd, &byte, 1) != 1 { break }
            count += 1
        }
        return count
    }

    /// What the echo worker reports: the bytes it echoed.
    struct EchoReport: Codable { var bytes: Int }

    /// `--worker echo SOCKET`: listens on `SOCKET`, says ready, echoes the
    /// one connection it accepts until its end, then reports.
    static func worker(socketPath path: String) throws {
        let listener = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard listener >= 0 else { throw PeerError("socket: errno \(errno)") }
        defer { close(listener); unlink(path) }
        var address = try socketAddress(path)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard bound == 0, listen(listener, 1) == 0 else { throw PeerError("bind/listen \(path): errno \(errno)") }
        FileHandle.standardOutput.write(Data("ready\n".utf8))
        let fd = accept(listener, nil, nil)
        guard fd >= 0 else { throw PeerError("accept: errno \(errno)") }
        let count = serve(fd)
        close(fd)
        FileHandle.standardOutput.write(try JSONEncoder().encode(EchoReport(bytes: count)))
    }

    private static func connect(_ path: String) throws -> Int32 {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw PeerError("socket: errno \(errno)") }
        var address = try socketAddress(path)
        let r = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard r == 0 else {
            close(fd)
            throw PeerError("connect \(path): errno \(errno)")
        }
        return fd
    }

    private static func socketAddress(_ path: String) throws -> sockaddr_un {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else { throw PeerError("socket path too long: \(path)") }
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: bytes) }
        return address
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
