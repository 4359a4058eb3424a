import CZlib
import CLibdeflate

/// The deflate streams of the members of one archive, for the codec peers:
/// where each raw stream lies in the archive mapping, its inflated size, and
/// the same stream wrapped for zlib's `uncompress` (a 2-byte zlib header
/// before it, the Adler-32 of the inflated bytes after it).
final class DeflateStreams {
    let raw: [UnsafeRawBufferPointer]
    let sizes: [Int]
    let wrapped: [UnsafeRawBufferPointer]
    private let wrappedStorage: UnsafeMutableRawBufferPointer

    init(raw: [UnsafeRawBufferPointer], sizes: [Int], adler32: [UInt32]) {
        self.raw = raw
        self.sizes = sizes
        let total = raw.reduce(0) { $0 + $1.count + 6 }
        let wrappedStorage = UnsafeMutableRawBufferPointer.allocate(byteCount: max(total, 1), alignment: 16)
        self.wrappedStorage = wrappedStorage
        var at = 0
        var wrapped: [UnsafeRawBufferPointer] = []
        wrapped.reserveCapacity(raw.count)
        for (i, stream) in raw.enumerated() {
            let start = at
            wrappedStorage[at] = 0x78
            wrappedStorage[at + 1] = 0xDA
            at += 2
            UnsafeMutableRawBufferPointer(rebasing: wrappedStorage[at ..< at + stream.count]).copyMemory(from: stream)
            at += stream.count
            withUnsafeBytes(of: adler32[i].bigEndian) { a in
                UnsafeMutableRawBufferPointer(rebasing: wrappedStorage[at ..< at + 4]).copyMemory(from: a)
            }
            at += 4
            wrapped.append(UnsafeRawBufferPointer(rebasing: wrappedStorage[start ..< at]))
        }
        self.wrapped = wrapped
    }

    deinit { wrappedStorage.deallocate() }
}

/// zlib's `uncompress` of a member (inflate and Adler-32 check, in one
/// call) into a reused buffer: the codec ceiling for deflated members.
struct ZlibUncompress: Operation {
    let streams: DeflateStreams
    let buffer: ByteBuffer
    let consume: Bool

    @inline(__always)
    mutating func run(_ item: Int) throws -> Int {
        let input = streams.wrapped[item]
        var length = uLongf(buffer.capacity)
        guard uncompress(buffer.pointer.assumingMemoryBound(to: Bytef.self), &length,
                         input.baseAddress!.assumingMemoryBound(to: Bytef.self), uLong(input.count)) == Z_OK else {
            throw PeerError("uncompress")
        }
        return consume ? Int(truncatingIfNeeded: sumBytes(buffer.pointer, Int(length))) : Int(length)
    }
}

/// Whole-buffer raw inflate with zlib (`inflateInit2(-15)`, one `inflate`
/// with `Z_FINISH`, `inflateEnd`): what `uncompress` does, without the
/// zlib wrapper and its Adler-32, on the raw stream as stored in the archive.
struct ZlibInflate: Operation {
    let streams: DeflateStreams
    let buffer: ByteBuffer

    @inline(__always)
    mutating func run(_ item: Int) throws -> Int {
        let input = streams.raw[item]
        var stream = z_stream()
        guard inflateInit2_(&stream, -15, zlibVersion(), Int32(MemoryLayout<z_stream>.size)) == Z_OK else {
            throw PeerError("inflateInit2")
        }
        stream.next_in = UnsafeMutablePointer(mutating: input.baseAddress!.assumingMemoryBound(to: Bytef.self))
        stream.avail_in = uInt(input.count)
        stream.next_out = buffer.pointer.assumingMemoryBound(to: Bytef.self)
        stream.avail_out = uInt(buffer.capacity)
        let rc = CZlib.inflate(&stream, Z_FINISH)
        let produced = Int(stream.total_out)
        inflateEnd(&stream)
        guard rc == Z_STREAM_END else { throw PeerError("inflate: \(rc)") }
        return produced
    }
}

/// Whole-buffer raw inflate with libdeflate into exactly the known size.
struct LibdeflateInflate: Operation {
    let streams: DeflateStreams
    let buffer: ByteBuffer
    let decompressor: Decompressor

    final class Decompressor {
        let pointer: OpaquePointer
        init() { pointer = libdeflate_alloc_decompressor() }
        deinit { libdeflate_free_decompressor(pointer) }
    }

    @inline(__always)
    mutating func run(_ item: Int) throws -> Int {
        let input = streams.raw[item]
        let size = streams.sizes[item]
        let rc = libdeflate_deflate_decompress(decompressor.pointer, input.baseAddress, input.count, buffer.pointer, size, nil)
        guard rc == LIBDEFLATE_SUCCESS else { throw PeerError("libdeflate_deflate_decompress: \(rc)") }
        return size
    }
}

/// CRC-32 of a member's inflated bytes, with zlib's `crc32` or libdeflate's.
struct CRC32Pass: Operation {
    let members: [UnsafeRawBufferPointer]
    let useLibdeflate: Bool

    @inline(__always)
    mutating func run(_ item: Int) throws -> Int {
        let m = members[item]
        if useLibdeflate { return Int(libdeflate_crc32(0, m.baseAddress, m.count)) }
        return Int(crc32_z(0, m.baseAddress!.assumingMemoryBound(to: Bytef.self), m.count))
    }
}
