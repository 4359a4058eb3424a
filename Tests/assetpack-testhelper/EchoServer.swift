import Foundation
import AssetPacks

/// The benchmark's baseline: a server on a Unix socket that answers each
/// 1-byte message with 1 byte — with a descriptor of `--pass-fd FILE`
/// attached when given — one thread per connection, as the daemon has.
enum EchoServer {
    static func run(_ options: Options) throws {
        let path = options.string("socket")
        try? FileSystem.unlink(path)
        let listener = try UnixListener(path: path)
        let passing: Int32? = try options.optional("pass-fd").map { try FileDescriptor.open($0).take() }
        FileHandle.standardOutput.write(Data("ready\n".utf8))
        while true {
            let connection = Connection(try listener.accept())
            Thread {
                var byte: [UInt8] = [0]
                while true {
                    let n = byte.withUnsafeMutableBytes { b in (try? connection.socket.receive(into: b).count) ?? 0 }
                    guard n == 1 else { return }
                    guard (try? connection.socket.sendAll(byte, passing: passing)) != nil else { return }
                }
            }.start()
        }
    }

    final class Connection: Sendable {
        let socket: UnixSocket
        init(_ socket: consuming UnixSocket) { self.socket = socket }
    }
}
