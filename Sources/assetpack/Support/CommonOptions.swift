/// Options several commands share, declared once.
enum CommonOptions {
    /// `--container <dir>`: the container to open.
    static let container = Option.value(
        "container", placeholder: "dir",
        help: "The group container (default: $ASSETPACKS_CONTAINER, else $XDG_DATA_HOME/assetpacks/<group>).",
        completion: .directory)

    /// `--group <id>`: the group whose default container to open.
    static let group = Option.value(
        "group", placeholder: "id",
        help: "The group whose default container to use (default: default).")

    /// `--lock-timeout <seconds>`: how long to wait for a lock another
    /// process holds (a pack's, the container's, a download's, the index's).
    static let lockTimeout = Option.value(
        "lock-timeout", placeholder: "seconds",
        help: """
            Give up waiting for a lock another process holds after this many seconds, whoever holds it \
            (default: wait while the holder is a running process of yours, else 10 s).
            """)

    /// The container options: every command that opens a container takes
    /// them, and they may also come before the subcommand.
    static let containerOptions = [container, group, lockTimeout]

    /// `--json`, for commands that report.
    static let json = Option.flag("json", help: "Print the result as JSON on standard output.")
}
