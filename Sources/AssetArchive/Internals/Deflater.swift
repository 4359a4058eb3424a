internal import CZlib

/// A zlib raw-deflate stream (window bits -15, memory level 8, default
/// strategy) at a fixed level. For a given zlib, the same input gives the
/// same output.
///
/// The `z_stream` lives at a fixed heap address, as zlib requires.
struct Deflater: ~Copyable {
    private let stream: UnsafeMutablePointer<z_stream>
    private let output: UnsafeMutableRawBufferPointer

    /// zlib could not allocate its state.
    struct OutOfMemory: Error {}

    init(level: Int32) throws(OutOfMemory) {
        stream = .allocate(capacity: 1)
        stream.initialize(to: z_stream())
        let status = deflateInit2_(stream, level, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY,
                                   zlibVersion(), Int32(MemoryLayout<z_stream>.size))
        guard status == Z_OK else {
            stream.deallocate()
            throw OutOfMemory()
        }
        output = .allocate(byteCount: 1 << 18, alignment: 16)
    }

    deinit {
        deflateEnd(stream)
        stream.deallocate()
        output.deallocate()
    }

    /// Starts a new stream with the same settings.
    /// The corresponding C function is `deflateReset`.
    mutating func reset() {
        deflateReset(stream)
    }

    /// The most bytes deflating `count` bytes can produce.
    /// The corresponding C function is `deflateBound`.
    func bound(_ count: UInt64) -> UInt64 {
        UInt64(deflateBound(stream, UInt(count)))
    }

    /// Compresses `input`, the next piece of the member, handing compressed
    /// bytes to `sink` as they come. Pass `finish` with the last piece (which
    /// may be empty) to end the stream.
    mutating func compress(
        _ input: UnsafeRawBufferPointer, finish: Bool,
        sink: (UnsafeRawBufferPointer) throws(ArchiveError) -> Void
    ) throws(ArchiveError) {
        var offset = 0
        while true {
            if stream.pointee.avail_in == 0 && offset < input.count {
                let count = min(Int(UInt32.max), input.count - offset)
                stream.pointee.next_in = UnsafeMutablePointer(
                    mutating: (input.baseAddress! + offset).assumingMemoryBound(to: UInt8.self))
                stream.pointee.avail_in = UInt32(count)
                offset += count
            }
            let last = finish && offset == input.count
            stream.pointee.next_out = output.baseAddress!.assumingMemoryBound(to: UInt8.self)
            stream.pointee.avail_out = UInt32(output.count)
            let status = deflate(stream, last ? Z_FINISH : Z_NO_FLUSH)
            precondition(status == Z_OK || status == Z_STREAM_END || status == Z_BUF_ERROR,
                         "deflate failed with \(status) on a valid stream")
            let written = output.count - Int(stream.pointee.avail_out)
            if written > 0 { try sink(UnsafeRawBufferPointer(rebasing: output[..<written])) }
            if last {
                if status == Z_STREAM_END { return }
            } else if stream.pointee.avail_in == 0 && offset == input.count && stream.pointee.avail_out > 0 {
                return
            }
        }
    }
}
