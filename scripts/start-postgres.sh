#!/usr/bin/env bash
# Installs (if needed) and starts PostgreSQL on loopback with a `shardtrain` database for the
# cluster tests and for `bin/shardtrain node --journal jdbc:postgresql://127.0.0.1:5432/shardtrain`.
# Prints the environment the tests read. Idempotent; needs root (apt-get, pg_ctlcluster).
set -euo pipefail
if ! ls /usr/lib/postgresql/*/bin/postgres >/dev/null 2>&1; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q >&2
  apt-get install -y -q postgresql >&2
fi
version="$(ls /usr/lib/postgresql | sort -V | tail -1)"
if ! pg_lsclusters -h | awk '{print $1" "$2}' | grep -q "^$version main$"; then
  pg_createcluster "$version" main >&2
fi
pg_ctlcluster "$version" main start >&2 2>/dev/null || true
for _ in $(seq 1 30); do
  pg_isready -q -h 127.0.0.1 -p 5432 && break
  sleep 1
done
pg_isready -h 127.0.0.1 -p 5432 >&2
su postgres -c "psql -q -tAc \"SELECT 1 FROM pg_roles WHERE rolname='shardtrain'\"" | grep -q 1 \
  || su postgres -c "psql -q -c \"CREATE ROLE shardtrain LOGIN PASSWORD 'shardtrain'\"" >&2
su postgres -c "psql -q -tAc \"SELECT 1 FROM pg_database WHERE datname='shardtrain'\"" | grep -q 1 \
  || su postgres -c "createdb -O shardtrain shardtrain" >&2
echo "export SHARDTRAIN_TEST_POSTGRES_URL=jdbc:postgresql://127.0.0.1:5432/shardtrain"
echo "export SHARDTRAIN_POSTGRES_USER=shardtrain"
echo "export SHARDTRAIN_POSTGRES_PASSWORD=shardtrain"
