/// The ordering rules of docs/coordination.md ("Sync order"), checked
/// against a recorded trace: each rule a trace breaks is one line naming
/// the call that breaks it.
extension SyscallTrace {
    /// What a trace is checked against.
    struct Rules {
        /// The group container the command writes, if any: the install,
        /// removal and download rules apply to its `packs/`, `staging/`,
        /// `index/` and `downloads/`.
        var container: String?
        /// A published directory the command writes, if any: its catalog
        /// comes after every file it names is durable.
        var published: String?
    }

    /// Every break of `rules` (and of the rules that hold for every
    /// command) in this trace; empty when it keeps them all.
    func violations(_ rules: Rules) -> [String] {
        var found: [String] = []
        let unlinkDirectories = [rules.container.map { $0 + "/packs" }, rules.published].compactMap { $0 }
        for (i, op) in operations.enumerated() {
            switch op {
            case .mkdir(let path):
                if !synced(parent(path), after: i) { found.append("a directory made is never flushed into its parent: \(lines[i])") }
            case .rename(let from, let to):
                if !synced(parent(to), after: i) { found.append("a rename's directory is never flushed: \(lines[i])") }
                if parent(from) != parent(to), !synced(parent(from), after: i) {
                    found.append("a rename's source directory is never flushed: \(lines[i])")
                }
                if needsSyncedSource(i, from: from, to: to, rules), index(of: .sync(path: from), before: i) == nil {
                    found.append("a file is renamed into place before it is flushed: \(lines[i])")
                }
            case .link(_, let to):
                if !synced(parent(to), after: i) { found.append("a new link's directory is never flushed: \(lines[i])") }
            case .unlink(let path):
                if unlinkDirectories.contains(parent(path)), !synced(parent(path), after: i) {
                    found.append("an unlink an acknowledgement depends on is never flushed: \(lines[i])")
                }
            case .sync, .indexSync, .create:
                break
            }
        }
        if let container = rules.container { found += containerViolations(container) }
        if let published = rules.published { found += publishedViolations(published) }
        return found
    }

    /// The rules of an install, an update, a removal and a download.
    private func containerViolations(_ container: String) -> [String] {
        var found: [String] = []
        let (packs, staging, index) = (container + "/packs", container + "/staging", container + "/index")
        let commits = operations.indices.filter { operations[$0] == .indexSync }
        for (i, op) in operations.enumerated() {
            if case .link(_, let to) = op, parent(to) == packs {
                // The staged file is flushed, and so is its twin's name, before it reaches packs/.
                let fileSync = operations[..<i].contains { if case .sync(let p) = $0 { return p.hasPrefix(staging + "/") } else { return false } }
                if !fileSync { found.append("an archive is linked into packs/ before its file is flushed: \(lines[i])") }
                if let change = operations[..<i].lastIndex(where: { changes(staging, $0) }), !synced(staging, after: change, before: i) {
                    found.append("an archive is linked into packs/ before staging/ is flushed (\(lines[change])): \(lines[i])")
                }
                guard let commit = commits.first(where: { $0 > i }) else {
                    found.append("an archive is linked into packs/ and no commit follows: \(lines[i])")
                    continue
                }
                if !synced(packs, after: i, before: commit) {
                    found.append("the index commits before packs/ is flushed after \(lines[i]): \(lines[commit])")
                }
            }
            if case .unlink(let path) = op, parent(path) == packs {
                guard let commit = commits.last(where: { $0 < i }) else {
                    found.append("an archive is unlinked before any commit: \(lines[i])")
                    continue
                }
                // A retirement twin is durable before the commit that drops its archive.
                for (j, earlier) in operations[..<commit].enumerated() {
                    if case .link(let from, let to) = earlier, from == path, parent(to) == staging, !synced(staging, after: j, before: commit) {
                        found.append("the index commits before the twin \(lines[j]) is flushed: \(lines[commit])")
                    }
                }
            }
        }
        if operations.contains(.mkdir(path: index)), let created = operations.firstIndex(of: .create(path: index + "/data.mdb")) {
            guard let last = commits.last, synced(index, after: created, before: last) else {
                return found + ["a new index's files are never flushed into index/ before its last commit"]
            }
        }
        // A download's final status record is written once the install it reports is durable.
        if let last = commits.last,
           let status = operations.lastIndex(where: { if case .rename(_, let to) = $0 { return to.hasSuffix(".status") } else { return false } }),
           status < last {
            found.append("a download's last status record comes before its install's commit: \(lines[status])")
        }
        return found
    }

    /// A published directory's catalog is renamed into place only once
    /// every other file renamed into the directory is durable.
    private func publishedViolations(_ directory: String) -> [String] {
        let catalog = directory + "/catalog.json"
        guard let renamed = operations.lastIndex(where: { if case .rename(_, let to) = $0 { return to == catalog } else { return false } }) else {
            return ["the catalog is never renamed into \(directory)"]
        }
        var found: [String] = []
        for (i, op) in operations[..<renamed].enumerated() {
            if case .rename(_, let to) = op, parent(to) == directory, to != catalog, !synced(directory, after: i, before: renamed) {
                found.append("the catalog is renamed into place before \(lines[i]) is flushed: \(lines[renamed])")
            }
        }
        return found
    }

    /// Whether a rename's source must have been flushed before it: every
    /// file renamed into place, except a staging twin (its file is flushed
    /// through the descriptor that made it unnamed, which the
    /// `packs/` rule checks), a file moved aside into `quarantine/` (not
    /// put in place: its bytes are whatever they were) and a download
    /// status record a later one replaces (only the last is flushed).
    private func needsSyncedSource(_ i: Int, from: String, to: String, _ rules: Rules) -> Bool {
        guard let container = rules.container else { return true }
        if parent(to) == container + "/staging" || parent(to) == container + "/quarantine" { return false }
        if parent(to) == container + "/downloads" {
            return !operations[(i + 1)...].contains { if case .rename(_, let later) = $0 { return later == to } else { return false } }
        }
        return true
    }

    /// Whether `op` makes or moves a name in `directory`.
    private func changes(_ directory: String, _ op: Operation) -> Bool {
        switch op {
        case .rename(_, let to), .link(_, let to): return parent(to) == directory
        default: return false
        }
    }

    /// Whether `directory` is flushed after operation `i` (and before `end`).
    private func synced(_ directory: String, after i: Int, before end: Int? = nil) -> Bool {
        let stop = end ?? operations.count
        guard i + 1 < stop else { return false }
        return operations[(i + 1)..<stop].contains(.sync(path: directory))
    }

    private func index(of op: Operation, before i: Int) -> Int? { operations[..<i].lastIndex(of: op) }

    /// `path` without its last component.
    func parent(_ path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }
}
