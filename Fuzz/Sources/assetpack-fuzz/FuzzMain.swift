import CFuzzerDriver
import Foundation
import FuzzTargets

/// The fuzz harness's one program.
///
///     assetpack-fuzz --target=NAME [libFuzzer options] [corpus directories]   (built by scripts/fuzz)
///     assetpack-fuzz --target=NAME FILE|DIRECTORY...                          (any other build)
///
/// Built by `scripts/fuzz` (`-sanitize=fuzzer,address`, condition `FUZZING`),
/// it hands its command line to libFuzzer. libFuzzer ignores options that
/// start with `--`, and re-executes the program with the same command line
/// to minimize a crash, so the target travels as `--target=NAME`. Built any
/// other way, it feeds each file (each file of each directory) to the
/// target once, and exits 0 if none crashed.
@main enum FuzzMain {
    static func main() {
        let arguments = CommandLine.arguments
        guard let flag = arguments.dropFirst().first(where: { $0.hasPrefix("--target=") }),
              let target = FuzzTarget(rawValue: String(flag.dropFirst("--target=".count))) else {
            let names = FuzzTarget.allCases.map(\.rawValue).joined(separator: "|")
            FileHandle.standardError.write(Data("usage: assetpack-fuzz --target=\(names) [options] [corpus...]\n".utf8))
            exit(64)
        }
        #if FUZZING
        exit(fuzz(target))
        #else
        replay(target, arguments.dropFirst().filter { !$0.hasPrefix("-") })
        #endif
    }

    #if FUZZING
    /// Runs libFuzzer on `target` with this program's command line.
    static func fuzz(_ target: FuzzTarget) -> Int32 {
        // The callback is a C function pointer and captures nothing, so it
        // cannot close over `target`: one literal per target.
        let callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> Int32
        switch target {
        case .zip: callback = { FuzzTarget.zip.run(UnsafeRawBufferPointer(start: $0, count: $1)); return 0 }
        case .manifest: callback = { FuzzTarget.manifest.run(UnsafeRawBufferPointer(start: $0, count: $1)); return 0 }
        case .daemonRequest: callback = { FuzzTarget.daemonRequest.run(UnsafeRawBufferPointer(start: $0, count: $1)); return 0 }
        case .daemonReply: callback = { FuzzTarget.daemonReply.run(UnsafeRawBufferPointer(start: $0, count: $1)); return 0 }
        case .catalog: callback = { FuzzTarget.catalog.run(UnsafeRawBufferPointer(start: $0, count: $1)); return 0 }
        case .httpRequest: callback = { FuzzTarget.httpRequest.run(UnsafeRawBufferPointer(start: $0, count: $1)); return 0 }
        case .pieceMap: callback = { FuzzTarget.pieceMap.run(UnsafeRawBufferPointer(start: $0, count: $1)); return 0 }
        }
        let strings = CommandLine.arguments.map { strdup($0) }
        // Freed when the run ends, or LeakSanitizer reports them at exit.
        defer { strings.forEach { free($0) } }
        var argv: [UnsafeMutablePointer<CChar>?] = strings + [nil]
        var argc = Int32(argv.count - 1)
        return argv.withUnsafeMutableBufferPointer { buffer in
            var base = buffer.baseAddress
            return LLVMFuzzerRunDriver(&argc, &base, callback)
        }
    }
    #else
    /// Feeds every file named, or found in a directory named, to `target` once.
    static func replay(_ target: FuzzTarget, _ paths: [String]) {
        var count = 0
        for path in paths {
            for file in files(at: path) {
                guard let data = FileManager.default.contents(atPath: file) else {
                    FileHandle.standardError.write(Data("assetpack-fuzz: cannot read \(file)\n".utf8))
                    exit(1)
                }
                data.withUnsafeBytes { _ = target.run($0) }
                count += 1
            }
        }
        print("assetpack-fuzz: \(target.rawValue): \(count) inputs, no crash")
    }

    /// `path` itself, or the regular files in the directory `path`, sorted.
    static func files(at path: String) -> [String] {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue else { return [path] }
        let names = (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []
        return names.sorted().map { path + "/" + $0 }.filter { !$0.hasSuffix("/.gitkeep") }
    }
    #endif
}
