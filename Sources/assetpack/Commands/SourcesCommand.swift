import Foundation
import AssetPacks
#if canImport(Glibc)
import Glibc
#endif

/// `assetpack sources`: the catalog sources the container's owner lets the
/// daemon download from for other users.
enum SourcesCommand: Command {
    static let name = "sources"
    static let summary = "List, add or remove the catalog sources the daemon downloads from for other users."
    static let discussion = """
        The daemon serves descriptors to every user it admits (--allow-uid, --allow-gid), but downloads \
        only for its own user, or for another user only from a source listed here: a catalog URL, the \
        key its catalog must be signed by (an unsigned catalog is never a source for another user) and \
        the channel it must name (--channel; default: default, the channel a client asks for unless told \
        otherwise), with the CA file the daemon then trusts, when given. A request naming anything else \
        (another URL, key or channel) is refused with requestNotPermitted (70), and the other user's \
        program downloads as itself instead. The list is <container>/trust/sources.json; the daemon reads \
        it at each such request, so a change applies at once and lasts across restarts. It trusts the file \
        only when it belongs to the daemon's user, is a regular file and no one else may write it: run \
        this command as that user. 'add' replaces a source with the same URL and key (a URL serves one \
        channel's catalog); 'rm' removes every source with the URL (with --key, only that key's).
        """

    static let action = Positional("action", help: "ls, add or rm.", completion: .choices(["ls", "add", "rm"]))
    static let url = Positional("url", help: "The catalog's URL (add, rm).", optional: true)
    static let key = Option.value(
        "key", placeholder: "pubkey",
        help: "The public key file (from keygen) the catalog must be signed by: required by add; for rm, only that key's source.",
        completion: .file)
    static let channel = Option.value(
        "channel", placeholder: "name",
        help: "add: the channel the catalog must name, and other users' requests ask for (default: default).")
    static let caFile = Option.value(
        "ca-file", placeholder: "file", help: "add: a PEM file of certificate authorities the daemon trusts for this source.",
        completion: .file)

    static let positionals = [action, url]
    static let options = [key, channel, caFile, CommonOptions.json] + CommonOptions.containerOptions

    static func run(_ arguments: Arguments) throws(CLIError) -> Int32 {
        let verb = arguments.positional(action)
        let target = arguments.optionalPositional(url)
        switch verb {
        case "ls":
            guard target == nil else { throw .usage("ls takes no URL") }
            for option in [key, channel, caFile] where arguments.value(option) != nil {
                throw .usage("'\(option.longSpelling)' is for add and rm")
            }
            return try list(arguments)
        case "add":
            guard let target else { throw .usage("add needs the catalog's URL") }
            guard let path = arguments.value(key) else { throw .usage("add needs --key: an unsigned catalog is never a source for another user") }
            let manager = try StoreOptions.manager(arguments)
            do {
                let publicKey = try AssetPackPublicKey.load(path: path)
                let ca = arguments.value(caFile).map { $0.hasPrefix("/") ? $0 : FileManager.default.currentDirectoryPath + "/" + $0 }
                var source = AssetPackManager.ConfiguredSource(url: target, publicKey: publicKey, caFile: ca)
                if let name = arguments.value(channel) { source.channel = name }
                try manager.addConfiguredSource(source)
                Output.error("\(target): added (key \(publicKey.keyID), channel \(AssetMember.printable(source.channel)))")
            } catch {
                throw .from(error)
            }
            return ExitCode.success
        default:
            guard let target else { throw .usage("rm needs the catalog's URL") }
            for option in [channel, caFile] where arguments.value(option) != nil { throw .usage("'\(option.longSpelling)' is for add") }
            let manager = try StoreOptions.manager(arguments, createsContainer: false)
            let removed: Int
            do {
                let publicKey = try arguments.value(key).map { (path) throws(AssetPackError) in try AssetPackPublicKey.load(path: path) }
                removed = try manager.removeConfiguredSource(url: target, publicKey: publicKey)
            } catch {
                throw .from(error)
            }
            guard removed > 0 else { throw .failure("\(target): no such configured source") }
            Output.error("\(target): removed")
            return ExitCode.success
        }
    }

    /// `ls`: a line per source (URL, key, channel, CA file), or a JSON line each.
    private static func list(_ arguments: Arguments) throws(CLIError) -> Int32 {
        let manager = try StoreOptions.manager(arguments, createsContainer: false)
        let sources: [AssetPackManager.ConfiguredSource]
        do { sources = try manager.configuredSources() } catch { throw .from(error) }
        for s in sources {
            if arguments.flag(CommonOptions.json) {
                try Output.jsonLine(SourceJSON(url: s.url, key: s.publicKey.description, keyID: s.publicKey.keyID, channel: s.channel, caFile: s.caFile))
            } else {
                var parts = [AssetMember.printable(s.url), s.publicKey.description, "channel=" + AssetMember.printable(s.channel)]
                if let ca = s.caFile { parts.append("ca-file=" + AssetMember.printable(ca)) }
                Output.line(parts.joined(separator: "  "))
            }
        }
        return ExitCode.success
    }
}

/// A configured source, as `sources ls --json` prints it.
struct SourceJSON: Encodable {
    let url: String
    let key: String
    let keyID: String
    let channel: String
    let caFile: String?
}
