import Foundation
import Testing
import AssetSystem
import TestSupport

@Suite struct FileDescriptorTests {
    @Test func openMissingFileNamesThePath() {
        let dir = TemporaryDirectory()
        #expect {
            _ = try FileDescriptor.open(dir.path + "/absent")
        } throws: { error in
            guard let e = error as? Errno else { return false }
            return e == .noSuchFile && e.path == dir.path + "/absent" && e.description.contains("absent")
        }
    }

    @Test func preadReadsAtOffsetAndStopsAtEnd() throws {
        let dir = TemporaryDirectory()
        let path = try dir.write("f", Array(0..<100))
        let fd = try FileDescriptor.open(path)
        #expect(try fd.read(count: 10, at: 90) == Array(90..<100))
        #expect(try fd.read(count: 50, at: 95) == Array(95..<100))
        #expect(try fd.read(count: 5, at: 200) == [])
        #expect(try fd.status().size == 100)
        #expect(try fd.status().isRegularFile)
    }

    @Test func writebackStartsOnAFileAndIsRefusedOnAPipeAndABadRange() throws {
        let dir = TemporaryDirectory()
        let fd = try FileDescriptor.open(dir.file("f"), [.readWrite, .create])
        try fd.write(Array(repeating: 7, count: 3 << 20), at: 0)
        try fd.startWriteback(from: 0, count: 3 << 20)
        #expect(try fd.read(count: 4, at: (3 << 20) - 4) == [7, 7, 7, 7])
        #expect(throws: Errno.invalidArgument) { try fd.startWriteback(from: 0, count: -1) }
        let fifo = dir.file("fifo")
        #expect(mkfifo(fifo, 0o644) == 0)
        let pipe = try FileDescriptor.open(fifo, .readWrite)
        #expect {
            try pipe.startWriteback(from: 0, count: 4096)
        } throws: { error in
            guard let e = error as? Errno else { return false }
            return e.rawValue == ESPIPE && e.operation == "sync_file_range"
        }
    }

    /// `allocate` gives a hole blocks without changing the length, and the
    /// bytes written before stay; `punchHole` takes blocks back, and the
    /// range then reads as zeros. A pipe is refused with the errno.
    @Test func allocateAndPunchHoleChangeBlocksNotLength() throws {
        let dir = TemporaryDirectory()
        let path = dir.path + "/sparse"
        let fd = try FileDescriptor.open(path, [.readWrite, .create])
        try fd.write(Array(repeating: 7, count: 4096), at: 0)
        try fd.resize(to: 4 << 20)
        func blocks() -> Int {
            var s = stat()
            return stat(path, &s) == 0 ? Int(s.st_blocks) * 512 : -1
        }
        let sparse = blocks()
        #expect(sparse < 1 << 20)
        try fd.allocate(from: 0, count: 2 << 20)
        #expect(blocks() >= 2 << 20)
        #expect(try fd.status().size == 4 << 20)
        #expect(try fd.read(count: 4096, at: 0) == Array(repeating: 7, count: 4096))
        try fd.punchHole(from: 0, count: 2 << 20)
        #expect(blocks() <= sparse)
        #expect(try fd.status().size == 4 << 20)
        #expect(try fd.read(count: 4096, at: 0) == Array(repeating: 0, count: 4096))
        var ends: [Int32] = [0, 0]
        #expect(pipe(&ends) == 0)
        let pipeEnd = FileDescriptor(adopting: ends[1])
        _ = FileDescriptor(adopting: ends[0])
        #expect(throws: Errno.self) { try pipeEnd.allocate(from: 0, count: 4096) }
    }

    @Test func descriptorsAreCloseOnExec() throws {
        let dir = TemporaryDirectory()
        let fd = try FileDescriptor.open(dir.write("f", [1]))
        let flags = try String(contentsOfFile: "/proc/self/fdinfo/\(fd.rawValue)", encoding: .utf8)
        let line = flags.split(separator: "\n").first { $0.hasPrefix("flags:") }!
        let octal = Int(line.split(separator: "\t").last!.trimmingCharacters(in: .whitespaces), radix: 8)!
        #expect(octal & Int(O_CLOEXEC) != 0)
    }

    @Test func reopenGivesAnIndependentOffset() throws {
        let dir = TemporaryDirectory()
        let fd = try FileDescriptor.open(dir.write("f", Array(0..<10)))
        try fd.seek(to: 5)
        let other = try fd.reopenReadOnly()
        var one = [UInt8](repeating: 0, count: 1)
        _ = try one.withUnsafeMutableBytes { try other.readSome(into: $0) }
        #expect(one == [0])
    }

    @Test func copyMovesBytesBetweenFiles() throws {
        let dir = TemporaryDirectory()
        let bytes = (0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        let source = try FileDescriptor.open(dir.write("src", bytes))
        let target = try FileDescriptor.open(dir.path + "/dst", [.readWrite, .create, .exclusive])
        try target.copy(count: 200_000, from: source, at: 50_000, to: 0)
        #expect(try target.read(count: 300_000, at: 0) == Array(bytes[50_000..<250_000]))
    }

    @Test func renameWithoutReplaceRefusesExistingName() throws {
        let dir = TemporaryDirectory()
        try dir.write("a", [1])
        try dir.write("b", [2])
        #expect(throws: Errno.fileExists) {
            try FileSystem.rename(dir.path + "/a", to: dir.path + "/b", noReplace: true)
        }
        try FileSystem.rename(dir.path + "/a", to: dir.path + "/c", noReplace: true)
        #expect(try FileDescriptor.status(of: dir.path + "/a") == nil)
    }

    @Test func temporaryFileGetsANameOnlyWhenLinked() throws {
        let dir = TemporaryDirectory()
        let d = try FileDescriptor.open(dir.path, .directory)
        let tmp = try FileDescriptor.temporary(in: d)
        try tmp.write([1, 2, 3])
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path).isEmpty)
        try tmp.link(as: "named", in: d)
        #expect(try FileDescriptor.open(dir.path + "/named").readToEnd() == [1, 2, 3])
    }

    @Test func createDirectoriesMakesParentsAndRefusesAFileInTheWay() throws {
        let dir = TemporaryDirectory()
        try FileSystem.createDirectories(dir.path + "/a/b/c")
        try FileSystem.createDirectories(dir.path + "/a/b/c")
        #expect(try FileDescriptor.status(of: dir.path + "/a/b/c")?.isDirectory == true)
        try dir.write("plain", [1])
        #expect(throws: Errno.notDirectory) { try FileSystem.createDirectories(dir.path + "/plain") }
        #expect(throws: Errno.notDirectory) { try FileSystem.createDirectories(dir.path + "/plain/sub") }
    }

    /// A FIFO opened for reading with `nonBlocking` returns at once, with
    /// no writer (without it the open would wait for one).
    @Test(.timeLimit(.minutes(1))) func aFIFOOpensAtOnceWithNonBlocking() throws {
        let dir = TemporaryDirectory()
        let fifo = dir.file("fifo")
        #expect(mkfifo(fifo, 0o644) == 0)
        let fd = try FileDescriptor.open(fifo, [.readOnly, .nonBlocking, .noFollow])
        #expect(try !fd.status().isRegularFile)
    }

    /// A directory watch does not follow a symlink: on one it notifies
    /// nothing (the caller polls).
    @Test func aDirectoryWatchDoesNotFollowASymlink() throws {
        let dir = TemporaryDirectory()
        let real = dir.directory("real")
        try FileManager.default.createSymbolicLink(atPath: dir.file("link"), withDestinationPath: real)
        let direct = try DirectoryWatch(directory: real)
        try #require(direct.isNotifying, "no inotify here")
        #expect(try !DirectoryWatch(directory: dir.file("link")).isNotifying)
    }

    @Test func theOwnerIsTheFilesUserAndGroup() throws {
        let dir = TemporaryDirectory()
        let path = try dir.write("f", [1])
        #expect(try FileDescriptor.open(path).owner() == (getuid(), getgid()))
        guard getuid() == 0 else { return }
        #expect(chown(path, 4242, 4343) == 0)
        #expect(try FileDescriptor.open(path).owner() == (4242, 4343))
    }

    /// The modification time keeps its fraction, and a touch sets it to now.
    @Test func aTouchSetsTheModificationTimeToNowWithItsFraction() throws {
        let dir = TemporaryDirectory()
        let fd = try FileDescriptor.open(try dir.write("f", [1]), .readWrite)
        try fd.setModificationTime(seconds: 1_000_000_000)
        #expect(try fd.modificationTime() == 1_000_000_000)
        let before = Date().timeIntervalSince1970
        try fd.touchModificationTime()
        let touched = try fd.modificationTime()
        #expect(touched >= before - 1 && touched <= Date().timeIntervalSince1970 + 1)
        #expect(try Double(fd.modificationSeconds()) == touched.rounded(.down))
    }
}
