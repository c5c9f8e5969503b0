#!/bin/sh
# Run once by the postgres image on an empty data directory (docker-compose.yml mounts it into
# /docker-entrypoint-initdb.d), as its superuser: the service's role and Temporal's, neither a
# superuser nor able to create databases or roles, each owning its own databases and reaching no other.
#   agentsite: owns the database agentsite (its migrations run as it)
#   temporal:  owns the databases temporal and temporal_visibility (temporal-schema applies their schema)
# The passwords come from the environment (.env), read by psql itself (\getenv): never on a command line.
set -eu

: "${AGENTSITE_DB_PASSWORD:?set AGENTSITE_DB_PASSWORD in .env}" "${TEMPORAL_DB_PASSWORD:?set TEMPORAL_DB_PASSWORD in .env}"

psql -v ON_ERROR_STOP=1 --no-psqlrc --quiet --username "${POSTGRES_USER:-postgres}" --dbname "${POSTGRES_DB:-postgres}" <<'SQL'
\getenv app_password AGENTSITE_DB_PASSWORD
\getenv temporal_password TEMPORAL_DB_PASSWORD
CREATE ROLE agentsite LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION NOBYPASSRLS PASSWORD :'app_password';
CREATE ROLE temporal LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION NOBYPASSRLS PASSWORD :'temporal_password';
CREATE DATABASE agentsite OWNER agentsite;
CREATE DATABASE temporal OWNER temporal;
CREATE DATABASE temporal_visibility OWNER temporal;
-- Only the owner (and the superuser) may connect: PUBLIC's default CONNECT and TEMP go.
REVOKE ALL ON DATABASE agentsite, temporal, temporal_visibility FROM PUBLIC;
SQL
echo "roles agentsite and temporal created, each owning its databases"
