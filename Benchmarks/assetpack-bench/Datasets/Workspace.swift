import Foundation

/// The directory a run generates its data in, and the data sets already
/// built in this run, which scenarios share.
///
/// By default a new temporary directory, removed at the end. With
/// `--data-dir DIR` the directory is kept, and a data set whose directory
/// holds a completion stamp of this harness's data version is reused
/// instead of rebuilt.
final class Workspace {
    /// Bump when generated data changes, so kept data sets are rebuilt.
    static let dataVersion = "1"

    let root: String
    let keep: Bool
    let scale: Scale
    private var built: [String: AnyObject] = [:]

    init(root: String?, scale: Scale) throws {
        self.scale = scale
        if let root {
            try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
            self.root = URL(fileURLWithPath: root).standardizedFileURL.path
            keep = true
        } else {
            let temporary = URL(fileURLWithPath: NSTemporaryDirectory()).standardizedFileURL.path
            var template = Array((temporary + "/assetpack-bench.XXXXXX").utf8CString)
            guard let made = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
                throw BenchError.failed("mkdtemp failed")
            }
            self.root = String(cString: made)
            keep = false
        }
    }

    /// Removes the temporary directory (not a kept `--data-dir`).
    func finish() {
        built.removeAll()
        if !keep { try? FileManager.default.removeItem(atPath: root) }
    }

    /// The data set `key`, built on first use in this run.
    func dataset<D: AnyObject>(_ key: String, _ make: (String) throws -> D) throws -> D {
        if let d = built[key] as? D { return d }
        let d = try make(root + "/" + key)
        built[key] = d
        return d
    }

    /// Runs `build` to fill `directory` unless a kept data set is already
    /// complete there; returns whether it built.
    @discardableResult
    func fill(_ directory: String, label: String, _ build: () throws -> Void) throws -> Bool {
        let stamp = directory + "/.complete"
        let version = Workspace.dataVersion + " " + (scale.quick ? "quick" : "full")
        if keep, (try? String(contentsOfFile: stamp, encoding: .utf8)) == version { return false }
        try? FileManager.default.removeItem(atPath: directory)
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let start = Clock.seconds
        Log.info("  building \(label)…")
        try build()
        try version.write(toFile: stamp, atomically: true, encoding: .utf8)
        Log.info("  built \(label) in \(Format.fixed(Clock.seconds - start, decimals: 1)) s")
        return true
    }
}
