import Foundation
import Testing
import TestSupport
import AssetSystem

/// The open flags, `AT_FDCWD`, `SEEK_SET` and file types that AssetSystem
/// takes from the C headers, checked by what the kernel does with them: a
/// constant with another architecture's value would open, resolve or seek
/// some other way.
@Suite struct SystemConstantsTests {
    @Test func directoryOptionRefusesARegularFile() throws {
        let dir = TemporaryDirectory()
        let file = try dir.write("f", [1])
        #expect(throws: Errno.notDirectory) { _ = try FileDescriptor.open(file, .directory) }
        let isDirectory = try FileDescriptor.open(dir.path, .directory).status().isDirectory
        #expect(isDirectory)
    }

    @Test func noFollowRefusesASymbolicLink() throws {
        let dir = TemporaryDirectory()
        let file = try dir.write("f", [1])
        try FileManager.default.createSymbolicLink(atPath: dir.path + "/link", withDestinationPath: file)
        #expect(throws: Errno.tooManySymbolicLinkLevels) { _ = try FileDescriptor.open(dir.path + "/link", .noFollow) }
        #expect(try FileDescriptor.open(dir.path + "/link").read(count: 1, at: 0) == [1])
        #expect(try FileDescriptor.open(file, .noFollow).read(count: 1, at: 0) == [1])
    }

    @Test func pathOptionNamesTheFileWithoutOpeningIt() throws {
        let dir = TemporaryDirectory()
        let fd = try FileDescriptor.open(try dir.write("f", [1, 2, 3]), .path)
        #expect(try fd.status().size == 3)
        #expect(throws: Errno.badFileDescriptor) { _ = try fd.read(count: 1, at: 0) }
    }

    @Test func accessModesAllowWhatTheySay() throws {
        let dir = TemporaryDirectory()
        let file = try dir.write("f", [1, 2])
        let reading = try FileDescriptor.open(file, .readOnly)
        #expect(try reading.read(count: 2, at: 0) == [1, 2])
        #expect(throws: Errno.badFileDescriptor) { try reading.write([3], at: 0) }
        let writing = try FileDescriptor.open(file, .writeOnly)
        try writing.write([3], at: 0)
        #expect(throws: Errno.badFileDescriptor) { _ = try writing.read(count: 1, at: 0) }
        let both = try FileDescriptor.open(file, .readWrite)
        try both.write([4], at: 1)
        #expect(try both.read(count: 2, at: 0) == [3, 4])
    }

    @Test func createExclusiveAppendAndTruncateDoWhatTheySay() throws {
        let dir = TemporaryDirectory()
        let path = dir.path + "/new"
        #expect(throws: Errno.noSuchFile) { _ = try FileDescriptor.open(path, .writeOnly) }
        try FileDescriptor.open(path, [.writeOnly, .create, .exclusive]).write([1, 2, 3])
        #expect(throws: Errno.fileExists) { _ = try FileDescriptor.open(path, [.writeOnly, .create, .exclusive]) }
        try FileDescriptor.open(path, [.writeOnly, .append]).write([4])
        #expect(try FileDescriptor.open(path).readToEnd() == [1, 2, 3, 4])
        #expect(try FileDescriptor.open(path, [.writeOnly, .truncate]).status().size == 0)
    }

    @Test func seekIsFromTheStart() throws {
        let dir = TemporaryDirectory()
        let fd = try FileDescriptor.open(try dir.write("f", [0, 1, 2, 3]))
        var two = [UInt8](repeating: 0, count: 2)
        let first = try two.withUnsafeMutableBytes { try fd.readSome(into: $0) }
        #expect(first == 2)
        #expect(try fd.seek(to: 1) == 1)
        #expect(try fd.readToEnd() == [1, 2, 3])
    }

    /// Where a descriptor in the close-on-exec test comes from.
    enum Origin: String, CaseIterable, Sendable {
        case open, reopen, temporary, memoryFile, socketPair, received
    }

    /// Whether `FD_CLOEXEC` is set on `fd`, as `fcntl(F_GETFD)` reports it.
    static func isCloseOnExec(_ fd: borrowing FileDescriptor) -> Bool {
        let flags = fcntl(fd.rawValue, F_GETFD)
        return flags >= 0 && flags & FD_CLOEXEC != 0
    }

    @Test(arguments: Origin.allCases)
    func descriptorsAreCloseOnExecWithoutAsking(_ origin: Origin) throws {
        let dir = TemporaryDirectory()
        let file = try dir.write("f", [1])
        var closeOnExec: [Bool]
        switch origin {
        case .open:
            closeOnExec = [Self.isCloseOnExec(try FileDescriptor.open(file, .readWrite))]
        case .reopen:
            closeOnExec = [Self.isCloseOnExec(try FileDescriptor.open(file).reopenReadOnly())]
        case .temporary:
            closeOnExec = [Self.isCloseOnExec(try FileDescriptor.temporary(in: FileDescriptor.open(dir.path, .directory)))]
        case .memoryFile:
            closeOnExec = [Self.isCloseOnExec(try MemoryFile.sealed(name: "t", copying: [1]))]
        case .socketPair:
            let pair = try UnixSocket.pair()
            closeOnExec = [Self.isCloseOnExec(pair.first.descriptor), Self.isCloseOnExec(pair.second.descriptor)]
        case .received:
            let pair = try UnixSocket.pair()
            let sent = try FileDescriptor.open(file)
            // The sender's flag does not travel; clear it to be sure the receiver sets its own.
            #expect(fcntl(sent.rawValue, F_SETFD, 0) == 0)
            try pair.first.sendAll([7], passing: sent.rawValue)
            var message = try pair.second.receive(upTo: 1)
            guard let got = message.descriptor.take() else { Issue.record("no descriptor came"); return }
            closeOnExec = [Self.isCloseOnExec(got)]
        }
        #expect(closeOnExec.allSatisfy { $0 })
    }

    /// `path` (absolute) as a path relative to the working directory, by
    /// climbing to the root with `..`.
    static func relativeToWorkingDirectory(_ path: String) -> String {
        let depth = FileManager.default.currentDirectoryPath.split(separator: "/").count
        return String(repeating: "../", count: depth) + path.drop { $0 == "/" }
    }

    @Test func workingDirectoryAnchorResolvesAgainstTheWorkingDirectory() throws {
        let dir = TemporaryDirectory()
        let relative = Self.relativeToWorkingDirectory(dir.path)
        #expect(!relative.hasPrefix("/"))
        try FileSystem.createDirectories(relative + "/a/b")
        try FileDescriptor.open(relative + "/a/b/f", [.writeOnly, .create], relativeTo: .workingDirectory).write([1])
        #expect(try FileDescriptor.status(of: relative + "/a/b/f", relativeTo: .workingDirectory)?.size == 1)
        try FileSystem.rename(relative + "/a/b/f", to: relative + "/a/g", relativeTo: .workingDirectory)
        try FileSystem.unlink(relative + "/a/g", relativeTo: .workingDirectory)
        try FileSystem.removeDirectory(relative + "/a/b", relativeTo: .workingDirectory)
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path + "/a").isEmpty)
    }

    @Test func descriptorAnchorResolvesAgainstTheDirectory() throws {
        let dir = TemporaryDirectory()
        _ = try dir.write("f", [5])
        let directory = try FileDescriptor.open(dir.path, .directory)
        let anchor = DirectoryAnchor.descriptor(directory.rawValue)
        #expect(try FileDescriptor.open("f", relativeTo: anchor).readToEnd() == [5])
        #expect(try FileDescriptor.status(of: "f", relativeTo: anchor)?.size == 1)
    }

    @Test func statusTellsTheFileType() throws {
        let dir = TemporaryDirectory()
        let file = try dir.write("f", [1])
        try FileManager.default.createSymbolicLink(atPath: dir.path + "/link", withDestinationPath: file)
        _ = try UnixListener(path: dir.path + "/sock")
        let kinds = try ["f", "link", "sock", "."].map { name throws -> [Bool] in
            let s = try #require(try FileDescriptor.status(of: dir.path + "/" + name, followingLinks: false))
            return [s.isRegularFile, s.isSymbolicLink, s.isSocket, s.isDirectory]
        }
        #expect(kinds == [[true, false, false, false], [false, true, false, false],
                          [false, false, true, false], [false, false, false, true]])
        #expect(try FileDescriptor.status(of: dir.path + "/link")?.isRegularFile == true)
    }
}
