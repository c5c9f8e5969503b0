#!/bin/sh
# One-shot (docker-compose.yml, service temporal-schema): brings the schemas of Temporal's two databases
# to the version of this admin-tools image, with Temporal's own temporal-sql-tool, as Temporal's role
# (SQL_USER), which owns them: deploy/postgres/init-roles.sh created both, and the role may create no
# database. Safe on every `docker compose up`: `setup-schema -v 0.0` leaves a newer schema alone, and
# `update-schema` applies only what an image upgrade brought. The server starts only after this exits 0.
set -eu

: "${SQL_HOST:?}" "${SQL_USER:?}" "${SQL_PASSWORD:?}"
export SQL_PLUGIN=postgres12 SQL_PORT="${SQL_PORT:-5432}"

attempt=1
until nc -z -w 5 "$SQL_HOST" "$SQL_PORT"; do
  if [ "$attempt" -ge 30 ]; then
    echo "PostgreSQL at $SQL_HOST:$SQL_PORT did not answer" >&2
    exit 1
  fi
  attempt=$((attempt + 1))
  sleep 2
done

for db in temporal temporal_visibility; do
  case "$db" in
    temporal) schema=temporal ;;
    *) schema=visibility ;;
  esac
  temporal-sql-tool --db "$db" setup-schema -v 0.0
  temporal-sql-tool --db "$db" update-schema -d "/etc/temporal/schema/postgresql/v12/$schema/versioned"
  echo "database $db: schema up to date"
done
