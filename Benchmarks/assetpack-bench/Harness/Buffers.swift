/// A page-aligned, pre-faulted buffer the peers read into, freed with its owner.
final class ByteBuffer {
    let pointer: UnsafeMutableRawPointer
    let capacity: Int

    init(capacity: Int) {
        self.capacity = capacity
        pointer = .allocate(byteCount: max(capacity, 1), alignment: 4096)
        pointer.initializeMemory(as: UInt8.self, repeating: 0, count: max(capacity, 1))
    }

    deinit { pointer.deallocate() }
}

/// A peer library or system call failed.
struct PeerError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
