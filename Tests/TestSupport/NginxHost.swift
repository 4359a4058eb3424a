import Foundation

/// The repository's root directory (where `Package.swift` is), found from
/// this file's path.
package let repositoryRoot: String = #filePath.components(separatedBy: "/Tests/TestSupport/")[0]

/// nginx (Debian's `nginx-light`, installed by `scripts/bootstrap`) serving
/// one directory on 127.0.0.1 with the project's shipped configuration,
/// `contrib/nginx/assetpacks.locations.conf`, included as it is — so the
/// tests test the file users copy. Stopped (and waited for) by ``stop()``
/// or when the value goes away. With `tls:` it serves HTTPS with a
/// ``TestCA``'s server certificate, and HTTP/2 too when this nginx has the
/// module (``supportsHTTP2``).
package final class NginxHost: @unchecked Sendable {
    /// `http://127.0.0.1:PORT`, or `https://…` with TLS (no trailing slash).
    package let baseURL: String
    package let port: UInt16
    /// Whether `listen` has `http2` (TLS, and a build with the module).
    package let servesHTTP2: Bool
    /// Where nginx's configuration, pid file, logs and temporary files are.
    package let runDirectory: TemporaryDirectory
    private let process: Process

    /// The nginx binary: on `PATH`, else Debian's `/usr/sbin/nginx`.
    package static var binary: String? {
        Program.find("nginx") ?? (FileManager.default.isExecutableFile(atPath: "/usr/sbin/nginx") ? "/usr/sbin/nginx" : nil)
    }

    /// Whether this nginx was built with `ngx_http_v2_module`
    /// (`nginx -V` lists `--with-http_v2_module`; Debian 12's nginx-light is).
    package static let supportsHTTP2: Bool = {
        guard let nginx = binary, let r = try? Program.run(nginx, ["-V"]) else { return false }
        return (r.stderr + r.out).contains("--with-http_v2_module")
    }()

    package struct Unavailable: Error, CustomStringConvertible {
        package let description: String
    }

    /// Starts nginx serving `root`.
    ///
    /// Always a master process and `workers` workers, as in production:
    /// nginx's single-process mode keeps the signal mask it inherits, and a
    /// test runner's child inherits one that blocks SIGTERM.
    ///
    /// - Parameters:
    ///   - extra: directives added to the `server` block.
    ///   - tls: serve HTTPS with this CA's server certificate (nginx 1.22's
    ///     `listen … ssl http2`, `http2` only where ``supportsHTTP2``).
    package init(root: String, workers: Int = 1, extra: String = "", tls: TestCA? = nil) throws {
        guard let nginx = Self.binary else {
            throw Unavailable(description: "nginx is not installed (scripts/bootstrap installs nginx-light)")
        }
        let run = TemporaryDirectory("assetpacks-nginx")
        let locations = repositoryRoot + "/contrib/nginx/assetpacks.locations.conf"
        let http2 = tls != nil && Self.supportsHTTP2
        let listenFlags = tls == nil ? "" : http2 ? " ssl http2" : " ssl"
        let certificates = tls.map { "ssl_certificate \($0.serverCertificate);\n ssl_certificate_key \($0.serverKey);" } ?? ""
        var lastError = ""
        for _ in 0..<20 {
            let port = try freeLoopbackPort()
            let r = run.path
            // As root, workers would switch to `nobody`, who cannot read a
            // test's private temporary directory: keep the caller's user.
            let user = getuid() == 0 ? "user root root;" : ""
            let configuration = """
                \(user)
                worker_processes \(max(workers, 1));
                daemon off;
                pid \(r)/nginx.pid;
                error_log \(r)/error.log warn;
                events { worker_connections 4096; }
                http {
                    include /etc/nginx/mime.types;
                    log_format assetpacks '$request_method $uri $status $bytes_sent "$http_range" "$http_if_range" "$http_if_none_match" "$server_protocol"';
                    access_log \(r)/access.log assetpacks;
                    client_body_temp_path \(r)/body;
                    proxy_temp_path \(r)/proxy;
                    fastcgi_temp_path \(r)/fastcgi;
                    uwsgi_temp_path \(r)/uwsgi;
                    scgi_temp_path \(r)/scgi;
                    server {
                        listen 127.0.0.1:\(port)\(listenFlags);
                        \(certificates)
                        root \(root);
                        include \(locations);
                        \(extra)
                    }
                }
                """
            try Data(configuration.utf8).write(to: URL(fileURLWithPath: run.file("nginx.conf")))
            let process = Process()
            process.executableURL = URL(fileURLWithPath: nginx)
            process.arguments = ["-p", r, "-c", run.file("nginx.conf"), "-e", run.file("error.log")]
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            let deadline = Date().addingTimeInterval(30)
            while process.isRunning && !acceptsConnections(port: port) && Date() < deadline {
                usleep(10_000)
            }
            if process.isRunning && acceptsConnections(port: port) {
                self.port = port
                self.baseURL = (tls == nil ? "http" : "https") + "://127.0.0.1:\(port)"
                self.servesHTTP2 = http2
                self.runDirectory = run
                self.process = process
                return
            }
            ServeHost.end(process)
            lastError = (try? String(contentsOfFile: run.file("error.log"), encoding: .utf8)) ?? ""
            // Another process took the port between the probe and nginx: again.
            guard lastError.contains("Address already in use") else { break }
        }
        throw Unavailable(description: "nginx did not start: \(lastError)")
    }

    /// One request of the access log.
    package struct Access: Sendable, Equatable {
        package var method: String
        package var uri: String
        package var status: Int
        /// Bytes sent, headers included.
        package var bytesSent: Int
        /// The `Range`, `If-Range` and `If-None-Match` headers ("" when absent).
        package var range: String
        package var ifRange: String
        package var ifNoneMatch: String
        /// `$server_protocol`: `HTTP/1.1`, `HTTP/2.0`.
        package var serverProtocol: String
    }

    /// The requests nginx logged so far (a request is logged when it ends).
    package var accessLog: [Access] {
        let text = (try? String(contentsOfFile: runDirectory.file("access.log"), encoding: .utf8)) ?? ""
        return text.split(separator: "\n").compactMap { line in
            let quoted = line.split(separator: "\"", omittingEmptySubsequences: false)
            let plain = quoted[0].split(separator: " ")
            guard plain.count >= 4, quoted.count >= 8, let status = Int(plain[2]), let sent = Int(plain[3]) else { return nil }
            // nginx writes a `"` inside a value as `\x22`.
            let dash: (Substring) -> String = { $0 == "-" ? "" : $0.replacingOccurrences(of: "\\x22", with: "\"") }
            return Access(method: String(plain[0]), uri: String(plain[1]), status: status, bytesSent: sent,
                          range: dash(quoted[1]), ifRange: dash(quoted[3]), ifNoneMatch: dash(quoted[5]),
                          serverProtocol: dash(quoted[7]))
        }
    }

    /// The logged requests that `matching` selects, once there are at
    /// least `count` of them (nginx logs a request after its response is
    /// sent, so the client may see it first), or what there is after 20 s.
    package func accessLog(count: Int, where matching: (Access) -> Bool) -> [Access] {
        awaitEntries(count: count, { accessLog }, where: matching)
    }

    /// What nginx wrote to its error log so far.
    package var errorLog: String { (try? String(contentsOfFile: runDirectory.file("error.log"), encoding: .utf8)) ?? "" }

    /// Stops nginx (SIGTERM, fast shutdown; SIGKILL if it is still there
    /// after 20 s) and waits for it to exit.
    package func stop() { ServeHost.end(process) }

    deinit { stop() }
}
