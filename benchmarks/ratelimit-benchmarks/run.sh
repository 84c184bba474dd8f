#!/usr/bin/env bash
# Builds the benchmark jar and runs every benchmark on a private redis-server, writing
# docs/benchmarks.md and docs/benchmarks.png. Options are passed to BenchmarkRunner:
#   --quick         one short iteration per figure (smoke run; numbers not comparable)
#   --focused       only the seed script's -P 16 ceiling and the JMH figures of the spread-key
#                   (8 threads vs Bucket4j and Redisson) and async ratios; prints them, writes no report
#   --only REGEX    only the JMH figures whose id matches
#   --docs DIR      where to write the report (default: docs)
#   --no-report     print the ratios only
#   --jfr DIR       record each JMH fork with Java Flight Recorder into DIR/<id>.jfr
#   --leases SECONDS          only issue 32's fleet: four limiter JVMs on one hot shared budget, not
#                             leased then leased (--lease-threads N per JVM, default 4); prints tables
#   --lease-edges             only the over-admission count across window edges (injected clock,
#                             in-memory and Redis); prints a table
#   --lease-simulation SECONDS  only the simulation of 10, 100 and 1,000 leasing instances, no Redis
#                             (--lease-rate REQUESTS_PER_SECOND, --lease-instances N,N,...)
# Run it on a quiet machine: the figures are ratios measured in the same run.
set -euo pipefail
cd "$(dirname "$0")/../.."
./mvnw -q -B -pl benchmarks/ratelimit-benchmarks -am package -DskipTests
exec java -jar benchmarks/ratelimit-benchmarks/target/benchmarks.jar "$@"
