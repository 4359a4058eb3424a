import AssetSystem

extension AssetPackClient {
    /// Sends a download request (``DaemonDownloadRequest``) on a connection
    /// of its own and reads the reply: with `wait`, when the daemon's
    /// download has ended, however long that takes (no receive timeout; the
    /// download has its own stall and retry bounds); without, at once.
    ///
    /// - Throws: the download's errors as the daemon met them; the
    ///   request's refusals (`.invalidPackID`, `.unsupportedURL`,
    ///   `.invalidKey`); a daemon's refusals (`.peerNotAllowed`,
    ///   `.malformedRequest` from a daemon that predates downloads, …);
    ///   `.daemonUnavailable` when it cannot be reached or the connection
    ///   breaks before the reply (the daemon died).
    func download(_ request: DaemonDownloadRequest) throws(AssetPackError) -> DaemonReply.DownloadOutcome {
        let bytes = request.encoded
        guard bytes.count - DaemonProtocol.headerSize <= DaemonProtocol.maximumRequestBody else {
            throw AssetPackError(.requestTooLarge, pack: request.pack, path: socketPath,
                                 message: "a download request for '\(request.pack)' is longer than the \(DaemonProtocol.maximumRequestBody) bytes the daemon reads")
        }
        let socket = try connected(receiveTimeout: request.wait ? 0 : max(1, Int(timeout * 1000)))
        var buffer = [UInt8](repeating: 0, count: DaemonProtocol.headerSize + DaemonProtocol.maximumReplyBody)
        let reply = send(bytes, on: socket, buffer: &buffer)
        switch consume reply {
        case .closedBeforeReply(let e):
            throw .unavailable(socketPath, e)
        case .broken(let e):
            throw .unavailable(socketPath, e)
        case .reply(let status, let end, let descriptor):
            guard descriptor == nil else { throw .unavailable(socketPath, Self.violation("a download reply with a descriptor")) }
            let result = buffer.withUnsafeBytes { b in
                let body = UnsafeRawBufferPointer(rebasing: b[DaemonProtocol.headerSize..<end])
                return status == DaemonProtocol.success
                    ? DaemonReply.downloadOutcome(body).map { Result<DaemonReply.DownloadOutcome, AssetPackError>.success($0) }
                    : DaemonReply.error(status: status, body: body, socket: socketPath).map { .failure($0) }
            }
            switch result {
            case .failure(let v): throw .unavailable(socketPath, Self.violation(v.what))
            case .success(let outcome): return try outcome.get()
            }
        }
    }

    /// A new connection to the daemon; `receiveTimeout` 0 waits for ever.
    private func connected(receiveTimeout: Int) throws(AssetPackError) -> UnixSocket {
        do {
            let socket = try UnixSocket.connect(to: socketPath)
            try socket.setTimeouts(milliseconds: receiveTimeout)
            return socket
        } catch {
            throw .unavailable(socketPath, error.with(operation: "connect"))
        }
    }
}
