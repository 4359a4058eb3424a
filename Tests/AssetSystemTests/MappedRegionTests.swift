import Testing
import AssetSystem
import TestSupport

@Suite struct MappedRegionTests {
    @Test func mapsTheWholeFileAndOutlivesUnlink() throws {
        let dir = TemporaryDirectory()
        let bytes = (0..<10_000).map { UInt8(truncatingIfNeeded: $0) }
        let path = try dir.write("m", bytes)
        let region = try MappedRegion(mapping: try FileDescriptor.open(path), count: bytes.count)
        try FileSystem.unlink(path)
        #expect(Array(region.bytes) == bytes)
        region.advise(.willNeed, range: 100..<200)
    }

    @Test func emptyFileMapsNothing() throws {
        let dir = TemporaryDirectory()
        let region = try MappedRegion(mapping: try FileDescriptor.open(dir.write("e", [])), count: 0)
        #expect(region.baseAddress == nil)
        #expect(region.bytes.isEmpty)
    }
}

@Suite struct MemoryFileTests {
    @Test func sealedFileHoldsTheBytesAndRefusesWrites() throws {
        let bytes = Array("sealed contents".utf8)
        let fd = try MemoryFile.sealed(name: "t", copying: bytes)
        #expect(try MemoryFile.seals(of: fd) & 0x0f == 0x0f)
        #expect(try fd.read(count: 100, at: 0) == bytes)
        #expect(throws: Errno.self) { try fd.write([1], at: 0) }
        // Even a writable reopen cannot change a write-sealed file.
        let writable = try FileDescriptor.open("/proc/self/fd/\(fd.rawValue)", .readWrite)
        #expect(throws: Errno.self) { try writable.write([1], at: 0) }
        #expect(throws: Errno.self) { try writable.resize(to: 1) }
    }

    @Test func fillErrorsArePassedThrough() {
        struct Refused: Error {}
        #expect {
            _ = try MemoryFile.sealed(name: "t", count: 10) { (_: UnsafeMutableRawBufferPointer) throws(Refused) in throw Refused() }
        } throws: { error in
            if case .fill = error as? MemoryFileError<Refused> { return true }
            return false
        }
    }
}
