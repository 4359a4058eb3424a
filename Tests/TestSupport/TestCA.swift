import Foundation

/// A certificate authority made for one test with the `openssl` command
/// line (installed by `scripts/bootstrap`), and a server certificate it
/// signed for `127.0.0.1`, `::1` and `localhost` (subjectAltName), in a
/// temporary directory removed with the value. EC P-256 keys, valid for two
/// days from now: made in a few milliseconds.
///
/// Clients trust it with ``certificate`` (`--ca-file`, `curl --cacert`);
/// servers present ``serverCertificate`` and ``serverKey``
/// (``NginxHost``'s `tls:`).
package final class TestCA: Sendable {
    /// Where the files are.
    package let directory: TemporaryDirectory
    /// The CA's certificate (PEM): what a client adds to its trusted CAs.
    package var certificate: String { directory.file("ca.pem") }
    /// The server's certificate (PEM), signed by the CA.
    package var serverCertificate: String { directory.file("server.pem") }
    /// The server's private key (PEM, unencrypted).
    package var serverKey: String { directory.file("server.key") }

    /// Makes the CA and the server certificate.
    ///
    /// - Parameter name: the CA's common name, so that two CAs of one test differ.
    /// - Throws: ``Program/Failure`` when `openssl` is missing or fails.
    package init(name: String = "AssetPacks Test CA") throws {
        directory = TemporaryDirectory("assetpacks-ca")
        let d = directory
        // One configuration for both requests, so that no system default
        // section adds extensions behind the test's back.
        try d.write("openssl.cnf", """
            [ req ]
            distinguished_name = dn
            prompt = no
            [ dn ]
            CN = placeholder
            [ ca ]
            basicConstraints = critical, CA:TRUE, pathlen:0
            keyUsage = critical, keyCertSign, cRLSign
            subjectKeyIdentifier = hash
            [ server ]
            basicConstraints = critical, CA:FALSE
            keyUsage = critical, digitalSignature
            extendedKeyUsage = serverAuth
            subjectAltName = IP:127.0.0.1, IP:::1, DNS:localhost
            authorityKeyIdentifier = keyid
            subjectKeyIdentifier = hash

            """)
        let config = d.file("openssl.cnf")
        let curve = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
        try Program.output("openssl", ["req", "-config", config, "-x509", "-new"] + curve + [
            "-keyout", d.file("ca.key"), "-out", certificate, "-days", "2", "-subj", "/CN=\(name)", "-extensions", "ca"])
        try Program.output("openssl", ["req", "-config", config, "-new"] + curve + [
            "-keyout", serverKey, "-out", d.file("server.csr"), "-subj", "/CN=127.0.0.1"])
        try Program.output("openssl", ["x509", "-req", "-in", d.file("server.csr"), "-CA", certificate, "-CAkey", d.file("ca.key"),
                                       "-set_serial", String(UInt32.random(in: 1...UInt32.max)), "-days", "2",
                                       "-extfile", config, "-extensions", "server", "-out", serverCertificate])
    }
}
