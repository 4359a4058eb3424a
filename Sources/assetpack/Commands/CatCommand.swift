import AssetPacks
import AssetSystem

/// `assetpack cat`: writes a member's bytes to standard output.
enum CatCommand: Command {
    static let name = "cat"
    static let summary = "Write a member's raw bytes to standard output."

    static let path = Positional("path", help: "The member's path inside its pack.")
    static let pack = Option.value("pack", placeholder: "id",
                                   help: "Look in this pack only (default: every pack; a path that two packs hold is an error).")
    static let descriptor = Option.flag("descriptor", help: "Read through a file descriptor instead of the mapping.")
    static let daemon = Option.flag("daemon", help: "Get the descriptor from the container's daemon ('assetpack daemon') instead of opening the container.")
    static let standalone = Option.flag("standalone", help: "Ask for a descriptor of exactly the member at offset 0.")

    static let positionals = [path]
    static let options = [pack, descriptor, daemon, standalone] + CommonOptions.containerOptions

    static func run(_ arguments: Arguments) throws(CLIError) -> Int32 {
        let path = arguments.positional(Self.path)
        let options: DescriptorOptions = arguments.flag(standalone) ? .standalone : []
        if arguments.flag(daemon) {
            // The container itself is never opened: the daemon may serve a
            // process that cannot read it.
            do {
                let client = try AssetPackClient.connect(container: StoreOptions.container(arguments))
                let d = try client.descriptor(for: path, searchingInAssetPackWithID: arguments.value(pack), options: options)
                try copyToStandardOutput(d)
                return ExitCode.success
            } catch {
                throw .from(error)
            }
        }
        let manager = try StoreOptions.manager(arguments)
        do {
            if arguments.flag(descriptor) || arguments.flag(standalone) {
                let d = try manager.descriptor(for: path, searchingInAssetPackWithID: arguments.value(pack), options: options)
                try copyToStandardOutput(d)
            } else {
                let data = try manager.contents(at: path, searchingInAssetPackWithID: arguments.value(pack))
                Output.write(data)
            }
            return ExitCode.success
        } catch {
            throw .from(error)
        }
    }

    /// Copies the descriptor's range to stdout with pread.
    static func copyToStandardOutput(_ d: borrowing MemberDescriptor) throws(StoreError) {
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
            guard got > 0 else { throw .system(Errno.ioError.with(operation: "read descriptor: ended early")) }
            guard buffer.withUnsafeBytes({ Output.write(UnsafeRawBufferPointer(rebasing: $0[..<got])) }) else { return }
            offset += Int64(got)
            left -= Int64(got)
        }
    }
}
