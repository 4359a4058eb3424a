#ifndef CFUZZERDRIVER_H
#define CFUZZERDRIVER_H

#include <stddef.h>
#include <stdint.h>

/// Runs libFuzzer's driver as its own `main` would, for a program whose
/// `main` is someone else's (SwiftPM links an executable through its
/// module's entry symbol, so libFuzzer's `main` never runs).
///
/// `argc` and `argv` are libFuzzer's command line: options (`-max_total_time=60`),
/// then corpus directories. libFuzzer may rewrite them, and re-executes the
/// program with them for `-minimize_crash`, `-fork` and `-jobs`. `callback`
/// is called with each input, and returns 0 (-1 keeps an input out of the
/// corpus).
///
/// Returns the driver's exit status; on a crash, libFuzzer writes the input
/// and exits itself.
///
/// Defined by the libFuzzer runtime (`-sanitize=fuzzer`) only: reference it
/// only in code compiled with the `FUZZING` condition, which `scripts/fuzz`
/// sets.
int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*callback)(const uint8_t *data, size_t size));

#endif
