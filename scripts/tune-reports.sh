#!/bin/sh
# Regenerates the committed tuning reports under reports/tune/ (issue 7): one `fencesim tune`
# per profile in scenarios/tune/, each with its grid and targets. Deterministic: the same
# commit gives byte-identical CSV/JSON/Markdown. Run from the repository root:
#     scripts/tune-reports.sh
set -eu
cargo build --release -p fencesim
fencesim=target/release/fencesim
out=reports/tune
seeds=0..200

$fencesim tune scenarios/tune/jvm-gc.toml --seeds $seeds --out $out \
    --vary lease.ttl_ms=2000..20000:10 \
    --max-false-expiry-per-hour 2

$fencesim tune scenarios/tune/vm-live-migration.toml --seeds $seeds --out $out \
    --vary lease.ttl_ms=1000..10000:10 \
    --max-false-expiry-per-hour 1

$fencesim tune scenarios/tune/client-go-outage.toml --seeds $seeds --out $out \
    --vary lease.ttl_ms=15000,30000,60000,90000,95000,100000,120000 \
    --vary 'workers.renew_deadline_ms=lease.ttl_ms*0.67' \
    --survive-outage-ms 60000 --max-false-expiry-per-hour 1
