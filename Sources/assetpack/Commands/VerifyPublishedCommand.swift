import AssetPacks

/// `assetpack verify-published`: checks a published directory against its catalog.
enum VerifyPublishedCommand: Command {
    static let name = "verify-published"
    static let summary = "Check a published directory's files against its catalog (and signature)."
    static let discussion = """
        Checks that each pack the catalog lists at a relative URL exists, has the catalog's size and SHA-256, \
        checks clean as inspect does, and is the pack the entry names; with --key, that catalog.json.sig \
        exists and verifies by that key. Prints every problem, one line each; files the catalog does not \
        name, and packs at absolute URLs (not fetched), are warnings. Exits 1 if any problem is an error.
        """

    static let directory = Positional("dir", help: "The published directory.", completion: .directory)
    static let key = Option.value("key", placeholder: "pubkey",
                                  help: "Require a signature by this public key file (from keygen).", completion: .file)
    static let positionals = [directory]
    static let options = [key, CommonOptions.json]

    static func run(_ arguments: Arguments) throws(CLIError) -> Int32 {
        let dir = arguments.positional(directory)
        let findings: [AssetPackPublisher.Finding]
        do {
            let publicKey = try arguments.value(key).map { (path) throws(AssetPackError) in try AssetPackPublicKey.load(path: path) }
            findings = try AssetPackPublisher.verifyPublished(at: dir, publicKey: publicKey)
        } catch {
            throw .from(error)
        }
        let errors = findings.filter(\.isError).count
        if arguments.flag(CommonOptions.json) {
            try Output.json(ReportJSON(clean: errors == 0, findings: findings.map {
                FindingJSON(severity: $0.isError ? "error" : "warning", file: $0.file, pack: $0.pack, message: $0.message)
            }))
        } else {
            findings.forEach { Output.line($0.description) }
            Output.error("\(dir): \(TextLayout.count(errors, "error")), \(TextLayout.count(findings.count - errors, "warning"))")
        }
        return errors == 0 ? ExitCode.success : ExitCode.failure
    }

    struct FindingJSON: Encodable {
        let severity: String
        let file: String
        let pack: String?
        let message: String
    }

    /// The check as `verify-published --json` prints it.
    struct ReportJSON: Encodable {
        let clean: Bool
        let findings: [FindingJSON]
    }
}
