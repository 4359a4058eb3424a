import AssetPacks
import Glibc

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
    static let noCheck = Option.flag(
        "no-check", help: "Do not check a stored member's CRC-32 (deflated members, and the copies --standalone makes, are always checked).")

    static let positionals = [path]
    static let options = [pack, descriptor, daemon, standalone, noCheck] + CommonOptions.containerOptions

    static func run(_ arguments: Arguments) throws(CLIError) -> Int32 {
        let path = arguments.positional(Self.path)
        let options: AssetDescriptor.Options = arguments.flag(standalone) ? .standalone : []
        let check = !arguments.flag(noCheck)
        if arguments.flag(daemon) {
            // The container itself is never opened: the daemon may serve a
            // process that cannot read it.
            do throws(AssetPackError) {
                let client = try AssetPackClient.connect(container: StoreOptions.container(arguments))
                let d = try client.descriptor(for: path, searchingInAssetPackWithID: arguments.value(pack), options: options)
                defer { try? d.close() }
                try copyToStandardOutput(d, path: path, checking: check)
                return ExitCode.success
            } catch {
                throw .from(error)
            }
        }
        let manager = try StoreOptions.manager(arguments, createsContainer: false)
        do throws(AssetPackError) {
            if arguments.flag(descriptor) || arguments.flag(standalone) {
                let d = try manager.descriptor(for: path, searchingInAssetPackWithID: arguments.value(pack), options: options)
                defer { try? d.close() }
                try copyToStandardOutput(d, path: path, checking: check)
            } else {
                // Streamed: a member of any size costs a bounded buffer. Up
                // to 1 MiB it is checked before a byte goes out; of a longer
                // one, what is out before an error is not to be trusted.
                try manager.write(path, searchingInAssetPackWithID: arguments.value(pack), to: 1, verifyingChecksum: check)
            }
            return ExitCode.success
        } catch where error.code == .system && error.systemError == EPIPE {
            return ExitCode.success  // the reader went away, as for `cat`
        } catch {
            throw .from(error)
        }
    }

    /// Copies the descriptor's member to stdout, checking its CRC-32 as the
    /// bytes go by (when `checking`); a mismatch is an error once all are out.
    static func copyToStandardOutput(_ d: AssetDescriptor, path: String, checking: Bool) throws(AssetPackError) {
        var done: Int64 = 0
        var crc: UInt32 = 0
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        while done < d.length {
            let got = try buffer.withUnsafeMutableBytes { b in
                Result { () throws(AssetPackError) in try d.read(into: b, at: done) }
            }.get()
            guard got > 0 else {
                throw AssetPackError(.system, member: path, message: "\(path): the descriptor ended \(d.length - done) bytes before the member")
            }
            let written = buffer.withUnsafeBytes { b in
                let chunk = UnsafeRawBufferPointer(rebasing: b[..<got])
                if checking { crc = AssetDescriptor.checksum(chunk, continuing: crc) }
                return Output.write(chunk)
            }
            guard written else { return }  // the reader went away
            done += Int64(got)
        }
        guard !checking || crc == d.crc32 else {
            throw AssetPackError(.badArchive, reason: .crcMismatch, member: path,
                                 message: "\(path): CRC-32 mismatch (recorded \(InspectCommand.hex8(d.crc32)), read \(InspectCommand.hex8(crc))): the member is damaged")
        }
    }
}
