/// The daemon's decoders, fed arbitrary bytes by the fuzz harness
/// (`Fuzz/README.md`) and by its regression test. Nothing else calls these.
///
/// Each reads `bytes` as the daemon or the client would read a stream, and
/// traps (a `precondition`) only where a decoder breaks its own contract.
package enum DaemonProtocolFuzzing {
    /// Reads `bytes` as the daemon reads one connection (descriptor, download
    /// and batch requests): a header, its body,
    /// the next header, until the stream ends or a header is refused (which
    /// closes a real connection). Every request decoded must encode back to
    /// exactly the bytes it came from. Returns whether one was decoded.
    @discardableResult
    package static func requests(_ bytes: UnsafeRawBufferPointer) -> Bool {
        var decoded = false
        var at = 0
        while bytes.count - at >= DaemonProtocol.headerSize {
            let header = UnsafeRawBufferPointer(rebasing: bytes[at ..< at + DaemonProtocol.headerSize])
            let length: Int
            let decode: (UnsafeRawBufferPointer) -> [UInt8]?
            switch DaemonRequest.parseHeader(header) {
            case .refused: return decoded
            case .body(let n, let packLength, let standalone, let shared, let keeps):
                length = n
                decode = { DaemonRequest.decode(body: $0, packLength: packLength, standalone: standalone, shared: shared, keeps: keeps)?.encoded }
            case .download(let n, let packLength, let wait, let discretionary):
                length = n
                decode = { DaemonDownloadRequest.decode(body: $0, packLength: packLength, wait: wait, discretionary: discretionary)?.encoded }
            case .batch(let n, let packLength, let standalone, let shared, let keeps):
                length = n
                decode = { body in
                    guard case .success(let batch) = DaemonBatchRequest.decode(body: body, packLength: packLength, standalone: standalone,
                                                                               shared: shared, keeps: keeps) else {
                        return nil
                    }
                    precondition((1...DaemonProtocol.maximumBatch).contains(batch.paths.count), "a batch decoded with \(batch.paths.count) members")
                    return batch.encoded
                }
            }
            let start = at + DaemonProtocol.headerSize
            guard bytes.count - start >= length else { return decoded }
            if let encoded = decode(UnsafeRawBufferPointer(rebasing: bytes[start ..< start + length])) {
                precondition(encoded.elementsEqual(bytes[at ..< start + length]),
                             "a decoded request does not encode back to its bytes")
                decoded = true
            }
            at = start + length
        }
        return decoded
    }

    /// Reads `bytes` as the client reads one reply: a header, then its body
    /// as a success's placement or a download's outcome, or as a failure's error. Returns whether
    /// the reply was read.
    @discardableResult
    package static func reply(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard bytes.count >= DaemonProtocol.headerSize else { return false }
        guard case .success(let header) = DaemonReply.parseHeader(
            UnsafeRawBufferPointer(rebasing: bytes[..<DaemonProtocol.headerSize])) else { return false }
        let start = DaemonProtocol.headerSize
        guard bytes.count - start >= header.length else { return false }
        let body = UnsafeRawBufferPointer(rebasing: bytes[start ..< start + header.length])
        if header.status == DaemonProtocol.success {
            // The client knows which request a reply answers; the fuzzer
            // reads a success both ways.
            if case .success(let outcome) = DaemonReply.downloadOutcome(body) {
                precondition(DaemonReply.success(outcome).dropFirst(DaemonProtocol.headerSize).elementsEqual(body),
                             "a download outcome does not encode back to its bytes")
            }
            // And a placement both as a request that keeps descriptions
            // reads it and as one that does not.
            var placed = false
            for keeps in [false, true] {
                guard case .success(let p) = DaemonReply.placement(body, keeps: keeps) else { continue }
                precondition(p.offset + p.length <= p.size, "an accepted placement lies outside its file")
                let again = DaemonReply.Success(offset: p.offset, length: p.length, size: p.size, source: p.source, crc32: p.crc32,
                                                slot: UInt8(p.slot), reuse: p.reuse)
                precondition(again.withUnsafeBytes { $0.dropFirst(DaemonProtocol.headerSize).elementsEqual(body) },
                             "a placement does not encode back to its bytes")
                placed = true
            }
            return placed || (try? DaemonReply.downloadOutcome(body).get()) != nil
        }
        guard case .success = DaemonReply.error(status: header.status, body: body, socket: "fuzz/daemon.sock") else { return false }
        return true
    }
}
