import AssetPacks

/// `assetpack keygen`: makes an Ed25519 key pair for signing catalogs.
enum KeygenCommand: Command {
    static let name = "keygen"
    static let summary = "Make an Ed25519 key pair for signing catalogs."
    static let discussion = """
        Writes <name>.key, the private key (PKCS#8 PEM, mode 0600, as 'openssl genpkey -algorithm ed25519' \
        writes; keep it secret), and <name>.pub, the public key as one line 'ed25519:<base64 of 32 bytes>' \
        to paste into a program's configuration. Refuses to replace either file. Prints the public key line \
        on standard output.
        """

    static let out = Option.value("out", short: "o", placeholder: "name",
                                  help: "Write <name>.key and <name>.pub.", required: true, completion: .file)
    static let options = [out, CommonOptions.json]

    static func run(_ arguments: Arguments) throws(CLIError) -> Int32 {
        let stem = arguments.requiredValue(out)
        let (privatePath, publicPath) = (stem + ".key", stem + ".pub")
        let key: AssetPackSigningKey
        do {
            key = try AssetPackSigningKey.generate()
            try key.write(privateKeyTo: privatePath, publicKeyTo: publicPath)
        } catch {
            throw .from(error)
        }
        if arguments.flag(CommonOptions.json) {
            try Output.json(KeyJSON(publicKey: key.publicKey.description, keyID: key.publicKey.keyID,
                                    privateKeyFile: privatePath, publicKeyFile: publicPath))
            return ExitCode.success
        }
        Output.line(key.publicKey.description)
        Output.error("wrote \(privatePath) (private: keep it secret) and \(publicPath); key ID \(key.publicKey.keyID)")
        return ExitCode.success
    }

    /// The key pair as `keygen --json` prints it.
    struct KeyJSON: Encodable {
        let publicKey: String
        let keyID: String
        let privateKeyFile: String
        let publicKeyFile: String
    }
}
