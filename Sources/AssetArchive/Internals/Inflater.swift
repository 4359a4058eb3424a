internal import CZlib
import AssetSystem

/// A zlib raw-inflate stream (window bits -15) that never writes past the
/// output size it is told to expect.
///
/// The `z_stream` lives at a fixed heap address, as zlib requires: its
/// state points back at it.
struct Inflater: ~Copyable {
    private let stream: UnsafeMutablePointer<z_stream>

    /// Why inflating stopped short of success.
    enum Failure: Error {
        /// Output went past the expected size.
        case tooLong
        /// The stream ended after this many bytes, fewer than expected.
        case tooShort(UInt64)
        /// The deflate data is invalid, cut short, or followed by bytes.
        case corrupt(String)
        /// zlib could not allocate its state.
        case outOfMemory
    }

    init() throws(Failure) {
        stream = .allocate(capacity: 1)
        stream.initialize(to: z_stream())
        let status = inflateInit2_(stream, -15, zlibVersion(), Int32(MemoryLayout<z_stream>.size))
        guard status == Z_OK else {
            stream.deallocate()
            throw status == Z_MEM_ERROR ? .outOfMemory : .corrupt("inflateInit2 failed (\(status))")
        }
    }

    deinit {
        inflateEnd(stream)
        stream.deallocate()
    }

    /// Inflates all of `input`, which must be exactly one deflate stream of
    /// `expected` bytes.
    ///
    /// Output goes to the windows `window` returns: given the number of bytes
    /// produced so far and how many are still expected (at least 1), it
    /// returns a non-empty buffer of at most that many bytes. `consume` then
    /// sees each piece written. Once `expected` bytes are out, a one-byte
    /// scratch buffer probes for more, so no window is ever written past.
    mutating func inflate(
        _ input: UnsafeRawBufferPointer, expected: UInt64,
        window: (_ produced: UInt64, _ remaining: UInt64) -> UnsafeMutableRawBufferPointer,
        consume: (UnsafeRawBufferPointer) -> Void
    ) throws(Failure) {
        if input.isEmpty && expected == 0 { return }
        let chunk = Int(UInt32.max)
        var inputOffset = 0
        var produced: UInt64 = 0
        var probe: UInt8 = 0
        while true {
            if stream.pointee.avail_in == 0 && inputOffset < input.count {
                let count = min(chunk, input.count - inputOffset)
                stream.pointee.next_in = UnsafeMutablePointer(
                    mutating: (input.baseAddress! + inputOffset).assumingMemoryBound(to: UInt8.self))
                stream.pointee.avail_in = UInt32(count)
                inputOffset += count
            }
            let remaining = expected - produced
            let status: Int32 = withUnsafeMutableBytes(of: &probe) { probeBuffer in
                let output = remaining > 0 ? window(produced, min(remaining, UInt64(chunk))) : probeBuffer
                stream.pointee.next_out = output.baseAddress!.assumingMemoryBound(to: UInt8.self)
                stream.pointee.avail_out = UInt32(output.count)
                let status = CZlib.inflate(stream, Z_NO_FLUSH)
                let written = output.count - Int(stream.pointee.avail_out)
                if written > 0 && remaining > 0 {
                    consume(UnsafeRawBufferPointer(rebasing: output[..<written]))
                    produced += UInt64(written)
                } else if written > 0 {
                    produced += 1
                }
                return status
            }
            if produced > expected { throw .tooLong }
            switch status {
            case Z_OK:
                continue
            case Z_STREAM_END:
                guard produced == expected else { throw .tooShort(produced) }
                let unused = Int(stream.pointee.avail_in) + (input.count - inputOffset)
                guard unused == 0 else { throw .corrupt("\(unused) bytes follow the end of the deflate stream") }
                return
            case Z_BUF_ERROR:
                if stream.pointee.avail_in == 0 && inputOffset == input.count {
                    throw .corrupt("the deflate stream is cut short")
                }
                throw .corrupt("zlib made no progress")
            case Z_MEM_ERROR:
                throw .outOfMemory
            default:
                throw .corrupt(message(status))
            }
        }
    }

    private func message(_ status: Int32) -> String {
        if let text = stream.pointee.msg { return String(cString: text) }
        return status == Z_NEED_DICT ? "a preset dictionary is required" : "zlib error \(status)"
    }
}
