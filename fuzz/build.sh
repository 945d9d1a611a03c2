#!/usr/bin/env bash
# Build every fuzz target and run each one briefly; fails on a crash.
#
#   fuzz/build.sh              build, then run each target for FUZZ_SECONDS (20)
#   FUZZ_SECONDS=120 fuzz/build.sh
#   fuzz/build.sh --build-only
#
# The toolchain is stable; cargo-fuzz needs nightly-only rustc flags
# (-Zsanitizer=address, sancov), which RUSTC_BOOTSTRAP=1 unlocks on stable.
set -euo pipefail

cd "$(dirname "$0")"
export RUSTC_BOOTSTRAP=1
seconds="${FUZZ_SECONDS:-20}"

if ! cargo fuzz --version >/dev/null 2>&1; then
    echo "fuzz/build.sh: installing cargo-fuzz" >&2
    cargo install cargo-fuzz --locked
fi

cargo fuzz build

if [[ "${1:-}" == "--build-only" ]]; then
    exit 0
fi

# Each run starts from the corpus a previous run left (if any) and the regression
# inputs: inputs that once crashed or hung and must not again.
for target in $(cargo fuzz list); do
    dirs=("corpus/$target")
    mkdir -p "corpus/$target"
    if [[ -d "regressions/$target" ]]; then
        dirs+=("regressions/$target")
    fi
    # Hand-written seeds (read-only: new inputs go to corpus/).
    if [[ -d "seeds/$target" ]]; then
        dirs+=("seeds/$target")
    fi
    # Real strace output seeds the strace target (read-only too).
    if [[ "$target" == strace_line || "$target" == log_writes ]]; then
        dirs+=("../testdata/strace/forms")
    fi
    echo "fuzz/build.sh: $target for ${seconds}s" >&2
    # -max_len keeps inputs line-sized; -timeout turns a hang into a failure.
    cargo fuzz run "$target" "${dirs[@]}" -- \
        -max_total_time="$seconds" -max_len=1024 -timeout=10 -rss_limit_mb=2048 \
        -print_final_stats=1
done
