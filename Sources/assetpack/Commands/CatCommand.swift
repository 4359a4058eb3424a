import AssetPacks
import AssetSystem

/// `assetpack cat`: writes a member's bytes to standard output.
enum CatCommand: Command {
    static let name = "cat"
    static let summary = "Write a member's raw bytes to standard output."
    static let usage = "cat <path> [--pack <id>] [--descriptor] [--container <dir>]"
    static let options = """
          --pack <id>             Look in this pack only (default: every pack; a path
                                  that two packs hold is an error).
          --descriptor            Read through a file descriptor instead of the mapping.
        \(ContainerOptions.help)
        """
    static let valueOptions = ContainerOptions.names.union(["pack"])
    static let flagOptions: Set<String> = ["descriptor"]

    static func run(_ arguments: Arguments) throws(CLIError) -> Int32 {
        let path = try arguments.expect(["<path>"])[0]
        let manager = try StoreOptions.manager(arguments)
        do {
            if arguments.flag("descriptor") {
                let d = try manager.descriptor(for: path, searchingInAssetPackWithID: arguments.value("pack"))
                try copyToStandardOutput(d)
            } else {
                let data = try manager.contents(at: path, searchingInAssetPackWithID: arguments.value("pack"))
                Output.write(data)
            }
            return ExitCode.success
        } catch {
            throw .from(error)
        }
    }

    /// Copies the descriptor's range to stdout with pread.
    static func copyToStandardOutput(_ d: borrowing AssetDescriptor) throws(AssetPackError) {
        var offset = d.offset
        var left = d.length
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        while left > 0 {
            let want = Int(min(left, Int64(buffer.count)))
            let got: Int
            do {
                got = try buffer.withUnsafeMutableBytes { b in
                    Result { () throws(Errno) in try d.descriptor.read(into: UnsafeMutableRawBufferPointer(rebasing: b[..<want]), at: offset) }
                }.get()
            } catch {
                throw .system(error)
            }
            guard got > 0 else { throw .system(Errno(5, operation: "read descriptor: ended early")) }
            guard buffer.withUnsafeBytes({ Output.write(UnsafeRawBufferPointer(rebasing: $0[..<got])) }) else { return }
            offset += Int64(got)
            left -= Int64(got)
        }
    }
}
