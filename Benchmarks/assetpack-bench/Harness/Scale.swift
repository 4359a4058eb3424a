/// Data sizes and measuring effort: full (the sizes) or `--quick`
/// (smaller, for CI smoke runs).
struct Scale {
    let quick: Bool
    /// Rounds per contender when given (`--rounds`).
    var rounds: Int?
    /// The contenders to run when not all (`--only`).
    var only: Set<String>?

    /// Members of the `small-read*` packs (1–16 KiB each).
    var smallMembers: Int { quick ? 10_000 : 100_000 }
    /// The `large-read` member.
    var largeBytes: Int { quick ? 32 << 20 : 256 << 20 }
    /// `open-and-first-read`: packs in the container and members per pack.
    var containerPacks: Int { quick ? 10 : 100 }
    var containerMembersPerPack: Int { quick ? 2_000 : 10_000 }
    /// `open-and-first-read`: entries of the archive libzip opens.
    var zipEntries: Int { quick ? 20_000 : 100_000 }
    /// `install`: members of the installed pack (64–1024 B each).
    var installMembers: Int { quick ? 10_000 : 100_000 }
    var installRounds: Int { rounds ?? (quick ? 2 : 3) }
    /// `readers`: members of the pack the readers read (`--readers-members`).
    var readersMembersGiven: Int?
    var readersMembers: Int { readersMembersGiven ?? (quick ? 2_000 : 10_000) }
    /// `readers`: the members' sizes — 1–16 KiB, or 64–1024 B past 100,000
    /// members (a million members of 1–16 KiB would be 8 GiB).
    var readersMemberSizes: ClosedRange<Int> { readersMembers > 100_000 ? 64 ... 1024 : 1024 ... 16384 }
    /// `readers`: seconds each worker reads per phase (`--reader-seconds`),
    /// and phases per count.
    var readerSecondsGiven: Double?
    var readerSeconds: Double { readerSecondsGiven ?? (quick ? 0.5 : 2) }
    var readerRounds: Int { quick ? 1 : 3 }

    /// The default measuring plan for in-process contenders.
    var plan: Plan { Plan(rounds: rounds ?? (quick ? 3 : 7), passSeconds: quick ? 0.04 : 0.15, only: only) }
}
