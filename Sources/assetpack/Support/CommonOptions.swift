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

    /// The container options: every command that opens a container takes
    /// them, and they may also come before the subcommand.
    static let containerOptions = [container, group]

    /// `--lock-timeout <seconds>`, for commands that take a pack's lock.
    static let lockTimeout = Option.value(
        "lock-timeout", placeholder: "seconds",
        help: "Give up when another process holds the pack's lock longer than this (default: wait).")

    /// `--json`, for commands that report.
    static let json = Option.flag("json", help: "Print the result as JSON on standard output.")
}
