internal import CZlib
internal import CLibdeflate
import AssetSystem

/// A raw-deflate decoder that never writes past the output size it is told
/// to expect.
///
/// When the whole output fits the first window (a member inflated into a
/// buffer of its declared size), libdeflate decodes it in one call, which
/// is 1.5–2× faster than zlib on the members packs hold; whatever
/// libdeflate does not accept exactly (an error, a size that differs, bytes
/// after the stream) is decoded again by zlib, which reports the problem as
/// it always has. Output that does not fit one window streams through a
/// zlib raw-inflate stream (window bits -15).
///
/// The `z_stream` lives at a fixed heap address, as zlib requires: its
/// state points back at it. It is set up on first use.
struct Inflater: ~Copyable {
    private var stream: UnsafeMutablePointer<z_stream>?

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
        /// `consume` asked to stop.
        case stopped
    }

    init() throws(Failure) {}

    deinit {
        if let stream {
            inflateEnd(stream)
            stream.deallocate()
        }
    }

    /// The zlib stream, set up when first needed.
    private mutating func zlibStream() throws(Failure) -> UnsafeMutablePointer<z_stream> {
        if let stream { return stream }
        let stream = UnsafeMutablePointer<z_stream>.allocate(capacity: 1)
        stream.initialize(to: z_stream())
        let status = inflateInit2_(stream, -15, zlibVersion(), Int32(MemoryLayout<z_stream>.size))
        guard status == Z_OK else {
            stream.deallocate()
            throw status == Z_MEM_ERROR ? .outOfMemory : .corrupt("inflateInit2 failed (\(status))")
        }
        self.stream = stream
        return stream
    }

    /// Decodes all of `input` into exactly all of `output` with libdeflate.
    /// Returns whether that succeeded: the stream was valid, ended with the
    /// input and filled the output exactly. Writes only inside `output`.
    /// The corresponding C function is `libdeflate_deflate_decompress_ex`.
    private static func inflateWhole(_ input: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer) -> Bool {
        guard let decompressor = libdeflate_alloc_decompressor() else { return false }
        defer { libdeflate_free_decompressor(decompressor) }
        var consumed = 0
        var produced = 0
        let result = libdeflate_deflate_decompress_ex(
            decompressor, input.baseAddress, input.count, output.baseAddress, output.count, &consumed, &produced)
        return result == LIBDEFLATE_SUCCESS && consumed == input.count && produced == output.count
    }

    /// Inflates all of `input`, which must be exactly one deflate stream of
    /// `expected` bytes.
    ///
    /// Output goes to the windows `window` returns: given the number of bytes
    /// produced so far and how many are still expected (at least 1), it
    /// returns a non-empty buffer of at most that many bytes. `consume` then
    /// sees each piece written, and returns whether to go on (`false`
    /// ends the inflate with ``Failure/stopped``). Once `expected` bytes are
    /// out, a one-byte scratch buffer probes for more, so no window is ever
    /// written past. The first window may be asked for twice (when the
    /// whole-buffer decode falls back to zlib), so `window` must give the
    /// same buffer for the same arguments.
    ///
    /// With `followingInput`, zlib is handed the input in pieces of
    /// ``inputPiece`` bytes, and `inputRead` is told how many input bytes
    /// are consumed before each new piece and at the end: a reader of a
    /// mapped archive drops the pages behind it (``ReadBehind``).
    mutating func inflate(
        _ input: UnsafeRawBufferPointer, expected: UInt64,
        window: (_ produced: UInt64, _ remaining: UInt64) -> UnsafeMutableRawBufferPointer,
        consume: (UnsafeRawBufferPointer) -> Bool,
        followingInput: Bool = false, inputRead: (Int) -> Void = { _ in }
    ) throws(Failure) {
        if input.isEmpty && expected == 0 { return }
        let chunk = Int(UInt32.max)
        if expected > 0, !input.isEmpty {
            let whole = window(0, min(expected, UInt64(chunk)))
            if UInt64(whole.count) == expected, Inflater.inflateWhole(input, into: whole) {
                inputRead(input.count)
                guard consume(UnsafeRawBufferPointer(whole)) else { throw .stopped }
                return
            }
        }
        let piece = followingInput ? Self.inputPiece : chunk
        let stream = try zlibStream()
        var inputOffset = 0
        var produced: UInt64 = 0
        var probe: UInt8 = 0
        while true {
            if stream.pointee.avail_in == 0 && inputOffset < input.count {
                inputRead(inputOffset)
                let count = min(piece, input.count - inputOffset)
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
                    produced += UInt64(written)
                    if !consume(UnsafeRawBufferPointer(rebasing: output[..<written])) { return Self.stopStatus }
                } else if written > 0 {
                    produced += 1
                }
                return status
            }
            if status == Self.stopStatus { throw .stopped }
            if produced > expected { throw .tooLong }
            switch status {
            case Z_OK:
                continue
            case Z_STREAM_END:
                guard produced == expected else { throw .tooShort(produced) }
                let unused = Int(stream.pointee.avail_in) + (input.count - inputOffset)
                guard unused == 0 else { throw .corrupt("\(unused) bytes follow the end of the deflate stream") }
                inputRead(input.count)
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

    /// How much input zlib is handed at a time when the caller follows it.
    static let inputPiece = 1 << 20

    /// Not a zlib status: what the loop's body returns when `consume` stopped.
    private static let stopStatus = Z_STREAM_END + 1000

    private func message(_ status: Int32) -> String {
        if let text = stream?.pointee.msg { return String(cString: text) }
        return status == Z_NEED_DICT ? "a preset dictionary is required" : "zlib error \(status)"
    }
}
